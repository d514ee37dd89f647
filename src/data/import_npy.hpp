// The weight files of `import`, as read from .npy: the checks between the
// reader and import_attention, kept out of the CLI so the fuzz harness runs
// exactly what `mhalearn import` runs.
#pragma once

#include "data/npy.hpp"
#include "model/import_attention.hpp"

#include <array>
#include <string>

namespace mha {

// w = {W_Q, W_K, W_V, W_O}, each a 2-D (d, d) float64 array (float32 files are
// widened on read); `names` name them in errors. The layer must also fit an
// instance file (d <= kMaxInstanceD, heads <= kMaxInstanceHeads), so that what
// `import` writes, `check` reads. Errors are one line naming the file.
ImportResult import_attention_npy(const std::array<NpyArray, 4>& w, const std::array<std::string, 4>& names, int heads);

}  // namespace mha
