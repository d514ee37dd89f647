// printf-style formatting into a std::string, for the reports' one-line summaries.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace mha {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

}  // namespace mha
