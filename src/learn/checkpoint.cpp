#include "learn/checkpoint.hpp"

#include "learn/checkpoint_format.hpp"
#include "learn/report_fields.hpp"

#include "data/atomic_file.hpp"
#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "util/format.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace mha {

using nlohmann::json;
namespace fs = std::filesystem;
using namespace checkpoint_format;

uint64_t crc64(std::string_view bytes) {
  Crc64 crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::string safe_point_name(const LearnState& s) {
  switch (s.next) {
    case LearnStep::stage1: return "before stage 1";
    case LearnStep::sculpt:
      return format("before round %d's sculpt (stage %d%s)", s.round, s.round == 0 ? 2 : 4, s.final_round ? ", the final round" : "");
    case LearnStep::span: return format("before round %d's span (stage 5)", s.round);
    case LearnStep::net: return format("before round %d's net (stage 6)", s.round);
    case LearnStep::margin: return format("before round %d's margin refinement (stage 3)", s.round);
    case LearnStep::reference: return "before the reference paths";
    case LearnStep::polish: return "before polishing";
    case LearnStep::finish: return "before the final evaluation";
    case LearnStep::done: return "after the run";
  }
  return "at an unknown step";
}

namespace {

// ---- Writing -----------------------------------------------------------------

// The slabs' a_r as one (count, n) float64 array, kept as a view of the state's
// slabs (4–5 GB at d = 128): its .npy bytes are `header`, then each slab's a_r.
// write_checkpoint streams them to the file; serialise_checkpoint puts them
// together in memory. Either way the bytes, and so the name, are the same.
struct SlabRows {
  std::string header;
  const std::vector<Slab>* slabs = nullptr;

  template <class Piece>
  void for_each_piece(Piece&& piece) const {
    piece(std::string_view(header));
    for (const Slab& slab : *slabs)
      piece(std::string_view(reinterpret_cast<const char*>(slab.a.data()), slab.a.size() * sizeof(double)));
  }
  uint64_t size() const {
    uint64_t bytes = 0;
    for_each_piece([&bytes](std::string_view p) { bytes += p.size(); });
    return bytes;
  }
  std::string bytes() const {
    std::string out;
    out.reserve(size());
    for_each_piece([&out](std::string_view p) { out.append(p); });
    return out;
  }
};

// A checkpoint about to be written: the manifest, the arrays as .npy bytes and
// the slab arrays as views of the state (valid while it is unchanged).
struct CheckpointParts {
  std::string manifest;
  std::map<std::string, std::string> arrays;
  std::map<std::string, SlabRows> slab_rows;
};

// Collects the arrays as content-named .npy files and returns their names.
class StateWriter {
 public:
  explicit StateWriter(CheckpointParts& parts) : parts_(parts) {}

  std::string put(const std::vector<int64_t>& shape, const std::vector<double>& values) {
    return named(npy_bytes_float64(shape, values.data()));
  }
  // The same bytes as put() of the slabs' concatenated a_r, without that copy.
  std::string slab_rows(const std::vector<Slab>& slabs, int64_t n) {
    SlabRows rows{npy_header_bytes({static_cast<int64_t>(slabs.size()), n}, NpyDtype::float64), &slabs};
    Crc64 crc;
    rows.for_each_piece([&crc](std::string_view p) { crc.process_bytes(p.data(), p.size()); });
    std::string name = array_name(crc.checksum());
    parts_.slab_rows.emplace(name, std::move(rows));
    return name;
  }
  template <class Derived>
  std::string matrix(const Eigen::MatrixBase<Derived>& m) {
    std::vector<double> values;
    values.reserve(static_cast<size_t>(m.size()));
    for (Eigen::Index r = 0; r < m.rows(); ++r)
      for (Eigen::Index c = 0; c < m.cols(); ++c) values.push_back(m(r, c));
    return put({m.rows(), m.cols()}, values);
  }
  std::string vector(const Eigen::VectorXd& v) { return put({v.size()}, std::vector<double>(v.data(), v.data() + v.size())); }
  // Shape (m, 2, d, d): head i's Θ_i, then W_i.
  std::string layer(const Layer& layer) {
    std::vector<double> values;
    for (const auto& h : layer.heads)
      for (const MatD* x : {&h.theta, &h.w}) values.insert(values.end(), x->data(), x->data() + x->size());
    return put({layer.m(), 2, layer.d(), layer.d()}, values);
  }

  json round(const LearnRound& r) {
    json j = {{"validation_error", hex(r.validation_error)}, {"sculpt", nullptr}, {"span", nullptr}, {"net", nullptr}};
    if (r.sculpt) j["sculpt"] = sculpt(*r.sculpt);
    if (r.span.hull_point.size() > 0)
      j["span"] = {{"hull_point", vector(r.span.hull_point)}, {"hull_directions", matrix(r.span.hull_directions)}};
    if (r.net.layer.m() > 0) j["net"] = {{"layer", layer(r.net.layer)}, {"coarse_layer", layer(r.net.coarse_layer)}};
    return j;
  }

 private:
  json sculpt(const SculptResult& s) {
    const auto& slabs = s.body.slabs();
    const int64_t n = s.body.dim(), count = static_cast<int64_t>(slabs.size());
    std::vector<double> b, eta;
    for (const Slab& slab : slabs) {
      b.push_back(slab.b);
      eta.push_back(slab.eta);
    }
    const ConvexBody::Centre& c = s.centre;
    json out = {{"dim", n}, {"radius", hex(s.body.radius())},
            {"slab_a", slab_rows(slabs, n)}, {"slab_b", put({count}, b)}, {"slab_eta", put({count}, eta)},
            {"centre", {{"x0", vector(c.x0)}, {"free_basis", matrix(c.free_basis)},
                        {"singular_values", vector(c.singular_values)}, {"gap", hex(c.gap)}, {"rank", c.rank},
                        {"threshold", hex(c.threshold)}, {"weighted_residual", hex(c.weighted_residual)},
                        {"method", c.method == ConvexBody::CentreMethod::streamed    ? "streamed"
                                   : c.method == ConvexBody::CentreMethod::iterative ? "iterative"
                                                                                      : "dense"},
                        {"free_basis_residual", hex(c.free_basis_residual)}}}};
    // Only the iterative centre has it (earlier checkpoints keep their bytes).
    if (c.method == ConvexBody::CentreMethod::iterative) out["centre"]["value_residual"] = hex(c.value_residual);
    return out;
  }

  static std::string array_name(uint64_t crc) { return "array-" + hex16(crc) + ".npy"; }
  std::string named(std::string bytes) {
    std::string name = array_name(crc64(bytes));
    parts_.arrays.emplace(name, std::move(bytes));
    return name;
  }

  CheckpointParts& parts_;
};

json hex_list(const std::vector<double>& v) {
  json out = json::array();
  for (double x : v) out.push_back(hex(x));
  return out;
}

json errors_to_json(const std::optional<LayerErrors>& e) {
  if (!e) return nullptr;
  return {{"permutation", e->permutation}, {"theta_rel", hex_list(e->theta_rel)}, {"w_rel", hex_list(e->w_rel)},
          {"theta_max_rel", hex(e->theta_max_rel)}, {"w_max_rel", hex(e->w_max_rel)},
          {"test_relative_error", hex(e->test_relative_error)}, {"test_samples", e->test_samples}};
}

json noise_to_json(const std::optional<NoiseReport>& n) {
  if (!n) return nullptr;
  const FinalFitPlan& f = n->final_fit;
  return {{"estimated", n->estimated}, {"float32_labels", n->float32_labels}, {"declared", hex(n->declared)},
          {"heldout_residual", hex(n->heldout_residual)}, {"heldout_samples", n->heldout_samples},
          {"fit_share", hex(n->fit_share)}, {"noise", hex(n->noise)}, {"rounding_measured", hex(n->rounding_measured)},
          {"rounding_level", hex(n->rounding_level)}, {"rounding_bound", hex(n->rounding_bound)},
          {"limit", n->limit}, {"warning", n->warning},
          {"final_fit", {{"samples", f.samples}, {"needed", f.needed}, {"available", f.available},
                         {"memory_cap", f.memory_cap}, {"reason", f.reason}}}};
}

// The report exactly, each field of learn/report_fields.hpp (those a checkpoint
// keeps). A stage's details are JSON already: their numbers print and read back
// exactly, and a non-finite one is null in the report whether resumed or not.
struct ReportEncoder {
  json& out;

  static json value(LearnVariant v) { return to_string(v); }
  static json value(const std::vector<StageRecord>& stages) {
    json out = json::array();
    for (const auto& s : stages)
      out.push_back({{"stage", s.stage}, {"round", s.round}, {"samples", s.samples}, {"seconds", hex(s.seconds)},
                     {"summary", s.summary}, {"details", s.details}});
    return out;
  }
  static json value(const std::vector<double>& v) { return hex_list(v); }
  static json value(double v) { return hex(v); }
  static json value(const std::optional<LayerErrors>& e) { return errors_to_json(e); }
  static json value(const std::optional<NoiseReport>& n) { return noise_to_json(n); }
  template <class C, class Cs>
  static json value(const ProcessFields<C, Cs>& p) {
    return {{"shared_samples_by_process", p.shared_samples_by_process}, {"gathers", p.gathers},
            {"gathered_doubles_sent", p.gathered_doubles_sent}, {"gathered_doubles_received", p.gathered_doubles_received}};
  }
  static json value(const std::vector<ReferenceCheck>& v) { return rows_to_json(v); }
  static json value(const std::vector<Diagnostic>& v) { return rows_to_json(v); }
  template <class T>
  static json value(const T& v) { return v; }

  template <class T>
  void operator()(const ReportField& f, const T& v) {
    if (f.checkpoint) out[f.checkpoint] = value(v);
  }
};

json report_to_json(const LearnReport& r) {
  json out = json::object();
  visit_report_fields(r, ReportEncoder{out});
  return out;
}

// What each step needs of a round.
std::string check_round(const LearnRound& r, const char* which, bool needs_sculpt, bool needs_span, bool needs_net) {
  if (needs_sculpt && !r.sculpt) return std::string("the ") + which + " round has no body";
  if (needs_span && r.span.hull_point.size() == 0) return std::string("the ") + which + " round has no hull";
  if (needs_net && r.net.layer.m() == 0) return std::string("the ") + which + " round has no layer";
  return "";
}

std::string check_shapes(const LearnState& s) {
  const int64_t n = int64_t{s.d} * s.d;
  if (s.w_sum.rows() != s.d || s.w_sum.cols() != s.d) return "W_sum is not d×d";
  for (const auto* r : {s.best ? &*s.best : nullptr, s.current ? &*s.current : nullptr}) {
    if (!r) continue;
    if (r->sculpt) {
      const ConvexBody::Centre& c = r->sculpt->centre;
      const int64_t values = c.method == ConvexBody::CentreMethod::iterative ? std::min<int64_t>(n, 2 * int64_t{s.m} + 1) : n;
      if (r->sculpt->body.dim() != n || c.x0.size() != n || c.singular_values.size() != values ||
          c.free_basis.rows() != s.m - 1 || c.free_basis.cols() != n)
        return "a round's body or centre has the wrong shape";
    }
    if (r->span.hull_point.size() > 0 &&
        (r->span.hull_point.size() != n || r->span.hull_directions.rows() != s.m - 1 || r->span.hull_directions.cols() != n))
      return "a round's hull has the wrong shape";
    for (const Layer* l : {&r->net.layer, &r->net.coarse_layer})
      if (r->net.layer.m() > 0 && (l->m() != s.m || l->d() != s.d)) return "a round's layer has the wrong shape";
  }
  if (s.layer.m() > 0 && (s.layer.m() != s.m || s.layer.d() != s.d)) return "the layer has the wrong shape";
  return "";
}

}  // namespace

std::string check_learn_state(const LearnState& s) {
  if (s.d < 1 || s.k < 1 || s.m < 1) return "d, k and m must be positive";
  if (s.next == LearnStep::stage1 || s.next == LearnStep::done) return "the state is not at a safe point";
  if (s.round < 0 || s.round >= kMaxRound) return "the round is out of range";
  if (auto e = check_shapes(s); !e.empty()) return e;
  const LearnStep next = s.next;
  const bool in_round = next == LearnStep::span || next == LearnStep::net || next == LearnStep::margin;
  if (in_round != s.current.has_value()) return in_round ? "no round in progress" : "a round in progress outside a round";
  // The paper variant's round 0 goes from stage 2 to stage 3 without a layer.
  const bool layer_before_margin = !(s.report.variant == LearnVariant::paper && s.round == 0);
  if (s.current)
    if (auto e = check_round(*s.current, "current", next != LearnStep::net, next == LearnStep::net,
                             next == LearnStep::margin && layer_before_margin);
        !e.empty())
      return e;
  if (s.final_w_sum.size() > 0 && (s.final_w_sum.rows() != s.d || s.final_w_sum.cols() != s.d)) return "the final W_sum is not d×d";
  const LearnReport& r = s.report;
  if (s.best.has_value() != (r.best_round >= 0)) return "the best round and the report's best_round disagree";
  if (r.best_round >= static_cast<int>(r.round_validation_error.size()) || r.best_round > s.round)
    return "the report's best_round is not a completed round";
  if (s.best)
    if (auto e = check_round(*s.best, "best", false, false, true); !e.empty()) return e;
  const bool after_stages = next == LearnStep::polish || next == LearnStep::finish;
  if (after_stages && !s.best) return "no round was selected before polishing";
  if (after_stages != (s.layer.m() > 0)) return after_stages ? "the result layer is missing" : "a result layer before the reference paths";
  return "";
}

namespace {

CheckpointParts serialise_parts(const LearnState& s, const json& match, const json& provenance) {
  if (auto e = check_learn_state(s); !e.empty()) throw std::invalid_argument("cannot checkpoint this state: " + e);
  CheckpointParts parts;
  StateWriter out(parts);
  json state = {{"d", s.d}, {"k", s.k}, {"m", s.m}, {"next", step_name(s.next)}, {"round", s.round},
                {"offset", s.offset}, {"validation_digest", hex16(s.validation_digest)}, {"seconds", hex(s.seconds)},
                {"w_sum", out.matrix(s.w_sum)}, {"w_error_assumed", hex(s.w_error_assumed)},
                {"last_w_improved", s.last_w_improved}, {"last_w_standard_error", hex(s.last_w_standard_error)},
                {"final_round", s.final_round}, {"final_w_error", hex(s.final_w_error)},
                {"final_w_standard_error", hex(s.final_w_standard_error)},
                {"final_w_sum", s.final_w_sum.size() > 0 ? json(out.matrix(s.final_w_sum)) : json(nullptr)},
                {"final_rounds_done", s.final_rounds_done},
                {"best", s.best ? out.round(*s.best) : json(nullptr)},
                {"current", s.current ? out.round(*s.current) : json(nullptr)},
                {"layer", s.layer.m() > 0 ? json(out.layer(s.layer)) : json(nullptr)},
                {"report", report_to_json(s.report)}};
  const json doc = {{"format", kCheckpointFormat}, {"schema_version", kCheckpointSchemaVersion},
                    {"safe_point", safe_point_name(s)}, {"provenance", provenance}, {"match", match},
                    {"state", std::move(state)}};
  parts.manifest = doc.dump(1) + "\n";
  return parts;
}

}  // namespace

CheckpointFiles serialise_checkpoint(const LearnState& s, const json& match, const json& provenance) {
  CheckpointParts parts = serialise_parts(s, match, provenance);
  CheckpointFiles files{std::move(parts.manifest), std::move(parts.arrays)};
  for (const auto& [name, rows] : parts.slab_rows) files.arrays.emplace(name, rows.bytes());
  return files;
}


namespace {

// Makes the directory's entries (new files, renames) durable before the next
// step relies on them.
std::string sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return "cannot open the checkpoint directory " + dir;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok ? "" : "cannot flush the checkpoint directory " + dir;
}

// Content-named: a file of that name and size is this array (CRC-64), kept from an earlier checkpoint.
bool already_written(const fs::path& path, uint64_t size) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && fs::file_size(path, ec) == size;
}

// A slab array straight from the slabs, in writes of at least kSlabRowsWriteBytes.
constexpr size_t kSlabRowsWriteBytes = size_t{1} << 16;
std::string write_slab_rows(const std::string& path, const SlabRows& rows) {
  AtomicFileWriter out(path);
  std::string buffer;
  std::string error;
  rows.for_each_piece([&](std::string_view p) {
    buffer.append(p);
    if (buffer.size() >= kSlabRowsWriteBytes && error.empty()) {
      error = out.write(buffer);
      buffer.clear();
    }
  });
  if (error.empty()) error = out.write(buffer);
  return error.empty() ? out.publish() : error;
}

// The arrays first, then the manifest, then what the manifest no longer names.
std::string write_parts(const std::string& dir, const std::string& manifest,
                        const std::map<std::string, std::string>& arrays,
                        const std::map<std::string, SlabRows>& slab_rows) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create the checkpoint directory " + dir + ": " + ec.message();
  for (const auto& [name, bytes] : arrays) {
    const fs::path path = fs::path(dir) / name;
    if (already_written(path, bytes.size())) continue;
    if (auto e = write_file_atomically(path.string(), bytes); !e.empty()) return e;
  }
  for (const auto& [name, rows] : slab_rows) {
    const fs::path path = fs::path(dir) / name;
    if (already_written(path, rows.size())) continue;
    if (auto e = write_slab_rows(path.string(), rows); !e.empty()) return e;
  }
  if (auto e = sync_directory(dir); !e.empty()) return e;
  if (auto e = write_file_atomically((fs::path(dir) / kCheckpointManifest).string(), manifest); !e.empty()) return e;
  if (auto e = sync_directory(dir); !e.empty()) return e;
  // Only now may the previous checkpoint's arrays go, and any temporary file a crash left.
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool stale_array = is_array_name(name) && arrays.count(name) == 0 && slab_rows.count(name) == 0;
    const bool stale_temporary = name.find(".tmp.") != std::string::npos &&
                                 (name.rfind("array-", 0) == 0 || name.rfind(kCheckpointManifest, 0) == 0);
    if (stale_array || stale_temporary) stale.push_back(entry.path());
  }
  for (const fs::path& path : stale) fs::remove(path, ec);
  return "";
}

}  // namespace

std::string write_checkpoint(const std::string& dir, const CheckpointFiles& files) {
  return write_parts(dir, files.manifest, files.arrays, {});
}

std::string write_checkpoint(const std::string& dir, const LearnState& state, const json& match,
                             const json& provenance) {
  const CheckpointParts parts = serialise_parts(state, match, provenance);
  return write_parts(dir, parts.manifest, parts.arrays, parts.slab_rows);
}

bool has_checkpoint(const std::string& dir) {
  std::error_code ec;
  return fs::exists(fs::path(dir) / kCheckpointManifest, ec);
}

CheckpointRead read_checkpoint(const std::string& dir) {
  const std::string manifest_path = (fs::path(dir) / kCheckpointManifest).string();
  CheckpointRead out;
  if (!has_checkpoint(dir)) {
    out.error = dir + " holds no checkpoint (no " + kCheckpointManifest + ")";
    return out;
  }
  std::string manifest, error;
  if (!read_whole_file(manifest_path, manifest, error)) {
    out.error = error;
    return out;
  }
  const CheckpointArrays arrays = [&dir](const std::string& file) -> std::optional<std::string> {
    std::string bytes, ignored;
    if (!read_whole_file((fs::path(dir) / file).string(), bytes, ignored)) return std::nullopt;
    return bytes;
  };
  return parse_checkpoint(manifest, arrays, manifest_path);
}

}  // namespace mha
