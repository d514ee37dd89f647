#include "learn/checkpoint.hpp"

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

// The steps a checkpoint can stand before, with their names in the manifest.
constexpr std::pair<LearnStep, const char*> kSteps[] = {
    {LearnStep::sculpt, "sculpt"}, {LearnStep::span, "span"},           {LearnStep::net, "net"},
    {LearnStep::margin, "margin"}, {LearnStep::reference, "reference"}, {LearnStep::polish, "polish"},
    {LearnStep::finish, "finish"}};
constexpr int kMaxRound = 64;  // the CLI allows 20 rounds

const char* step_name(LearnStep step) {
  for (const auto& [s, name] : kSteps)
    if (s == step) return name;
  return "?";
}

std::string hex16(uint64_t v) { return format("%016llx", static_cast<unsigned long long>(v)); }

// Doubles as hexadecimal floats (std::to_chars): exact, locale-free, with
// "inf" and "nan" (whose payload is not kept) for the non-finite values.
std::string hex(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::hex);
  return std::string(buf, r.ptr);
}

bool is_array_name(const std::string& name) {
  if (name.size() != 6 + 16 + 4 || name.compare(0, 6, "array-") != 0 || name.compare(22, 4, ".npy") != 0) return false;
  for (size_t i = 6; i < 22; ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i])) && !(name[i] >= 'a' && name[i] <= 'f')) return false;
  return true;
}

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

// ---- Reading -----------------------------------------------------------------

// A malformed manifest or array: the reader's one-line error, thrown inside
// the reader only and caught by parse_checkpoint.
struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void malformed(const std::string& where, const std::string& what) { throw Malformed(where + ": " + what); }

const json& field(const json& object, const char* key, const std::string& where) {
  if (!object.is_object()) malformed(where, "must be a JSON object");
  const auto it = object.find(key);
  if (it == object.end()) malformed(where, std::string("has no \"") + key + "\"");
  return *it;
}

std::string at(const std::string& where, const char* key) { return where + "." + key; }

double real(const json& v, const std::string& where) {
  if (!v.is_string()) malformed(where, "must be a hexadecimal float in a string");
  const std::string& s = v.get_ref<const std::string&>();
  double x = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), x, std::chars_format::hex);
  // The writer's finite values always carry an exponent ("1.8p+1"); without
  // one, a decimal "1.5" would read as the hexadecimal 1.3125.
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || (std::isfinite(x) && s.find('p') == s.npos))
    malformed(where, "is not a hexadecimal float");
  return x;
}

int64_t integer(const json& v, int64_t lo, int64_t hi, const std::string& where) {
  if (!v.is_number_integer()) malformed(where, "must be an integer");
  bool in_range;
  if (v.is_number_unsigned()) {  // may exceed INT64_MAX
    const uint64_t u = v.get<uint64_t>();
    in_range = hi >= 0 && u <= static_cast<uint64_t>(hi) && (lo <= 0 || u >= static_cast<uint64_t>(lo));
  } else {
    in_range = v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
  }
  if (!in_range) malformed(where, format("must be an integer in %lld..%lld", (long long)lo, (long long)hi));
  return v.get<int64_t>();
}

uint64_t unsigned_integer(const json& v, const std::string& where) {
  if (!v.is_number_unsigned()) malformed(where, "must be a non-negative integer");
  return v.get<uint64_t>();
}

bool boolean(const json& v, const std::string& where) {
  if (!v.is_boolean()) malformed(where, "must be true or false");
  return v.get<bool>();
}

std::string text(const json& v, const std::string& where) {
  if (!v.is_string()) malformed(where, "must be a string");
  return v.get<std::string>();
}

// An optional object: absent or null is none.
const json* optional_field(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::vector<double> real_list(const json& v, const std::string& where) {
  if (!v.is_array()) malformed(where, "must be an array");
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(real(v[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

class StateReader {
 public:
  StateReader(const CheckpointArrays& arrays, bool verify_names) : arrays_(arrays), verify_names_(verify_names) {}

  // The float64 array the value names, of exactly `shape` (-1: any length, the
  // first dimension only).
  std::vector<double> array(const json& v, std::vector<int64_t> shape, const std::string& where) {
    const std::string name = text(v, where);
    if (!is_array_name(name)) malformed(where, "must name an array file array-<16 hex digits>.npy");
    const std::optional<std::string> bytes = arrays_(name);
    if (!bytes) malformed(where, "the array file " + name + " is missing");
    if (verify_names_ && hex16(crc64(*bytes)) != name.substr(6, 16))
      malformed(where, "the array file " + name + " is damaged (its CRC-64 differs from its name)");
    NpyResult r = parse_npy(*bytes, name);
    if (!r.ok) malformed(where, r.error);
    if (r.array.dtype != NpyDtype::float64 || r.array.from_float32) malformed(where, name + " must hold float64 values");
    if (!shape.empty() && shape[0] < 0 && !r.array.shape.empty()) shape[0] = r.array.shape[0];
    if (r.array.shape != shape)
      malformed(where, name + " has shape " + npy_shape_string(r.array.shape) + ", expected " + npy_shape_string(shape));
    return std::move(r.array.f64);
  }

  template <class Matrix>
  Matrix matrix(const json& v, int64_t rows, int64_t cols, const std::string& where) {
    const std::vector<double> values = array(v, {rows, cols}, where);
    Matrix m(rows, cols);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) m(r, c) = values[static_cast<size_t>(r * cols + c)];
    return m;
  }

  Eigen::VectorXd vector(const json& v, int64_t n, const std::string& where) {
    const std::vector<double> values = array(v, {n}, where);
    return Eigen::Map<const Eigen::VectorXd>(values.data(), n);
  }

  Layer layer(const json& v, int m, int d, const std::string& where) {
    const std::vector<double> values = array(v, {m, 2, d, d}, where);
    Layer layer;
    const size_t block = static_cast<size_t>(d) * d;
    for (int i = 0; i < m; ++i)
      layer.heads.push_back({Eigen::Map<const MatD>(values.data() + (2 * i) * block, d, d),
                             Eigen::Map<const MatD>(values.data() + (2 * i + 1) * block, d, d)});
    return layer;
  }

  LearnRound round(const json& j, int d, int m, const std::string& where) {
    const int64_t n = int64_t{d} * d;
    LearnRound r;
    r.validation_error = real(field(j, "validation_error", where), at(where, "validation_error"));
    if (const json* s = optional_field(j, "sculpt")) r.sculpt = sculpt(*s, n, m, at(where, "sculpt"));
    if (const json* s = optional_field(j, "span")) {
      const std::string w = at(where, "span");
      r.span.hull_point = vector(field(*s, "hull_point", w), n, at(w, "hull_point"));
      r.span.hull_directions = matrix<Eigen::MatrixXd>(field(*s, "hull_directions", w), m - 1, n, at(w, "hull_directions"));
    }
    if (const json* s = optional_field(j, "net")) {
      const std::string w = at(where, "net");
      r.net.layer = layer(field(*s, "layer", w), m, d, at(w, "layer"));
      r.net.coarse_layer = layer(field(*s, "coarse_layer", w), m, d, at(w, "coarse_layer"));
    }
    return r;
  }

 private:
  SculptResult sculpt(const json& j, int64_t n, int m, const std::string& where) {
    integer(field(j, "dim", where), n, n, at(where, "dim"));  // d² of the state's d
    const double radius = real(field(j, "radius", where), at(where, "radius"));
    if (!(radius > 0 && std::isfinite(radius))) malformed(at(where, "radius"), "must be positive and finite");
    const std::vector<double> a = array(field(j, "slab_a", where), {-1, n}, at(where, "slab_a"));
    const int64_t count = static_cast<int64_t>(a.size()) / std::max<int64_t>(n, 1);
    const std::vector<double> b = array(field(j, "slab_b", where), {count}, at(where, "slab_b"));
    const std::vector<double> eta = array(field(j, "slab_eta", where), {count}, at(where, "slab_eta"));
    SculptResult s{ConvexBody(static_cast<int>(n), radius), {}, {}};
    for (int64_t r = 0; r < count; ++r) {
      Slab slab{std::vector<double>(a.begin() + r * n, a.begin() + (r + 1) * n), b[r], eta[r]};
      try {
        s.body.add(std::move(slab));
      } catch (const std::invalid_argument&) {
        malformed(where, format("slab %lld is not finite or has a negative width", (long long)r));
      }
    }
    const std::string w = at(where, "centre");
    const json& c = field(j, "centre", where);
    s.centre.x0 = vector(field(c, "x0", w), n, at(w, "x0"));
    s.centre.free_basis = matrix<Eigen::MatrixXd>(field(c, "free_basis", w), m - 1, n, at(w, "free_basis"));
    const std::string method = text(field(c, "method", w), at(w, "method"));
    if (method != "dense" && method != "streamed" && method != "iterative")
      malformed(at(w, "method"), "must be \"dense\", \"streamed\" or \"iterative\"");
    s.centre.method = method == "streamed"    ? ConvexBody::CentreMethod::streamed
                      : method == "iterative" ? ConvexBody::CentreMethod::iterative
                                              : ConvexBody::CentreMethod::dense;
    // The iterative centre keeps its min(n, 2m + 1) smallest singular values only.
    const int64_t values = method == "iterative" ? std::min<int64_t>(n, 2 * int64_t{m} + 1) : n;
    s.centre.singular_values = vector(field(c, "singular_values", w), values, at(w, "singular_values"));
    s.centre.gap = real(field(c, "gap", w), at(w, "gap"));
    s.centre.rank = static_cast<int>(integer(field(c, "rank", w), 0, n, at(w, "rank")));
    s.centre.threshold = real(field(c, "threshold", w), at(w, "threshold"));
    s.centre.weighted_residual = real(field(c, "weighted_residual", w), at(w, "weighted_residual"));
    s.centre.free_basis_residual = real(field(c, "free_basis_residual", w), at(w, "free_basis_residual"));
    // Written since the iterative centre (0 for the other methods, as in earlier checkpoints).
    if (c.contains("value_residual")) s.centre.value_residual = real(c["value_residual"], at(w, "value_residual"));
    return s;
  }

  const CheckpointArrays& arrays_;
  bool verify_names_;
};

std::optional<LayerErrors> errors_from_json(const json& e, const std::string& w) {
  LayerErrors out;
  const json& perm = field(e, "permutation", w);
  if (!perm.is_array()) malformed(at(w, "permutation"), "must be an array");
  for (const json& i : perm) out.permutation.push_back(static_cast<int>(integer(i, 0, kMaxInstanceHeads - 1, at(w, "permutation"))));
  out.theta_rel = real_list(field(e, "theta_rel", w), at(w, "theta_rel"));
  out.w_rel = real_list(field(e, "w_rel", w), at(w, "w_rel"));
  out.theta_max_rel = real(field(e, "theta_max_rel", w), at(w, "theta_max_rel"));
  out.w_max_rel = real(field(e, "w_max_rel", w), at(w, "w_max_rel"));
  out.test_relative_error = real(field(e, "test_relative_error", w), at(w, "test_relative_error"));
  out.test_samples = integer(field(e, "test_samples", w), 0, INT64_MAX, at(w, "test_samples"));
  return out;
}

std::optional<NoiseReport> noise_from_json(const json& noise, const std::string& w) {
  const json* e = &noise;
  constexpr int64_t kMax = INT64_MAX;
  auto number = [&](const char* key) { return real(field(*e, key, w), at(w, key)); };
  NoiseReport n;
  n.estimated = boolean(field(*e, "estimated", w), at(w, "estimated"));
  n.float32_labels = boolean(field(*e, "float32_labels", w), at(w, "float32_labels"));
  n.declared = number("declared");
  n.heldout_residual = number("heldout_residual");
  n.heldout_samples = integer(field(*e, "heldout_samples", w), 0, kMax, at(w, "heldout_samples"));
  n.fit_share = number("fit_share");
  n.noise = number("noise");
  n.rounding_measured = number("rounding_measured");
  n.rounding_level = number("rounding_level");
  n.rounding_bound = number("rounding_bound");
  n.limit = text(field(*e, "limit", w), at(w, "limit"));
  n.warning = text(field(*e, "warning", w), at(w, "warning"));
  const json& f = field(*e, "final_fit", w);
  const std::string fw = at(w, "final_fit");
  n.final_fit.samples = integer(field(f, "samples", fw), 0, kMax, at(fw, "samples"));
  n.final_fit.needed = integer(field(f, "needed", fw), 0, kMax, at(fw, "needed"));
  n.final_fit.available = integer(field(f, "available", fw), 0, kMax, at(fw, "available"));
  n.final_fit.memory_cap = integer(field(f, "memory_cap", fw), 0, kMax, at(fw, "memory_cap"));
  n.final_fit.reason = text(field(f, "reason", fw), at(fw, "reason"));
  return n;
}

template <class T>
constexpr bool optional_value = false;
template <class T>
constexpr bool optional_value<std::optional<T>> = true;

// The report's fields back from a checkpoint, each checked as it is read.
struct ReportDecoder {
  const json& j;
  const std::string& where;
  static constexpr int64_t kMax = INT64_MAX;

  static void read(const json& v, const std::string& w, LearnVariant& out) {
    const std::string variant = text(v, w);
    if (variant == "paper") out = LearnVariant::paper;
    else if (variant == "extended") out = LearnVariant::extended;
    else malformed(w, "must be \"paper\" or \"extended\"");
  }
  static void read(const json& v, const std::string& w, std::vector<StageRecord>& out) {
    if (!v.is_array()) malformed(w, "must be an array");
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string e = w + "[" + std::to_string(i) + "]";
      const json& s = v[i];
      out.push_back({text(field(s, "stage", e), at(e, "stage")),
                     static_cast<int>(integer(field(s, "round", e), -1, kMaxRound, at(e, "round"))),
                     integer(field(s, "samples", e), 0, kMax, at(e, "samples")), real(field(s, "seconds", e), at(e, "seconds")),
                     text(field(s, "summary", e), at(e, "summary")), field(s, "details", e)});
    }
  }
  static void read(const json& v, const std::string& w, std::vector<double>& out) { out = real_list(v, w); }
  static void read(const json& v, const std::string& w, int& out) {
    out = static_cast<int>(integer(v, -1, kMaxRound, w));  // best_round
  }
  static void read(const json& v, const std::string& w, int64_t& out) { out = integer(v, 0, kMax, w); }
  static void read(const json& v, const std::string& w, double& out) { out = real(v, w); }
  static void read(const json& v, const std::string& w, bool& out) { out = boolean(v, w); }
  static void read(const json& v, const std::string& w, std::string& out) { out = text(v, w); }
  static void read(const json& v, const std::string& w, std::vector<std::string>& out) {
    if (!v.is_array()) malformed(w, "must be an array");
    for (const json& s : v) out.push_back(text(s, w));
  }
  static void read(const json& v, const std::string& w, std::optional<LayerErrors>& out) { out = errors_from_json(v, w); }
  static void read(const json& v, const std::string& w, std::optional<NoiseReport>& out) { out = noise_from_json(v, w); }
  static void read(const json& v, const std::string& w, ProcessFields<int64_t, std::vector<int64_t>> p) {
    const json& by = field(v, "shared_samples_by_process", w);
    if (!by.is_array()) malformed(at(w, "shared_samples_by_process"), "must be an array");
    for (const json& n : by) p.shared_samples_by_process.push_back(integer(n, 0, kMax, at(w, "shared_samples_by_process")));
    p.gathers = integer(field(v, "gathers", w), 0, kMax, at(w, "gathers"));
    p.gathered_doubles_sent = integer(field(v, "gathered_doubles_sent", w), 0, kMax, at(w, "gathered_doubles_sent"));
    p.gathered_doubles_received =
        integer(field(v, "gathered_doubles_received", w), 0, kMax, at(w, "gathered_doubles_received"));
  }
  template <class Row>
  static void read_rows(const json& v, const std::string& w, std::vector<Row>& out, Row (*row)(const json&)) {
    if (!v.is_array()) malformed(w, "must be an array");
    for (size_t i = 0; i < v.size(); ++i) try {
        out.push_back(row(v[i]));
      } catch (const std::exception& e) {
        malformed(w + "[" + std::to_string(i) + "]", e.what());
      }
  }
  static void read(const json& v, const std::string& w, std::vector<ReferenceCheck>& out) {
    read_rows(v, w, out, reference_check_from_json);
  }
  static void read(const json& v, const std::string& w, std::vector<Diagnostic>& out) {
    read_rows(v, w, out, diagnostic_from_json);
  }

  template <class T>
  void operator()(const ReportField& f, T&& member) {
    if (!f.checkpoint) return;
    using Member = std::remove_cv_t<std::remove_reference_t<T>>;
    // Absent or null: an optional value unset; a field older checkpoints lack, as it was.
    const bool absent = !j.is_object() || !j.contains(f.checkpoint) || j.at(f.checkpoint).is_null();
    if (absent && (optional_value<Member> || f.optional_in_checkpoint)) return;
    read(field(j, f.checkpoint, where), at(where, f.checkpoint), std::forward<T>(member));
  }
};

LearnReport report_from_json(const json& j, const std::string& where) {
  LearnReport r;
  visit_report_fields(r, ReportDecoder{j, where});
  return r;
}

LearnState state_from_json(const json& j, StateReader& in) {
  const std::string where = "state";
  LearnState s;
  s.d = static_cast<int>(integer(field(j, "d", where), 1, kMaxInstanceD, "state.d"));
  s.k = static_cast<int>(integer(field(j, "k", where), 1, 1024, "state.k"));
  s.m = static_cast<int>(integer(field(j, "m", where), 1, kMaxInstanceHeads, "state.m"));
  const std::string next = text(field(j, "next", where), "state.next");
  bool known = false;
  for (const auto& [step, name] : kSteps)
    if (next == name) s.next = step, known = true;
  if (!known) malformed("state.next", "is not a step a checkpoint stands before");
  s.round = static_cast<int>(integer(field(j, "round", where), 0, kMaxRound - 1, "state.round"));
  s.offset = unsigned_integer(field(j, "offset", where), "state.offset");
  const std::string digest = text(field(j, "validation_digest", where), "state.validation_digest");
  if (digest.size() != 16 || digest.find_first_not_of("0123456789abcdef") != std::string::npos)
    malformed("state.validation_digest", "must be 16 lower-case hexadecimal digits");
  s.validation_digest = std::stoull(digest, nullptr, 16);
  s.seconds = real(field(j, "seconds", where), "state.seconds");
  s.w_sum = in.matrix<MatD>(field(j, "w_sum", where), s.d, s.d, "state.w_sum");
  s.w_error_assumed = real(field(j, "w_error_assumed", where), "state.w_error_assumed");
  s.last_w_improved = boolean(field(j, "last_w_improved", where), "state.last_w_improved");
  s.last_w_standard_error = real(field(j, "last_w_standard_error", where), "state.last_w_standard_error");
  s.final_round = boolean(field(j, "final_round", where), "state.final_round");
  s.final_w_error = real(field(j, "final_w_error", where), "state.final_w_error");
  s.final_w_standard_error = real(field(j, "final_w_standard_error", where), "state.final_w_standard_error");
  if (const json* w = optional_field(j, "final_w_sum")) s.final_w_sum = in.matrix<MatD>(*w, s.d, s.d, "state.final_w_sum");
  if (const json* n = optional_field(j, "final_rounds_done")) s.final_rounds_done = static_cast<int>(integer(*n, 0, 64, "state.final_rounds_done"));
  if (const json* r = optional_field(j, "best")) s.best = in.round(*r, s.d, s.m, "state.best");
  if (const json* r = optional_field(j, "current")) s.current = in.round(*r, s.d, s.m, "state.current");
  if (const json* l = optional_field(j, "layer")) s.layer = in.layer(*l, s.m, s.d, "state.layer");
  s.report = report_from_json(field(j, "report", where), "state.report");
  return s;
}

// json::parse refusing values nested deeper than kMaxJsonDepth, as the
// instance reader does (instance_io.cpp): dump() and copies recurse per level.
json parse_bounded(std::string_view text) {
  bool too_deep = false;
  const json::parser_callback_t limit = [&too_deep](int depth, json::parse_event_t event, json&) {
    const bool opens = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth) too_deep = true;
    return !(opens && depth >= kMaxJsonDepth);
  };
  json doc = json::parse(text, limit);
  if (too_deep) throw Malformed("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  return doc;
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

CheckpointRead parse_checkpoint(std::string_view manifest, const CheckpointArrays& arrays,
                                const std::string& name, bool verify_names) {
  CheckpointRead out;
  try {
    const json doc = parse_bounded(manifest);
    if (!doc.is_object()) malformed("the manifest", "must be a JSON object");
    if (!doc.contains("format") || doc["format"] != kCheckpointFormat)
      throw Malformed(std::string("\"format\" must be \"") + kCheckpointFormat + "\"");
    if (!doc.contains("schema_version") || doc["schema_version"] != kCheckpointSchemaVersion)
      throw Malformed("\"schema_version\" is not " + std::to_string(kCheckpointSchemaVersion) +
                      ", the version this build reads");
    out.checkpoint.provenance = field(doc, "provenance", "the manifest");
    out.checkpoint.match = field(doc, "match", "the manifest");
    StateReader in(arrays, verify_names);
    out.checkpoint.state = state_from_json(field(doc, "state", "the manifest"), in);
    if (auto e = check_learn_state(out.checkpoint.state); !e.empty()) malformed("state", e);
  } catch (const Malformed& e) {
    out.error = name + ": " + e.what();
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999; one line
    std::string what = e.what();
    if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    out.error = name + ": malformed or truncated JSON (" + what + ")";
  }
  return out;
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
