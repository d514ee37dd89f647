// The paper variant's report lists MATH.md §3.9's open choices, one line a row, in order.
#include "learn/report.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
using namespace mha;

namespace {
// The repository root (as tests/data/test_fuzz_regressions.cpp finds it).
fs::path repository_root() {
  fs::path file = __FILE__;
  if (file.is_relative()) file = fs::path(MHALEARN_CLI_PATH).parent_path() / file;
  return fs::weakly_canonical(file).parent_path().parent_path().parent_path();
}

// The row numbers of the table under "The paper variant's open choices".
std::vector<int> open_choice_rows(const std::string& math) {
  const size_t start = math.find("**The paper variant's open choices.**");
  REQUIRE(start != std::string::npos);
  std::vector<int> rows;
  std::istringstream in(math.substr(start));
  std::string line;
  bool in_table = false;
  const std::regex row(R"(^\| (\d+) \|)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) rows.push_back(std::stoi(m[1]));
    if (line.rfind("|", 0) == 0) in_table = true;
    else if (in_table) break;
  }
  return rows;
}
}  // namespace

TEST_CASE("the paper variant's report lists every open choice of MATH.md §3.9, in the table's order", "[learn]") {
  std::ifstream in(repository_root() / "MATH.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::vector<int> rows = open_choice_rows(ss.str());
  REQUIRE(rows.size() >= 10);
  std::vector<int> listed;
  for (const auto& [name, value] : variant_choices(LearnVariant::paper))
    if (name.rfind("open ", 0) == 0 && name != "open choices") {
      listed.push_back(std::stoi(name.substr(5, 2)));
      CHECK_FALSE(value.empty());
    }
  CHECK(listed == rows);
  // The extended variant has no open choices of the sources to list.
  for (const auto& [name, value] : variant_choices(LearnVariant::extended)) CHECK(name.rfind("open ", 0) != 0);
}
