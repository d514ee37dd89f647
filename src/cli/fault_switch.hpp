// The CLI's fast paths, with the test-only fault switch. The release `mhalearn`
// always uses the library's fast paths. The test build `mhalearn_faulty`
// (CMakeLists.txt: this file compiled with MHALEARN_FAULT_INJECTION=1) reads
// MHALEARN_INJECT_FAULT=<stage> and swaps that stage's fast path for its wrong
// copy (verify/faults.hpp), so that tests/cli/fault_injection.py can see the
// end-to-end commands reject it.
#pragma once

#include <string>

namespace mha {
struct FastPaths;
struct LearnOptions;
}  // namespace mha

namespace mha::cli {

// The fast paths `verify` compares. "" on success, else why the switch's value
// is not a stage.
std::string verify_fast_paths(FastPaths& fast);

// The learner's swappable fast path (LearnOptions::span, stage 5: the stage its
// reference check covers): "" on success, else why the switch's value cannot be
// injected into the learner.
std::string learn_fast_paths(LearnOptions& options);

// Whether `--x/--y` datasets are read whole into memory, as before they were
// read in blocks: never in the release `mhalearn`; in `mhalearn_faulty` when
// MHALEARN_WHOLE_DATASET=1, so that tests/cli/bounded_rss.py can show its
// peak-RSS check rejects a run that holds the whole dataset.
bool load_datasets_whole();

}  // namespace mha::cli
