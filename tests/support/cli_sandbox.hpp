// Running the mhalearn tool from unit tests: a scratch directory per test
// process, the command's exit status and output, and the bad-input contract
// (exit status 2, exactly one line on stderr). Header-only because
// MHALEARN_CLI_PATH is defined for the unit-test target alone.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace mha::test {

struct Run {
  int status;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Sandbox {
 public:
  explicit Sandbox(const std::string& prefix = "mhalearn_cli_")
      : dir_(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~Sandbox() { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  Run run(const std::string& args) const {
    const std::string cmd = std::string(MHALEARN_CLI_PATH) + " " + args + " >" + path("out.txt") + " 2>" + path("err.txt");
    const int raw = std::system(cmd.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(path("out.txt")), slurp(path("err.txt"))};
  }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }

 private:
  std::filesystem::path dir_;
};

// Exit status 2 and exactly one line on stderr that contains `needle`.
inline void expect_bad_input(const Run& r, const std::string& needle) {
  INFO("stderr: " << r.err);
  CHECK(r.status == 2);
  CHECK(r.err.find(needle) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace mha::test
