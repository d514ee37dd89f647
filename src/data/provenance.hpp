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
// "cpu", "cpu_features", "threads_available", "fingerprint"}.
nlohmann::json arithmetic_provenance();

// tool, version, commit, the caller's command and options, and "arithmetic".
nlohmann::json make_provenance(const std::string& command, const nlohmann::json& options);

// The build's fingerprint (cmake/fingerprint.py): 16 hex digits of a hash of the
// sources under src/ without comments and of the settings that reach the
// arithmetic. Runs with one fingerprint were made by one learner.
const char* build_fingerprint();

// `mhalearn --version`: version, commit, fingerprint and the arithmetic's flags.
std::string version_text();

}  // namespace mha
