// study-wsum: the W-sum lemma's trend (stages/stage1/wsum_study.hpp) as a TSV
// table, a row as soon as it is computed; Python's rows as dicts.
#include "commands/declarations.hpp"
#include "commands/status.hpp"
#include "stages/stage1/wsum_study.hpp"
#include "util/format.hpp"

namespace mha::commands {

using nlohmann::json;

namespace {

Result run_study_wsum(Arguments& a, Context& ctx) {
  Result r;
  WsumStudyOptions o;
  o.dims.clear();
  for (const int64_t d : a.integers("d")) o.dims.push_back(static_cast<int>(d));
  o.k = static_cast<int>(a.integer("k"));
  o.scale = a.number("scale");
  o.points = static_cast<int>(a.integer("points"));
  o.samples = a.integer("samples");
  o.seed = a.seed("seed");
  o.threads = a.threads();
  if (auto e = wsum_study_problem(o); !e.empty()) return r.failed(kExitBadInput, e);
  ctx.print("d\tk\talpha\tstable_rank\tm_minus_i_op\tm_minus_i_fro_rel\tstandard_error_op\tmethod\tsamples\n");
  r.value = json::array();
  wsum_study(o, [&](const WsumStudyRow& row) {
    const char* method = row.enumerated ? "enumeration" : "monte_carlo";
    ctx.print(format("%d\t%d\t%.3f\t%.4f\t%.6g\t%.6g\t%.3g\t%s\t%lld\n", row.d, row.k, row.alpha, row.stable_rank,
                     row.m_minus_i_op, row.m_minus_i_fro_rel, row.standard_error_op, method, (long long)row.samples));
    r.value.push_back({{"d", row.d}, {"k", row.k}, {"alpha", row.alpha}, {"stable_rank", row.stable_rank},
                       {"m_minus_i_op", row.m_minus_i_op}, {"m_minus_i_fro_rel", row.m_minus_i_fro_rel},
                       {"standard_error_op", row.standard_error_op}, {"method", method}, {"samples", row.samples}});
  });
  return r;
}

}  // namespace

Command study_wsum_command() {
  const WsumStudyOptions defaults;
  Option d{"d", Type::integers, "dimensions"};
  d.range = range(1, 1024);
  d.python_position = 0;
  std::vector<int64_t> dims(defaults.dims.begin(), defaults.dims.end());
  Option points{"points", Type::integer, "spectra per dimension"};
  points.range = range(2, 100);
  Option samples{"samples", Type::integer, "Monte Carlo samples when k·d > 16"};
  samples.range = range(1, two_to(40));
  return {"study-wsum", "study_wsum", "W-sum lemma trend: ‖M(Θ) − I‖ against the stable rank of Θ (TSV on stdout)",
          {d.with_default(dims), option::k("sequence length").with_default(int64_t{defaults.k}),
           option::scale("‖Θ‖_F").with_default(defaults.scale), points.with_default(int64_t{defaults.points}),
           samples.with_default(defaults.samples), option::seed("seed"), option::threads("worker threads")},
          run_study_wsum};
}

}  // namespace mha::commands
