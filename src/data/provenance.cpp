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

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

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

// The value of the first /proc/cpuinfo line starting with KEY; "" where there is none.
std::string cpuinfo_value(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

// The architecture the program was compiled for (what decides Eigen's vector
// width and glibc's libm code).
std::string architecture() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "other";
#endif
}

// The CPU the program runs on, as the CPU itself says: on x86-64 its CPUID
// brand string (which an emulator such as qemu sets to the emulated model,
// while /proc/cpuinfo stays the host's); on aarch64 the implementer and part
// numbers of /proc/cpuinfo; "unknown" where there is nothing to read.
std::string cpu_model() {
#if defined(__x86_64__)
  unsigned int regs[12] = {};
  // GCC's __get_cpuid_max returns unsigned int, clang's int: compare as unsigned.
  if (static_cast<unsigned int>(__get_cpuid_max(0x80000000, nullptr)) >= 0x80000004u) {
    for (unsigned int i = 0; i < 3; ++i)
      __get_cpuid(0x80000002 + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2], &regs[4 * i + 3]);
    std::string brand(reinterpret_cast<const char*>(regs), sizeof regs);
    brand = brand.substr(0, brand.find('\0'));
    const auto first = brand.find_first_not_of(' '), last = brand.find_last_not_of(' ');
    if (first != std::string::npos) return brand.substr(first, last - first + 1);
  }
  const std::string model = cpuinfo_value("model name");
#elif defined(__aarch64__)
  const std::string implementer = cpuinfo_value("CPU implementer"), part = cpuinfo_value("CPU part");
  const std::string model = implementer.empty() ? "" : "implementer " + implementer + ", part " + part;
#else
  const std::string model = cpuinfo_value("model name");
#endif
  return model.empty() ? "unknown" : model;
}

// The run-time CPU features that choose glibc's libm variants on x86-64 (its
// exp, log, pow, sin, cos have FMA versions: docs/reproducibility.md).
json cpu_features() {
  json features = json::array();
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) features.push_back("avx2");
  if (__builtin_cpu_supports("fma")) features.push_back("fma");
  if (__builtin_cpu_supports("avx512f")) features.push_back("avx512f");
#endif
  return features;
}

// The LAPACK the LP solver's dense factorisation calls (CoinUtils' dgetrf_): the file
// that provides the symbol in this process (Debian's alternatives choose it at run
// time: the reference LAPACK or OpenBLAS), and OpenBLAS's kernel for this CPU when it is
// OpenBLAS. Both change the LPs' last bits, and so a learner run's bytes
// (docs/reproducibility.md, its table's LAPACK row).
json lapack_provenance() {
  json out = {{"library", "none"}};
  void* symbol = dlsym(RTLD_DEFAULT, "dgetrf_");
  Dl_info info{};
  if (symbol && dladdr(symbol, &info) && info.dli_fname) {
    char resolved[PATH_MAX];
    out["library"] = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
  }
  using CoreName = char* (*)();
  if (auto core = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename")))
    if (const char* name = core()) out["openblas_core"] = name;
  return out;
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

// What the bytes of this build's outputs depend on (docs/reproducibility.md).
std::string bytes_promise() {
  if (std::string(kArithmetic) != "reproducible") return "machine-specific (native build, for benchmarks)";
  if (Eigen::internal::packet_traits<double>::size == 1)
    return "the same on every x86-64-v3 and armv8-a CPU with these library versions "
           "(Eigen without vector packets: the portable arithmetic)";
  return std::string("the same on every ") + kIsaLevel + " CPU with these library versions";
}
}  // namespace

json arithmetic_provenance() {
  return {{"arithmetic", kArithmetic},
          {"bytes", bytes_promise()},
          {"architecture", architecture()},
          {"isa_level", kIsaLevel},
          {"eigen_vector_doubles", Eigen::internal::packet_traits<double>::size},
          {"fp_flags", kFloatingPointFlags},
          {"build_type", kBuildType},
          {"compiler", compiler_name()},
          {"libraries", library_versions()},
          {"lapack", lapack_provenance()},
          {"cpu", cpu_model()},
          {"cpu_features", cpu_features()},
          {"threads_available", omp_get_max_threads()},
          {"fingerprint", kFingerprint}};
}

const char* build_fingerprint() { return kFingerprint; }

std::string version_text() {
  // Appended piece by piece: GCC 12 warns (-Warray-bounds, a false positive) on a
  // long chain of operator+ over string literals.
  std::string text = "mhalearn ";
  for (const char* piece : {kVersion, " (", kGitCommit, "; fingerprint ", kFingerprint, "; arithmetic: ",
                            kArithmetic, ", ", kFloatingPointFlags, ")"})
    text += piece;
  return text;
}

json make_provenance(const std::string& command, const json& options) {
  return {{"tool", "mhalearn"},       {"version", kVersion}, {"git_commit", kGitCommit},
          {"command", command},       {"options", options},  {"build", arithmetic_provenance()}};
}

}  // namespace mha
