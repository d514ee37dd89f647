#include "commands/input.hpp"

#include "commands/fault_switch.hpp"
#include "commands/file_kinds.hpp"
#include "commands/status.hpp"
#include "data/atomic_file.hpp"
#include "data/instance_io.hpp"
#include "data/noisy_source.hpp"
#include "learn/checkpoint.hpp"
#include "util/format.hpp"

#include <filesystem>

namespace mha::commands {

using nlohmann::json;

std::vector<Option> sample_input_options(const std::string& seed_help, const std::string& python_name) {
  Option instance = option::instance_file("instance file (JSON): samples come from its oracle");
  instance.python_name = python_name == "instance" ? "" : python_name;
  Option x{"x", Type::text, std::string("dataset inputs (.npy) instead of an instance; ") + kInputsContract,
           Role::array_in};
  Option y{"y", Type::text, std::string("dataset labels (.npy); ") + kLabelsContract, Role::array_in};
  x.contract = kInputsContract;
  y.contract = kLabelsContract;
  return {instance, x, y, option::seed(seed_help), option::label_noise()};
}

bool load_instance(const Arguments& a, const std::string& option, Instance& out, Result& r) {
  if (const auto it = a.instances.find(option); it != a.instances.end()) {
    out = it->second;
    return true;
  }
  InstanceReadResult read = read_instance(a.text(option));
  if (!read.ok) {
    r.failed(kExitBadInput, read.error);
    return false;
  }
  out = std::move(read.instance);
  return true;
}

namespace {

std::string crc_text(std::string_view bytes) { return format("%016llx", (unsigned long long)crc64(bytes)); }

std::string_view array_bytes(const NpyArray& a) {
  if (a.dtype == NpyDtype::int8) return {reinterpret_cast<const char*>(a.i8.data()), a.i8.size()};
  return {reinterpret_cast<const char*>(a.f64.data()), a.f64.size() * sizeof(double)};
}

// The instance's samples; `identity`: the file's bytes (or the object's JSON) identify them.
bool open_oracle(const Arguments& a, Samples& s, Result& r, bool identity) {
  Instance inst;
  if (!load_instance(a, "instance", inst, r)) return false;
  const bool object = a.instances.count("instance") != 0;
  if (auto e = oracle_problem(inst); !e.empty()) {
    r.failed(kExitFastPathOverflow, (object ? std::string("the instance") : a.text("instance")) + ": " + e);
    return false;
  }
  s.instance = std::move(inst);
  s.source = std::make_unique<SampleOracle>(*s.instance, s.seed);
  s.record = object ? json{{"source", "instance"}, {"seed", s.seed}}
                    : json{{"instance", a.text("instance")}, {"x", ""}, {"y", ""}, {"seed", s.seed}};
  if (!identity) return true;
  if (object) {
    s.identity = {{"instance_crc64", crc_text(instance_to_json(*s.instance).dump())}};
    return true;
  }
  std::string bytes, error;
  if (!read_whole_file(a.text("instance"), bytes, error)) s.identity = {{"instance_unreadable", error}};
  else s.identity = {{"instance_crc64", crc_text(bytes)}, {"instance_bytes", bytes.size()}};
  return true;
}

// A dataset given as arrays (Python): checked and held in memory.
bool open_arrays(Arguments& a, Samples& s, Result& r, bool identity) {
  NpyArray& x = a.arrays.at("x");
  NpyArray& y = a.arrays.at("y");
  if (identity)
    s.identity = {{"x_crc64", crc_text(array_bytes(x))}, {"y_crc64", crc_text(array_bytes(y))},
                  {"samples", x.shape.empty() ? 0 : x.shape[0]}};
  DatasetOpen data = open_dataset(std::move(x), std::move(y));  // the arrays are the run's now
  if (!data.source) {
    r.failed(kExitBadInput, data.error);
    return false;
  }
  s.record = {{"source", "arrays"}, {"n", data.source->available()}, {"seed", s.seed}};
  s.source = std::move(data.source);
  return true;
}

// A dataset of .npy files: read in blocks as the stages draw them (a bad value
// in a drawn block ends the run with DatasetError: bad input).
bool open_files(const Arguments& a, Samples& s, Result& r, bool identity) {
  const std::string &xp = a.text("x"), &yp = a.text("y");
  if (load_datasets_whole()) {  // the test build's switch (fault_switch.hpp)
    NpyResult x = read_npy(xp), y = read_npy(yp);
    DatasetOpen data = x.ok && y.ok ? open_dataset(std::move(x.array), std::move(y.array)) : DatasetOpen{};
    if (!data.source) {
      r.failed(kExitBadInput, !x.ok ? x.error : !y.ok ? y.error : data.error);
      return false;
    }
    s.source = std::move(data.source);
  } else {
    DatasetFilesOpen data = open_dataset_files(xp, yp);
    if (!data.source) {
      r.failed(kExitBadInput, data.error);
      return false;
    }
    s.source = std::move(data.source);
  }
  s.record = {{"instance", ""}, {"x", xp}, {"y", yp}, {"seed", s.seed}};
  if (identity) {
    namespace fs = std::filesystem;
    for (const auto& [key, path] : {std::pair{"x", xp}, std::pair{"y", yp}}) {
      std::error_code ec;
      s.identity[key] = fs::weakly_canonical(path, ec).string();
      s.identity[std::string(key) + "_bytes"] = fs::file_size(path, ec);
    }
    s.identity["samples"] = s.source->available();
  }
  return true;
}

}  // namespace

bool open_samples(Arguments& a, Samples& s, Result& r, bool identity) {
  const bool have_instance = a.given("instance");
  const bool have_x = a.given("x"), have_y = a.given("y");
  s.seed = a.seed("seed");
  s.label_noise = a.number("label-noise");
  if (have_instance == (have_x || have_y)) {
    r.failed(kExitBadInput, "give either an instance" + std::string(a.spelling == Spelling::cli ? " file" : "") +
                                " or both " + a.spell("x") + " and " + a.spell("y"));
    return false;
  }
  if (!have_instance && !(have_x && have_y)) {
    r.failed(kExitBadInput, a.spell("x") + " and " + a.spell("y") + " must be given together");
    return false;
  }
  const bool arrays = a.arrays.count("x") || a.arrays.count("y");
  if (arrays && !(a.arrays.count("x") && a.arrays.count("y"))) {
    r.failed(kExitBadInput, a.spell("x") + " and " + a.spell("y") + " must both be arrays or both be files");
    return false;
  }
  const bool ok = have_instance ? open_oracle(a, s, r, identity)
                  : arrays      ? open_arrays(a, s, r, identity)
                                : open_files(a, s, r, identity);
  if (ok && s.label_noise > 0) s.source = std::make_unique<NoisySource>(std::move(s.source), s.label_noise, s.seed);
  return ok;
}

}  // namespace mha::commands
