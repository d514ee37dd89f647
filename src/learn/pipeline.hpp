// What the learner's steps share (internal to src/learn/): the sample stream,
// the options, the truth and the report. Each stage takes the next disjoint range
// of samples, from `offset`.
#pragma once

#include "learn/learner.hpp"
#include "util/clock.hpp"

#include <chrono>
#include <utility>

namespace mha {

struct Pipeline {
  const SampleSource& source;
  const LearnOptions& o;
  const Instance* truth_instance;
  const Layer* truth;
  LearnReport& rep;
  int k, d, m;
  int64_t polish_reserve;  // samples at a finite dataset's end kept for polishing
  uint64_t offset = 0;     // next unused sample of the stream

  void record(StageRecord r) { rep.stages.push_back(std::move(r)); }
  void check(int round, Comparison c) { rep.reference.push_back({round, std::move(c)}); }
  void diagnose(Diagnostic d) { rep.diagnostics.push_back(std::move(d)); }
};

}  // namespace mha
