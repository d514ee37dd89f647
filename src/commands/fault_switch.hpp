// The fast paths of the CLI and the Python module, with the test-only fault
// switch. The release `mhalearn` and `mhalearn` Python module always use the
// library's fast paths. Their test copies `mhalearn_faulty` and
// build/<preset>/python_faulty (CMakeLists.txt: this file compiled with
// MHALEARN_FAULT_INJECTION=1) read MHALEARN_INJECT_FAULT=<stage> and swap that
// stage's fast path for its wrong copy (verify/faults.hpp), so that
// tests/cli/fault_injection.py and python/tests/test_faults.py can see the
// end-to-end commands reject it.
#pragma once

#include <string>

namespace mha {
struct FastPaths;
struct LearnOptions;
}  // namespace mha

namespace mha::commands {

// The fast paths `verify` compares. "" on success, else why the switch's value
// is not a stage.
std::string verify_fast_paths(FastPaths& fast);

// The learner's fast paths (LearnOptions::fast; its reference step checks every
// stage): "" on success, else why the switch's value is not a stage.
std::string learn_fast_paths(LearnOptions& options);

// Whether `--x/--y` datasets are read whole into memory, as before they were
// read in blocks: never in the release `mhalearn`; in `mhalearn_faulty` when
// MHALEARN_WHOLE_DATASET=1, so that tests/cli/bounded_rss.py can show its
// peak-RSS check rejects a run that holds the whole dataset.
bool load_datasets_whole();

}  // namespace mha::commands
