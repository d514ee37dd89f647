// The body's construction and its slabs: no solver, no decomposition. Kept
// apart from the programs (convex_body_lp.cpp, convex_body_min_norm.cpp: CLP)
// so that what only stores and reads bodies — the learner's checkpoints and
// their fuzz harness (fuzz/) — compiles and links without the LP/QP code.
#include "geometry/convex_body.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace mha {

ConvexBody::ConvexBody(int n, double radius) : n_(n), radius_(radius) {
  if (n < 1) throw std::invalid_argument("ConvexBody: dimension must be >= 1, got " + std::to_string(n));
  if (!std::isfinite(radius) || radius <= 0)
    throw std::invalid_argument("ConvexBody: radius must be finite and > 0");
}

void ConvexBody::add(Slab s) {
  if (static_cast<int>(s.a.size()) != n_)
    throw std::invalid_argument("ConvexBody::add: slab normal has " + std::to_string(s.a.size()) +
                                " entries, body dimension is " + std::to_string(n_));
  for (double v : s.a)
    if (!std::isfinite(v)) throw std::invalid_argument("ConvexBody::add: slab normal is not finite");
  if (!std::isfinite(s.b)) throw std::invalid_argument("ConvexBody::add: slab offset b is not finite");
  if (!std::isfinite(s.eta) || s.eta < 0)
    throw std::invalid_argument("ConvexBody::add: slab half-width eta must be finite and >= 0");
  slabs_.push_back(std::move(s));
}

}  // namespace mha
