// The checkpoint's reader: manifest and arrays back to a LearnState, every value
// checked, every failure one line (checkpoint.hpp; the writer is checkpoint.cpp).
#include "learn/checkpoint.hpp"

#include "learn/checkpoint_format.hpp"
#include "learn/report_fields.hpp"

#include "data/instance_io.hpp"
#include "data/npy.hpp"
#include "util/format.hpp"

#include <cmath>
#include <stdexcept>

namespace mha {

using nlohmann::json;
using namespace checkpoint_format;

namespace {

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

}  // namespace

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

}  // namespace mha
