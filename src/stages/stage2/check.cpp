#include "stages/stage2/check.hpp"
#include "util/format.hpp"

#include "stages/stage2/certify_reference.hpp"

#include <cstdio>
#include <map>

namespace mha {

std::vector<CertificationRow> certification_rows(const SampleSource& source, const MatD& w_hat, uint64_t first,
                                                 int64_t count) {
  const LabelledBatch batch = source.draw(first, count, 1);
  const int k = source.k(), d = source.d();
  std::vector<CertificationRow> rows;
  for (int64_t s = 0; s < batch.x.count; ++s) {
    const MatD x = batch.x.sample(s);
    const MatD y = Eigen::Map<const MatD>(batch.y.data() + s * k * d, k, d);
    const MatD b = certification_products(x, w_hat);
    for (int a = 0; a < k; ++a) rows.push_back({x, y, b, a});
  }
  return rows;
}

Comparison check_certification(const std::string& stage, const std::vector<CertificationRow>& rows,
                               const CertifyOptions& options, int m, const Layer* truth, const BodyOptions& body,
                               const CertifyFast& certify, const SlabsFast& slabs) {
  std::vector<RowCertificate> fast(rows.size());
  std::vector<std::vector<SlabConstraint>> fast_slabs(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    fast[i] = certify(rows[i].x, rows[i].y, rows[i].b, rows[i].row, options);
    if (fast[i].verdict == RowVerdict::certified) fast_slabs[i] = slabs(rows[i].x, rows[i].row, fast[i]);
  }
  const int d = rows.empty() ? 0 : static_cast<int>(rows.front().x.cols());
  return escalate([&](unsigned bits) {
    Comparison c;
    c.stage = stage;
    c.quantity = "‖v̂_fast − v*‖ per row; verdicts";
    std::map<std::string, int> verdicts;
    int disagreements = 0;
    std::vector<CertificationCheck> checks;
    checks.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const CertificationRow& r = rows[i];
      checks.push_back(compare_certification_row(r.x, r.y, r.b, r.row, options, fast[i], bits));
      const CertificationCheck& check = checks.back();
      // v_bound is 0 only when neither path solved for v (duplicate tokens, rank): the
      // item is then the exact 0 = 0. A bound that is not finite makes it undecided (record).
      const int undecided_before = c.undecided;
      c.record(check.v_difference, check.v_bound == 0 ? 1.0 : check.v_bound);
      if (c.undecided == undecided_before) c.undecided += check.undecided;
      ++verdicts[to_string(check.reference)];
      if (!check.agree()) {
        c.agree = false;
        disagreements += check.fast != check.reference && !check.undecided;
      }
    }
    std::string counts;
    for (const auto& [name, n] : verdicts) counts += (counts.empty() ? "" : ", ") + name + " " + std::to_string(n);
    c.detail = format("τ = %.3g; ", options.tau) + "reference verdicts: " + counts + "; verdict disagreements " +
               std::to_string(disagreements) + ", undecided " + std::to_string(c.undecided);
    if (d == 0) return c;
    std::vector<BodyRow> body_rows(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) body_rows[i] = {fast_slabs[i], &checks[i]};
    for (ComparisonPart& part : compare_body(body_rows, d, m, truth, body, bits)) {
      part.precision = bits;
      add_part(c, std::move(part));
    }
    return c;
  });
}

}  // namespace mha
