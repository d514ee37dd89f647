// Every stage's fast path as a replaceable function: what `mhalearn verify` and
// the learner's reference step check, each against its reference path, with the
// stage's check function (stages/*/check.hpp, model/forward_check.hpp). Tests
// and the fault-injection build of the CLI swap one for a deliberately wrong
// copy (verify/faults.hpp) and require the check to reject it.
//
// The learner takes its stage-1 estimate, its stage-3 fits and its spans from
// here too, so a replaced fast path is the one the run used.
#pragma once

#include "geometry/min_norm_active_set.hpp"
#include "model/forward_check.hpp"
#include "stages/polish/check.hpp"
#include "stages/stage1/check.hpp"
#include "stages/stage2/check.hpp"
#include "stages/stage3/check.hpp"
#include "stages/stage5/span.hpp"
#include "stages/stage5/span_membership.hpp"
#include "stages/stage6/check.hpp"

#include <functional>
#include <vector>

namespace mha {

using MarginFast = std::function<MarginResult(const SampleSource&, const std::vector<MatD>& proxies,
                                              const MarginOptions&, const Layer* truth)>;
using SpanFast = std::function<SpanResult(const ConvexBody&, const ConvexBody::Centre&, int m, const SpanOptions&)>;
using MembershipSpanFast =
    std::function<MembershipSpan(const ConvexBody&, int m, const ActiveSetResult& base, const MembershipSpanOptions&)>;

struct FastPaths {
  ForwardFast forward = forward_fast_batch;                      // forward
  Stage1Fast stage1 = stage1_estimate_wsum;                      // 1
  CertifyFast certify = certify_row_fast;                        // 2, 4: one row
  SlabsFast slabs = slabs_of_row;                                // 2, 4: a certified row's slabs
  MarginFast margin = [](const SampleSource& source, const std::vector<MatD>& proxies, const MarginOptions& o,
                         const Layer* truth) { return refine_wsum(source, proxies, o, truth); };  // 3: the fit
  MinNormFast min_norm = min_norm_point_active_set;              // 3: the proxy
  SpanFast span = find_span;                                     // 5
  MembershipSpanFast span_membership = span_by_membership;       // 5: by membership queries (the paper variant)
  WLeastSquaresFast w_least_squares = solve_w_stack;             // 6: W at given Θ
  NetFast net = net_candidates;                                  // 6: the exhaustive level
  PolishIterationFast polish_iteration = mha::polish_iteration;  // polish: one Levenberg–Marquardt iteration
};

}  // namespace mha
