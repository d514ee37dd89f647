// What each kind of array file (and Python array argument) may hold: one text
// per kind, used by the CLI's --help, the Python module's errors and, word for
// word, docs/formats.md ("Datasets (.npy)"), where tests/cli/bad_inputs.py checks
// all three say the same. The readers (data/npy.hpp) implement it: float32 is
// widened exactly to float64 on reading, int8 inputs must be ±1, values finite.
// Header-only: the commands (schema.hpp) put them in their options' help.
#pragma once

namespace mha::commands {

// X of sample/forward/learn/stage1/sculpt (and Python's X).
inline constexpr const char* kInputsContract =
    "inputs X: shape (N, k, d); int8 with entries ±1 (Boolean inputs), or float64 or float32 (real inputs, "
    "float32 widened exactly)";
// Y of learn/stage1/sculpt (and Python's y); what sample and forward write.
inline constexpr const char* kLabelsContract =
    "labels Y: shape (N, k, d), the same as X; float64 or float32 (widened exactly); "
    "the tool writes float64";
// What k is for forward: the layer applies to any sequence length.
inline constexpr const char* kForwardLengthContract =
    "forward takes any sequence length k in 1..1024, whatever the instance's k (its input distribution's)";
// The learners need k ≥ 2 (learn; check_learn_input says it in these words).
inline constexpr const char* kLearnerLengthContract = "the learners need k >= 2";
// import's weights and Python's import_attention.
inline constexpr const char* kWeightsContract = "weights: shape (d, d); float64 or float32 (widened exactly)";

}  // namespace mha::commands
