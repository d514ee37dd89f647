// hard: the SQ-hard family of MATH.md §4 (k = 2). Builds F_S exactly, verifies
// it (exact closed form; double and MPFR passes within derived bounds),
// reports the SQ numbers and gives the instance. --study reports the
// conditioning table of docs/hardness.md instead. The work is hard_run.hpp's.
#include "commands/declarations.hpp"
#include "commands/hard_run.hpp"
#include "commands/status.hpp"

namespace mha::commands {

namespace {

HardArgs hard_args(const Arguments& a) {
  HardArgs h;
  h.d_given = a.given("d"), h.m_given = a.given("m");
  if (h.d_given) h.d = static_cast<int>(a.integer("d"));
  if (h.m_given) h.m = static_cast<int>(a.integer("m"));
  h.subset = a.text("subset");
  h.q = a.text("q");
  h.p = static_cast<int>(a.integer("p"));
  h.q_out = static_cast<int>(a.integer("q-out"));
  h.seed = a.seed("seed");
  h.samples = a.integer("verify-samples");
  h.samples_given = a.given("verify-samples");
  if (a.given("mpfr-checks")) h.mpfr_checks = a.integer("mpfr-checks");
  h.precision = static_cast<unsigned>(a.integer("precision"));
  h.tolerance = a.number("tolerance");
  h.threads = a.threads();
  h.study_max_m = static_cast<int>(a.integer("study-max-m"));
  return h;
}

Result run_hard(Arguments& a, Context& ctx) {
  Result r;
  const bool study = a.flag("study");
  if (!study && !(a.given("d") && a.given("m")))
    return r.failed(kExitBadInput, a.spell("d") + " and " + a.spell("m") + " are required (or " + a.spell("study") + ")");
  HardRun run = study ? run_hard_study(hard_args(a)) : run_hard_family(hard_args(a), ctx);
  if (run.report.is_null()) return r.failed(run.status, run.error);  // refused before it ran
  if (study) r.outputs["study-data"].text = run.study_data;
  if (run.instance) {
    if (a.given("output")) {
      run.report["output"] = a.text("output");
      run.text += "\nwrote " + a.text("output") + "\n";
    }
    r.outputs["output"].instance = std::move(run.instance);
  }
  r.summary = a.flag("json") ? run.report.dump(2) + "\n" : run.text;
  r.value = std::move(run.report);
  r.status = run.status;
  r.error = run.error;
  return r;
}

Option integer_option(const char* name, const char* help, Range r) {
  Option o{name, Type::integer, help};
  o.range = r;
  return o;
}

}  // namespace

Command hard_command() {
  const HardArgs defaults;
  Option d = option::d("token dimension d (m + 1 ≤ d ≤ 1024)");
  Option m = option::m("|S| = m ≥ 1; the layer has m + 1 heads");
  d.python_position = 0, m.python_position = 1;
  Option tolerance{"tolerance", Type::number, "SQ tolerance τ ∈ (0, 1] for the query lower bound"};
  tolerance.range = range(0, 1, true);
  Option output = option::output("instance file to write (JSON)");
  output.excludes = {"study"};
  Option study_max_m = integer_option("study-max-m", "largest m of the study", range(1, 12));
  study_max_m.needs = {"study"};
  Option study_data{"study-data", Type::text, "with --study: also write the table as a gnuplot data file", Role::file_out};
  study_data.needs = {"study"};
  return {"hard", "hard",
          "The SQ-hard family F_S of MATH.md §4 (k = 2): build exactly, verify, SQ bound, write the instance",
          {d, m,
           {"subset", Type::text, "S as comma-separated 0-based indices, none equal to p (default: {0..m−1} shifted past p)"},
           {"q", Type::text, "q_0..q_m: m + 1 distinct positive rationals, e.g. 1,2,3 or 1/2,3,7/4 (default: "
                             "docs/hardness.md — optimized nodes in [1, m+1] for m ≤ 8)"},
           integer_option("p", "input coordinate p (0-based)", range(0, 1023)).with_default(int64_t{defaults.p}),
           integer_option("q-out", "output coordinate q_out (0-based, ≠ p)", range(0, 1023)).with_default(int64_t{defaults.q_out}),
           option::seed("seed of the sampled inputs (d > 10)"),
           integer_option("verify-samples",
                          "sampled inputs to verify when d > 10 (giving it also forces sampling for d ≤ 10)",
                          range(1, two_to(30))).with_default(defaults.samples),
           integer_option("mpfr-checks", "inputs also run through both MPFR passes (default: 256, fewer for d > 128)",
                          range(0, two_to(24))),
           option::precision("MPFR bits of the reference passes"), tolerance.with_default(defaults.tolerance),
           option::threads(), output, option::json_flag("print the report as JSON"),
           {"study", Type::flag, "print the conditioning study of docs/hardness.md instead (every q choice, m = "
                                 "1..--study-max-m)"},
           study_max_m.with_default(int64_t{defaults.study_max_m}), study_data},
          run_hard};
}

}  // namespace mha::commands
