// Progress lines on stderr, only when stderr is a terminal, at most ~5 per second.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace mha {

class Progress {
 public:
  Progress(std::string label, int64_t total);
  ~Progress();
  void update(int64_t done);

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace mha
