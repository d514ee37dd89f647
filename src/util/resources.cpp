#include "util/resources.hpp"

#include <cstdlib>
#include <sys/resource.h>

namespace mha {

namespace {

nlohmann::json load_average() {
  double loads[3];
  if (getloadavg(loads, 3) != 3) return nullptr;
  return {loads[0], loads[1], loads[2]};
}

// Read when the program's static objects are built, i.e. as the process starts.
const nlohmann::json kLoadAtStart = load_average();

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); }

}  // namespace

nlohmann::json process_resources() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double user = seconds(usage.ru_utime), system = seconds(usage.ru_stime);
  nlohmann::json out = {{"cpu_seconds", user + system}, {"user_seconds", user}, {"system_seconds", system}};
  if (!kLoadAtStart.is_null()) out["load_average_start"] = kLoadAtStart;
  if (const nlohmann::json now = load_average(); !now.is_null()) out["load_average_end"] = now;
  return out;
}

}  // namespace mha
