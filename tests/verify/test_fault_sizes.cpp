// Each deliberately wrong fast path of src/verify/faults.cpp is the change its
// one-line description states, of that size and no other: the wrapped fast path
// is a stub with known output, and the fault's output is compared with the
// description's arithmetic, entry by entry. (test_verify.cpp shows that each fault
// is rejected by its stage's check; this file that the fault is the one documented,
// so that `verify --fault` and docs/verify.md's fault table say what is injected.)
#include "verify/faults.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>

using namespace mha;

namespace {

// A source with no samples: the stubs below never draw.
class NoSamples : public SampleSource {
 public:
  int k() const override { return 2; }
  int d() const override { return 2; }
  int64_t available() const override { return 0; }
  LabelledBatch draw(uint64_t, int64_t, int) const override { return {}; }
};

const faults::Fault& fault_of(const std::string& stage) {
  const faults::Fault* f = faults::find_fault(stage);
  REQUIRE(f != nullptr);
  return *f;
}

MatD fault_test_matrix() {
  MatD m(2, 2);
  m << 0.75, -3.0, 1.5, 2.0;  // largest |entry| 3, not at (0, 0)
  return m;
}

Layer fault_test_layer() {
  Layer l;
  l.heads = {{MatD::Identity(2, 2), fault_test_matrix()}, {MatD::Identity(2, 2), fault_test_matrix()}};
  return l;
}

}  // namespace

TEST_CASE("faults: each stage has one, confirmed at its stated precision", "[verify][faults]") {
  CHECK(faults::stage_faults().size() == 8);  // forward, 1–6, polish
  for (const char* stage : {"forward", "1", "2", "4", "5", "polish"}) CHECK(fault_of(stage).escalated_to == 256);
  for (const char* stage : {"3", "6"}) CHECK(fault_of(stage).escalated_to == kExactRationals);
  CHECK(faults::find_fault("7") == nullptr);
  CHECK_THROWS_AS(faults::with_fault("7"), std::invalid_argument);
}

TEST_CASE("faults: forward scales its first output entry by 1 + 1e-9", "[verify][faults]") {
  FastPaths f;
  f.forward = [](const Layer&, const InputBatch&) { return std::vector<double>{2.0, 3.0, -5.0}; };
  fault_of("forward").inject(f);
  const std::vector<double> y = f.forward(Layer{}, InputBatch{});
  CHECK(y == std::vector<double>{2.0 * (1 + 1e-9), 3.0, -5.0});
}

TEST_CASE("faults: stage 1 moves Ŵ(0,0) by 1e-9 of its largest entry", "[verify][faults]") {
  FastPaths f;
  f.stage1 = [](const SampleSource&, const Stage1Options&) {
    Stage1Result r;
    r.w_hat = fault_test_matrix();
    return r;
  };
  fault_of("1").inject(f);
  const MatD w = f.stage1(NoSamples{}, Stage1Options{}).w_hat;
  MatD expected = fault_test_matrix();
  expected(0, 0) += 1e-9 * 3.0;
  CHECK(w == expected);
}

TEST_CASE("faults: stages 2 and 4 move v̂(0) by 1e-8", "[verify][faults]") {
  for (const char* stage : {"2", "4"}) {
    INFO("stage " << stage);
    FastPaths f;
    f.certify = [](const MatD&, const MatD&, const MatD&, int, const CertifyOptions&) {
      RowCertificate c;
      c.v = Eigen::Vector3d(0.5, -1.0, 2.0);
      return c;
    };
    fault_of(stage).inject(f);
    const RowCertificate c = f.certify(MatD(), MatD(), MatD(), 0, CertifyOptions{});
    REQUIRE(c.v.size() == 3);
    CHECK(c.v(0) == 0.5 + 1e-8);
    CHECK(c.v(1) == -1.0);
    CHECK(c.v(2) == 2.0);
    // A row without v̂ is left as it is.
    f = FastPaths{};
    f.certify = [](const MatD&, const MatD&, const MatD&, int, const CertifyOptions&) { return RowCertificate{}; };
    fault_of(stage).inject(f);
    CHECK(f.certify(MatD(), MatD(), MatD(), 0, CertifyOptions{}).v.size() == 0);
  }
}

TEST_CASE("faults: stage 3 scales the fit's W_Σ(0,0) by 1 + 1e-8", "[verify][faults]") {
  FastPaths f;
  f.margin = [](const SampleSource&, const std::vector<MatD>&, const MarginOptions&, const Layer*) {
    MarginResult r;
    r.w_sum = fault_test_matrix();
    return r;
  };
  fault_of("3").inject(f);
  const MatD w = f.margin(NoSamples{}, {}, MarginOptions{}, nullptr).w_sum;
  MatD expected = fault_test_matrix();
  expected(0, 0) *= 1 + 1e-8;
  CHECK(w == expected);
  // A run that made no fit: nothing to scale, left empty.
  FastPaths none;
  none.margin = [](const SampleSource&, const std::vector<MatD>&, const MarginOptions&, const Layer*) { return MarginResult{}; };
  fault_of("3").inject(none);
  CHECK(none.margin(NoSamples{}, {}, MarginOptions{}, nullptr).w_sum.size() == 0);
}

TEST_CASE("faults: stage 5 turns the first hull direction by 0.2 rad, the others kept", "[verify][faults]") {
  FastPaths f;
  ConvexBody::Centre seen;
  f.span = [&](const ConvexBody&, const ConvexBody::Centre& c, int, const SpanOptions&) {
    seen = c;
    return SpanResult{};
  };
  fault_of("5").inject(f);
  ConvexBody::Centre c;
  c.free_basis = Eigen::MatrixXd::Zero(2, 4);
  c.free_basis(0, 1) = 1;  // e_1: the direction is turned towards e_0
  c.free_basis(1, 3) = 1;
  f.span(ConvexBody(4, 1.0), c, 3, SpanOptions{});
  Eigen::RowVectorXd expected = Eigen::RowVectorXd::Zero(4);
  expected(1) = std::cos(0.2), expected(0) = std::sin(0.2);
  // e_1 turned towards e_0: cos(0.2)·e_1 + sin(0.2)·e_0, every product by 0 or 1 exact.
  CHECK(seen.free_basis.row(0) == expected);
  CHECK(seen.free_basis.row(1) == c.free_basis.row(1));
  // No hull direction (m = 1): passed through as it is.
  ConvexBody::Centre none;
  f.span(ConvexBody(4, 1.0), none, 1, SpanOptions{});
  CHECK(seen.free_basis.rows() == 0);
}

TEST_CASE("faults: stage 6 scales W(0,0) by 1 + 1e-6", "[verify][faults]") {
  FastPaths f;
  f.w_least_squares = [](const MatD&, const MatD&) { return std::optional<MatD>(fault_test_matrix()); };
  fault_of("6").inject(f);
  const std::optional<MatD> w = f.w_least_squares(MatD(), MatD());
  REQUIRE(w.has_value());
  MatD expected = fault_test_matrix();
  expected(0, 0) *= 1 + 1e-6;
  CHECK(*w == expected);
}

TEST_CASE("faults: polishing negates the gradient of head 1 (its first d² entries)", "[verify][faults]") {
  FastPaths f;
  f.polish_iteration = [](const LabelledBatch&, const Layer&, const PolishOptions&) {
    PolishIteration it;
    it.gradient = Eigen::VectorXd::LinSpaced(8, 1.0, 8.0);  // two heads of d² = 4
    return it;
  };
  fault_of("polish").inject(f);
  const Eigen::VectorXd g = f.polish_iteration(LabelledBatch{}, fault_test_layer(), PolishOptions{}).gradient;
  Eigen::VectorXd expected(8);
  expected << -1, -2, -3, -4, 5, 6, 7, 8;
  CHECK(g == expected);
  // A gradient of exactly d² entries (one head's) is negated whole; a shorter one is left alone.
  for (const int size : {4, 3}) {
    FastPaths one;
    one.polish_iteration = [size](const LabelledBatch&, const Layer&, const PolishOptions&) {
      PolishIteration it;
      it.gradient = Eigen::VectorXd::LinSpaced(size, 1.0, double(size));
      return it;
    };
    fault_of("polish").inject(one);
    const Eigen::VectorXd h = one.polish_iteration(LabelledBatch{}, fault_test_layer(), PolishOptions{}).gradient;
    CHECK(h == (size == 4 ? Eigen::VectorXd(-Eigen::VectorXd::LinSpaced(4, 1.0, 4.0)) : Eigen::VectorXd::LinSpaced(3, 1.0, 3.0)));
  }
}
