// verify: every stage's fast path against its reference path on the same
// inputs (verify/verify.hpp), with the derived bound, the slack and the
// reference precision the verdict was reached at. Exit 0 when every stage
// agrees; kExitDisagreement when one disagrees after escalation.
#include "commands/declarations.hpp"
#include "commands/fault_switch.hpp"
#include "commands/input.hpp"
#include "commands/status.hpp"
#include "model/instance_gen.hpp"
#include "verify/verify.hpp"

#include <algorithm>

namespace mha::commands {

using nlohmann::json;

namespace {

// The stages asked for ("all": every one): "" or the unknown one.
std::string stages_asked(const Arguments& a, std::vector<std::string>& stages) {
  const std::vector<std::string>& names = verify_stage_names();
  for (const std::string& s : a.texts("stages")) {
    if (s == "all") stages.insert(stages.end(), names.begin(), names.end());
    else if (std::find(names.begin(), names.end(), s) == names.end())
      return "unknown stage '" + s + "' (forward, 1, 2, 3, 4, 5, 6, polish or all)";
    else stages.push_back(s);
  }
  return "";
}

// The instance (the default one, as `generate` draws it, when none is given) and
// the layer --layer names: false with `r` failed when they cannot be had.
bool verify_inputs(const Arguments& a, Instance& inst, std::optional<Instance>& layer, Result& r) {
  if (a.given("instance")) {
    if (!load_instance(a, "instance", inst, r)) return false;
  } else {
    GenerateResult g = generate_instance(GenerateOptions{});
    if (!g.ok) {
      r.failed(kExitFailedRun, g.error);
      return false;
    }
    inst = std::move(g.instance);
  }
  if (auto e = oracle_problem(inst); !e.empty()) {
    r.failed(kExitFastPathOverflow, (a.values.count("instance") ? a.text("instance") : std::string("the instance")) + ": " + e);
    return false;
  }
  if (!a.given("layer")) return true;
  layer.emplace();
  if (!load_instance(a, "layer", *layer, r)) return false;
  if (layer->d() != inst.d() || layer->layer.m() != inst.layer.m()) {
    r.failed(kExitBadInput, (a.instances.count("layer") ? std::string("the layer") : a.text("layer")) +
                                ": its (d, m) differ from the instance's");
    return false;
  }
  return true;
}

Result run_verify(Arguments& a, Context& ctx) {
  Result r;
  std::vector<std::string> stages;
  if (auto e = stages_asked(a, stages); !e.empty()) return r.failed(kExitBadInput, e);
  if (a.given("layer") && std::find(stages.begin(), stages.end(), "polish") == stages.end())
    return r.failed(kExitBadInput, a.spell("layer") + " applies to the polish stage, which is not among the stages asked for");
  Instance inst;
  std::optional<Instance> layer;
  if (!verify_inputs(a, inst, layer, r)) return r;
  VerifyOptions o;
  o.seed = a.seed("seed");
  o.threads = static_cast<int>(a.integer("threads"));
  if (layer) o.polish_layer = &layer->layer;
  FastPaths fast;
  if (auto e = verify_fast_paths(fast); !e.empty()) return r.failed(kExitBadInput, e);
  const std::vector<Comparison> rows = verify_instance(inst, stages, o, fast);
  r.value = json::array();
  for (const auto& c : rows) r.value.push_back(to_json(c));
  r.summary = a.flag("json") ? r.value.dump(2) + "\n" : format_table(rows);
  r.outputs["report"].document =
      json{{"rows", r.value}, {"provenance", ctx.provenance("verify", {{"stages", stages}, {"seed", o.seed}})}};
  switch (verify_outcome(rows)) {
    case VerifyOutcome::disagree:
      return r.failed(kExitDisagreement, "a fast path disagrees with its reference beyond the derived bound (after escalation)");
    case VerifyOutcome::incomplete: return r.failed(kExitFailedRun, "a stage could not be compared (see its row)");
    case VerifyOutcome::agree: break;
  }
  return r;
}

}  // namespace

Command verify_command() {
  Option stages{"stages", Type::texts, "forward, 1, 2, 3, 4, 5, 6, polish, or all"};
  stages.positional = true;
  stages.python_position = 1;
  Option instance{"instance", Type::text, "instance file (default: the default instance, as `generate` draws it)",
                  Role::instance_in};
  instance.python_position = 0;
  Option threads{"threads", Type::integer, "threads of the fast paths that take them"};
  threads.range = option::threads().range;
  return {"verify", "verify", "Each stage's fast path against its reference path on the same inputs, within derived bounds",
          {stages.with_default(std::vector<std::string>{"all"}), instance,
           {"layer", Type::text, "evaluate polishing's objective at this layer (a learned-layer file)", Role::instance_in},
           option::seed("sample seed"), threads.with_default(int64_t{1}), option::report("write the rows as JSON here"),
           option::json_flag("print the rows as JSON instead of a table")},
          run_verify};
}

}  // namespace mha::commands
