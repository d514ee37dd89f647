// printf-style formatting into a std::string, for the reports' one-line summaries.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace mha {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args, again;
  va_start(args, fmt);
  va_copy(again, args);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  std::string out;
  if (n >= 0 && static_cast<size_t>(n) < sizeof buf) {
    out.assign(buf, static_cast<size_t>(n));  // n < 512: a length GCC can bound (no -Wstringop-overflow)
  } else if (n >= 0) {  // longer than the buffer (a long path): formatted again at its length
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), fmt, again);
    out.resize(static_cast<size_t>(n));
  }
  va_end(again);
  return out;
}

}  // namespace mha
