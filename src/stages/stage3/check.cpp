#include "stages/stage3/check.hpp"
#include "util/format.hpp"

#include "numeric/tolerance.hpp"
#include "stages/stage3/selection_check.hpp"
#include "stages/stage6/w_least_squares.hpp"

#include <Eigen/SVD>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace mha {

namespace tol = mha::tolerance;

double active_condition(const ConvexBody& body, const std::vector<int>& active) {
  const int n = body.dim();
  if (active.empty()) return 1;
  Eigen::MatrixXd c(static_cast<Eigen::Index>(active.size()), n);
  for (size_t k = 0; k < active.size(); ++k) {
    const Slab& s = body.slabs()[active[k] / 2];
    c.row(static_cast<Eigen::Index>(k)) = Eigen::Map<const Eigen::RowVectorXd>(s.a.data(), n);
  }
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(c).singularValues();
  const double shift = tol::jacobi_singular_value_bound(c.cols(), c.rows()) * sv(0);
  const double lowest = sv(sv.size() - 1) - shift;
  return lowest > 0 ? (sv(0) + shift) / lowest : std::numeric_limits<double>::infinity();
}

double ball_side_band(double point_bound, double reference_norm, double radius) {
  return point_bound + tol::kDoubleUnitRoundoff * (reference_norm + radius);
}

void compare_empty(const ConvexBody& body, const ActiveSetResult& fast, Comparison& c) {
  if (fast.status != ActiveSetResult::optimal || !fast.inside_ball) {
    c.record_decision(true);
    c.detail = "both paths find K empty";
    return;
  }
  if (!fast.x.allFinite()) {  // NaN or ±∞ in the returned point: never within its tolerance
    c.record_decision(false);
    c.detail = "the reference certifies K empty; the fast path returns a point that is not finite";
    return;
  }
  double worst = 0;
  for (const Slab& s : body.slabs())
    worst = std::max(worst, (std::abs(Eigen::Map<const Eigen::VectorXd>(s.a.data(), body.dim()).dot(fast.x) - s.b) - s.eta) /
                                active_set_tolerance(s, fast.x.norm()));
  if (worst > 2) {  // beyond its contract (plus the evaluation's rounding): a point it should not have returned
    c.record_decision(false);
    c.detail = format("the reference certifies K empty; the fast path returns a point of the ball violating a slab by "
                      "%.3g of its tolerance", worst);
  } else {
    c.record_undecided();
    c.detail = "the reference certifies K empty; the fast path's point lies within its tolerance of the slabs";
  }
}

Comparison check_margin(const SampleSource& source, const std::vector<MatD>& proxies, const MarginResult& fast,
                        uint64_t first_sample, int64_t prefix_samples) {
  if (fast.fit_tokens.rows() < source.d() || fast.w_sum.size() == 0) {
    Comparison c;
    c.stage = "3";
    c.quantity = "W_Σ of the fit";
    c.detail = "the margin stage made no fit: " + std::to_string(fast.report.events) +
               " large-margin events whose tokens have rank " + std::to_string(fast.report.event_rank) +
               " < d = " + std::to_string(source.d());
    return c;
  }
  Comparison c = escalate(
      [&](unsigned bits) { return compare_least_squares(fast.fit_tokens, fast.fit_labels, fast.w_sum, bits); },
      kLeastSquaresLadder);
  c.stage = "3";
  c.detail += format(", %.0f events", double(fast.fit_tokens.rows()));
  add_part(c, escalate_part([&](unsigned bits) {
             return compare_selection(source, proxies, fast, first_sample, prefix_samples, bits);
           }));
  return c;
}

Comparison check_min_norm_point(const ConvexBody& body, const MinNormFast& fast_path, Eigen::VectorXd* reference_point) {
  const auto start = std::chrono::steady_clock::now();
  const ActiveSetResult fast = fast_path(body);
  const ConvexBody::QpResult ref = body.min_norm_point();
  if (reference_point) *reference_point = ref.status == ConvexBody::QpResult::optimal ? ref.x : Eigen::VectorXd();
  Comparison c = compare_min_norm_point(body, fast, ref);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

Comparison compare_min_norm_point(const ConvexBody& body, const ActiveSetResult& fast, const ConvexBody::QpResult& ref) {
  Comparison c;
  c.stage = "3";
  c.quantity = "‖θ̂ − θ_ref‖, the minimum-norm point of K (the paper's proxy)";
  c.precision = kCertifiedDouble;
  if (ref.status == ConvexBody::QpResult::failed || !ref.certified) {
    c.detail = std::string("not compared: the certified QP ") +
               (ref.status == ConvexBody::QpResult::failed ? "failed: " : "gave no certificate: ") + ref.message;
  } else if (ref.status == ConvexBody::QpResult::infeasible) {
    compare_empty(body, fast, c);
  } else if (fast.status != ActiveSetResult::optimal) {
    c.record_decision(false);  // the reference certified a point of the slabs
    c.detail = std::string("the fast path finds no point (") + fast.message + "); the reference certifies one";
  } else {
    const double kappa = active_condition(body, fast.active);
    const long long rotations = static_cast<long long>(fast.iterations) * body.dim();
    const double fast_bound = tol::min_norm_solution_bound(kappa, rotations, static_cast<long long>(fast.active.size()),
                                                           fast.x.norm() + ref.error_bound);
    const double bound = (ref.error_bound + fast_bound + tol::kDoubleUnitRoundoff * fast.x.norm()) *
                         tol::bound_evaluation_factor(4);
    const double difference = (fast.x - ref.x).norm();
    if (std::isfinite(bound)) c.record(difference, bound);
    else c.record_undecided();
    c.detail = format("‖θ̂ − θ_ref‖ = %.3g within %.3g (certified QP bound %.3g)", difference, bound, ref.error_bound) +
               format(", ‖θ_ref‖ = %.3g; ", ref.norm) + fast.message;
    // K's emptiness: both points against R, undecided within the bound of the ball.
    const BandSide side = side_of(ref.norm, body.radius(), ball_side_band(bound, ref.norm, body.radius()));
    if (side == BandSide::undecided) c.record_undecided();
    else c.record_decision(fast.inside_ball == (side == BandSide::below));
  }
  return c;
}

}  // namespace mha
