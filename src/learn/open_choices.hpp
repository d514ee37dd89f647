// The paper variant's open choices (MATH.md §3.9, "The paper variant's open choices"):
// every constant, threshold and budget the sources leave open, with the value the
// variant uses at its defaults, one line each, for the report's variant_choices.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace mha {

// (key, value): keys "open NN: stage S, what" in the table's order (NN its row).
std::vector<std::pair<std::string, std::string>> paper_open_choices();

}  // namespace mha
