// generate, check, import: instance files.
#include "commands/declarations.hpp"
#include "commands/file_kinds.hpp"
#include "commands/input.hpp"
#include "commands/status.hpp"
#include "data/import_npy.hpp"
#include "data/instance_io.hpp"
#include "model/conditions.hpp"
#include "model/instance_gen.hpp"
#include "util/format.hpp"
#include "util/progress.hpp"

#include <array>
#include <cctype>
#include <optional>

namespace mha::commands {

using nlohmann::json;

namespace {

// Conditions that fail by design of the options asked for: --coherence makes
// the heads nearly parallel (theta_incoherence), so it is not a warning.
bool fails_by_design(const std::string& condition, const GenerateOptions& o) {
  return o.coherence > 0 && condition == "theta_incoherence";
}

Result run_generate(Arguments& a, Context& ctx) {
  GenerateOptions o;
  o.d = static_cast<int>(a.integer("d"));
  o.k = static_cast<int>(a.integer("k"));
  o.m = static_cast<int>(a.integer("m"));
  o.scale = a.number("scale");
  o.coherence = a.number("coherence");
  parse_input_kind(a.text("inputs"), o.inputs);
  o.seed = a.seed("seed");
  Result r;
  if (auto e = validate_generate_options(o); !e.empty()) return r.failed(kExitBadInput, e);
  // Drawing and checking the conditions is one library call without a counter;
  // at d = 512 it takes tens of seconds: say what is running.
  std::optional<Activity> drawing;
  drawing.emplace("generate: drawing an instance and checking its conditions (d = " + std::to_string(o.d) + ")");
  GenerateResult g = generate_instance(o);
  drawing.reset();
  if (!g.ok) return r.failed(kExitFailedRun, g.error);
  json options = {{"d", o.d}, {"k", o.k}, {"m", o.m}, {"scale", o.scale}, {"inputs", a.text("inputs")}, {"seed", o.seed}};
  if (o.coherence > 0) options["coherence"] = o.coherence;
  json prov = ctx.provenance("generate", options);
  prov["seed"] = o.seed;
  prov["attempts"] = g.attempts;
  g.instance.provenance_json = prov.dump();
  int passed = 0;
  for (const auto& c : g.report.checks) passed += c.pass;
  for (const auto& c : g.report.checks)
    if (!c.pass && !fails_by_design(c.name, o))
      ctx.warn(format("condition %s fails (%g %s %g does not hold); see `mhalearn check`", c.name.c_str(), c.value,
                      c.comparison.c_str(), c.threshold));
  const std::string& out = a.text("output");
  if (a.flag("json"))
    r.summary = json{{"output", out}, {"options", options}, {"attempts", g.attempts}, {"conditions", to_json(g.report)}}
                    .dump(2) + "\n";
  else
    r.summary = format("wrote %s: d=%d k=%d m=%d scale=%g inputs=%s seed=%llu (%d draw%s); conditions: %d/%d pass\n",
                       out.c_str(), o.d, o.k, o.m, o.scale, a.text("inputs").c_str(), (unsigned long long)o.seed,
                       g.attempts, g.attempts == 1 ? "" : "s", passed, int(g.report.checks.size()));
  r.value = to_json(g.report);
  r.outputs["output"].instance = std::move(g.instance);
  return r;
}

}  // namespace

Command generate_command() {
  const GenerateOptions defaults;
  Option d = option::d().with_default(int64_t{defaults.d}), k = option::k().with_default(int64_t{defaults.k}),
         m = option::m().with_default(int64_t{defaults.m});
  d.python_position = 0, k.python_position = 1, m.python_position = 2;
  Option coherence{"coherence", Type::number,
                   "make every pair of Θ's have cosine ≈ this (nearly parallel heads; 0: independent)"};
  coherence.range = range(0, 0.999999);
  Option output = option::output("instance file to write (JSON)");
  output.required = true;
  return {"generate", "generate", "Draw a random instance that satisfies the conditions of MATH.md §2",
          {d, k, m, option::scale("logit scale: ‖Θ_i‖_F, the std of a logit between independent tokens")
                        .with_default(defaults.scale),
           coherence.with_default(defaults.coherence), option::inputs(), option::seed("random seed"), output,
           option::json_flag("print the summary as JSON")},
          run_generate};
}

namespace {

Result run_check(Arguments& a, Context&) {
  Result r;
  Instance inst;
  if (!load_instance(a, "instance", inst, r)) return r;
  const ConditionReport report = check_conditions(inst);
  r.value = to_json(report);
  r.summary = a.flag("json") ? json{{"instance", a.text("instance")}, {"conditions", r.value}}.dump(2) + "\n"
                             : format_table(report);
  if (a.flag("strict") && !report.all_pass()) {
    std::string failing;
    for (const auto& c : report.checks)
      if (!c.pass) failing.append(failing.empty() ? "" : ", ").append(c.name);
    r.failed(kExitFailedRun, "a condition fails: " + failing);
  }
  return r;
}

}  // namespace

Command check_command() {
  Option instance = option::instance_file("instance file (JSON)");
  instance.required = true;
  return {"check", "check", "Condition report of an instance (MATH.md §2): value, threshold, verdict",
          {instance, option::json_flag("print the report as JSON"),
           {"strict", Type::flag, "exit with status 1 when any condition fails (Python: raise RunFailed)"}},
          run_check};
}

namespace {

constexpr std::array<const char*, 4> kWeights = {"wq", "wk", "wv", "wo"};

Result run_import(Arguments& a, Context& ctx) {
  Result r;
  std::array<NpyArray, 4> w;
  std::array<std::string, 4> names;
  for (size_t i = 0; i < 4; ++i) {
    const std::string name = kWeights[i];
    if (const auto it = a.arrays.find(name); it != a.arrays.end()) {
      w[i] = it->second;
      names[i] = a.spell(name);
      continue;
    }
    NpyResult read = read_npy(a.text(name));
    if (!read.ok) return r.failed(kExitBadInput, read.error);
    w[i] = std::move(read.array);
    names[i] = a.text(name);
  }
  const int heads = static_cast<int>(a.integer("heads"));
  ImportResult imp = import_attention_npy(w, names, heads);
  if (!imp.ok) return r.failed(kExitBadInput, imp.error);
  Instance inst;
  inst.layer = std::move(imp.layer);
  inst.k = static_cast<int>(a.integer("k"));
  parse_input_kind(a.text("inputs"), inst.inputs);
  if (auto e = validate_instance(inst); !e.empty()) return r.failed(kExitBadInput, e);
  json options = {{"heads", heads}, {"k", inst.k}, {"inputs", a.text("inputs")}};
  for (const char* name : kWeights)
    if (!a.arrays.count(name)) options[name] = a.text(name);
  inst.provenance_json = ctx.provenance("import", options).dump();
  r.summary = format("wrote %s: d=%d k=%d m=%d\n", a.text("output").c_str(), inst.d(), inst.k, inst.m());
  r.outputs["output"].instance = std::move(inst);
  return r;
}

}  // namespace

Command import_command() {
  std::vector<Option> options;
  for (size_t i = 0; i < kWeights.size(); ++i) {
    Option w{kWeights[i], Type::text, std::string("W_") + char(std::toupper(kWeights[i][1])) + "; " + kWeightsContract,
             Role::array_in};
    w.required = true;
    w.python_position = static_cast<int>(i);
    w.contract = kWeightsContract;
    options.push_back(w);
  }
  Option heads{"heads", Type::integer, "number of heads H (d divisible by H)"};
  heads.range = range(1, 64);
  heads.required = true;
  heads.python_position = 4;
  Option output = option::output("instance file to write (JSON)");
  output.required = true;
  options.insert(options.end(), {heads, option::k("sequence length k of the instance").with_default(int64_t{2}),
                                 option::inputs(), output});
  return {"import", "import_attention",
          "Import standard attention weights (PyTorch nn.MultiheadAttention, no biases)", options, run_import};
}

}  // namespace mha::commands
