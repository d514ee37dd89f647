#include "stages/stage4/resculpt.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mha {

ResculptResult resculpt(const SampleSource& source, const MatD& w_sum, int m, const ResculptOptions& o,
                        const Layer* truth) {
  const int k = source.k(), d = source.d();
  ResculptResult result{0, 0, 0, {ConvexBody(d * d, o.sculpt.radius), {}, {}}};
  if (o.fixed_tau || o.sculpt.selection == SculptOptions::Selection::best_rows) {
    // τ is given, or comes from the whole budget's residuals (stage2_sculpt.hpp): no pilot.
    result.sculpt = sculpt_body(source, w_sum, m, o.sculpt, truth);
    result.tau = result.sculpt.report.tau_effective;
    result.pilot_eligible_rows = result.sculpt.report.rows_certified;
    return result;
  }
  const int64_t pilot = std::min<int64_t>(o.pilot_samples, samples_from(source, o.sculpt.first_sample));
  const LabelledBatch batch = source.draw(o.sculpt.first_sample, pilot, o.sculpt.threads);
  CertifyOptions open = o.sculpt.certify;
  open.tau = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> per_sample(batch.x.count);
#pragma omp parallel num_threads(o.sculpt.threads)
  {
    RowCertifier certifier(w_sum, k);  // this thread's working memory
#pragma omp for schedule(static)
    for (int64_t s = 0; s < batch.x.count; ++s) {
      certifier.load(batch.x, s, batch.y.data() + s * k * d);
      for (int a = 0; a < (o.sculpt.all_rows ? k : 1); ++a)
        if (certifier.certify(a, open) == RowVerdict::certified)
          per_sample[s].push_back(certifier.certificate().relative_residual);
    }
  }
  std::vector<double> residuals;
  for (const auto& r : per_sample) residuals.insert(residuals.end(), r.begin(), r.end());
  result.pilot_samples = batch.x.count;
  result.pilot_eligible_rows = static_cast<int64_t>(residuals.size());
  const int64_t target = constraints_target(o.sculpt, d);
  const int64_t budget = std::min<int64_t>(o.sculpt.max_samples, samples_from(source, o.sculpt.first_sample + pilot));
  if (residuals.empty() || budget <= 0) {
    result.tau = 0;  // nothing to go on: the sculpt below certifies nothing and says so
  } else {
    const double rows_needed = double(target) / std::max(k - 1, 1);
    const double eligible_in_budget = double(residuals.size()) * double(budget) / double(pilot) / o.headroom;
    const double fraction = std::min(1.0, rows_needed / eligible_in_budget);
    const size_t idx = std::min(residuals.size() - 1, static_cast<size_t>(fraction * double(residuals.size())));
    std::nth_element(residuals.begin(), residuals.begin() + idx, residuals.end());
    result.tau = residuals[idx];
  }
  SculptOptions so = o.sculpt;
  so.certify.tau = result.tau;
  so.first_sample = o.sculpt.first_sample + pilot;
  result.sculpt = sculpt_body(source, w_sum, m, so, truth);
  return result;
}

}  // namespace mha
