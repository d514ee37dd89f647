#include "util/progress.hpp"

#include <cstdio>
#include <unistd.h>

namespace mha {

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)), total_(total), enabled_(::isatty(2) == 1), last_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (printed_) std::fprintf(stderr, "\r\033[K");
}

void Progress::update(int64_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(200) && done < total_) return;
  last_ = now;
  printed_ = true;
  std::fprintf(stderr, "\r\033[K[%s] %lld / %lld (%.0f%%)", label_.c_str(), static_cast<long long>(done),
               static_cast<long long>(total_), total_ > 0 ? 100.0 * double(done) / double(total_) : 100.0);
  std::fflush(stderr);
}

}  // namespace mha
