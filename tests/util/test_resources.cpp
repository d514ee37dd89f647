#include "util/resources.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>

using nlohmann::json;

namespace {
// Busy work for about `seconds` of wall time on one thread (CPU time grows with it).
double spin(double seconds) {
  const auto start = std::chrono::steady_clock::now();
  double x = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds)
    for (int i = 1; i < 1000; ++i) x += std::sqrt(static_cast<double>(i));
  return x;
}
}  // namespace

TEST_CASE("process_resources: CPU time is user + system and grows with work; the load averages are read", "[resources]") {
  const json before = mha::process_resources();
  CHECK(before.at("cpu_seconds").get<double>() ==
        before.at("user_seconds").get<double>() + before.at("system_seconds").get<double>());
  CHECK(spin(0.3) > 0);
  const json after = mha::process_resources();
  // 0.3 s of wall time on a busy thread: at least 0.05 s of CPU even on a machine shared 6 ways.
  CHECK(after.at("cpu_seconds").get<double>() - before.at("cpu_seconds").get<double>() >= 0.05);
  // Linux gives the 1-, 5- and 15-minute load averages; the start is fixed when the process started.
  REQUIRE(after.contains("load_average_start"));
  CHECK(after.at("load_average_start").size() == 3);
  CHECK(after.at("load_average_end").size() == 3);
  CHECK(after.at("load_average_start") == before.at("load_average_start"));
}
