#include "data/provenance.hpp"

#include "fingerprint.hpp"
#include "version.hpp"

#include <ClpConfig.h>
#include <CGAL/version.h>
#include <Eigen/Core>
#include <boost/version.hpp>
#include <gmp.h>
#include <gnu/libc-version.h>
#include <mpfr.h>
#include <omp.h>

#include <fstream>

namespace mha {

using nlohmann::json;

namespace {
std::string compiler_name() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("gcc ") + __VERSION__;
#else
  return "unknown";
#endif
}

// The first "model name" line of /proc/cpuinfo; "unknown" where there is none.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

json library_versions() {
  return {{"eigen", std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                        std::to_string(EIGEN_MINOR_VERSION)},
          {"boost", BOOST_LIB_VERSION},
          {"mpfr", mpfr_get_version()},
          {"gmp", gmp_version},
          {"cgal", CGAL_VERSION_STR},
          {"clp", CLP_VERSION},
          {"glibc", gnu_get_libc_version()},
          {"nlohmann_json", std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                                std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                                std::to_string(NLOHMANN_JSON_VERSION_PATCH)}};
}
}  // namespace

json arithmetic_provenance() {
  const bool reproducible = std::string(kArithmetic) == "reproducible";
  return {{"arithmetic", kArithmetic},
          {"bytes", reproducible ? "the same on every x86-64-v3 CPU with these library versions"
                                 : "machine-specific (native build, for benchmarks)"},
          {"isa_level", kIsaLevel},
          {"fp_flags", kFloatingPointFlags},
          {"build_type", kBuildType},
          {"compiler", compiler_name()},
          {"libraries", library_versions()},
          {"cpu", cpu_model()},
          {"threads_available", omp_get_max_threads()},
          {"fingerprint", kFingerprint}};
}

const char* build_fingerprint() { return kFingerprint; }

std::string version_text() {
  return std::string("mhalearn ") + kVersion + " (" + kGitCommit + "; fingerprint " + kFingerprint +
         "; arithmetic: " + kArithmetic + ", " + kFloatingPointFlags + ")";
}

json make_provenance(const std::string& command, const json& options) {
  return {{"tool", "mhalearn"},       {"version", kVersion}, {"git_commit", kGitCommit},
          {"command", command},       {"options", options},  {"build", arithmetic_provenance()}};
}

}  // namespace mha
