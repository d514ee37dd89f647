// Stage 6's net: one tuple's bound |E_fast − E*| ≤ B (src/stages/stage6/net_check.hpp,
// net_tuple_bound), written out here from proofs/w_least_squares.md ("The net on two
// paths") term by term with the named tolerances, at hand-chosen inputs where each term
// shows in the double result: at 128 bits, at 32 bits (where the reference's own terms
// are not below an ulp), and at the edge where σ_min meets the design's error.
#include "instances.hpp"
#include "data/oracle.hpp"
#include "numeric/tolerance.hpp"
#include "stages/stage6/net_check.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

using namespace mha;
namespace tol = mha::tolerance;

namespace {

NetTupleInputs net_bound_inputs(unsigned bits) {
  NetTupleInputs in;
  in.s_hi = 8.0, in.s_lo = 0.5;
  in.design_fro = 10.0;
  in.train_error_fro = 1e-9, in.validation_error_fro = 3e-9;
  in.validation_design_fro = 7.0;
  in.w_fro = 2.0, in.train_residual_fro = 0.25, in.train_labels_fro = 6.0;
  in.validation_residual = 0.5, in.validation_labels2 = 36.0, in.objective = 0.25 / 36.0;
  in.rows = 64, in.validation_rows = 48, in.cols = 8, in.m = 2, in.d = 4, in.bits = bits;
  return in;
}

// The bound as the proof states it, evaluated in the same order.
NetTupleBound net_bound_written_out(const NetTupleInputs& in) {
  const double u = tol::kDoubleUnitRoundoff;
  const long long rc = in.rows * in.cols;
  NetTupleBound b;
  const double d_fro = in.design_fro * (1.0 + tol::gamma(rc + 2));
  const double shift = tol::jacobi_singular_value_bound(in.rows, in.cols) * in.s_hi + u * d_fro;
  b.sigma_min = in.s_lo - shift;
  const double sigma_max = in.s_hi + shift, norm2_lower = in.s_hi - shift;
  b.train_error = in.train_error_fro * tol::bound_evaluation_factor(rc + 2);
  const double e_val = in.validation_error_fro * tol::bound_evaluation_factor(in.validation_rows * in.cols + 2);
  b.validation_error = e_val;
  if (!(b.sigma_min > b.train_error)) return b;
  const double kappa = sigma_max / b.sigma_min;
  b.dw_design = tol::least_squares_perturbation_bound(kappa, b.train_error / norm2_lower, in.w_fro,
                                                      in.train_residual_fro, norm2_lower);
  b.dw_solve = tol::certification_solution_bound(d_fro + b.train_error, b.sigma_min - b.train_error, in.train_labels_fro,
                                                 in.w_fro + b.dw_design, static_cast<int>(in.cols),
                                                 static_cast<int>(in.rows));
  b.dw_reference = tol::normal_equations_relative_bound(kappa, in.rows, in.cols, in.bits) * in.w_fro;
  const double dw = (b.dw_design + b.dw_solve + b.dw_reference) * tol::bound_evaluation_factor(3);
  const double y_val_fro = std::sqrt(in.validation_labels2);
  b.residual_error = (e_val * (in.w_fro + dw) + in.validation_design_fro * dw +
                      tol::gamma(in.cols + in.m + 1) * ((in.validation_design_fro + e_val) * (in.w_fro + dw) + y_val_fro)) *
                     tol::bound_evaluation_factor(10);
  b.bound = tol::objective_from_residual_bound(in.validation_residual, b.residual_error, in.validation_labels2,
                                               in.validation_rows * in.d) +
            tol::reference_relative_error(in.bits, 4 * (in.rows + in.cols)) * in.objective;
  return b;
}

void check_same_bound(const NetTupleBound& got, const NetTupleBound& want) {
  CHECK(got.sigma_min == want.sigma_min);
  CHECK(got.train_error == want.train_error);
  CHECK(got.validation_error == want.validation_error);
  CHECK(got.dw_design == want.dw_design);
  CHECK(got.dw_solve == want.dw_solve);
  CHECK(got.dw_reference == want.dw_reference);
  CHECK(got.residual_error == want.residual_error);
  CHECK(got.bound == want.bound);
}

}  // namespace

TEST_CASE("stage 6's net: a tuple's bound is its derivation, term by term", "[verify][stage6]") {
  for (unsigned bits : {128u, 32u}) {
    INFO("bits " << bits);
    const NetTupleInputs in = net_bound_inputs(bits);
    const NetTupleBound b = net_tuple_bound(in);
    check_same_bound(b, net_bound_written_out(in));
    CHECK(std::isfinite(b.bound));
    CHECK(b.dw_design > 0);
    CHECK(b.dw_solve > 0);
    CHECK(b.residual_error > 0);
  }
  // The validation design's error alone (no validation design, labels of norm 10⁻²⁰, m·d = 8
  // columns): ‖R̂ − R*‖'s first term e_val(‖W‖ + ΔW) and its rounding term
  // γ_{md+m+1}·(0 + e_val)(‖W‖ + ΔW) are the whole sum, 11 units apart, so both show.
  {
    NetTupleInputs in = net_bound_inputs(128);
    in.validation_design_fro = 0, in.validation_error_fro = 1.0, in.validation_labels2 = 1e-40;
    const NetTupleBound b = net_tuple_bound(in);
    check_same_bound(b, net_bound_written_out(in));
    CHECK(std::isfinite(b.residual_error));
  }
  // At 32 bits the reference's own terms are not below an ulp of the bound: the bits reach it.
  CHECK(net_tuple_bound(net_bound_inputs(32)).bound > net_tuple_bound(net_bound_inputs(128)).bound);
  CHECK(net_tuple_bound(net_bound_inputs(32)).dw_reference > 1e4 * net_tuple_bound(net_bound_inputs(128)).dw_reference);
}

TEST_CASE("stage 6's net: each input of a tuple's bound reaches it", "[verify][stage6]") {
  const NetTupleBound base = net_tuple_bound(net_bound_inputs(32));
  const auto moved = [&](auto change) {
    NetTupleInputs in = net_bound_inputs(32);
    change(in);
    const NetTupleBound b = net_tuple_bound(in);
    check_same_bound(b, net_bound_written_out(in));
    return b.bound != base.bound;
  };
  CHECK(moved([](NetTupleInputs& in) { in.s_hi = 9.0; }));
  CHECK(moved([](NetTupleInputs& in) { in.s_lo = 0.75; }));
  CHECK(moved([](NetTupleInputs& in) { in.design_fro = 20.0; }));
  CHECK(moved([](NetTupleInputs& in) { in.train_error_fro = 1e-6; }));
  CHECK(moved([](NetTupleInputs& in) { in.validation_error_fro = 1e-6; }));
  CHECK(moved([](NetTupleInputs& in) { in.validation_design_fro = 14.0; }));
  CHECK(moved([](NetTupleInputs& in) { in.w_fro = 4.0; }));
  CHECK(moved([](NetTupleInputs& in) { in.train_residual_fro = 0.5; }));
  CHECK(moved([](NetTupleInputs& in) { in.train_labels_fro = 12.0; }));
  CHECK(moved([](NetTupleInputs& in) { in.validation_residual = 1.0; }));
  CHECK(moved([](NetTupleInputs& in) { in.validation_labels2 = 64.0; }));
  CHECK(moved([](NetTupleInputs& in) { in.objective = 1.0; }));
  CHECK(moved([](NetTupleInputs& in) { in.rows = 128; }));
  CHECK(moved([](NetTupleInputs& in) { in.validation_rows = 96; }));
  CHECK(moved([](NetTupleInputs& in) { in.cols = 12; }));
  CHECK(moved([](NetTupleInputs& in) { in.m = 3; }));
  CHECK(moved([](NetTupleInputs& in) { in.d = 8; }));
}

// σ_min − e_train ≤ 0: the design is too close to singular for a bound, +∞ with none of
// the W terms computed; exactly at 0 (s_lo placed on the Jacobi shift) too.
TEST_CASE("stage 6's net: no bound where σ_min does not exceed the design's error", "[verify][stage6]") {
  NetTupleInputs in = net_bound_inputs(128);
  in.train_error_fro = 0;
  in.s_lo = tol::jacobi_singular_value_bound(in.rows, in.cols) * in.s_hi +
            tol::kDoubleUnitRoundoff * (in.design_fro * (1.0 + tol::gamma(in.rows * in.cols + 2)));
  const NetTupleBound edge = net_tuple_bound(in);
  REQUIRE(edge.sigma_min == 0.0);
  CHECK(edge.bound == std::numeric_limits<double>::infinity());
  CHECK(edge.dw_design == 0.0);
  CHECK(edge.residual_error == 0.0);
  in.s_lo = 1e-20;
  CHECK(net_tuple_bound(in).bound == std::numeric_limits<double>::infinity());
  in = net_bound_inputs(128);
  in.train_error_fro = 1.0;  // the design's error above σ_min = 0.5 − shift
  const NetTupleBound far = net_tuple_bound(in);
  CHECK(far.bound == std::numeric_limits<double>::infinity());
  CHECK(far.train_error == 1.0 * tol::bound_evaluation_factor(64 * 8 + 2));
}

TEST_CASE("stage 6's net: a design row's entrywise error is its derivation, term by term", "[verify][stage6]") {
  // The fast logits' error: γ_{2d} times the row's largest |X||Θ||X|ᵀ entry, widened for its
  // 2d + 2 roundings.
  CHECK(net_logit_error(3.0, 4) == tol::gamma(8) * 3.0 * tol::bound_evaluation_factor(10));
  CHECK(net_logit_error(3.0, 4) != tol::gamma(8) * 3.0);  // the widening shows
  // The row: k = 3 tokens in R², attention (1/2, 1/4, 1/4), a logit error of 10⁻¹⁷ (below
  // u·span, so both parts of the softmax's exponent error show) on a span of 2.
  RowVec<double> attention(3);
  attention << 0.5, 0.25, 0.25;
  MatD tokens(3, 2);
  tokens << 1, -2, -3, 1, 0.5, -4;  // the bound takes |X|
  const double le = 1e-17;
  const double eps = tol::design_entry_relative_error(tol::double_softmax_relative_error(le, 2.0 + 2 * le, 3), 3);
  const RowVec<double> expected = eps * (attention * tokens.cwiseAbs()) * (1.0 + tol::gamma(3 + 3));
  RowVec<double> logits(3);
  logits << -0.5, 1.5, 0.25;  // span 2: max − min, not the largest logit
  const RowVec<double> row = net_design_row_error(le, logits, attention, tokens);
  CHECK(row == expected);
  // A logit error that dominates the span's rounding (10⁻¹⁰ on a span of 0): the exponent error
  // is at least 2·10⁻¹⁰, the softmax's relative error at least expm1(2·that) ≥ 4·10⁻¹⁰, the design
  // entry's at least that, and Â|X| = (1.375, 2.25): a lower bound, not a fitted tolerance.
  const RowVec<double> flat = RowVec<double>::Constant(3, 0.5);  // span 0
  const RowVec<double> large = net_design_row_error(1e-10, flat, attention, tokens);
  CHECK(large == tol::design_entry_relative_error(tol::double_softmax_relative_error(1e-10, 0.0 + 2 * 1e-10, 3), 3) *
                     (attention * tokens.cwiseAbs()) * (1.0 + tol::gamma(6)));
  CHECK(large(0) > 4e-10 * 1.375);
  // A logit error of 1 on a span of 0: the exponent error 2 + u(0 + 2·1) carries the widening
  // of the span by 2·logit_error in its last bits, and exp magnifies them past an ulp.
  const RowVec<double> wide = net_design_row_error(1.0, flat, attention, tokens);
  CHECK(wide == tol::design_entry_relative_error(tol::double_softmax_relative_error(1.0, 0.0 + 2 * 1.0, 3), 3) *
                    (attention * tokens.cwiseAbs()) * (1.0 + tol::gamma(6)));
  CHECK(wide != tol::design_entry_relative_error(tol::double_softmax_relative_error(1.0, 0.0, 3), 3) *
                    (attention * tokens.cwiseAbs()) * (1.0 + tol::gamma(6)));
  // A logit error of 3/8 on the span of 2: the span's widening by 2·logit_error (not by one
  // logit_error) shows in the last bits exp carries (found by trying dyadic errors and spans).
  const RowVec<double> widened = net_design_row_error(0.375, logits, attention, tokens);
  CHECK(widened == tol::design_entry_relative_error(tol::double_softmax_relative_error(0.375, 2.0 + 2 * 0.375, 3), 3) *
                       (attention * tokens.cwiseAbs()) * (1.0 + tol::gamma(6)));
  CHECK(widened != tol::design_entry_relative_error(tol::double_softmax_relative_error(0.375, 2.0 + 0.375, 3), 3) *
                       (attention * tokens.cwiseAbs()) * (1.0 + tol::gamma(6)));
}

TEST_CASE("stage 6's net: a tuple with a NaN singular value has no bound", "[verify][stage6]") {
  NetTupleInputs in = net_bound_inputs(128);
  in.s_lo = std::numeric_limits<double>::quiet_NaN();
  const NetTupleBound b = net_tuple_bound(in);
  CHECK(b.bound == std::numeric_limits<double>::infinity());
  // None of the W terms is computed from it (as at σ_min ≤ e_train): no NaN carried on.
  CHECK(b.dw_design == 0.0);
  CHECK(b.residual_error == 0.0);
}

TEST_CASE("stage 6's net on two paths: every tuple compared, the winner's error the least of them, a tuple without a bound counted", "[verify][stage6]") {
  // The fast candidates on the true hull of a (6,2,2) layer: the reference re-evaluates every
  // tuple on the same training and validation samples (those after the training ones).
  const Instance inst = mha::test::generated_instance(6, 2, 2, 3.0, 5);
  const SampleOracle oracle(inst, 1);
  const Eigen::VectorXd t0 = Eigen::Map<const Eigen::VectorXd>(inst.layer.heads[0].theta.data(), 36);
  const Eigen::VectorXd t1 = Eigen::Map<const Eigen::VectorXd>(inst.layer.heads[1].theta.data(), 36);
  const Eigen::MatrixXd direction = (t1 - t0).normalized().transpose();
  NetOptions o;
  o.max_tuples = 40;
  o.train_samples = o.validation_samples = 48;
  o.first_sample = 5;
  const NetCandidates fast = net_candidates(oracle, (t0 + t1) / 2, direction, 2, o);
  REQUIRE(fast.failure.empty());
  REQUIRE(fast.tuples.size() >= 10);
  const ComparisonPart part = compare_net(oracle, fast, 128);
  INFO(part.detail);
  CHECK(part.agree);
  CHECK(part.compared == static_cast<int>(fast.tuples.size()));
  CHECK(part.undecided == 0);
  CHECK(part.detail.find("the fast winner is the reference winner") != std::string::npos);
  CHECK(part.detail.find("without a bound") == std::string::npos);
  // The winner's E printed is the least reference error: of the fast errors (each within its
  // bound of its reference error), the one nearest to it is the fast winner's — no tolerance.
  const double printed = std::stod(part.detail.substr(part.detail.find("winner's E = ") + 13));
  size_t nearest = 0;
  for (size_t t = 1; t < fast.errors.size(); ++t)
    if (std::abs(fast.errors[t] - printed) < std::abs(fast.errors[nearest] - printed)) nearest = t;
  CHECK(nearest == fast.winner);
  CHECK(fast.winner != 0);  // the least is not the first tuple's: the argmin runs
  // The fast path's "singular design" (+∞) for one tuple: counted undecided, named in the detail.
  NetCandidates singular = fast;
  singular.errors[1] = std::numeric_limits<double>::infinity();
  const ComparisonPart one_open = compare_net(oracle, singular, 128);
  CHECK(one_open.undecided == 1);
  CHECK(one_open.detail.find("; 1 tuples without a bound (undecided)") != std::string::npos);
}
