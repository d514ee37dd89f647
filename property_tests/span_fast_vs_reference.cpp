// Stage 5's two readings of the span (proofs/span_by_widths.md): on random
// instances, K sculpted with Ŵ = W_Σ, the fast hull directions (SVD of the
// constraints) and the reference's (LP widths of K, certified) agree in
// dimension and within SpanOptions::max_angle whenever the reference finds K
// thin across the hull (m − 1 wide directions) — the cross-check's premise;
// cases where it does not are counted, and at least half must be comparable.
// This is the cross-check `mhalearn verify 5` runs (verify/verify.hpp). Test of
// the tester: a fast path whose hull direction is turned by 0.2 rad is rejected.
#include "model/instance_gen.hpp"
#include "property.hpp"
#include "verify/verify.hpp"

#include <cmath>

using namespace mha;

namespace {
struct SpanTally {
  int cases = 0, compared = 0;
};

auto span_agrees(const FastPaths& fast, SpanTally* tally) {
  return [fast, tally] {
    GenerateOptions g;
    g.d = *rc::gen::element(10, 12).as("d");
    g.k = 2;
    g.m = 2;
    g.scale = *rc::gen::element(3.0, 6.0).as("logit scale");
    g.seed = *rc::gen::inRange<uint64_t>(1, 1000).as("instance seed");
    const GenerateResult inst = generate_instance(g);
    RC_PRE(inst.ok);
    const std::vector<Comparison> rows = verify_instance(inst.instance, {"5"}, VerifyOptions{}, fast);
    RC_LOG() << rows[0].detail << "\n";
    if (tally) {
      ++tally->cases;
      tally->compared += rows[0].compared > 0;
    }
    RC_ASSERT(rows[0].compared == 0 || rows[0].agree);
  };
}

FastPaths turned_hull_direction() {
  const FastPaths ok = default_fast_paths();
  FastPaths f = ok;
  f.span = [ok](const ConvexBody& body, const ConvexBody::Centre& c, int m, const SpanOptions& o) {
    SpanResult r = ok.span(body, c, m, o);
    if (r.hull_directions.rows() > 0) {
      const Eigen::VectorXd h = r.hull_directions.row(0).transpose();
      Eigen::VectorXd e = Eigen::VectorXd::Unit(h.size(), 0);
      e -= e.dot(h) * h;
      e.normalize();
      r.hull_directions.row(0) = (std::cos(0.2) * h + std::sin(0.2) * e).transpose();
    }
    return r;
  };
  return f;
}
}  // namespace

TEST_CASE("stage 5: SVD and LP-width hull directions agree where K is thin across the hull", "[property][stage5]") {
  SpanTally tally;
  mha::test::property("span fast vs LP widths", 6, span_agrees(default_fast_paths(), &tally));
  INFO("comparable cases " << tally.compared << " of " << tally.cases);
  CHECK(2 * tally.compared >= tally.cases);
}

TEST_CASE("stage 5 cross-check rejects a hull direction turned by 0.2 rad", "[property][stage5]") {
  mha::test::property_rejects("hull direction turned by 0.2 rad", 6, span_agrees(turned_hull_direction(), nullptr));
}
