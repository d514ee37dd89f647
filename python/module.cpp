// mhalearn._core: the library behind the Python package `mhalearn`
// (python/mhalearn/__init__.py adds from_torch and the learn wrapper).
//
// Conventions, the CLI's: arrays are float64 (labels, Gaussian inputs) or int8
// ±1 (Boolean inputs), shaped (N, k, d); a bad argument raises ValueError with
// the CLI's one-line message; long computations release the GIL; progress goes
// to stderr (when it is a terminal) exactly as in the CLI.
#include "cli/fault_switch.hpp"
#include "cli/hard_run.hpp"
#include "cli/file_kinds.hpp"
#include "cli/learn_checkpoints.hpp"
#include "cli/demo_run.hpp"
#include "cli/learn_settings.hpp"
#include "cli/stop_signals.hpp"
#include "cli/option_ranges.hpp"
#include "cli/stage_runs.hpp"
#include "data/noisy_source.hpp"
#include "learn/checkpoint.hpp"
#include "mhalearn.hpp"
#include "util/format.hpp"
#include "numeric/precision.hpp"
#include "stages/stage1/wsum_study.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

namespace py = pybind11;
using namespace mha;
using nlohmann::json;

namespace {

int default_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

[[noreturn]] void bad_input(const std::string& message) { throw py::value_error(message); }
// The CLI's exit 3: the fast (double) path cannot answer this input.
[[noreturn]] void fast_path_overflow(const std::string& message) {
  PyErr_SetString(PyExc_OverflowError, message.c_str());
  throw py::error_already_set();
}

py::object to_python(const json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// A numpy array that owns `data` (moved to the heap; freed with the array): no copy.
template <class T>
py::array_t<T> adopt(std::vector<T>&& data, std::vector<py::ssize_t> shape) {
  auto* owner = new std::vector<T>(std::move(data));
  py::capsule free_owner(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, owner->data(), free_owner);
}

MatD to_matrix(const py::array& a, const char* name) {
  if (a.ndim() != 2) bad_input(std::string(name) + ": expected a 2-D array, got " + std::to_string(a.ndim()) + " dimensions");
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u')
    bad_input(std::string(name) + ": expected a real (float64) array, got dtype " + std::string(py::str(a.dtype())));
  const auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  // numpy is row-major, MatD column-major: map as row-major, copy once.
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return Eigen::Map<const RowMajor>(c.data(), c.shape(0), c.shape(1));
}

py::array_t<double> to_numpy(const MatD& m) {
  py::array_t<double> out({m.rows(), m.cols()});
  auto v = out.mutable_unchecked<2>();
  for (Eigen::Index r = 0; r < m.rows(); ++r)
    for (Eigen::Index c = 0; c < m.cols(); ++c) v(r, c) = m(r, c);
  return out;
}

InputKind input_kind(const std::string& name) {
  InputKind kind;
  if (!parse_input_kind(name, kind)) bad_input("inputs must be boolean or gaussian, got '" + name + "'");
  return kind;
}

// X as the CLI reads X.npy: int8 ±1 or float64; `single` lets a 2-D (k, d)
// array stand for one sequence. The copy is the one the library's batch needs.
NpyArray inputs_array(const py::array& x, const char* name, bool single) {
  NpyArray a;
  if (single && x.ndim() == 2) a.shape.push_back(1);
  for (py::ssize_t i = 0; i < x.ndim(); ++i) a.shape.push_back(x.shape(i));
  if (x.dtype().equal(py::dtype::of<int8_t>())) {
    a.dtype = NpyDtype::int8;
    const auto c = py::array_t<int8_t, py::array::c_style>::ensure(x);
    a.i8.assign(c.data(), c.data() + c.size());
  } else if (x.dtype().equal(py::dtype::of<double>()) || x.dtype().equal(py::dtype::of<float>())) {
    a.dtype = NpyDtype::float64;  // float32 widened exactly, as the CLI reads a float32 X.npy
    const auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(x);
    a.f64.assign(c.data(), c.data() + c.size());
  } else {
    bad_input(std::string(name) + ": got dtype " + std::string(py::str(x.dtype())) + "; " + cli::kInputsContract);
  }
  return a;
}

// Inputs of a forward pass, checked as `mhalearn forward` checks X.npy.
InputBatch forward_inputs(const py::array& x, int d) {
  if (x.ndim() != 2 && x.ndim() != 3)
    bad_input("X: expected a 3-D array (N, k, d) or one sequence (k, d), got " + std::to_string(x.ndim()) + " dimensions");
  NpyArray a = inputs_array(x, "X", true);
  if (auto e = check_inputs_array(a, d); !e.empty()) bad_input("X: " + e);
  const int64_t n = a.shape[0];
  const int k = static_cast<int>(a.shape[1]);
  return a.dtype == NpyDtype::int8 ? boolean_batch_from_values(a.i8, n, k, d) : dense_batch_from_values(std::move(a.f64), n, k, d);
}

NpyArray labels_array(const py::array& y) {
  if (!y.dtype().equal(py::dtype::of<double>()) && !y.dtype().equal(py::dtype::of<float>()))
    bad_input("Y: got dtype " + std::string(py::str(y.dtype())) + "; " + cli::kLabelsContract);
  NpyArray a;
  a.dtype = NpyDtype::float64;
  for (py::ssize_t i = 0; i < y.ndim(); ++i) a.shape.push_back(y.shape(i));
  const auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(y);  // float32 widened exactly
  a.f64.assign(c.data(), c.data() + c.size());
  return a;
}

void check_threads(int threads) {
  if (auto e = cli::range_problem(cli::option_range("--threads"), double(threads)); !e.empty()) bad_input("threads " + e);
}

json python_provenance(const std::string& command, const json& options) {
  json p = make_provenance(command, options);
  p["interface"] = "python";
  return p;
}

// --- instances ---------------------------------------------------------------

Instance make_instance(const std::vector<std::pair<py::array, py::array>>& heads, int k, const std::string& inputs) {
  Instance inst;
  for (size_t i = 0; i < heads.size(); ++i) {
    const std::string where = "head " + std::to_string(i);
    inst.layer.heads.push_back({to_matrix(heads[i].first, (where + " theta").c_str()), to_matrix(heads[i].second, (where + " w").c_str())});
  }
  inst.k = k;
  inst.inputs = input_kind(inputs);
  if (auto e = validate_instance(inst); !e.empty()) bad_input(e);
  inst.provenance_json = python_provenance("Instance", {{"k", k}, {"inputs", inputs}}).dump();
  return inst;
}

py::list heads_of(const Instance& inst) {
  py::list out;
  for (const Head& h : inst.layer.heads) out.append(py::make_tuple(to_numpy(h.theta), to_numpy(h.w)));
  return out;
}

Instance generate(int d, int k, int m, double scale, uint64_t seed, const std::string& inputs, double coherence) {
  GenerateOptions o;
  o.d = d, o.k = k, o.m = m, o.scale = scale, o.seed = seed, o.coherence = coherence;
  o.inputs = input_kind(inputs);
  if (auto e = validate_generate_options(o); !e.empty()) bad_input(e);
  GenerateResult g;
  {
    py::gil_scoped_release release;
    g = generate_instance(o);
  }
  if (!g.ok) throw std::runtime_error(g.error);
  json options = {{"d", d}, {"k", k}, {"m", m}, {"scale", scale}, {"inputs", inputs}, {"seed", seed}};
  if (coherence > 0) options["coherence"] = coherence;
  json prov = python_provenance("generate", options);
  prov["seed"] = seed;
  prov["attempts"] = g.attempts;
  g.instance.provenance_json = prov.dump();
  return std::move(g.instance);
}

Instance read_instance_py(const std::string& path) {
  InstanceReadResult r = read_instance(path);
  if (!r.ok) bad_input(r.error);
  return std::move(r.instance);
}

void write_instance_py(const std::string& path, const Instance& inst) {
  if (auto e = write_instance(path, inst); !e.empty()) bad_input(e);
}

Instance import_attention_py(const py::array& wq, const py::array& wk, const py::array& wv, const py::array& wo, int heads, int k,
                             const std::string& inputs) {
  ImportResult r = import_attention(to_matrix(wq, "W_Q"), to_matrix(wk, "W_K"), to_matrix(wv, "W_V"), to_matrix(wo, "W_O"), heads);
  if (!r.ok) bad_input(r.error);
  Instance inst;
  inst.layer = std::move(r.layer);
  inst.k = k;
  inst.inputs = input_kind(inputs);
  if (auto e = validate_instance(inst); !e.empty()) bad_input(e);
  inst.provenance_json = python_provenance("import", {{"heads", heads}, {"k", k}, {"inputs", inputs}}).dump();
  return inst;
}

// --- data and forward passes -------------------------------------------------

py::tuple sample(const Instance& inst, int64_t n, uint64_t seed, int threads) {
  if (auto e = cli::range_problem(cli::option_range("--n"), double(n)); !e.empty()) bad_input("n " + e);
  check_threads(threads);
  if (auto e = oracle_problem(inst); !e.empty()) fast_path_overflow(e);
  const int k = inst.k, d = inst.d();
  // X and Y are held in memory: refuse up front what this machine cannot hold at all.
  const double bytes = double(n) * k * d * ((inst.inputs == InputKind::boolean ? 1.0 : 8.0) + 8.0);
  const double physical = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
  if (physical > 0 && bytes > physical) {
    char line[200];
    std::snprintf(line, sizeof line, "n = %lld: X and Y would take %.3g GB, more than this machine's %.3g GB of memory",
                  (long long)n, bytes / 1e9, physical / 1e9);
    bad_input(line);
  }
  std::vector<py::ssize_t> shape = {n, k, d};
  LabelledBatch batch;
  {
    py::gil_scoped_release release;
    batch = SampleOracle(inst, seed).draw(0, n, threads);  // oracle_problem checked above
  }
  py::array x;
  if (inst.inputs == InputKind::boolean) {
    // Unpack the ±1 tokens straight into the int8 array X.npy would hold.
    py::array_t<int8_t> xb(shape);
    int8_t* out = xb.mutable_data();
    const int wpt = words_per_token(d);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t* bits = batch.x.sample_bits(i);
      for (int t = 0; t < k; ++t)
        for (int j = 0; j < d; ++j) out[(i * k + t) * d + j] = (bits[t * wpt + j / 64] >> (j % 64)) & 1 ? 1 : -1;
    }
    x = std::move(xb);
  } else {
    x = adopt(std::move(batch.x.values), shape);
  }
  return py::make_tuple(x, adopt(std::move(batch.y), shape));
}

py::array_t<double> forward(const Instance& inst, const py::array& x, const std::string& path, unsigned precision, int threads) {
  if (path != "fast" && path != "reference") bad_input("path must be fast or reference, got '" + path + "'");
  if (precision < kMinPrecisionBits || precision > kMaxPrecisionBits)
    bad_input("precision must be in " + std::to_string(kMinPrecisionBits) + ".." + std::to_string(kMaxPrecisionBits) +
              " bits, got " + std::to_string(precision));
  check_threads(threads);
  const InputBatch batch = forward_inputs(x, inst.d());
  std::vector<py::ssize_t> shape(x.shape(), x.shape() + x.ndim());
  if (path == "fast") {
    py::array_t<double> y(shape);
    double* out = y.mutable_data();
    FastForwardStatus status;
    {
      py::gil_scoped_release release;
      status = FastForward(inst.layer).run(batch, out, threads);
    }
    if (!status.ok()) fast_path_overflow(status.message() + "; use path=\"reference\"");
    return y;
  }
  std::vector<double> y;
  {
    py::gil_scoped_release release;
    y = forward_mpfr_batch(inst.layer, batch, precision);
  }
  return adopt(std::move(y), shape);
}

// --- the learner ---------------------------------------------------------------

// The keyword arguments of learn(), set through the CLI's option table
// (cli/learn_settings.hpp): a keyword is the flag without dashes, '-' as '_'
// (--no-polish and --no-reference are polish=False and reference=False).
struct KeywordSettings {
  cli::LearnSettings s;
  std::set<std::string> given;  // as flags
};

void set_learn_keyword(KeywordSettings& k, const std::string& name, py::handle value, const std::string& command) {
  const cli::LearnOptionSpec* spec = cli::find_learn_option_by_keyword(name);
  if (!spec || (command == "demo" && !cli::demo_takes_learn_option(*spec)))
    bad_input(command + ": unknown option '" + name + "' (the options: help(mhalearn." + command + "))");
  std::visit(
      [&](auto* field) {
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, bool>) {
          if (!py::isinstance<py::bool_>(value)) throw py::cast_error();
          *field = spec->negated ? !value.cast<bool>() : value.cast<bool>();
        } else if constexpr (std::is_integral_v<T>) {
          if (py::isinstance<py::bool_>(value) || py::isinstance<py::float_>(value)) throw py::cast_error();
          *field = value.cast<T>();
        } else {
          *field = value.cast<T>();
        }
      },
      spec->field(k.s));
  k.given.insert(spec->flag);
}

// The keyword options of learn() (or demo(), which takes the paper learner's), checked as
// the CLI checks its flags.
KeywordSettings learn_settings(const py::dict& kw, bool has_truth, const std::string& command = "learn") {
  KeywordSettings k;
  k.s.paper.threads = default_threads();
  for (const auto& [key, value] : kw) {
    const std::string name = py::str(key);
    try {
      set_learn_keyword(k, name, value, command);
    } catch (const py::cast_error&) {
      bad_input(command + ": option '" + name + "' has the wrong type (" + std::string(py::str(py::type::of(value).attr("__name__"))) + ")");
    }
  }
  for (const std::string& flag : k.given) {  // the CLI's ranges (cli/option_ranges.hpp)
    const cli::OptionRange* r = cli::find_option_range(flag);
    const cli::LearnOptionSpec* spec = cli::find_learn_option_by_flag(flag);
    if (!r) continue;
    const double value = kw[py::str(cli::learn_keyword(*spec))].cast<double>();
    if (auto e = cli::range_problem(*r, value); !e.empty()) bad_input(command + ": " + cli::learn_keyword(*spec) + " " + e);
  }
  if (auto e = cli::learn_settings_problem(k.s, k.given, has_truth, cli::Spelling::python); !e.empty())
    bad_input(command + ": " + e);
  return k;
}

// What identifies the samples in a checkpoint: the instance's JSON (the seed
// and label noise are options), or the arrays' bytes.
json python_input_identity(const Instance* inst, const py::array* x, const py::array* y) {
  if (inst) return {{"instance_crc64", format("%016llx", (unsigned long long)crc64(instance_to_json(*inst).dump()))}};
  auto bytes = [](const py::array& a) {
    return std::string(py::bytes(py::module_::import("numpy").attr("ascontiguousarray")(a).attr("tobytes")()));
  };
  return {{"x_crc64", format("%016llx", (unsigned long long)crc64(bytes(*x)))},
          {"y_crc64", format("%016llx", (unsigned long long)crc64(bytes(*y)))},
          {"samples", x->shape(0)}};
}

// (report, layer or None) of the six stages and polishing, with checkpoints as the CLI's.
std::pair<json, std::optional<Layer>> run_paper(const SampleSource& source, LearnOptions o, const Instance* truth,
                                                const KeywordSettings& k, const json& provenance, const json& identity,
                                                const json& options) {
  if (auto e = cli::learn_fast_paths(o); !e.empty()) bad_input(e);  // the test copy's fault switch
  cli::SafePoints points;
  points.dir = k.s.resume.empty() ? k.s.checkpoint : k.s.resume;
  points.match = cli::resume_match(options, identity);
  points.provenance = provenance;  // with earlier builds named once resumed (read_resume)
  if (auto e = cli::stop_at_from_environment(points.stop_at); !e.empty()) bad_input(e);
  std::optional<LearnState> resume;
  if (!k.s.resume.empty()) {
    if (auto e = cli::read_resume(k.s.resume, points.match, points.provenance, k.s.resume_other_build,
                                  cli::Spelling::python, source.k(), source.d(), o, resume);
        !e.empty())
      bad_input("learn: resume: " + e);
  } else if (!k.s.checkpoint.empty()) {
    if (auto e = cli::prepare_checkpoint_directory(k.s.checkpoint); !e.empty()) bad_input("learn: checkpoint: " + e);
  }
  o.at_safe_point = [&points](const LearnState& state) { return points(state); };
  LearnResult r;
  {
    // As in the CLI: SIGINT/SIGTERM stop the run at its next safe point (a
    // second one ends the process); Python's handlers are back afterwards.
    const cli::StopSignals signals;
    py::gil_scoped_release release;
    r = learn_layer(source, o, truth, resume ? &*resume : nullptr);
  }
  json report = cli::learn_report_record(to_json(r.report), points.provenance);
  report["table"] = format_table(r.report);
  if (r.report.interrupted) {
    report["checkpoint"] = points.dir.empty() || !points.write_error.empty() ? json(nullptr) : json(points.dir);
    report["message"] = cli::interrupted_message(r.report, points);
    return {report, std::nullopt};
  }
  if (!r.report.ok) return {report, std::nullopt};
  return {report, std::move(r.layer)};
}

// A baseline's (report with its table, layer when it finished), `train` run without the GIL.
template <class Train>
std::pair<json, std::optional<Layer>> run_baseline(Train train, const json& provenance) {
  decltype(train()) r;
  {
    py::gil_scoped_release release;
    r = train();
  }
  std::pair<json, std::optional<Layer>> out{cli::learn_report_record(to_json(r.report), provenance), std::nullopt};
  out.first["table"] = format_table(r.report);
  if (r.report.ok) out.second = std::move(r.layer);
  return out;
}

// (learned instance or None, report dict) of the chosen method. A failed run is
// not an exception here: the package's learn() raises with the report attached.
py::tuple run_method(const SampleSource& source, const KeywordSettings& k, int m, uint64_t seed, const Instance* truth,
                     const json& source_record, const json& identity) {
  if (m > cli::kLearnerMaxHeads)
    bad_input("learn: m = " + std::to_string(m) + ": the learner takes at most " + std::to_string(cli::kLearnerMaxHeads) + " heads");
  if (auto e = check_learn_input(source.k(), source.d(), m); !e.empty()) bad_input(e);
  json options = cli::learn_options_record(k.s, k.given, m, source_record);
  const json provenance = python_provenance("learn", options);
  std::pair<json, std::optional<Layer>> out;
  if (k.s.method == "adam") {
    const AdamOptions o = cli::adam_options(k.s, m, seed);
    out = run_baseline([&] { return train_adam(source, o, truth); }, provenance);
  } else if (k.s.method == "random-polish") {
    const RandomPolishOptions o = cli::random_polish_options(k.s, k.given, m, seed);
    if (auto e = check_random_polish(source, o); !e.empty()) bad_input(e);
    out = run_baseline([&] { return random_polish(source, o, truth); }, provenance);
  } else {
    out = run_paper(source, cli::paper_options(k.s, k.given, m, seed), truth, k, provenance, identity, options);
  }
  if (!out.second) return py::make_tuple(py::none(), to_python(out.first));
  // The report's provenance: a resumed run's names the earlier builds (read_resume).
  return py::make_tuple(py::cast(cli::learned_instance(*out.second, source, out.first["provenance"])),
                        to_python(out.first));
}

std::unique_ptr<SampleSource> with_label_noise(std::unique_ptr<SampleSource> source, double noise, uint64_t seed) {
  if (noise > 0) return std::make_unique<NoisySource>(std::move(source), noise, seed);
  return source;
}

py::tuple learn_instance(const Instance& inst, uint64_t seed, const py::dict& kw) {
  const KeywordSettings k = learn_settings(kw, true);
  if (auto e = oracle_problem(inst); !e.empty()) fast_path_overflow(e);
  const auto source = with_label_noise(std::make_unique<SampleOracle>(inst, seed), k.s.label_noise, seed);
  return run_method(*source, k, inst.m(), seed, &inst, {{"source", "instance"}, {"seed", seed}},
                    python_input_identity(&inst, nullptr, nullptr));
}

py::tuple learn_data(const py::array& x, const py::array& y, int m, uint64_t seed, const py::dict& kw) {
  const KeywordSettings k = learn_settings(kw, false);
  DatasetOpen data = open_dataset(inputs_array(x, "X", false), labels_array(y));
  if (!data.source) bad_input(data.error);
  const int64_t n = data.source->available();
  const auto source = with_label_noise(std::move(data.source), k.s.label_noise, seed);
  return run_method(*source, k, m, seed, nullptr, {{"source", "arrays"}, {"n", n}, {"seed", seed}},
                    k.s.checkpoint.empty() && k.s.resume.empty() ? json() : python_input_identity(nullptr, &x, &y));
}

// The main job (cli/demo_run.hpp), as `mhalearn demo`: (status, error, report, text).
py::tuple demo_py(const std::string& out, int d, int k, int m, double scale, uint64_t seed, uint64_t sample_seed,
                  int64_t write_samples, int64_t cross_check, const py::kwargs& options) {
  const KeywordSettings ks = learn_settings(options, true, "demo");
  cli::DemoArgs a;
  a.gen.d = d, a.gen.k = k, a.gen.m = m, a.gen.scale = scale, a.gen.seed = seed;
  a.out = out, a.written = write_samples, a.checked = cross_check, a.sample_seed = sample_seed;
  a.learn = ks.s, a.given = ks.given;
  std::string text;
  cli::DemoRun run;
  {
    py::gil_scoped_release release;
    run = cli::run_demo_command(a, [&text](const std::string& t) { text += t; }, python_provenance);
  }
  if (run.status == cli::kExitBadInput) bad_input("demo: " + run.error);
  if (run.status == cli::kExitFastPathOverflow) fast_path_overflow("demo: " + run.error);
  return py::make_tuple(run.status, run.error, run.report.is_null() ? py::object(py::none()) : to_python(run.report), text);
}

py::list verify_py(const Instance& inst, const std::vector<std::string>& requested, uint64_t seed, int threads,
                   const std::optional<Instance>& layer) {
  check_threads(threads);
  std::vector<std::string> stages;
  for (const auto& s : requested) {
    if (s == "all") stages.insert(stages.end(), verify_stage_names().begin(), verify_stage_names().end());
    else if (std::find(verify_stage_names().begin(), verify_stage_names().end(), s) == verify_stage_names().end())
      bad_input("verify: unknown stage '" + s + "' (forward, 1, 2, 3, 4, 5, 6, polish or all)");
    else stages.push_back(s);
  }
  if (auto e = oracle_problem(inst); !e.empty()) bad_input("verify: " + e);
  VerifyOptions o;
  o.seed = seed;
  o.threads = threads;
  if (layer) {  // as the CLI's --layer: polishing's objective evaluated there
    if (std::find(stages.begin(), stages.end(), "polish") == stages.end())
      bad_input("verify: layer applies to the polish stage, which is not among the stages asked for");
    if (layer->d() != inst.d() || layer->layer.m() != inst.layer.m())
      bad_input("verify: the layer's (d, m) differ from the instance's");
    o.polish_layer = &layer->layer;
  }
  FastPaths fast;
  if (auto e = cli::verify_fast_paths(fast); !e.empty()) bad_input(e);  // the test copy's fault switch
  std::vector<Comparison> rows;
  {
    py::gil_scoped_release release;
    rows = verify_instance(inst, stages, o, fast);
  }
  py::list out;
  for (const auto& c : rows) out.append(to_python(to_json(c)));
  return out;
}

// --- stages 1 and 2, the SQ-hard family, the W-sum study ------------------------

// `value` in the CLI's range of `flag` (cli/option_ranges.hpp), else ValueError
// "fn: keyword must be in …".
void check_range(const char* fn, const char* flag, double value) {
  std::string keyword = std::string(flag).substr(2);
  std::replace(keyword.begin(), keyword.end(), '-', '_');
  if (auto e = cli::range_problem(cli::option_range(flag), value); !e.empty()) bad_input(std::string(fn) + ": " + keyword + " " + e);
}

// Where a stage function's samples come from, as the CLI's instance file or --x/--y.
struct StageInput {
  const Instance* truth = nullptr;
  std::unique_ptr<SampleSource> source;
  json options;  // the provenance's record of the source
};

StageInput stage_input(const char* fn, const std::optional<Instance>& inst, const std::optional<py::array>& x,
                       const std::optional<py::array>& y, uint64_t seed, double label_noise) {
  check_range(fn, "--label-noise", label_noise);
  if (inst.has_value() == (x.has_value() || y.has_value()))
    bad_input(std::string(fn) + ": give either an instance or both x and y");
  StageInput in;
  if (inst) {
    if (auto e = oracle_problem(*inst); !e.empty()) fast_path_overflow(e);
    in.truth = &*inst;
    in.source = std::make_unique<SampleOracle>(*inst, seed);
    in.options = {{"source", "instance"}, {"seed", seed}};
  } else {
    if (!x || !y) bad_input(std::string(fn) + ": x and y must be given together");
    DatasetOpen data = open_dataset(inputs_array(*x, "X", false), labels_array(*y));
    if (!data.source) bad_input(data.error);
    in.options = {{"source", "arrays"}, {"n", data.source->available()}, {"seed", seed}};
    in.source = std::move(data.source);
  }
  in.source = with_label_noise(std::move(in.source), label_noise, seed);
  return in;
}

const cli::ProvenanceMaker kPythonProvenance = [](const std::string& command, const json& options) {
  return python_provenance(command, options);
};

// (status, error, report, output) of a stage command; the package raises on a status.
py::tuple stage_run_tuple(const cli::StageRun& run) {
  if (run.report.is_null()) bad_input(run.error);  // refused before it ran
  return py::make_tuple(run.status, run.error, to_python(run.report), to_python(run.output));
}

py::tuple stage1_py(const std::optional<Instance>& inst, const std::optional<py::array>& x, const std::optional<py::array>& y,
                    uint64_t seed, double label_noise, int64_t samples, int threads, double max_seconds, bool reference,
                    std::optional<int64_t> reference_samples, std::optional<unsigned> precision) {
  check_range("stage1", "--samples", double(samples));
  check_range("stage1", "--threads", threads);
  check_range("stage1", "--max-seconds", max_seconds);
  if (!reference && (reference_samples || precision))
    bad_input(std::string("stage1: ") + (reference_samples ? "reference_samples" : "precision") + " needs reference=True");
  cli::Stage1Args a;
  a.samples = samples, a.threads = threads, a.max_seconds = max_seconds, a.reference = reference;
  if (reference_samples) check_range("stage1", "--reference-samples", double(*reference_samples)), a.reference_samples = *reference_samples;
  if (precision) check_range("stage1", "--precision", *precision), a.precision = *precision;
  const StageInput in = stage_input("stage1", inst, x, y, seed, label_noise);
  cli::StageRun run;
  {
    py::gil_scoped_release release;
    run = cli::run_stage1_command(a, *in.source, in.truth, seed, in.options, kPythonProvenance);
  }
  return stage_run_tuple(run);
}

template <class Enum>
Enum enum_choice(const char* fn, const char* keyword, const std::string& value, const std::vector<std::pair<const char*, Enum>>& choices) {
  std::string names;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    names.append(names.empty() ? "" : "|").append(name);
  }
  bad_input(std::string(fn) + ": " + keyword + ": '" + value + "' is not one of " + names);
}

// The sculpt keywords given as numbers, checked against the CLI's ranges.
struct SculptNumbers {
  int m;
  int64_t stage1_samples;
  std::optional<double> tau;
  std::optional<int64_t> pilot_samples;
  double v_min;
  std::optional<double> sigma_min, w_error;
  double radius;
  int64_t target;
  std::optional<int64_t> max_samples;
  double max_seconds;
  int threads;
};

void set_sculpt_numbers(cli::SculptArgs& a, const SculptNumbers& n) {
  if (n.m != 0) check_range("sculpt", "--m", n.m);
  check_range("sculpt", "--stage1-samples", double(n.stage1_samples));
  check_range("sculpt", "--v-min", n.v_min);
  check_range("sculpt", "--radius", n.radius);
  check_range("sculpt", "--target", double(n.target));
  check_range("sculpt", "--max-seconds", n.max_seconds);
  check_range("sculpt", "--threads", n.threads);
  if (n.tau) check_range("sculpt", "--tau", *n.tau);
  if (n.pilot_samples) check_range("sculpt", "--pilot-samples", double(*n.pilot_samples));
  if (n.sigma_min) check_range("sculpt", "--sigma-min", *n.sigma_min);
  if (n.w_error) check_range("sculpt", "--w-error", *n.w_error);
  if (n.max_samples) check_range("sculpt", "--max-samples", double(*n.max_samples));
  SculptOptions& so = a.learn.sculpt.sculpt;
  a.m = n.m;
  a.learn.stage1_samples = n.stage1_samples;
  a.tau = n.tau;
  a.pilot_samples_given = n.pilot_samples.has_value();
  if (n.pilot_samples) a.learn.sculpt.pilot_samples = *n.pilot_samples;
  so.certify.v_min = n.v_min;
  a.sigma_min = n.sigma_min;
  a.w_error = n.w_error;
  so.radius = n.radius;
  so.target_constraints = n.target;
  a.max_samples = n.max_samples;
  so.max_seconds = n.max_seconds;
  a.learn.threads = n.threads;
}

py::tuple sculpt_py(const std::optional<Instance>& inst, const std::optional<py::array>& x, const std::optional<py::array>& y,
                    uint64_t seed, double label_noise, const std::string& w_sum, const std::optional<std::string>& v_min_rule,
                    const std::optional<std::string>& selection, bool distinct, const std::string& rows, const SculptNumbers& numbers) {
  cli::SculptArgs a;
  set_sculpt_numbers(a, numbers);
  a.w_source = w_sum;
  a.rows = rows;
  a.distinct = distinct;
  if (v_min_rule)
    a.v_min_rule = enum_choice<CertifyOptions::VMinRule>("sculpt", "v_min_rule", *v_min_rule,
                                                         {{"every", CertifyOptions::VMinRule::every_entry}, {"pairwise", CertifyOptions::VMinRule::pairwise}});
  if (selection)
    a.selection = enum_choice<SculptOptions::Selection>("sculpt", "selection", *selection,
                                                         {{"threshold", SculptOptions::Selection::threshold}, {"best", SculptOptions::Selection::best_rows}});
  const StageInput in = stage_input("sculpt", inst, x, y, seed, label_noise);
  cli::StageRun run;
  {
    py::gil_scoped_release release;
    run = cli::run_sculpt_command(a, *in.source, in.truth, label_noise, in.options, kPythonProvenance);
  }
  return stage_run_tuple(run);
}

// (status, error, report, instance or None, study data) of `hard`.
py::tuple hard_py(std::optional<int> d, std::optional<int> m, const std::string& subset, const std::string& q, int p, int q_out,
                  uint64_t seed, std::optional<int64_t> verify_samples, std::optional<int64_t> mpfr_checks, unsigned precision,
                  double tolerance, int threads, bool study, int study_max_m) {
  cli::HardArgs a;
  if (d) check_range("hard", "--d", *d), a.d = *d, a.d_given = true;
  if (m) check_range("hard", "--m", *m), a.m = *m, a.m_given = true;
  check_range("hard", "--p", p);
  check_range("hard", "--q-out", q_out);
  check_range("hard", "--precision", precision);
  check_range("hard", "--threads", threads);
  check_range("hard", "--study-max-m", study_max_m);
  if (verify_samples) check_range("hard", "--verify-samples", double(*verify_samples)), a.samples = *verify_samples, a.samples_given = true;
  if (mpfr_checks) check_range("hard", "--mpfr-checks", double(*mpfr_checks)), a.mpfr_checks = *mpfr_checks;
  a.subset = subset, a.q = q, a.p = p, a.q_out = q_out, a.seed = seed, a.precision = precision, a.tolerance = tolerance;
  a.threads = threads, a.study_max_m = study_max_m;
  cli::HardRun run;
  {
    py::gil_scoped_release release;
    run = study ? cli::run_hard_study(a) : cli::run_hard_family(a);
  }
  if (run.report.is_null()) bad_input("hard: " + run.error);
  py::object instance = run.instance ? py::cast(std::move(*run.instance)) : py::none();
  return py::make_tuple(run.status, run.error, to_python(run.report), instance);
}

py::list study_wsum_py(const std::vector<int>& d, int k, double scale, int points, int64_t samples, uint64_t seed, int threads) {
  for (int v : d) check_range("study_wsum", "--d", v);
  check_range("study_wsum", "--k", k);
  check_range("study_wsum", "--scale", scale);
  check_range("study_wsum", "--points", points);
  check_range("study_wsum", "--samples", double(samples));
  check_range("study_wsum", "--threads", threads);
  WsumStudyOptions o;
  o.dims = d, o.k = k, o.scale = scale, o.points = points, o.samples = samples, o.seed = seed, o.threads = threads;
  if (auto e = wsum_study_problem(o); !e.empty()) bad_input("study_wsum: " + e);
  std::vector<WsumStudyRow> rows;
  {
    py::gil_scoped_release release;
    rows = wsum_study(o);
  }
  py::list out;
  for (const WsumStudyRow& r : rows) {
    py::dict row;
    row["d"] = r.d, row["k"] = r.k, row["alpha"] = r.alpha, row["stable_rank"] = r.stable_rank;
    row["m_minus_i_op"] = r.m_minus_i_op, row["m_minus_i_fro_rel"] = r.m_minus_i_fro_rel;
    row["standard_error_op"] = r.standard_error_op, row["method"] = r.enumerated ? "enumeration" : "monte_carlo";
    row["samples"] = r.samples;
    out.append(row);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_core, mod) {
  mod.doc() = "mhalearn's C++ library (the package mhalearn wraps it)";
  mod.attr("__version__") = kVersion;
  mod.attr("git_commit") = kGitCommit;
  mod.attr("arithmetic") = kArithmetic;

  py::class_<Instance>(mod, "Instance",
                       "A multi-head attention layer F(X) = Σ_i softmax_rows(X Θ_i Xᵀ) X W_i with its sequence length k "
                       "and input distribution (MATH.md §1)")
      .def(py::init(&make_instance), py::arg("heads"), py::arg("k"), py::arg("inputs") = "boolean",
           "heads: a list of (theta, w) pairs of d×d float64 arrays")
      .def_property_readonly("d", &Instance::d)
      .def_property_readonly("m", &Instance::m)
      .def_readonly("k", &Instance::k)
      .def_property_readonly("inputs", [](const Instance& i) { return std::string(to_string(i.inputs)); })
      .def_property_readonly("heads", &heads_of, "list of (theta, w) numpy copies")
      .def_property_readonly("w_sum", [](const Instance& i) { return to_numpy(i.layer.w_sum()); })
      .def_property_readonly("provenance", [](const Instance& i) { return to_python(json::parse(i.provenance_json)); })
      .def("to_json", [](const Instance& i) { return instance_to_json(i).dump(); }, "the instance file's JSON text")
      .def("__repr__", [](const Instance& i) {
        return "<mhalearn.Instance d=" + std::to_string(i.d()) + " k=" + std::to_string(i.k) + " m=" + std::to_string(i.m()) +
               " inputs=" + to_string(i.inputs) + ">";
      });

  mod.def("generate", &generate, py::arg("d"), py::arg("k"), py::arg("m"), py::kw_only(), py::arg("scale") = GenerateOptions{}.scale,
          py::arg("seed") = 1, py::arg("inputs") = "boolean", py::arg("coherence") = 0.0,
          "A random instance that satisfies the conditions of MATH.md §2 (as `mhalearn generate`)");
  mod.def("check", [](const Instance& i) { return to_python(to_json(check_conditions(i))); }, py::arg("instance"),
          "The condition report (as `mhalearn check --json`, its \"conditions\")");
  mod.def("read_instance", &read_instance_py, py::arg("path"));
  mod.def("write_instance", &write_instance_py, py::arg("path"), py::arg("instance"), "validates, then writes atomically");
  mod.def("import_attention", &import_attention_py, py::arg("wq"), py::arg("wk"), py::arg("wv"), py::arg("wo"), py::arg("heads"),
          py::kw_only(), py::arg("k") = 2, py::arg("inputs") = "boolean",
          "PyTorch nn.MultiheadAttention weights (no biases) as an instance (as `mhalearn import`)");
  mod.def("sample", &sample, py::arg("instance"), py::arg("n"), py::kw_only(), py::arg("seed") = 1,
          py::arg_v("threads", default_threads(), "the machine's cores"),
          "(X, Y): the same samples as `mhalearn sample` with this seed; X int8 ±1 (Boolean) or float64 (Gaussian)");
  mod.def("forward", &forward, py::arg("instance"), py::arg("x"), py::kw_only(), py::arg("path") = "fast",
          py::arg("precision") = kDefaultPrecisionBits, py::arg_v("threads", default_threads(), "the machine's cores"),
          "F(X) for X of shape (N, k, d) or (k, d): fast (double) or reference (MPFR, `precision` bits)");
  mod.def("verify", &verify_py, py::arg("instance"), py::arg("stages") = std::vector<std::string>{"all"}, py::kw_only(),
          py::arg("seed") = 1, py::arg("threads") = 1, py::arg("layer") = std::nullopt,
          "Each stage's fast path against its reference path on the same inputs (as `mhalearn verify --json`): "
          "a list of rows with max_difference, bound, slack, precision and verdict");
  mod.def("stage1", &stage1_py, py::arg("instance") = std::nullopt, py::kw_only(), py::arg("x") = std::nullopt,
          py::arg("y") = std::nullopt, py::arg("seed") = 1, py::arg("label_noise") = 0.0, py::arg("samples") = cli::Stage1Args{}.samples,
          py::arg_v("threads", default_threads(), "the machine's cores"), py::arg("max_seconds") = 0.0, py::arg("reference") = false,
          py::arg("reference_samples") = std::nullopt, py::arg("precision") = std::nullopt,
          "Stage 1 (as `mhalearn stage1`): (status, error, report, Ŵ document); the package's stage1 returns (w_hat, standard_error, report)");
  const cli::SculptArgs sculpt_defaults;
  const SculptOptions& so = sculpt_defaults.learn.sculpt.sculpt;
  mod.def(
      "sculpt",
      [](const std::optional<Instance>& inst, const std::optional<py::array>& x, const std::optional<py::array>& y, uint64_t seed,
         double label_noise, int m, const std::string& w_sum, int64_t stage1_samples, std::optional<double> tau,
         std::optional<int64_t> pilot_samples, double v_min, const std::optional<std::string>& v_min_rule,
         const std::optional<std::string>& selection, bool distinct, std::optional<double> sigma_min, std::optional<double> w_error,
         const std::string& rows, double radius, int64_t target, std::optional<int64_t> max_samples, double max_seconds, int threads) {
        const SculptNumbers n{m, stage1_samples, tau, pilot_samples, v_min, sigma_min, w_error, radius, target, max_samples, max_seconds, threads};
        return sculpt_py(inst, x, y, seed, label_noise, w_sum, v_min_rule, selection, distinct, rows, n);
      },
      py::arg("instance") = std::nullopt, py::kw_only(), py::arg("x") = std::nullopt, py::arg("y") = std::nullopt,
      py::arg("seed") = 1, py::arg("label_noise") = 0.0, py::arg("m") = 0, py::arg("w_sum") = sculpt_defaults.w_source,
      py::arg("stage1_samples") = sculpt_defaults.learn.stage1_samples, py::arg("tau") = std::nullopt,
      py::arg("pilot_samples") = std::nullopt, py::arg("v_min") = so.certify.v_min, py::arg("v_min_rule") = std::nullopt,
      py::arg("selection") = std::nullopt, py::arg("distinct") = false, py::arg("sigma_min") = std::nullopt,
      py::arg("w_error") = std::nullopt, py::arg("rows") = sculpt_defaults.rows, py::arg("radius") = so.radius,
      py::arg("target") = so.target_constraints, py::arg("max_samples") = std::nullopt, py::arg("max_seconds") = so.max_seconds,
      py::arg_v("threads", default_threads(), "the machine's cores"),
      "Stages 1 and 2 (as `mhalearn sculpt`): (status, error, report, body document); the package's sculpt returns (body, report)");
  const cli::HardArgs hard_defaults;
  mod.def("hard", &hard_py, py::arg("d") = std::nullopt, py::arg("m") = std::nullopt, py::kw_only(), py::arg("subset") = "",
          py::arg("q") = "", py::arg("p") = hard_defaults.p, py::arg("q_out") = hard_defaults.q_out, py::arg("seed") = hard_defaults.seed,
          py::arg("verify_samples") = std::nullopt, py::arg("mpfr_checks") = std::nullopt, py::arg("precision") = hard_defaults.precision,
          py::arg("tolerance") = hard_defaults.tolerance, py::arg_v("threads", default_threads(), "the machine's cores"), py::arg("study") = false,
          py::arg("study_max_m") = hard_defaults.study_max_m,
          "The SQ-hard family (as `mhalearn hard`): (status, error, report, instance or None); the package's hard returns "
          "(instance, report), or the study's report with study=True");
  const WsumStudyOptions wsum_defaults;
  mod.def("study_wsum", &study_wsum_py, py::arg("d") = wsum_defaults.dims, py::kw_only(), py::arg("k") = wsum_defaults.k,
          py::arg("scale") = wsum_defaults.scale, py::arg("points") = wsum_defaults.points, py::arg("samples") = wsum_defaults.samples,
          py::arg("seed") = wsum_defaults.seed, py::arg_v("threads", default_threads(), "the machine's cores"),
          "The W-sum lemma's trend (as `mhalearn study-wsum`): a list of rows, the TSV's columns as keys");
  mod.def("learn_instance", &learn_instance, py::arg("instance"), py::arg("seed"), py::arg("options"));
  mod.def("learn_data", &learn_data, py::arg("x"), py::arg("y"), py::arg("m"), py::arg("seed"), py::arg("options"));
  const cli::DemoArgs demo_defaults;
  mod.def("demo", &demo_py, py::arg("out") = demo_defaults.out, py::kw_only(), py::arg("d") = demo_defaults.gen.d,
          py::arg("k") = demo_defaults.gen.k, py::arg("m") = demo_defaults.gen.m, py::arg("scale") = demo_defaults.gen.scale,
          py::arg("seed") = demo_defaults.gen.seed, py::arg("sample_seed") = demo_defaults.sample_seed,
          py::arg("write_samples") = demo_defaults.written, py::arg("cross_check") = demo_defaults.checked,
          "The main job (as `mhalearn demo`) into the folder `out`: (status, error, report, text); the package's demo "
          "returns (report, text)");
  mod.def("demo_option_table", [] { return to_python(cli::demo_learn_option_table_json()); },
          "The rows of learn's option table that demo takes (the paper learner's, no oracle, no checkpoints)");
  mod.def("learn_option_table", [] { return to_python(cli::learn_option_table_json()); },
          "learn's options, as the CLI's option table defines them (flag, keyword, methods, type, default, range, help)");
}
