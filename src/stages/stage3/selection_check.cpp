#include "stages/stage3/selection_check.hpp"
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

ReferenceMargin reference_margin(const MatD& x, const MatD& proxy, int a, unsigned bits) {
  ScopedPrecision precision(bits);
  const int k = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  const Mat<Mpfr> xm = cast_matrix<Mpfr>(x), pm = cast_matrix<Mpfr>(proxy);
  const RowVec<Mpfr> xp = xm.row(a) * pm;
  std::vector<Mpfr> logits(k);
  for (int b = 0; b < k; ++b) logits[b] = xp.dot(xm.row(b));
  ReferenceMargin r;
  for (int b = 1; b < k; ++b)
    if (logits[b] > logits[r.argmax]) r.argmax = b;
  Mpfr second = -std::numeric_limits<double>::infinity();
  for (int b = 0; b < k; ++b)
    if (b != r.argmax && logits[b] > second) second = logits[b];
  r.margin = Mpfr(logits[r.argmax] - second).convert_to<double>();
  // M = max_b |x_a||P||x_b|ᵀ in double (nonnegative terms: the factor in logit_margin_bound covers it).
  const RowVec<double> xa_p = x.row(a).cwiseAbs() * proxy.cwiseAbs();
  const double abs_max = (xa_p * x.cwiseAbs().transpose()).maxCoeff();
  r.band = tol::logit_margin_bound(abs_max, r.margin, d) +
           2.0 * tol::reference_relative_error(current_precision_bits(), 2LL * d + 2) * abs_max;
  return r;
}

std::optional<ReferenceMargin> reference_joint_margin(const MatD& x, const std::vector<MatD>& proxies, int a,
                                                      unsigned bits) {
  std::vector<ReferenceMargin> each;
  for (const MatD& proxy : proxies) each.push_back(reference_margin(x, proxy, a, bits));
  // A margin beyond its band decides that proxy's argmax.
  auto decided = [](const ReferenceMargin& r) { return r.margin > r.band; };
  ReferenceMargin joint;
  joint.margin = std::numeric_limits<double>::infinity();
  bool all_decided = true;
  for (const ReferenceMargin& r : each) {
    all_decided = all_decided && decided(r);
    for (const ReferenceMargin& q : each)
      if (decided(r) && decided(q) && r.argmax != q.argmax) {  // never an event, whatever the others say
        joint.margin = -std::numeric_limits<double>::infinity();
        return joint;
      }
  }
  if (!all_decided) return std::nullopt;
  joint.argmax = each.front().argmax;
  for (const ReferenceMargin& r : each) {  // |min μ̂ − min μ| ≤ max band
    joint.margin = std::min(joint.margin, r.margin);
    joint.band = std::max(joint.band, r.band);
  }
  return joint;
}

ComparisonPart compare_selection(const SampleSource& source, const std::vector<MatD>& proxies, const MarginResult& fast,
                                 uint64_t first_sample, int64_t prefix_samples, unsigned bits) {
  ScopedPrecision precision(bits);
  const double tau = fast.report.threshold;
  const uint64_t examined = first_sample + static_cast<uint64_t>(fast.report.pilot_samples);
  const int64_t prefix = std::min<int64_t>(prefix_samples, fast.report.samples);
  std::map<std::pair<int64_t, int>, const SelectedEvent*> kept;
  for (const SelectedEvent& e : fast.selected) kept[{e.sample, e.row}] = &e;
  ComparisonPart part;
  part.name = "selection";
  part.quantity = "|μ_fast − μ_ref| per kept event; keep/drop per row";
  int decisions = 0, agreements = 0, disagreements = 0;
  // One row: the fast decision (kept or not, with its margin and argmax when kept)
  // against the reference's side of τ.
  auto decide = [&](const MatD& x, int64_t sample, int a) {
    const auto it = kept.find({sample, a});
    const SelectedEvent* event = it == kept.end() ? nullptr : it->second;
    ++decisions;
    const std::optional<ReferenceMargin> ref = reference_joint_margin(x, proxies, a, bits);
    if (!ref) {  // some proxy's argmax is within its band
      part.record_undecided();
      return;
    }
    if (event && std::isfinite(ref->margin)) part.record(std::abs(event->margin - ref->margin), ref->band);
    else ++part.compared;
    const BandSide side = std::isfinite(ref->margin) ? side_of(ref->margin, tau, ref->band) : BandSide::below;
    if (side == BandSide::undecided) {
      ++part.undecided;
      return;
    }
    // Decided and kept: the margin exceeds twice every logit's error, so the argmax is determined too.
    const bool agrees = (side == BandSide::above) == (event != nullptr) && (!event || event->argmax == ref->argmax);
    agreements += agrees;
    disagreements += !agrees;
    if (!agrees) part.agree = false;
  };
  if (prefix > 0) {
    const LabelledBatch batch = source.draw(examined, prefix, 1);
    for (int64_t s = 0; s < batch.x.count; ++s) {
      const MatD x = batch.x.sample(s);
      for (int a = 0; a < x.rows(); ++a) decide(x, static_cast<int64_t>(examined) + s, a);
    }
  }
  int later = 0;
  for (const SelectedEvent& e : fast.selected) {
    if (e.sample < static_cast<int64_t>(examined) + prefix) continue;  // re-decided with its sample above
    const LabelledBatch one = source.draw(static_cast<uint64_t>(e.sample), 1, 1);
    decide(one.x.sample(0), e.sample, e.row);
    ++later;
  }
  part.detail = format("τ = %.6g; %d rows re-decided (every row of %lld examined samples and %d later kept events): ",
                       tau, decisions, static_cast<long long>(prefix), later) +
                std::to_string(agreements) + " agree, " + std::to_string(part.undecided) + " undecided, " +
                std::to_string(disagreements) + " disagree";
  return part;
}

}  // namespace mha
