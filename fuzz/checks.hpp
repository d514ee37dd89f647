// What each fuzz harness runs on one input, and the invariants it checks.
// Shared by the libFuzzer harnesses (fuzz_*.cpp, which abort on a failed
// invariant) and the unit test that replays the seed corpora and the
// committed regressions (tests/data/test_fuzz_regressions.cpp), so both run
// exactly the same code (checks.cpp). Each takes the bytes of one input and
// returns "" or the invariant that failed; a crash, hang, leak or sanitizer
// report is a finding too.
#pragma once

#include <string>
#include <string_view>

namespace mha::fuzz {

// The .npy readers: parse_npy, and NpyReader (the header from a file's first
// bytes, the data in blocks with pread: the reader of --x/--y datasets) on the
// same bytes as a memfd, which must give the same error or the same values.
// An accepted file holds exactly the values its shape needs and, for the
// dtypes the tool writes, round-trips bit for bit.
std::string check_npy(std::string_view bytes);

// The instance reader (instance_from_json_text). An accepted instance is valid
// and reads back identically from what the writer makes of it.
std::string check_instance_json(std::string_view bytes);

// `import`'s four weight files (parse_npy + import_attention_npy). Layout:
// byte 0 = heads - 1 (low 3 bits), bytes 1..6 = the lengths of the first three
// files (little-endian uint16, clipped to what is left), then the four files
// back to back (the last takes the rest). An accepted layer makes a valid
// instance that reads back.
std::string check_import(std::string_view bytes);

// `forward --x` (parse_npy + check_inputs_array + the fast forward pass).
// Byte 0 picks the instance: bit 0 d = 4 or 8, bit 1 weights of 0.5 or 1e150
// (large inputs then overflow the logits); the rest is the inputs file.
// Accepted inputs get finite outputs or an explicit failure naming a sample of
// the batch, every sample before it answered.
std::string check_forward_x(std::string_view bytes);

// The learner's checkpoint reader (parse_checkpoint, learn/checkpoint.hpp).
// Layout: byte 0 bit 0 = check that each array file's bytes have the CRC-64
// its name says (0: skip it, so mutated arrays reach the .npy reader); bytes
// 1..4 = the manifest's length (little-endian uint32, clipped to what is
// left); the manifest; then array files, each a name length (1 byte), the
// name, a data length (little-endian uint32, clipped) and the data. A refusal
// is one line naming the manifest; an accepted checkpoint is a state a run can
// stand at, and what the writer makes of it reads back and writes the same bytes.
std::string check_checkpoint(std::string_view bytes);

}  // namespace mha::fuzz
