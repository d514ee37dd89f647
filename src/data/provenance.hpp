// Provenance every output file carries: what made it (tool, version, commit,
// command, options) and what decides its arithmetic (compiler, floating-point
// flags, ISA level, library versions, CPU, threads). docs/formats.md lists the
// keys; docs/reproducibility.md says which of them the bytes depend on.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace mha {

// The build and machine facts that decide (or could decide) floating-point
// results: {"arithmetic", "bytes", "architecture", "isa_level",
// "eigen_vector_doubles", "fp_flags", "build_type", "compiler", "libraries": {...},
// "cpu", "cpu_features", "threads_available"}.
nlohmann::json arithmetic_provenance();

// tool, version, commit, the caller's command and options, and "arithmetic".
nlohmann::json make_provenance(const std::string& command, const nlohmann::json& options);

}  // namespace mha
