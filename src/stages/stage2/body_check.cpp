#include "stages/stage2/body_check.hpp"
#include "util/format.hpp"

#include "geometry/convex_body.hpp"
#include "geometry/exact_programs.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/rng.hpp"
#include "numeric/softmax.hpp"
#include "numeric/tolerance.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <utility>

namespace mha {

namespace tol = mha::tolerance;

namespace {

Eigen::VectorXd flat(const MatD& theta) { return Eigen::Map<const Eigen::VectorXd>(theta.data(), theta.size()); }

struct Bodies {
  ConvexBody fast, reference;
  // The fast slabs as computed; the fast body is built from them only when they are
  // all finite (ConvexBody::add refuses NaN and ±∞, and the slab part must see them).
  std::vector<Slab> fast_slabs;
  std::vector<const ReferenceSlab*> bounds;  // per slab, in the bodies' order
  int rows_both = 0, rows_excluded = 0, slab_count_mismatch = 0;
};

BandSide membership_side(const ConvexBody& reference, const std::vector<const ReferenceSlab*>& bounds,
                         const Eigen::VectorXd& theta) {
  const long long n = reference.dim();
  const double theta_max = theta.cwiseAbs().maxCoeff();
  const Mat<Mpfr> tm = cast_matrix<Mpfr>(MatD(theta.transpose()));
  const unsigned bits = current_precision_bits();
  bool undecided = false;
  const auto& slabs = reference.slabs();
  for (size_t r = 0; r < slabs.size(); ++r) {
    Mpfr dot(0);
    double abs_dot = 0;
    for (long long c = 0; c < n; ++c) {
      dot += Mpfr(slabs[r].a[c]) * tm(0, c);
      abs_dot += std::abs(slabs[r].a[c] * theta(c));
    }
    const double value = Mpfr(abs(dot - slabs[r].b) - slabs[r].eta).convert_to<double>();
    const ReferenceSlab& rb = *bounds[r];
    const double band = tol::slab_membership_band(abs_dot, std::abs(slabs[r].b), slabs[r].eta, n, rb.centre_bound,
                                                  rb.width_bound, rb.normal_bound, theta_max) +
                        tol::reference_relative_error(bits, n + 4) * (abs_dot + std::abs(slabs[r].b) + slabs[r].eta);
    const BandSide side = side_of(value, 0.0, band);
    if (side == BandSide::above) return BandSide::above;  // outside, whatever the rest
    undecided |= side == BandSide::undecided;
  }
  const double norm = Mpfr(tm.norm()).convert_to<double>();
  const double radius = reference.radius();
  const BandSide ball = side_of(norm, radius, tol::ball_membership_band(norm, radius, n) +
                                                 tol::reference_relative_error(bits, n + 2) * norm);
  if (ball == BandSide::above) return BandSide::above;
  return undecided || ball == BandSide::undecided ? BandSide::undecided : BandSide::below;
}

}  // namespace

BandSide reference_membership(const ConvexBody& reference, const std::vector<const ReferenceSlab*>& bounds,
                              const Eigen::VectorXd& theta, unsigned bits) {
  ScopedPrecision precision(bits);
  return membership_side(reference, bounds, theta);
}

namespace {

// The band of the constraint that binds at `theta` along g, as a step along g.
struct Exit {
  double s = std::numeric_limits<double>::infinity();
  int slab = -1;  // −1: the ball
};

// How far x0 + s g stays in the fast body (double, approximate: it only places test points).
Exit exit_along(const ConvexBody& body, const Eigen::VectorXd& x0, const Eigen::VectorXd& g) {
  Exit e;
  const long long n = body.dim();
  for (size_t r = 0; r < body.slabs().size(); ++r) {
    const auto a = Eigen::Map<const Eigen::VectorXd>(body.slabs()[r].a.data(), n);
    const double c0 = a.dot(x0) - body.slabs()[r].b, c1 = a.dot(g);
    if (c1 == 0) continue;
    const double s = c1 > 0 ? (body.slabs()[r].eta - c0) / c1 : (-body.slabs()[r].eta - c0) / c1;
    if (s < e.s) e = {s, static_cast<int>(r)};
  }
  // ‖x0 + s g‖ = R with ‖g‖ = 1.
  const double p = x0.dot(g), q = x0.squaredNorm() - body.radius() * body.radius();
  const double s_ball = -p + std::sqrt(std::max(p * p - q, 0.0));
  if (s_ball < e.s) e = {s_ball, -1};
  return e;
}

bool all_finite(const std::vector<Slab>& slabs) {
  for (const Slab& s : slabs) {
    if (!std::isfinite(s.b) || !std::isfinite(s.eta)) return false;
    for (double v : s.a)
      if (!std::isfinite(v)) return false;
  }
  return true;
}

ComparisonPart compare_slabs(const Bodies& bodies) {
  ComparisonPart part;
  part.name = "body slabs";
  part.quantity = "|b̂ − b*|, |η̂ − η*|, ‖â − a*‖₁ per slab";
  const auto& fs = bodies.fast_slabs;
  const auto& rs = bodies.reference.slabs();
  for (size_t r = 0; r < fs.size(); ++r) {
    const ReferenceSlab& rb = *bodies.bounds[r];
    part.record(std::abs(fs[r].b - rs[r].b), rb.centre_bound);
    part.record(std::abs(fs[r].eta - rs[r].eta), rb.width_bound);
    double l1 = 0;
    for (size_t c = 0; c < fs[r].a.size(); ++c) l1 += std::abs(fs[r].a[c] - rs[r].a[c]);
    part.record(l1 * tol::bound_evaluation_factor(static_cast<long long>(fs[r].a.size())), rb.normal_bound);
  }
  // A row certified on both paths with a different number of slabs: decided, and wrong.
  for (int r = 0; r < bodies.slab_count_mismatch; ++r) part.record_decision(false);
  part.detail = std::to_string(fs.size()) + " slabs of " + std::to_string(bodies.rows_both) +
                " rows both paths certify; " + std::to_string(bodies.rows_excluded) +
                " rows certified on one path only or undecided (left out of both bodies)" +
                (bodies.slab_count_mismatch > 0
                     ? "; " + std::to_string(bodies.slab_count_mismatch) + " rows with a different number of slabs"
                     : "");
  return part;
}

ComparisonPart compare_membership(const Bodies& bodies, int d, int m, const Layer* truth, const BodyOptions& o) {
  ComparisonPart part;
  part.name = "body membership";
  part.quantity = "inside/outside per test point";
  const long long n = bodies.fast.dim();
  std::vector<std::pair<std::string, Eigen::VectorXd>> points;
  if (truth)
    for (size_t i = 0; i < truth->heads.size(); ++i)
      points.emplace_back("Θ_" + std::to_string(i + 1), flat(truth->heads[i].theta));
  const Eigen::VectorXd x0 = bodies.fast.least_squares_centre(std::max(m - 1, 0)).x0;
  points.emplace_back("fast centre", x0);
  // Along rays from the fast centre to the fast body's boundary: points at ∓4 and
  // ∓¼ of the binding constraint's band (the ¼ ones are meant to be undecided).
  for (int ray = 0; ray < o.boundary_rays; ++ray) {
    Eigen::VectorXd g = flat(gaussian_matrix(o.seed, Stream::verify, 100 + ray, 0, d));
    g.normalize();
    const Exit e = exit_along(bodies.fast, x0, g);
    if (!std::isfinite(e.s)) continue;
    const Eigen::VectorXd p = x0 + e.s * g;
    double band, slope;
    if (e.slab >= 0) {
      const Slab& s = bodies.reference.slabs()[e.slab];
      const auto a = Eigen::Map<const Eigen::VectorXd>(s.a.data(), n);
      const ReferenceSlab& rb = *bodies.bounds[e.slab];
      band = tol::slab_membership_band(a.cwiseAbs().dot(p.cwiseAbs()), std::abs(s.b), s.eta, n, rb.centre_bound,
                                       rb.width_bound, rb.normal_bound, p.cwiseAbs().maxCoeff());
      slope = std::abs(a.dot(g));
    } else {
      band = tol::ball_membership_band(p.norm(), bodies.fast.radius(), n);
      slope = std::abs(p.dot(g)) / p.norm();
    }
    for (double c : {-4.0, -0.25, 0.25, 4.0})
      points.emplace_back("ray " + std::to_string(ray) + format(" %+.2f band", c), p + (c * band / slope) * g);
  }
  int inside = 0, outside = 0, disagreements = 0;
  for (const auto& [name, theta] : points) {
    const bool fast_inside = bodies.fast.contains(theta);
    const BandSide ref = membership_side(bodies.reference, bodies.bounds, theta);
    ++part.compared;
    if (ref == BandSide::undecided) {
      ++part.undecided;
      continue;
    }
    (ref == BandSide::below ? inside : outside)++;
    if (fast_inside != (ref == BandSide::below)) {
      ++disagreements;
      part.agree = false;
    }
  }
  part.detail = std::to_string(part.compared) + " points (" + (truth ? "the true Θ_i, " : "") + "the fast centre, " +
                std::to_string(o.boundary_rays) + " rays × 4 offsets around the boundary): reference inside " +
                std::to_string(inside) + ", outside " + std::to_string(outside) + ", undecided " +
                std::to_string(part.undecided) + "; disagreements " + std::to_string(disagreements);
  return part;
}

ComparisonPart compare_widths(const Bodies& bodies, int d, const Layer* truth, const BodyOptions& o) {
  ComparisonPart part;
  part.name = "body widths";
  part.quantity = "|w_fast − w_ref| per direction (LP widths of the two bodies)";
  const long long n = bodies.fast.dim();
  const auto& slabs = bodies.reference.slabs();
  const std::vector<Eigen::VectorXd> directions = width_directions(bodies.reference, d, truth, o);
  // The exact programs (CGAL) where their stated range allows: the reference
  // body's widths exactly instead of CLP's value (the bound holds for the exact
  // optimum too: proofs/certification.md, "The body on two paths").
  const bool exact = n <= 36 && slabs.size() <= 100;
  int skipped = 0, exact_widths = 0;
  std::string skipped_why;
  for (const Eigen::VectorXd& u : directions) {
    const ConvexBody::Width f = bodies.fast.width(u), r = bodies.reference.width(u);
    if (!widths_certified(f, r)) {  // no rigorous bracket on one side: the bound would rest on an assumption
      ++skipped;
      skipped_why = f.max.message + " / " + r.max.message;
      continue;
    }
    std::optional<double> exact_width;
    if (exact) {
      const ExactLpResult hi = exact_maximise(bodies.reference, u), lo = exact_minimise(bodies.reference, u);
      if (hi.status == ExactStatus::optimal && lo.status == ExactStatus::optimal) {
        exact_width = Rational(hi.value - lo.value).convert_to<double>();
        ++exact_widths;
      }
    }
    part.record(std::abs(f.width - exact_width.value_or(r.width)),
                width_difference_bound(f, r, exact_width, bodies.bounds, o.radius));
  }
  part.detail = std::to_string(part.compared) + " directions (" + std::to_string(std::min<int>(o.slab_directions, static_cast<int>(slabs.size()))) +
                " slab normals, " + (truth && truth->m() >= 2 ? "the true hull direction, " : "") + std::to_string(o.random_directions) + " random); reference widths " +
                (exact_widths > 0 ? "exact (CGAL) for " + std::to_string(exact_widths) : "by CLP's certified brackets") +
                (skipped > 0 ? "; " + std::to_string(skipped) + " not certified, left out: " + skipped_why : "");
  return part;
}

}  // namespace

std::vector<Eigen::VectorXd> width_directions(const ConvexBody& reference, int d, const Layer* truth, const BodyOptions& o) {
  const long long n = reference.dim();
  const auto& slabs = reference.slabs();
  std::vector<Eigen::VectorXd> directions;
  for (int r = 0; r < std::min<int>(o.slab_directions, static_cast<int>(slabs.size())); ++r)
    directions.push_back(Eigen::Map<const Eigen::VectorXd>(slabs[r].a.data(), n).normalized());
  if (truth && truth->m() >= 2) directions.push_back(flat(truth->heads[0].theta - truth->heads[1].theta).normalized());
  for (int i = 0; i < o.random_directions; ++i)
    directions.push_back(flat(gaussian_matrix(o.seed, Stream::verify, 200 + i, 0, d)).normalized());
  return directions;
}

double dual_shift(const Eigen::VectorXd& y, const std::vector<const ReferenceSlab*>& bounds, double radius) {
  double s = 0;
  for (Eigen::Index r = 0; r < y.size(); ++r) {
    const ReferenceSlab& rb = *bounds.at(static_cast<size_t>(r));
    s += std::abs(y(r)) * (rb.centre_bound + rb.width_bound + radius * rb.normal_bound);
  }
  return s * tol::bound_evaluation_factor(4 * y.size() + 4);
}

double bracket_gap(const ConvexBody::LpResult& r) { return std::max(r.upper, r.value) - std::min(r.lower, r.value); }

bool widths_certified(const ConvexBody::Width& f, const ConvexBody::Width& r) {
  return f.max.certified && f.min.certified && r.max.certified && r.min.certified &&
         f.max.status == ConvexBody::LpResult::optimal && f.min.status == ConvexBody::LpResult::optimal &&
         r.max.status == ConvexBody::LpResult::optimal && r.min.status == ConvexBody::LpResult::optimal;
}

double width_difference_bound(const ConvexBody::Width& f, const ConvexBody::Width& r,
                              const std::optional<double>& exact_reference_width,
                              const std::vector<const ReferenceSlab*>& bounds, double radius) {
  double bound = 0;
  for (auto [fl, rl] : {std::pair{&f.max, &r.max}, std::pair{&f.min, &r.min}})
    bound += tol::lp_value_difference_bound(bracket_gap(*fl), bracket_gap(*rl), dual_shift(fl->dual, bounds, radius),
                                            dual_shift(rl->dual, bounds, radius));
  // The widths as differences of the two values, each rounded (u|w| each; the exact
  // width converted to double within 2u|w|).
  const double rounding =
      exact_reference_width
          ? tol::kDoubleUnitRoundoff * (std::abs(f.width) + 2.0 * std::abs(*exact_reference_width))
          : tol::kDoubleUnitRoundoff * (std::abs(f.width) + std::abs(r.width));
  return (bound + rounding) * tol::bound_evaluation_factor(3);
}

std::vector<ComparisonPart> compare_body(const std::vector<BodyRow>& rows, int d, int m, const Layer* truth,
                                         const BodyOptions& o, unsigned bits) {
  ScopedPrecision precision(bits);
  const long long n = static_cast<long long>(d) * d;
  Bodies bodies{ConvexBody(static_cast<int>(n), o.radius), ConvexBody(static_cast<int>(n), o.radius), {}, {}, 0, 0, 0};
  for (const BodyRow& row : rows) {
    const bool fast = !row.fast_slabs.empty();
    const bool reference = !row.check->reference_slabs.empty();
    if (!fast && !reference) continue;
    if (fast != reference) {  // one path certifies the row (a verdict disagreement, or undecided)
      ++bodies.rows_excluded;
      continue;
    }
    if (row.fast_slabs.size() != row.check->reference_slabs.size()) {
      ++bodies.slab_count_mismatch;
      continue;
    }
    ++bodies.rows_both;
    for (size_t j = 0; j < row.fast_slabs.size(); ++j) {
      const SlabConstraint& f = row.fast_slabs[j];
      const ReferenceSlab& r = row.check->reference_slabs[j];
      bodies.fast_slabs.push_back(Slab{f.a, f.b, f.eta});
      bodies.reference.add(Slab{r.slab.a, r.slab.b, r.slab.eta});
      bodies.bounds.push_back(&r);
    }
  }
  std::vector<ComparisonPart> parts;
  parts.push_back(compare_slabs(bodies));
  if (bodies.fast_slabs.empty()) {
    parts.back().detail += "; no slab: no body to compare";
    return parts;
  }
  if (!all_finite(bodies.fast_slabs)) {  // the slab part disagrees; a body of NaN or ±∞ has no points or widths to compare
    parts.back().detail += "; a fast slab is not finite: membership and widths not compared";
    return parts;
  }
  for (const Slab& s : bodies.fast_slabs) bodies.fast.add(s);
  parts.push_back(compare_membership(bodies, d, m, truth, o));
  parts.push_back(compare_widths(bodies, d, truth, o));
  return parts;
}

}  // namespace mha
