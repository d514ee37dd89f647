// Replays, through the fuzz harnesses' own checks (fuzz/checks.hpp), every
// input a fuzzer found (tests/data/fuzz_regressions/<harness>/, one file per
// finding, fixed since) and every seed of the corpora (fuzz/corpus/<harness>/),
// so a finding stays fixed in the ordinary unit tests, without libFuzzer.
// checks.cpp is included, not linked: the root build does not compile fuzz/.
#include "../../fuzz/checks.cpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {
// The repository root. __FILE__ is relative to the build directory when
// ccache's base_dir rewrote the path; the tool's binary lives in that directory.
fs::path repository_root() {
  fs::path file = __FILE__;
  if (file.is_relative()) file = fs::path(MHALEARN_CLI_PATH).parent_path() / file;
  return fs::weakly_canonical(file).parent_path().parent_path().parent_path();
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `check` on every file under root/<dir>; returns how many it ran.
template <class Check>
int replay(const fs::path& dir, Check check) {
  int n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    CAPTURE(entry.path().string());
    CHECK(check(bytes_of(entry.path())) == "");
    ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("fuzz regressions and seed corpora pass the harnesses' checks", "[fuzz]") {
  const fs::path root = repository_root();
  REQUIRE(fs::exists(root / "fuzz" / "checks.hpp"));
  const auto both = [&](const std::string& harness, auto check) {
    CAPTURE(harness);
    const int seeds = replay(root / "fuzz" / "corpus" / harness, check);
    replay(root / "tests" / "data" / "fuzz_regressions" / harness, check);
    CHECK(seeds >= 3);  // the corpora are committed: an empty one means a broken path
  };
  both("npy", mha::fuzz::check_npy);
  both("instance_json", mha::fuzz::check_instance_json);
  both("import", mha::fuzz::check_import);
  both("forward_x", mha::fuzz::check_forward_x);
  both("checkpoint", mha::fuzz::check_checkpoint);
}
