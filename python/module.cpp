// mhalearn._core: the library behind the Python package `mhalearn`
// (python/mhalearn/__init__.py adds from_torch and the learn wrapper).
//
// Conventions, the CLI's: arrays are float64 (labels, Gaussian inputs) or int8
// ±1 (Boolean inputs), shaped (N, k, d); a bad argument raises ValueError with
// the CLI's one-line message; long computations release the GIL; progress goes
// to stderr (when it is a terminal) exactly as in the CLI.
#include "cli/fault_switch.hpp"
#include "cli/file_kinds.hpp"
#include "cli/option_ranges.hpp"
#include "mhalearn.hpp"
#include "numeric/precision.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <memory>
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

// One keyword option of learn(), named as the CLI's flag (dashes as underscores).
void set_learn_option(LearnOptions& o, const std::string& name, py::handle value) {
  if (name == "threads") o.threads = value.cast<int>();
  else if (name == "max_seconds") o.max_seconds = value.cast<double>();
  else if (name == "stage1_samples") o.stage1_samples = value.cast<int64_t>();
  else if (name == "rounds") o.max_rounds = value.cast<int>();
  else if (name == "sculpt_samples") o.sculpt.sculpt.max_samples = value.cast<int64_t>();
  else if (name == "crude_sculpt_samples") o.crude_sculpt_samples = value.cast<int64_t>();
  else if (name == "constraints") o.sculpt.sculpt.target_constraints = value.cast<int64_t>();
  else if (name == "margin_samples") o.margin.max_samples = value.cast<int64_t>();
  else if (name == "accept_fraction") o.margin.accept_fraction = value.cast<double>();
  else if (name == "radius") o.sculpt.sculpt.radius = value.cast<double>();
  else if (name == "net_tuples") o.net.max_tuples = value.cast<int64_t>();
  else if (name == "validation_samples") o.validation_samples = value.cast<int64_t>();
  else if (name == "test_samples") o.test_samples = value.cast<int64_t>();
  else if (name == "reference_max_unknowns") o.reference_max_unknowns = value.cast<int>();
  else if (name == "polish") o.polish = value.cast<bool>();
  else if (name == "reference") o.reference = value.cast<bool>();
  else if (name == "final_sculpt_samples") o.final_sculpt_samples = value.cast<int64_t>();
  else if (name == "variant") {
    const std::string v = value.cast<std::string>();
    if (v == "paper") o.variant = LearnVariant::paper;
    else if (v == "extended") o.variant = LearnVariant::extended;
    else bad_input("learn: variant must be 'paper' or 'extended', got '" + v + "'");
  }
  else if (name == "oracle") {
    if (auto e = parse_oracle_stages(value.cast<std::string>(), o.oracle); !e.empty()) bad_input("learn: oracle: " + e);
  }
  else bad_input("learn: unknown option '" + name + "'");
}

// The keyword options of learn(), checked against the CLI's ranges.
LearnOptions learn_options(const py::dict& kw) {
  LearnOptions o;
  o.threads = default_threads();
  for (const auto& [key, value] : kw) {
    const std::string name = py::str(key);
    try {
      set_learn_option(o, name, value);
    } catch (const py::cast_error&) {
      bad_input("learn: option '" + name + "' has the wrong type (" + std::string(py::str(py::type::of(value).attr("__name__"))) + ")");
    }
  }
  // The CLI's ranges, from its one table (cli/option_ranges.hpp): a keyword is its flag without dashes.
  for (const auto& [key, value] : kw) {
    std::string flag = "--" + std::string(py::str(key));
    for (char& c : flag) c = c == '_' ? '-' : c;
    const cli::OptionRange* r = cli::find_option_range(flag);
    if (!r || py::isinstance<py::bool_>(value)) continue;
    if (auto e = cli::range_problem(*r, value.cast<double>()); !e.empty())
      bad_input("learn: " + std::string(py::str(key)) + " " + e);
  }
  return o;
}

// (learned instance or None, report dict). A failed run is not an exception
// here: the package's learn() raises with the report attached.
py::tuple run_learner(const SampleSource& source, LearnOptions o, const Instance* truth, const json& options) {
  if (auto e = check_learn_input(source.k(), source.d(), o.m); !e.empty()) bad_input(e);
  if (auto e = cli::learn_fast_paths(o); !e.empty()) bad_input(e);  // the test copy's fault switch
  LearnResult r;
  {
    py::gil_scoped_release release;
    r = learn_layer(source, o, truth);
  }
  json report = to_json(r.report);
  report["table"] = format_table(r.report);
  json all_options = options;
  all_options["m"] = o.m;
  report["provenance"] = python_provenance("learn", all_options);
  if (!r.report.ok) return py::make_tuple(py::none(), to_python(report));
  Instance learned;
  learned.layer = std::move(r.layer);
  learned.k = source.k();
  learned.inputs = source.draw(0, 1, 1).x.kind;  // as the data were drawn
  learned.provenance_json = report["provenance"].dump();
  return py::make_tuple(py::cast(std::move(learned)), to_python(report));
}

py::tuple learn_instance(const Instance& inst, uint64_t seed, const py::dict& kw) {
  LearnOptions o = learn_options(kw);
  o.m = inst.m();
  o.test_seed = seed;
  if (auto e = oracle_problem(inst); !e.empty()) fast_path_overflow(e);
  const SampleOracle oracle(inst, seed);
  return run_learner(oracle, o, &inst, {{"source", "instance"}, {"seed", seed}});
}

py::tuple learn_data(const py::array& x, const py::array& y, int m, const py::dict& kw) {
  LearnOptions o = learn_options(kw);
  o.m = m;
  if (o.oracle.any()) bad_input("learn: oracle needs the true instance, not arrays");
  DatasetOpen data = open_dataset(inputs_array(x, "X", false), labels_array(y));
  if (!data.source) bad_input(data.error);
  return run_learner(*data.source, o, nullptr, {{"source", "arrays"}, {"n", data.source->available()}});
}

py::list verify_py(const Instance& inst, const std::vector<std::string>& requested, uint64_t seed, int threads) {
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
          py::arg("threads") = default_threads(),
          "(X, Y): the same samples as `mhalearn sample` with this seed; X int8 ±1 (Boolean) or float64 (Gaussian)");
  mod.def("forward", &forward, py::arg("instance"), py::arg("x"), py::kw_only(), py::arg("path") = "fast",
          py::arg("precision") = kDefaultPrecisionBits, py::arg("threads") = default_threads(),
          "F(X) for X of shape (N, k, d) or (k, d): fast (double) or reference (MPFR, `precision` bits)");
  mod.def("verify", &verify_py, py::arg("instance"), py::arg("stages") = std::vector<std::string>{"all"}, py::kw_only(),
          py::arg("seed") = 1, py::arg("threads") = 1,
          "Each stage's fast path against its reference path on the same inputs (as `mhalearn verify --json`): "
          "a list of rows with max_difference, bound, slack, precision and verdict");
  mod.def("learn_instance", &learn_instance, py::arg("instance"), py::arg("seed"), py::arg("options"));
  mod.def("learn_data", &learn_data, py::arg("x"), py::arg("y"), py::arg("m"), py::arg("options"));
}
