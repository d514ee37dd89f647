#include "stages/stage6/check.hpp"

#include "model/reference.hpp"
#include "stages/stage6/net_check.hpp"

#include <exception>
#include <string>

namespace mha {

WDesign w_design(const SampleSource& source, const std::vector<MatD>& thetas, uint64_t first, int64_t samples) {
  const LabelledBatch batch = source.draw(first, samples, 1);
  const int k = source.k(), d = source.d(), m = static_cast<int>(thetas.size());
  WDesign out{MatD(batch.x.count * k, m * d), MatD(batch.x.count * k, d)};
  for (int64_t s = 0; s < batch.x.count; ++s) {
    const MatD x = batch.x.sample(s);
    std::vector<MatD> attentions;
    for (const MatD& theta : thetas) attentions.push_back(attention<double>(theta, x));
    out.design.middleRows(s * k, k) = w_design_rows<double>(attentions, x);
    out.labels.middleRows(s * k, k) = Eigen::Map<const MatD>(batch.y.data() + s * k * d, k, d);
  }
  return out;
}

namespace {

ComparisonPart net_part(const SampleSource& source, const Eigen::VectorXd& hull_point,
                        const Eigen::MatrixXd& hull_directions, int m, const NetOptions& options, const NetFast& fast) {
  ComparisonPart failed;
  failed.name = "net";
  NetCandidates candidates;
  try {
    candidates = fast(source, hull_point, hull_directions, m, options);
  } catch (const std::exception& e) {
    failed.detail = std::string("the net could not be formed: ") + e.what();
    return failed;
  }
  if (!candidates.failure.empty()) {
    failed.detail = "the net could not be formed: " + candidates.failure;
    return failed;
  }
  return escalate_part([&](unsigned bits) { return compare_net(source, candidates, bits); });
}

}  // namespace

Comparison check_stage6(const SampleSource& source, const std::vector<MatD>& thetas, uint64_t first, int64_t samples,
                        const Eigen::VectorXd& hull_point, const Eigen::MatrixXd& hull_directions, const NetOptions& net,
                        const WLeastSquaresFast& least_squares, const NetFast& net_fast) {
  const WDesign w = w_design(source, thetas, first, samples);
  const std::optional<MatD> fast = least_squares(w.design, w.labels);
  Comparison c;
  if (!fast) {
    c.detail = "the fast path found the design rank deficient";
  } else {
    c = escalate([&](unsigned bits) { return compare_least_squares(w.design, w.labels, *fast, bits); },
                 kLeastSquaresLadder);
  }
  // A std::string, not the literal: GCC 12 reports assigning a one-character literal here as a
  // memcpy of 2^63 bytes (a false positive of -Wstringop-overflow).
  c.stage = std::string("6");
  add_part(c, net_part(source, hull_point, hull_directions, static_cast<int>(thetas.size()), net, net_fast));
  return c;
}

}  // namespace mha
