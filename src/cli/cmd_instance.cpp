// generate, check, import: instance files.
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/file_kinds.hpp"
#include "data/instance_io.hpp"
#include "data/import_npy.hpp"
#include "data/npy.hpp"
#include "model/conditions.hpp"
#include "model/import_attention.hpp"
#include "model/instance_gen.hpp"
#include "util/progress.hpp"

#include <iostream>
#include <memory>
#include <optional>

namespace mha::cli {

using nlohmann::json;

Runner add_generate(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "Draw a random instance that satisfies the conditions of MATH.md §2");
  auto o = std::make_shared<GenerateOptions>();
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::string>("boolean");
  auto as_json = std::make_shared<bool>(false);
  cmd->add_option("--d", o->d, "token dimension d")->capture_default_str();
  cmd->add_option("--k", o->k, "sequence length k")->capture_default_str();
  cmd->add_option("--m", o->m, "number of heads m")->capture_default_str();
  cmd->add_option("--scale", o->scale, "logit scale: ‖Θ_i‖_F, the std of a logit between independent tokens")
      ->capture_default_str();
  cmd->add_option("--coherence", o->coherence, "make every pair of Θ's have cosine ≈ this (nearly parallel heads; 0: independent)")
      ->capture_default_str();
  cmd->add_option("--inputs", *inputs, "input distribution")->capture_default_str()->check(CLI::IsMember({"boolean", "gaussian"}));
  cmd->add_option("--seed", o->seed, "random seed")->capture_default_str();
  cmd->add_option("-o,--output", *out, "instance file to write (JSON)")->required();
  cmd->add_flag("--json", *as_json, "print the summary as JSON");
  return [o, out, inputs, as_json] {
    parse_input_kind(*inputs, o->inputs);
    if (auto e = validate_generate_options(*o); !e.empty()) return fail("generate", kExitBadInput, e);
    // Drawing and checking the conditions is one library call without a counter;
    // at d = 512 it takes tens of seconds: say what is running.
    std::optional<Activity> drawing;
    drawing.emplace("generate: drawing an instance and checking its conditions (d = " + std::to_string(o->d) + ")");
    GenerateResult g = generate_instance(*o);
    drawing.reset();
    if (!g.ok) return fail("generate", kExitFailedRun, g.error);
    json options = {{"d", o->d}, {"k", o->k}, {"m", o->m}, {"scale", o->scale}, {"inputs", *inputs}, {"seed", o->seed}};
    if (o->coherence > 0) options["coherence"] = o->coherence;
    json prov = make_provenance("generate", options);
    prov["seed"] = o->seed;
    prov["attempts"] = g.attempts;
    g.instance.provenance_json = prov.dump();
    if (auto e = write_instance(*out, g.instance); !e.empty()) return fail("generate", kExitFailedRun, e);
    int passed = 0;
    for (const auto& c : g.report.checks) passed += c.pass;
    if (*as_json) {
      std::cout << json{{"output", *out}, {"options", options}, {"attempts", g.attempts},
                        {"conditions", to_json(g.report)}}.dump(2) << "\n";
    } else {
      std::cout << "wrote " << *out << ": d=" << o->d << " k=" << o->k << " m=" << o->m << " scale=" << o->scale
                << " inputs=" << *inputs << " seed=" << o->seed << " (" << g.attempts << " draw"
                << (g.attempts == 1 ? "" : "s") << "); conditions: " << passed << "/" << g.report.checks.size() << " pass\n";
    }
    for (const auto& c : g.report.checks)
      if (!c.pass)
        std::cerr << "mhalearn generate: warning: condition " << c.name << " fails (" << c.value << " "
                  << c.comparison << " " << c.threshold << " does not hold); see `mhalearn check`\n";
    return kExitOk;
  };
}

Runner add_check(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Condition report of an instance (MATH.md §2): value, threshold, verdict");
  auto path = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto strict = std::make_shared<bool>(false);
  cmd->add_option("instance", *path, "instance file (JSON)")->required();
  cmd->add_flag("--json", *as_json, "print the report as JSON");
  cmd->add_flag("--strict", *strict, "exit with status 1 when any condition fails");
  return [path, as_json, strict] {
    InstanceReadResult r = read_instance(*path);
    if (!r.ok) return fail("check", kExitBadInput, r.error);
    ConditionReport report = check_conditions(r.instance);
    if (*as_json)
      std::cout << json{{"instance", *path}, {"conditions", to_json(report)}}.dump(2) << "\n";
    else
      std::cout << format_table(report);
    return (*strict && !report.all_pass()) ? kExitFailedRun : kExitOk;
  };
}

Runner add_import(CLI::App& app) {
  auto* cmd = app.add_subcommand("import", "Import standard attention weights (PyTorch nn.MultiheadAttention, no biases)");
  struct Args { std::string wq, wk, wv, wo, out, inputs = "boolean"; int heads = 1, k = 2; };
  auto a = std::make_shared<Args>();
  cmd->add_option("--wq", a->wq, std::string("W_Q; ") + kWeightsContract)->required();
  cmd->add_option("--wk", a->wk, std::string("W_K; ") + kWeightsContract)->required();
  cmd->add_option("--wv", a->wv, std::string("W_V; ") + kWeightsContract)->required();
  cmd->add_option("--wo", a->wo, std::string("W_O; ") + kWeightsContract)->required();
  cmd->add_option("--heads", a->heads, "number of heads H (d divisible by H)")->required();
  cmd->add_option("--k", a->k, "sequence length k of the instance")->capture_default_str();
  cmd->add_option("--inputs", a->inputs, "input distribution")->capture_default_str()->check(CLI::IsMember({"boolean", "gaussian"}));
  cmd->add_option("-o,--output", a->out, "instance file to write (JSON)")->required();
  return [a] {
    const std::array<std::string, 4> paths = {a->wq, a->wk, a->wv, a->wo};
    std::array<NpyArray, 4> w;
    for (size_t i = 0; i < 4; ++i) {
      NpyResult r = read_npy(paths[i]);
      if (!r.ok) return fail("import", kExitBadInput, r.error);
      w[i] = std::move(r.array);
    }
    ImportResult imp = import_attention_npy(w, paths, a->heads);
    if (!imp.ok) return fail("import", kExitBadInput, imp.error);
    Instance inst;
    inst.layer = std::move(imp.layer);
    inst.k = a->k;
    parse_input_kind(a->inputs, inst.inputs);
    if (auto e = validate_instance(inst); !e.empty()) return fail("import", kExitBadInput, e);
    json options = {{"wq", a->wq}, {"wk", a->wk}, {"wv", a->wv}, {"wo", a->wo}, {"heads", a->heads}, {"k", a->k}, {"inputs", a->inputs}};
    inst.provenance_json = make_provenance("import", options).dump();
    if (auto e = write_instance(a->out, inst); !e.empty()) return fail("import", kExitFailedRun, e);
    std::cout << "wrote " << a->out << ": d=" << inst.d() << " k=" << inst.k << " m=" << inst.m() << "\n";
    return kExitOk;
  };
}

}  // namespace mha::cli
