// The names a checkpoint's manifest and array files use, shared by its writer
// (checkpoint.cpp) and its reader (checkpoint_read.cpp). Internal to learn/.
#pragma once

#include "learn/learner.hpp"
#include "util/format.hpp"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <utility>

namespace mha::checkpoint_format {

// The steps a checkpoint can stand before, with their names in the manifest.
inline constexpr std::pair<LearnStep, const char*> kSteps[] = {
    {LearnStep::sculpt, "sculpt"}, {LearnStep::span, "span"},           {LearnStep::net, "net"},
    {LearnStep::margin, "margin"}, {LearnStep::reference, "reference"}, {LearnStep::polish, "polish"},
    {LearnStep::finish, "finish"}};
inline constexpr int kMaxRound = 64;  // the CLI allows 20 rounds

inline const char* step_name(LearnStep step) {
  for (const auto& [s, name] : kSteps)
    if (s == step) return name;
  return "?";
}

inline std::string hex16(uint64_t v) { return format("%016llx", static_cast<unsigned long long>(v)); }

// Doubles as hexadecimal floats (std::to_chars): exact, locale-free, with
// "inf" and "nan" (whose payload is not kept) for the non-finite values.
inline std::string hex(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::hex);
  return std::string(buf, r.ptr);
}

inline bool is_array_name(const std::string& name) {
  if (name.size() != 6 + 16 + 4 || name.compare(0, 6, "array-") != 0 || name.compare(22, 4, ".npy") != 0) return false;
  for (size_t i = 6; i < 22; ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i])) && !(name[i] >= 'a' && name[i] <= 'f')) return false;
  return true;
}


}  // namespace mha::checkpoint_format
