// Claim: a learner's report survives a checkpoint: the report of a run resumed
// from a checkpoint is the report of the run that wrote it — every field the
// report shows (to_json), and every field a checkpoint keeps, the processes'
// counts of an MPI job included — for any report (generated: stage records with
// arbitrary details, non-finite doubles, optional errors and noise, reference
// rows, diagnostics, resumed safe points, 1 to 4 processes).
// Why it holds: the report's writer, the checkpoint's writer and its reader
// visit one list of fields (src/learn/report_fields.hpp); doubles are written
// as hexadecimal floats (exact; inf and nan by name, a NaN's payload aside,
// which the report prints as null either way).
// Test of the tester: a checkpoint without the processes' record — what
// checkpoints held before the fields were listed once — is rejected.
#include "learn/checkpoint.hpp"
#include "property.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace mha;
using nlohmann::json;

namespace {

double any_double() {
  const double special = *rc::gen::element(0.0, -0.0, 1.0 / 3, 5e-324, 1.7976931348623157e308,
                                           std::numeric_limits<double>::infinity(), std::nan(""));
  return *rc::gen::inRange(0, 4) == 0 ? special : *rc::gen::arbitrary<double>();
}

std::vector<double> doubles(int at_most) {
  std::vector<double> v(static_cast<size_t>(*rc::gen::inRange(0, at_most + 1)));
  for (double& x : v) x = any_double();
  return v;
}

std::string words() {
  const int n = *rc::gen::inRange(0, 3);
  std::string out;
  for (int i = 0; i < n; ++i) out += *rc::gen::element<std::string>("round", "Θ ≤ 1e-3", "σ_min", "\"quoted\"", "a\\b", "x");
  return out;
}

int64_t count() { return *rc::gen::inRange<int64_t>(0, std::numeric_limits<int64_t>::max()); }
// A count of doubles a process sent or received: the report gives it in bytes (8 per
// double), so a run's counts stay below 2⁶³/8 (no process moves an exabyte).
int64_t doubles_count() { return *rc::gen::inRange<int64_t>(0, std::numeric_limits<int64_t>::max() / 8); }

StageRecord stage_record() {
  json details = json::object();
  for (int i = *rc::gen::inRange(0, 3); i > 0; --i)
    details["field" + std::to_string(i)] = *rc::gen::element<json>(json(any_double()), json(count()), json(words()),
                                                                   json::array({1, 2.5}), json(nullptr));
  return {*rc::gen::element<std::string>("1", "2", "3", "4", "5", "6", "polish", "fit"), *rc::gen::inRange(-1, 5),
          count(), any_double(), words(), details};
}

std::optional<LayerErrors> errors(int m) {
  if (*rc::gen::arbitrary<bool>()) return std::nullopt;
  LayerErrors e;
  for (int i = 0; i < m; ++i) e.permutation.push_back(*rc::gen::inRange(0, m));
  e.theta_rel = doubles(3), e.w_rel = doubles(3);
  e.theta_max_rel = any_double(), e.w_max_rel = any_double(), e.test_relative_error = any_double();
  e.test_samples = count();
  return e;
}

std::optional<NoiseReport> noise() {
  if (*rc::gen::arbitrary<bool>()) return std::nullopt;
  NoiseReport n;
  n.estimated = *rc::gen::arbitrary<bool>(), n.float32_labels = *rc::gen::arbitrary<bool>();
  n.declared = any_double(), n.heldout_residual = any_double(), n.fit_share = any_double(), n.noise = any_double();
  n.rounding_measured = any_double(), n.rounding_level = any_double(), n.rounding_bound = any_double();
  n.heldout_samples = count();
  n.limit = words(), n.warning = words();
  n.final_fit = {count(), count(), count(), count(), words()};
  return n;
}

ReferenceCheck reference_row() {
  ReferenceCheck c;
  c.round = *rc::gen::inRange(-1, 5);
  Comparison& r = c.comparison;
  r.stage = *rc::gen::element<std::string>("forward", "1", "2", "5", "polish");
  r.quantity = words(), r.detail = words();
  r.max_difference = any_double(), r.bound = any_double(), r.slack = any_double(), r.seconds = any_double();
  r.precision = *rc::gen::element(128u, 256u);
  r.compared = *rc::gen::inRange(0, 100), r.undecided = *rc::gen::inRange(0, 3);
  r.agree = *rc::gen::arbitrary<bool>();
  return c;
}

// A report of a run of `rounds` completed rounds, interrupted and safe_point aside (never in a checkpoint).
LearnReport any_report(int m, int rounds) {
  LearnReport r;
  r.variant = *rc::gen::element(LearnVariant::paper, LearnVariant::extended);
  for (int i = *rc::gen::inRange(0, 5); i > 0; --i) r.stages.push_back(stage_record());
  for (int i = 0; i < rounds; ++i) r.round_validation_error.push_back(any_double());
  r.best_round = rounds > 0 ? *rc::gen::inRange(-1, rounds) : -1;
  r.samples_paper = count(), r.samples_polish = count(), r.samples_total = count(), r.validation_samples = count();
  r.shared_samples_by_process.resize(static_cast<size_t>(*rc::gen::inRange(1, 5)));
  for (int64_t& n : r.shared_samples_by_process) n = count();
  r.gathers = count(), r.gathered_doubles_sent = doubles_count(), r.gathered_doubles_received = doubles_count();
  r.seconds = any_double();
  r.ok = *rc::gen::arbitrary<bool>();
  r.message = words();
  r.errors_coarse_net = errors(m), r.errors_before_polish = errors(m), r.errors = errors(m);
  r.noise = noise();
  r.samples_final_fit = *rc::gen::arbitrary<bool>() ? count() : 0;
  r.errors_before_final_fit = errors(m);
  for (int i = *rc::gen::inRange(0, 3); i > 0; --i) r.resumed_at.push_back(words());
  for (int i = *rc::gen::inRange(0, 3); i > 0; --i) r.reference.push_back(reference_row());
  for (int i = *rc::gen::inRange(0, 3); i > 0; --i)
    r.diagnostics.push_back({*rc::gen::element<std::string>("3", "5"), *rc::gen::inRange(-1, 4), words(), words(),
                             *rc::gen::arbitrary<bool>()});
  return r;
}

// A state at a safe point that holds the report: before the reference paths,
// with the selected round's layer when the report names one.
LearnState state_with(LearnReport report, int d, int k, int m) {
  LearnState s;
  s.d = d, s.k = k, s.m = m;
  s.next = LearnStep::reference;
  s.round = static_cast<int>(report.round_validation_error.size());
  s.w_sum = MatD::Zero(d, d);
  if (report.best_round >= 0) {
    LearnRound best;
    for (int i = 0; i < m; ++i) best.net.layer.heads.push_back({MatD::Identity(d, d), MatD::Zero(d, d)});
    best.net.coarse_layer = best.net.layer;
    s.best = best;
  }
  s.report = std::move(report);
  return s;
}

using Checkpointer = std::function<CheckpointFiles(const LearnState&)>;

const Checkpointer checkpoint = [](const LearnState& s) { return serialise_checkpoint(s, json::object(), json::object()); };

// Mistake: the processes' record left out of the checkpoint, as before it was listed once.
CheckpointFiles checkpoint_without_processes(const LearnState& s) {
  CheckpointFiles files = serialise_checkpoint(s, json::object(), json::object());
  json manifest = json::parse(files.manifest);
  manifest["state"]["report"].erase("processes");
  files.manifest = manifest.dump(1) + "\n";
  return files;
}

auto report_survives(const Checkpointer& write) {
  return [write] {
    const int d = *rc::gen::inRange(1, 4), k = *rc::gen::inRange(1, 4), m = *rc::gen::inRange(1, 4);
    const LearnState s = state_with(any_report(m, *rc::gen::inRange(0, 4)), d, k, m);
    const CheckpointFiles files = write(s);
    const CheckpointArrays arrays = [&files](const std::string& name) -> std::optional<std::string> {
      const auto it = files.arrays.find(name);
      if (it == files.arrays.end()) return std::nullopt;
      return it->second;
    };
    const CheckpointRead back = parse_checkpoint(files.manifest, arrays, "checkpoint.json");
    RC_ASSERT(back.error == "");
    const LearnReport& resumed = back.checkpoint.state.report;
    RC_ASSERT(to_json(resumed).dump() == to_json(s.report).dump());
    // Every field a checkpoint keeps, those the report hides (one process's counts) included.
    RC_ASSERT(serialise_checkpoint(back.checkpoint.state, json::object(), json::object()).manifest ==
              serialise_checkpoint(s, json::object(), json::object()).manifest);
  };
}

}  // namespace

TEST_CASE("a report survives its checkpoint: the resumed run's report is the report written", "[property][learn]") {
  mha::test::property("generated reports through a checkpoint and back", 200, report_survives(checkpoint));
}

TEST_CASE("test of the tester: a checkpoint without the processes' record is rejected", "[property][learn][tester]") {
  mha::test::property_rejects("the processes' record left out of the checkpoint", 50,
                              report_survives(checkpoint_without_processes));
}
