// The sculpted body of stages 2 and 4 on two paths (proofs/certification.md, "The
// body on two paths"): on random instances, the body built from the fast
// certifications of every row of the first samples and the body built from the
// reference's (MPFR) certifications of the same rows agree — slab data within
// the derived bounds, membership of test points (undecided only within a band),
// LP widths within lp_value_difference_bound — as `mhalearn verify 2` and the
// learner's reference step run it (compare_body, via check_certification).
// Tests of the tester: every slab widened by a relative 10⁻⁶, and every slab's
// centre moved by 10⁻⁹, are rejected.
#include "generators.hpp"
#include "property.hpp"
#include "stages/stage2/check.hpp"
#include "stages/stage2/sculpt.hpp"

#include <algorithm>

using namespace mha;

namespace {

auto body_agrees(const SlabsFast& slabs) {
  return [slabs] {
    const Instance i = test::draw_generated_instance({6, 8, 10}, {2}, {2.0, 3.0});
    const SampleOracle oracle(i, *rc::gen::inRange<uint64_t>(1, 100).as("sample seed"));
    const auto rows = certification_rows(oracle, i.layer.w_sum(), 0, 60);
    CertifyOptions co;
    co.sigma_min = default_sigma_min(i.d(), i.k, i.m());
    co.tau = *rc::gen::element(0.01, 0.02, 0.05).as("τ");  // both sides of the residual threshold occur
    BodyOptions bo;
    const Comparison c = check_certification("2", rows, co, i.m(), &i.layer, bo, certify_row_fast, slabs);
    RC_LOG() << format_table({c});
    RC_PRE(c.parts.size() == 3);  // some row was certified on both paths: there is a body
    RC_ASSERT(!disagrees(c));
  };
}

SlabsFast body_slabs_widened(double relative) {
  return [relative](const MatD& x, int row, const RowCertificate& cert) {
    auto s = slabs_of_row(x, row, cert);
    for (auto& slab : s) slab.eta *= 1 + relative;
    return s;
  };
}

SlabsFast body_slabs_shifted(double by) {
  return [by](const MatD& x, int row, const RowCertificate& cert) {
    auto s = slabs_of_row(x, row, cert);
    for (auto& slab : s) slab.b += by;
    return s;
  };
}

}  // namespace

TEST_CASE("the sculpted body: fast and reference bodies agree on slabs, membership and widths", "[property][certification]") {
  mha::test::property("body fast vs reference", 8, body_agrees(slabs_of_row));
}

TEST_CASE("the body's cross-check rejects widened and shifted slabs", "[property][certification]") {
  mha::test::property_rejects("every slab widened by 1e-6 relative", 6, body_agrees(body_slabs_widened(1e-6)));
  mha::test::property_rejects("every slab's centre moved by 1e-9", 6, body_agrees(body_slabs_shifted(1e-9)));
}
