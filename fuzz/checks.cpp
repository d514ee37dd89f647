// Definitions of checks.hpp. Compiled once into the harnesses' library and
// included by tests/data/test_fuzz_regressions.cpp (the root build never
// compiles fuzz/), so the unit tests replay exactly the harnesses' code.
#include "checks.hpp"

#include "data/import_npy.hpp"
#include "model/inputs.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "learn/checkpoint.hpp"
#include "model/forward_fast.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include <sys/mman.h>
#include <unistd.h>

namespace mha::fuzz {

namespace {
// Readers fail with one non-empty line naming the problem.
std::string one_line(const std::string& error) {
  if (error.empty()) return "empty error message";
  if (error.find('\n') != std::string::npos) return "error message spans lines: " + error;
  return "";
}
}  // namespace

namespace {
// The same bytes through the block reader the dataset commands use: a memfd
// opened by NpyReader::adopt, read 3 elements at a time with pread. "" when it
// gives what parse_npy gave (the same error, or the same values bit for bit).
std::string check_block_reader(std::string_view bytes, const NpyResult& parsed) {
  const int fd = ::memfd_create("fuzz.npy", MFD_CLOEXEC);
  if (fd < 0) return "";  // no memfd here: nothing to compare
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      return "";
    }
    done += static_cast<size_t>(n);
  }
  const NpyReader::Open open = NpyReader::adopt(fd, "fuzz.npy");
  NpyResult blocks;
  if (open.reader) blocks = read_npy_all(*open.reader, 3);
  else blocks.error = open.error;
  if (blocks.ok != parsed.ok || blocks.error != parsed.error)
    return "the block reader and parse_npy disagree: '" + blocks.error + "' vs '" + parsed.error + "'";
  if (!parsed.ok) return "";
  const NpyArray &a = parsed.array, &b = blocks.array;
  if (a.shape != b.shape || a.dtype != b.dtype || a.from_float32 != b.from_float32 || a.i8 != b.i8 ||
      a.f64.size() != b.f64.size() ||
      (!a.f64.empty() && std::memcmp(a.f64.data(), b.f64.data(), a.f64.size() * sizeof(double)) != 0))
    return "the block reader reads other values than parse_npy";
  return "";
}
}  // namespace

std::string check_npy(std::string_view bytes) {
  const NpyResult r = parse_npy(bytes, "fuzz.npy");
  if (auto e = check_block_reader(bytes, r); !e.empty()) return e;
  if (!r.ok) return one_line(r.error);
  const NpyArray& a = r.array;
  size_t count = 1;
  for (const int64_t dim : a.shape) count *= static_cast<size_t>(dim);
  if ((a.dtype == NpyDtype::int8 ? a.i8.size() : a.f64.size()) != count) return "value count differs from the shape";
  if (a.from_float32) return "";  // float32 is read, never written
  const std::string again = a.dtype == NpyDtype::int8 ? npy_bytes_int8(a.shape, a.i8.data())
                                                      : npy_bytes_float64(a.shape, a.f64.data());
  const NpyResult back = parse_npy(again, "again.npy");
  if (!back.ok || back.array.shape != a.shape || back.array.dtype != a.dtype) return "round trip changes the shape";
  const bool same = a.dtype == NpyDtype::int8
                        ? back.array.i8 == a.i8
                        : count == 0 || std::memcmp(back.array.f64.data(), a.f64.data(), count * sizeof(double)) == 0;
  return same ? "" : "round trip changes the bytes";
}

std::string check_instance_json(std::string_view bytes) {
  const InstanceReadResult r = instance_from_json_text(std::string(bytes), "fuzz.json");
  if (!r.ok) return one_line(r.error);
  if (auto e = validate_instance(r.instance); !e.empty()) return "an accepted instance is invalid: " + e;
  const InstanceReadResult back = instance_from_json_text(instance_to_json(r.instance).dump(), "again.json");
  if (!back.ok) return "the writer's output does not read back: " + back.error;
  const Instance &a = r.instance, &b = back.instance;
  if (a.k != b.k || a.inputs != b.inputs || a.m() != b.m() || a.d() != b.d()) return "round trip changes the shape";
  for (int i = 0; i < a.m(); ++i)
    if (a.layer.heads[i].theta != b.layer.heads[i].theta || a.layer.heads[i].w != b.layer.heads[i].w)
      return "round trip changes the weights";
  if (a.provenance_json != b.provenance_json || a.extensions_json != b.extensions_json)
    return "round trip changes provenance or extensions";
  return "";
}

std::string check_import(std::string_view bytes) {
  if (bytes.size() < 7) return "";
  const auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(bytes[i])); };
  const int heads = 1 + static_cast<int>(byte(0) & 7);
  const std::string_view rest = bytes.substr(7);
  std::array<NpyArray, 4> w;
  const std::array<std::string, 4> names = {"wq.npy", "wk.npy", "wv.npy", "wo.npy"};
  size_t at = 0;
  for (size_t i = 0; i < 4; ++i) {
    size_t len = rest.size() - at;
    if (i < 3) len = std::min(len, byte(1 + 2 * i) | (byte(2 + 2 * i) << 8));
    NpyResult r = parse_npy(rest.substr(at, len), names[i]);
    at += len;
    if (!r.ok) return one_line(r.error);
    w[i] = std::move(r.array);
  }
  ImportResult imp = import_attention_npy(w, names, heads);
  if (!imp.ok) return one_line(imp.error);
  if (imp.layer.m() != heads) return "the layer has not one head per requested head";
  Instance inst;
  inst.layer = std::move(imp.layer);
  inst.k = 1;  // the CLI's --k; 1 <= d always holds
  if (auto e = validate_instance(inst); !e.empty()) return "an imported layer is not a valid instance: " + e;
  const InstanceReadResult back = instance_from_json_text(instance_to_json(inst).dump(), "imported.json");
  return back.ok ? "" : "an imported instance does not read back: " + back.error;
}

namespace {
// Two heads of fixed, deterministic weights of magnitude `scale`.
Layer fixed_layer(int d, double scale) {
  Layer layer;
  for (int i = 0; i < 2; ++i) {
    Head h{MatD(d, d), MatD(d, d)};
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c) {
        h.theta(r, c) = scale * std::sin(1.0 + r + 3.0 * c + 7.0 * i);
        h.w(r, c) = scale * std::cos(2.0 + 5.0 * r + c + 11.0 * i);
      }
    layer.heads.push_back(std::move(h));
  }
  return layer;
}
}  // namespace

std::string check_forward_x(std::string_view bytes) {
  if (bytes.empty()) return "";
  static const FastForward forwards[4] = {FastForward(fixed_layer(4, 0.5)), FastForward(fixed_layer(8, 0.5)),
                                          FastForward(fixed_layer(4, 1e150)), FastForward(fixed_layer(8, 1e150))};
  const FastForward& fast = forwards[static_cast<unsigned char>(bytes[0]) & 3];
  const int d = fast.d();
  const NpyResult r = parse_npy(bytes.substr(1), "x.npy");
  if (!r.ok) return one_line(r.error);
  if (auto e = check_inputs_array(r.array, d); !e.empty()) return one_line(e);
  const int64_t n = r.array.shape[0];
  const int k = static_cast<int>(r.array.shape[1]);
  const InputBatch batch = r.array.dtype == NpyDtype::int8 ? boolean_batch_from_values(r.array.i8, n, k, d)
                                                           : dense_batch_from_values(r.array.f64, n, k, d);
  std::vector<double> y(static_cast<size_t>(n) * k * d);
  const FastForwardStatus status = fast.run(batch, y.data(), 1);
  const int64_t answered = status.ok() ? n : status.first_unanswered;
  if (answered < 0 || answered > n) return "the unanswered sample is outside the batch";
  for (size_t i = 0; i < static_cast<size_t>(answered) * k * d; ++i)
    if (!std::isfinite(y[i])) return "an answered sample has a non-finite output";
  return status.ok() ? "" : one_line(status.message());
}

namespace {
// A little-endian uint32 at `at`, clipped to the bytes left after it.
size_t length_at(std::string_view bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4 && at + i < bytes.size(); ++i) v |= uint32_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  const size_t left = bytes.size() > at + 4 ? bytes.size() - at - 4 : 0;
  return std::min<size_t>(v, left);
}

CheckpointRead parse_files(const CheckpointFiles& files, bool verify) {
  const CheckpointArrays arrays = [&files](const std::string& name) -> std::optional<std::string> {
    const auto it = files.arrays.find(name);
    if (it == files.arrays.end()) return std::nullopt;
    return it->second;
  };
  return parse_checkpoint(files.manifest, arrays, "checkpoint.json", verify);
}
}  // namespace

std::string check_checkpoint(std::string_view bytes) {
  if (bytes.empty()) return "";
  const bool verify = (static_cast<unsigned char>(bytes[0]) & 1) != 0;
  CheckpointFiles in;
  size_t at = 1;
  const size_t manifest_length = length_at(bytes, at);
  in.manifest = std::string(bytes.substr(std::min(at + 4, bytes.size()), manifest_length));
  at += 4 + manifest_length;
  while (at < bytes.size()) {
    const size_t name_length = std::min<size_t>(static_cast<unsigned char>(bytes[at]), bytes.size() - at - 1);
    const std::string name(bytes.substr(at + 1, name_length));
    at += 1 + name_length;
    const size_t data_length = length_at(bytes, at);
    in.arrays[name] = std::string(bytes.substr(std::min(at + 4, bytes.size()), data_length));
    at += 4 + data_length;
  }
  const CheckpointRead r = parse_files(in, verify);
  if (!r.ok()) {
    if (auto e = one_line(r.error); !e.empty()) return e;
    return r.error.rfind("checkpoint.json: ", 0) == 0 ? "" : "the error does not name the manifest: " + r.error;
  }
  const Checkpoint& c = r.checkpoint;
  if (auto e = check_learn_state(c.state); !e.empty()) return "an accepted state is not at a safe point: " + e;
  if (auto e = one_line(safe_point_name(c.state)); !e.empty()) return "the safe point's name: " + e;
  const CheckpointFiles once = serialise_checkpoint(c.state, c.match, c.provenance);
  const CheckpointRead back = parse_files(once, true);
  if (!back.ok()) return "the writer's checkpoint does not read back: " + back.error;
  const CheckpointFiles twice = serialise_checkpoint(back.checkpoint.state, back.checkpoint.match, back.checkpoint.provenance);
  if (twice.manifest != once.manifest) return "round trip changes the manifest";
  if (twice.arrays != once.arrays) return "round trip changes the arrays";
  return "";
}

}  // namespace mha::fuzz
