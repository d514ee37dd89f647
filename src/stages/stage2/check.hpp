// Stages 2 and 4 on two paths (proofs/certification.md, "Fast against reference"
// and "The body on two paths"): every row of a set certified on the fast path
// (LDLᵀ in double) and re-decided on the reference path (Householder QR in MPFR)
// — v̂ within certification_solution_bound, the verdicts equal unless a
// reference value lies within its derived band of a threshold (undecided) — and
// the bodies both paths build from the rows they certify (body_check.hpp),
// escalated 128 → 256 bits before a disagreement is declared.
//
// Stage 4 is stage 2 with stage 3's Ŵ and its error estimate: the same check
// with the row's options, under the stage name "4".
#pragma once

#include "data/oracle.hpp"
#include "numeric/comparison.hpp"
#include "stages/stage2/body_check.hpp"
#include "stages/stage2/certify.hpp"

#include <functional>
#include <string>
#include <vector>

namespace mha {

// One row to certify: sample x (k × d), its labels y, B = x Ŵ and the row a.
struct CertificationRow {
  MatD x, y, b;
  int row = 0;
};

using CertifyFast =
    std::function<RowCertificate(const MatD& x, const MatD& y, const MatD& b, int row, const CertifyOptions&)>;
using SlabsFast = std::function<std::vector<SlabConstraint>(const MatD& x, int row, const RowCertificate&)>;

// Every row of samples first .. first + count − 1 of `source`, with Ŵ.
std::vector<CertificationRow> certification_rows(const SampleSource& source, const MatD& w_hat, uint64_t first,
                                                 int64_t count);

// `stage` is "2" or "4"; d and m are the layer's; `truth` (optional) adds the
// true Θ_i as test points of the body's membership and the true hull direction
// to its widths.
Comparison check_certification(const std::string& stage, const std::vector<CertificationRow>& rows,
                               const CertifyOptions& options, int m, const Layer* truth, const BodyOptions& body,
                               const CertifyFast& certify = certify_row_fast, const SlabsFast& slabs = slabs_of_row);

}  // namespace mha
