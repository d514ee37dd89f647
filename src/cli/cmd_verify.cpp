// verify: every stage's fast path against its reference path on the same
// inputs (verify/verify.hpp), with the derived bound, the slack and the
// reference precision the verdict was reached at. Exit 0 when every stage
// agrees; kExitDisagreement when one disagrees after escalation.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/fault_switch.hpp"
#include "data/instance_io.hpp"
#include "data/provenance.hpp"
#include "model/instance_gen.hpp"
#include "verify/verify.hpp"

#include <algorithm>
#include <iostream>
#include <memory>

namespace mha::cli {

using nlohmann::json;


Runner add_verify(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verify", "Each stage's fast path against its reference path on the same inputs, within derived bounds");
  struct Args {
    std::vector<std::string> stages{"all"};
    std::string instance_path, layer_path, report_path;
    bool as_json = false;
    VerifyOptions options;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("stages", a->stages, "forward, 1, 2, 3, 4, 5, 6, polish, or all")->capture_default_str();
  cmd->add_option("--instance", a->instance_path, "instance file (default: the default instance, as `generate` draws it)");
  cmd->add_option("--layer", a->layer_path, "evaluate polishing's objective at this layer (a learned-layer file)");
  cmd->add_option("--seed", a->options.seed, "sample seed")->capture_default_str();
  cmd->add_option("--threads", a->options.threads, "threads of the fast paths that take them")->capture_default_str();
  cmd->add_option("--report", a->report_path, "write the rows as JSON here");
  cmd->add_flag("--json", a->as_json, "print the rows as JSON instead of a table");
  return [a] {
    std::vector<std::string> stages;
    for (const auto& s : a->stages) {
      if (s == "all") stages.insert(stages.end(), verify_stage_names().begin(), verify_stage_names().end());
      else if (std::find(verify_stage_names().begin(), verify_stage_names().end(), s) == verify_stage_names().end())
        return fail("verify", kExitBadInput, "unknown stage '" + s + "' (forward, 1, 2, 3, 4, 5, 6, polish or all)");
      else stages.push_back(s);
    }
    if (!a->layer_path.empty() && std::find(stages.begin(), stages.end(), "polish") == stages.end())
      return fail("verify", kExitBadInput, "--layer applies to the polish stage, which is not among the stages asked for");
    Instance inst;
    if (a->instance_path.empty()) {
      GenerateResult g = generate_instance(GenerateOptions{});
      if (!g.ok) return fail("verify", kExitFailedRun, g.error);
      inst = g.instance;
    } else {
      InstanceReadResult r = read_instance(a->instance_path);
      if (!r.error.empty()) return fail("verify", kExitBadInput, r.error);
      inst = r.instance;
    }
    if (auto e = oracle_problem(inst); !e.empty()) return fail("verify", kExitFastPathOverflow, e);
    Instance layer_file;
    if (!a->layer_path.empty()) {
      InstanceReadResult r = read_instance(a->layer_path);
      if (!r.error.empty()) return fail("verify", kExitBadInput, r.error);
      if (r.instance.d() != inst.d() || r.instance.layer.m() != inst.layer.m())
        return fail("verify", kExitBadInput, a->layer_path + ": its (d, m) differ from the instance's");
      layer_file = r.instance;
      a->options.polish_layer = &layer_file.layer;
    }
    FastPaths fast;
    if (auto e = verify_fast_paths(fast); !e.empty()) return fail("verify", kExitBadInput, e);
    const std::vector<Comparison> rows = verify_instance(inst, stages, a->options, fast);
    json out = json::array();
    for (const auto& c : rows) out.push_back(to_json(c));
    if (a->as_json) std::cout << out.dump(2) << "\n";
    else std::printf("%s", format_table(rows).c_str());
    if (!a->report_path.empty())
      if (auto e = write_json_atomically(a->report_path, json{{"rows", out}, {"provenance", make_provenance("verify", {{"stages", stages}, {"seed", a->options.seed}})}});
          !e.empty())
        return fail("verify", kExitFailedRun, e);
    switch (verify_outcome(rows)) {
      case VerifyOutcome::disagree:
        return fail("verify", kExitDisagreement,
                    "a fast path disagrees with its reference beyond the derived bound (after escalation)");
      case VerifyOutcome::incomplete:
        return fail("verify", kExitFailedRun, "a stage could not be compared (see its row)");
      case VerifyOutcome::agree:
        break;
    }
    return kExitOk;
  };
}

}  // namespace mha::cli
