// mhalearn._core: the library behind the Python package `mhalearn`
// (python/mhalearn/__init__.py makes a function of each subcommand).
//
// Every subcommand is the one declared in src/commands/ (schema.hpp), run here
// as the command line runs it: `run(name, arguments)` checks each argument as
// its declaration says — a wrong type is a TypeError naming it, a value out of
// its range a ValueError, one line each — runs the command on a thread of its
// own without the GIL, answering Ctrl-C within 50 ms (the command stops at its
// next check: util/progress.hpp), and returns what the command line would have
// written. Paths may be str, bytes or any
// os.PathLike; an instance may be an mhalearn.Instance, an array a numpy array.
// Nothing here is the command line's (src/cli/).
#include "commands/paths.hpp"
#include "commands/schema.hpp"
#include "commands/status.hpp"
#include "data/instance_io.hpp"
#include "data/oracle.hpp"
#include "data/provenance.hpp"
#include "model/import_attention.hpp"
#include "util/progress.hpp"
#include "version.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace py = pybind11;
using namespace mha;
using nlohmann::json;

namespace {

// One line, as every error of the module.
[[noreturn]] void value_error(const std::string& message) { throw py::value_error(message); }
[[noreturn]] void type_error(const std::string& message) { throw py::type_error(message); }
[[noreturn]] void overflow_error(const std::string& message) {
  PyErr_SetString(PyExc_OverflowError, message.c_str());
  throw py::error_already_set();
}

py::object to_python(const json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

std::string type_of(py::handle value) { return py::str(py::type::of(value).attr("__name__")); }

// A numpy array that owns `data` (moved to the heap; freed with the array): no copy.
template <class T>
py::array_t<T> adopt(std::vector<T>&& data, std::vector<py::ssize_t> shape) {
  auto* owner = new std::vector<T>(std::move(data));
  py::capsule free_owner(owner, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, owner->data(), free_owner);
}

json python_provenance(const std::string& command, const json& options) {
  json p = make_provenance(command, options);
  p["interface"] = "python";
  return p;
}

// ---- Arguments --------------------------------------------------------------------

// A path: str, bytes or os.PathLike, as the file system's bytes.
bool as_path(py::handle value, std::string& out) {
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) || py::hasattr(value, "__fspath__")) {
    const py::object raw = py::module_::import("os").attr("fsencode")(value);
    out = raw.cast<std::string>();
    return true;
  }
  return false;
}

bool is_bool(py::handle v) { return py::isinstance<py::bool_>(v) || type_of(v) == "bool_"; }

// An integer (int, numpy's integers; not bool) as int64, or why not.
std::string as_integer(py::handle v, int64_t& out, bool& overflow) {
  if (is_bool(v) || !PyIndex_Check(v.ptr())) return "int";
  int over = 0;
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  out = PyLong_AsLongLongAndOverflow(index.ptr(), &over);
  overflow = over != 0;
  return "";
}

// The Python value of option `o` as a schema value: "" or the type it needs.
std::string convert(const commands::Option& o, py::handle v, commands::Value& out, std::string& range_error) {
  using commands::Type;
  int64_t i = 0;
  bool overflow = false;
  switch (o.type) {
    case Type::integer:
      if (!as_integer(v, i, overflow).empty()) return "int";
      if (overflow) range_error = "must be in " + commands::format_range(o) + ", got " + std::string(py::str(v));
      out = i;
      return "";
    case Type::seed: {
      if (is_bool(v) || !PyIndex_Check(v.ptr())) return "int";
      const py::int_ n = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
      const unsigned long long u = PyLong_AsUnsignedLongLong(n.ptr());
      if (PyErr_Occurred()) {
        PyErr_Clear();
        range_error = "'" + std::string(py::str(v)) + "' is not a seed (an integer in 0..2^64-1)";
      }
      out = uint64_t{u};
      return "";
    }
    case Type::number:
      if (is_bool(v) || py::isinstance<py::str>(v) ||
          !(PyFloat_Check(v.ptr()) || PyIndex_Check(v.ptr()) || py::hasattr(v, "__float__")))
        return "float";
      out = py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>();
      return "";
    case Type::flag:
      if (!is_bool(v)) return "bool";
      out = py::bool_(py::reinterpret_borrow<py::object>(v)).cast<bool>() != o.negated;  // polish=False: --no-polish
      return "";
    case Type::text:
      if (!py::isinstance<py::str>(v)) return "str";
      out = v.cast<std::string>();
      return "";
    case Type::integers: {
      std::vector<int64_t> list;
      if (as_integer(v, i, overflow).empty()) list.push_back(i);
      else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v))
        for (py::handle item : v) {
          if (!as_integer(item, i, overflow).empty()) return "a list of int";
          list.push_back(i);
        }
      else return "a list of int";
      out = list;
      return "";
    }
    case Type::texts: {
      std::vector<std::string> list;
      if (!(py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v))) return "a list of str";
      for (py::handle item : v) {
        if (!py::isinstance<py::str>(item)) return "a list of str";
        list.push_back(item.cast<std::string>());
      }
      out = list;
      return "";
    }
  }
  return "";
}

// A numpy array as the .npy reader would hold it: int8, float64, float32
// widened exactly; any other dtype is refused with the option's contract.
NpyArray as_array(const std::string& fn, const commands::Option& o, const py::array& a) {
  NpyArray out;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) out.shape.push_back(a.shape(i));
  if (a.dtype().equal(py::dtype::of<int8_t>())) {
    out.dtype = NpyDtype::int8;
    const auto c = py::array_t<int8_t, py::array::c_style>::ensure(a);
    out.i8.assign(c.data(), c.data() + c.size());
  } else if (a.dtype().equal(py::dtype::of<double>()) || a.dtype().equal(py::dtype::of<float>())) {
    out.dtype = NpyDtype::float64;
    out.from_float32 = a.dtype().equal(py::dtype::of<float>());
    const auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);  // float32 widened exactly
    out.f64.assign(c.data(), c.data() + c.size());
  } else {
    value_error("mhalearn." + fn + ": " + o.keyword() + ": got dtype " + std::string(py::str(a.dtype())) +
                (o.contract.empty() ? "" : "; " + o.contract));
  }
  return out;
}

// One argument into `a`: an object where the option takes one (an Instance, an
// array), a path, or a value checked as the command line checks its text.
void set_argument(const std::string& fn, commands::Arguments& a, const commands::Option& o, py::handle v) {
  using commands::Role;
  const std::string key = o.keyword();
  auto wrong = [&](const std::string& need) { type_error("mhalearn." + fn + ": argument '" + key + "' must be " + need + ", got " + type_of(v)); };
  if (o.role == Role::instance_in && py::isinstance<Instance>(v)) {
    a.instances[o.name] = v.cast<Instance>();
    return;
  }
  if (o.role == Role::instance_in && o.python_name == "source" && py::isinstance<py::array>(v)) {
    a.arrays["x"] = as_array(fn, *a.command->find("x"), v.cast<py::array>());  // learn(X, Y, m)
    return;
  }
  if (o.role == Role::array_in && py::isinstance<py::array>(v)) {
    a.arrays[o.name] = as_array(fn, o, v.cast<py::array>());
    return;
  }
  if (o.role != Role::setting) {
    std::string path;
    if (!as_path(v, path))
      wrong(o.role == Role::instance_in ? "an mhalearn.Instance or a path" : o.role == Role::array_in ? "a numpy array or a path" : "a path");
    a.values[o.name] = path;
    return;
  }
  commands::Value value;
  std::string range_error;
  if (auto need = convert(o, v, value, range_error); !need.empty()) wrong(need);
  if (range_error.empty()) range_error = commands::set_value(a, o, std::move(value));
  if (!range_error.empty())
    value_error("mhalearn." + fn + ": " + key + (range_error.rfind("must", 0) == 0 ? " " : ": ") + range_error);
}

// ---- The run ------------------------------------------------------------------

// An array output held in memory (sample's X and Y, forward's Y), adopted by numpy afterwards.
struct MemoryOut : commands::ArrayOut {
  std::vector<py::ssize_t> shape;
  NpyDtype dtype = NpyDtype::float64;
  std::vector<int8_t> i8;
  std::vector<double> f64;
  std::string append_int8(const int8_t* data, int64_t count) override {
    i8.insert(i8.end(), data, data + count);
    return "";
  }
  std::string append_float64(const double* data, int64_t count) override {
    f64.insert(f64.end(), data, data + count);
    return "";
  }
};

struct PythonRun {
  std::string text;
  std::vector<std::string> warnings;
  std::map<std::string, MemoryOut> kept;  // the array outputs, by option
  double array_bytes = 0;
};

commands::Context python_context(const std::string& fn, PythonRun& run) {
  commands::Context ctx;
  ctx.print = [&run](const std::string& t) { run.text += t; };
  ctx.warn = [&run](const std::string& w) { run.warnings.push_back(w); };
  ctx.provenance = python_provenance;
  ctx.open_array = [&run, fn](const std::string& option, const std::vector<int64_t>& shape, NpyDtype dtype,
                              std::unique_ptr<commands::ArrayOut>& out) -> std::string {
    double count = 1;
    for (int64_t s : shape) count *= double(s);
    run.array_bytes += count * (dtype == NpyDtype::int8 ? 1.0 : 8.0);
    const double physical = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
    if (physical > 0 && run.array_bytes > physical)
      return fn + ": the arrays would take " + format_bytes(run.array_bytes) + ", more than this machine's " +
             format_bytes(physical) + " of memory";
    MemoryOut& m = run.kept[option];
    m.shape.assign(shape.begin(), shape.end());
    m.dtype = dtype;
    if (dtype == NpyDtype::int8) m.i8.reserve(static_cast<size_t>(count));
    else m.f64.reserve(static_cast<size_t>(count));
    struct Forward : commands::ArrayOut {
      MemoryOut& m;
      explicit Forward(MemoryOut& target) : m(target) {}
      std::string append_int8(const int8_t* d, int64_t n) override { return m.append_int8(d, n); }
      std::string append_float64(const double* d, int64_t n) override { return m.append_float64(d, n); }
    };
    out = std::make_unique<Forward>(m);
    return "";
  };
  return ctx;
}

// A command running on a thread of its own, which owns everything it reads
// and writes (the arguments hold copies of Python's arrays and instances; the
// text, warnings and arrays it makes are PythonRun's), so that the calling
// thread can answer Ctrl-C at once. The command asks `cancel` between two
// blocks of work (Progress::update, the learner's safe points) and ends there.
struct Job {
  commands::Arguments args;
  PythonRun run;
  commands::Context ctx;
  commands::Result result;
  std::exception_ptr error;
  std::atomic<bool> cancel{false};
  std::mutex mu;
  std::condition_variable finished;
  bool done = false;
};

// Jobs a Ctrl-C left running to their next check: joined before the interpreter ends.
std::mutex g_orphans_mu;
std::vector<std::thread> g_orphans;

void join_orphans() {
  std::vector<std::thread> orphans;
  {
    std::lock_guard lock(g_orphans_mu);
    orphans.swap(g_orphans);
  }
  py::gil_scoped_release release;
  for (std::thread& t : orphans) t.join();
}

void work(const std::shared_ptr<Job>& job, const commands::Command& c) {
  set_interrupt_check([job] { return job->cancel.load(); });
  try {
    job->result = c.run(job->args, job->ctx);
  } catch (...) {
    job->error = std::current_exception();
  }
  std::lock_guard lock(job->mu);
  job->done = true;
  job->finished.notify_all();
}

// The command's result; KeyboardInterrupt (or what Python's SIGINT handler
// raises) within 50 ms of the signal, the command left to stop at its next check.
commands::Result run_answering_signals(const commands::Command& c, const std::shared_ptr<Job>& job) {
  std::thread worker(work, job, std::cref(c));
  while (true) {
    {
      py::gil_scoped_release release;
      std::unique_lock lock(job->mu);
      if (job->finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return job->done; })) break;
    }
    if (PyErr_CheckSignals() == 0) continue;
    job->cancel = true;  // the worker ends at its next check; Python goes on now
    std::lock_guard lock(g_orphans_mu);
    g_orphans.push_back(std::move(worker));
    throw py::error_already_set();
  }
  worker.join();
  // A signal that came while the command was finishing is answered here, inside
  // the call, not after it returned.
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  if (job->error) {
    try {
      std::rethrow_exception(job->error);
    } catch (const DatasetError& e) {
      value_error("mhalearn." + c.python_name + ": " + e.what());
    }
  }
  return std::move(job->result);
}

py::dict outputs_of(const commands::Result& r, PythonRun& run) {
  py::dict out;
  for (const auto& [name, o] : r.outputs) {
    if (o.document) out[name.c_str()] = to_python(*o.document);
    else if (o.instance) out[name.c_str()] = py::cast(*o.instance);
    else if (o.text) out[name.c_str()] = *o.text;
  }
  for (auto& [name, m] : run.kept) {
    std::vector<py::ssize_t> shape = m.shape;
    if (m.dtype == NpyDtype::int8) out[name.c_str()] = adopt(std::move(m.i8), shape);
    else out[name.c_str()] = adopt(std::move(m.f64), shape);
  }
  return out;
}

// The subcommand `name` with these keyword arguments (Python's names, None
// left out): {"status", "error", "value", "outputs", "text", "warnings"}.
py::dict run_command(const std::string& name, const py::dict& arguments) {
  const commands::Command* c = commands::find_command(name);
  if (!c) value_error("mhalearn: no subcommand '" + name + "'");
  const std::string fn = c->python_name;
  commands::Arguments a;
  a.command = c;
  a.spelling = commands::Spelling::python;
  for (const auto& [key, value] : arguments) {
    const std::string k = py::str(key);
    const commands::Option* o = c->find_keyword(k);
    if (!o) type_error("mhalearn." + fn + ": unexpected keyword argument '" + k + "' (help(mhalearn." + fn + ") lists them)");
    if (!value.is_none()) set_argument(fn, a, *o, value);
  }
  if (auto e = commands::check_combinations(a); !e.empty()) value_error("mhalearn." + fn + ": " + e);
  if (auto e = commands::path_problem(a); !e.empty()) value_error("mhalearn." + fn + ": " + e);
  auto job = std::make_shared<Job>();
  job->args = std::move(a);
  job->ctx = python_context(fn, job->run);
  const commands::Result r = run_answering_signals(*c, job);
  PythonRun& run = job->run;
  if (r.status == commands::kExitBadInput) value_error("mhalearn." + fn + ": " + r.error);
  if (r.status == commands::kExitFastPathOverflow) overflow_error("mhalearn." + fn + ": " + r.error);
  py::dict out;
  out["status"] = r.status;
  out["error"] = r.error;
  out["value"] = r.value.is_null() ? py::object(py::none()) : to_python(r.value);
  out["outputs"] = outputs_of(r, run);
  out["text"] = run.text + r.summary;
  out["warnings"] = run.warnings;
  return out;
}

// ---- Instances ----------------------------------------------------------------------

MatD to_matrix(const py::handle& value, const std::string& name) {
  if (!py::isinstance<py::array>(value)) type_error("mhalearn.Instance: " + name + " must be a numpy array, got " + type_of(value));
  const py::array a = py::reinterpret_borrow<py::array>(value);
  if (a.ndim() != 2) value_error("mhalearn.Instance: " + name + ": expected a 2-D array, got " + std::to_string(a.ndim()) + " dimensions");
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u')
    value_error("mhalearn.Instance: " + name + ": expected a real (float64) array, got dtype " + std::string(py::str(a.dtype())));
  const auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
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

// Instance(heads, k, inputs="boolean"): heads a list of (theta, w) pairs of d×d arrays.
Instance make_instance(const py::object& heads, const py::object& k, const py::object& inputs) {
  if (heads.is_none()) type_error("mhalearn.Instance: missing argument 'heads'");
  if (k.is_none()) type_error("mhalearn.Instance: missing argument 'k'");
  if (!(py::isinstance<py::list>(heads) || py::isinstance<py::tuple>(heads)))
    type_error("mhalearn.Instance: argument 'heads' must be a list of (theta, w) pairs, got " + type_of(heads));
  if (is_bool(k) || !PyIndex_Check(k.ptr())) type_error("mhalearn.Instance: argument 'k' must be int, got " + type_of(k));
  if (!py::isinstance<py::str>(inputs)) type_error("mhalearn.Instance: argument 'inputs' must be str, got " + type_of(inputs));
  Instance inst;
  size_t i = 0;
  for (py::handle head : heads) {
    const std::string where = "head " + std::to_string(i++);
    if (!(py::isinstance<py::tuple>(head) || py::isinstance<py::list>(head)) || py::len(head) != 2)
      type_error("mhalearn.Instance: " + where + " must be a (theta, w) pair, got " + type_of(head));
    inst.layer.heads.push_back({to_matrix(head[py::int_(0)], where + " theta"), to_matrix(head[py::int_(1)], where + " w")});
  }
  inst.k = k.cast<int>();
  if (!parse_input_kind(inputs.cast<std::string>(), inst.inputs))
    value_error("mhalearn.Instance: inputs: '" + inputs.cast<std::string>() + "' is not one of boolean, gaussian");
  if (auto e = validate_instance(inst); !e.empty()) value_error("mhalearn.Instance: " + e);
  inst.provenance_json = python_provenance("Instance", {{"k", inst.k}, {"inputs", to_string(inst.inputs)}}).dump();
  return inst;
}

py::list heads_of(const Instance& inst) {
  py::list out;
  for (const Head& h : inst.layer.heads) out.append(py::make_tuple(to_numpy(h.theta), to_numpy(h.w)));
  return out;
}

std::string path_argument(const std::string& fn, const py::object& value) {
  std::string path;
  if (!as_path(value, path)) type_error("mhalearn." + fn + ": argument 'path' must be a path, got " + type_of(value));
  return path;
}

Instance read_instance_py(const py::object& path) {
  InstanceReadResult r = read_instance(path_argument("read_instance", path));
  if (!r.ok) value_error("mhalearn.read_instance: " + commands::printable_path(r.error));
  return std::move(r.instance);
}

void write_instance_py(const py::object& path, const py::object& instance) {
  if (!py::isinstance<Instance>(instance))
    type_error("mhalearn.write_instance: argument 'instance' must be an mhalearn.Instance, got " + type_of(instance));
  const std::string p = path_argument("write_instance", path);
  if (auto e = commands::output_file_problem("path", p); !e.empty()) value_error("mhalearn.write_instance: " + e);
  if (auto e = write_instance(p, instance.cast<const Instance&>()); !e.empty()) value_error("mhalearn.write_instance: " + e);
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
      .def(py::init(&make_instance), py::arg("heads") = py::none(), py::arg("k") = py::none(),
           py::arg("inputs") = py::str("boolean"),
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
  mod.def("read_instance", &read_instance_py, py::arg("path"), "An instance file (a str, bytes or os.PathLike path)");
  mod.def("write_instance", &write_instance_py, py::arg("path"), py::arg("instance"),
          "Validates, then writes atomically (a device or pipe written through)");
  mod.def("commands", [] { return to_python(commands::commands_json()); },
          "Every subcommand as declared once (src/commands/schema.hpp): name, Python name, summary, options");
  mod.def("run", &run_command, py::arg("name"), py::arg("arguments"),
          "Runs a subcommand on keyword arguments by their Python names (None: not given)");
  mod.def("_join_interrupted", &join_orphans, "Waits for the commands a Ctrl-C left to stop (at exit)");
  py::module_::import("atexit").attr("register")(mod.attr("_join_interrupted"));
}
