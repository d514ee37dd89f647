// learn: the whole learner (stages 1–6 and polishing) on an instance's oracle
// or on a .npy dataset, with budgets, a per-stage report and the learned layer.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/input.hpp"
#include "data/instance_io.hpp"
#include "learn/learner.hpp"

#include <cstdio>
#include <memory>

namespace mha::cli {

using nlohmann::json;

void add_learn_options(CLI::App* cmd, LearnOptions& o, bool& no_polish, bool& no_reference) {
  cmd->add_option("--threads", o.threads, "worker threads (results do not depend on it)")->capture_default_str()->check(CLI::Range(1, 256));
  cmd->add_option("--max-seconds", o.max_seconds, "time budget: no new round starts after it (0: none)")->capture_default_str()
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--stage1-samples", o.stage1_samples, "samples of stage 1")->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 36));
  cmd->add_option("--rounds", o.max_rounds, "most sculpt/refine rounds (stages 2 or 4, then 3)")->capture_default_str()
      ->check(CLI::Range(1, 20));
  cmd->add_option("--sculpt-samples", o.sculpt.sculpt.max_samples, "sample budget of each sculpt round")->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 36));
  cmd->add_option("--crude-sculpt-samples", o.crude_sculpt_samples, "sample budget of round 0 (0: as --sculpt-samples)")
      ->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{1} << 36));
  cmd->add_option("--constraints", o.sculpt.sculpt.target_constraints, "slabs each sculpt round aims for (0: 3·d²)")
      ->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  cmd->add_option("--margin-samples", o.margin.max_samples, "sample budget of each stage-3 round")->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 36));
  cmd->add_option("--accept-fraction", o.margin.accept_fraction, "stage 3: accept this top fraction of proxy margins")
      ->capture_default_str()->check(CLI::Range(1e-9, 1.0));
  cmd->add_option("--radius", o.sculpt.sculpt.radius, "R: the body and the net live in ‖Θ‖_F ≤ R")->capture_default_str()
      ->check(CLI::Range(1e-3, 1e6));
  cmd->add_option("--net-tuples", o.net.max_tuples, "stage 6: most tuples of the exhaustive net")->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 32));
  cmd->add_option("--test-samples", o.test_samples, "fresh samples for the test error (instances only)")->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 28));
  cmd->add_option("--reference-max-unknowns", o.reference_max_unknowns,
                  "run the reference paths only when d² is at most this (LPs/QP over d² unknowns)")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--no-polish", no_polish, "stop after the paper's stages (no Levenberg–Marquardt polishing)");
  cmd->add_flag("--no-reference", no_reference, "skip the reference paths (QP proxy, LP widths) on the selected round");
}

Runner add_learn(CLI::App& app) {
  auto* cmd = app.add_subcommand("learn", "Learn a layer end to end: stages 1–6 of MATH.md §3, then polishing");
  struct Args { Input in; LearnOptions o; int m = 0; bool no_polish = false, no_reference = false; std::string report, out; };
  auto a = std::make_shared<Args>();
  a->o.threads = default_threads();
  add_input_options(cmd, a->in);
  cmd->add_option("--m", a->m, "number of heads (default: the instance's)")->check(CLI::Range(1, 8));
  add_learn_options(cmd, a->o, a->no_polish, a->no_reference);
  cmd->add_option("--report", a->report, "JSON report to write");
  cmd->add_option("-o,--output", a->out, "write the learned layer here (instance JSON)");
  return [a] {
    if (auto e = open_input(a->in); !e.empty()) return fail("learn", kExitBadInput, e);
    const Instance* truth = a->in.instance ? &*a->in.instance : nullptr;
    LearnOptions o = a->o;
    o.m = a->m > 0 ? a->m : truth ? truth->m() : 0;
    if (o.m < 1) return fail("learn", kExitBadInput, "with --x/--y give the number of heads with --m");
    if (truth && o.m != truth->m()) return fail("learn", kExitBadInput, "--m differs from the instance's number of heads");
    const SampleSource& source = *a->in.source;
    if (source.k() < 2) return fail("learn", kExitBadInput, "k = 1: every attention row is trivial, nothing to learn about Θ");
    if (source.k() * o.m > source.d())
      std::fprintf(stderr, "mhalearn learn: warning: k·m = %d > d = %d, the certification lemma does not apply\n",
                   source.k() * o.m, source.d());
    o.polish = !a->no_polish;
    o.reference = !a->no_reference;
    o.test_seed = a->in.seed;
    std::printf("mhalearn learn: (d,k,m) = (%d,%d,%d), %s, %d threads\n\n", source.d(), source.k(), o.m,
                truth ? ("oracle of " + a->in.instance_path + ", seed " + std::to_string(a->in.seed)).c_str()
                      : ("dataset of " + std::to_string(source.available()) + " samples").c_str(),
                o.threads);
    const LearnResult r = learn_layer(source, o, truth);
    std::printf("%s", format_table(r.report).c_str());
    json options = {{"instance", a->in.instance_path}, {"x", a->in.x_path}, {"y", a->in.y_path}, {"seed", a->in.seed},
                    {"m", o.m}, {"stage1_samples", o.stage1_samples}, {"rounds", o.max_rounds},
                    {"sculpt_samples", o.sculpt.sculpt.max_samples}, {"crude_sculpt_samples", o.crude_sculpt_samples}, {"constraints", o.sculpt.sculpt.target_constraints},
                    {"margin_samples", o.margin.max_samples}, {"accept_fraction", o.margin.accept_fraction},
                    {"radius", o.sculpt.sculpt.radius}, {"net_tuples", o.net.max_tuples}, {"polish", o.polish},
                    {"reference", o.reference}, {"max_seconds", o.max_seconds}};
    if (!a->report.empty()) {
      json rep = to_json(r.report);
      rep["provenance"] = make_provenance("learn", options);
      if (auto e = write_json_atomically(a->report, rep); !e.empty()) return fail("learn", kExitFailedRun, e);
    }
    if (!r.report.ok) return fail("learn", kExitFailedRun, r.report.message);
    if (!a->out.empty()) {
      Instance learned;
      learned.layer = r.layer;
      learned.k = source.k();
      learned.inputs = source.draw(0, 1, 1).x.kind;  // as the data were drawn
      learned.provenance_json = make_provenance("learn", options).dump();
      if (auto e = write_instance(a->out, learned); !e.empty()) return fail("learn", kExitFailedRun, e);
    }
    return kExitOk;
  };
}

}  // namespace mha::cli
