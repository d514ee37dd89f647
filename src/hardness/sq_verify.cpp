// Verification of the SQ family (sq_verify): the exact forward pass against the
// closed form on every input, and the double and MPFR passes against the exact
// values within derived bounds (proofs/sq_family.md §5).
#include "hardness/sq_family.hpp"

#include "numeric/tolerance.hpp"

#include "data/enumerate.hpp"
#include "model/inputs.hpp"
#include "model/forward_error.hpp"
#include "model/forward_fast.hpp"
#include "model/reference.hpp"
#include "numeric/precision.hpp"
#include "util/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace mha {

// ---------------------------------------------------------------- verification

namespace {
void accumulate_entry(SqAgreement& acc, const Rational* diff, bool finite, double bv) {
  acc.max_bound = std::max(acc.max_bound, bv);
  if (!finite) {
    ++acc.violations;
    acc.max_abs_diff = acc.max_ratio = std::numeric_limits<double>::infinity();
    return;
  }
  if (diff == nullptr) return;   // both zero
  if (*diff > Rational(bv)) ++acc.violations;
  const double dv = rational_to_double(*diff);
  acc.max_abs_diff = std::max(acc.max_abs_diff, dv);
  if (bv > 0) acc.max_ratio = std::max(acc.max_ratio, dv / bv);
  else if (dv > 0) acc.max_ratio = std::numeric_limits<double>::infinity();
}
void merge(SqAgreement& into, const SqAgreement& o) {
  into.inputs += o.inputs;
  into.max_abs_diff = std::max(into.max_abs_diff, o.max_abs_diff);
  into.max_bound = std::max(into.max_bound, o.max_bound);
  into.max_ratio = std::max(into.max_ratio, o.max_ratio);
  into.violations += o.violations;
}
}  // namespace

void sq_accumulate(SqAgreement& acc, const Mat<Rational>& exact, const double* computed, const MatD& bound) {
  ++acc.inputs;
  for (Eigen::Index a = 0; a < exact.rows(); ++a)
    for (Eigen::Index c = 0; c < exact.cols(); ++c) {
      const double yv = computed[a * exact.cols() + c];
      if (yv == 0.0 && exact(a, c) == 0) {
        accumulate_entry(acc, nullptr, true, bound(a, c));
        continue;
      }
      if (!std::isfinite(yv)) {
        accumulate_entry(acc, nullptr, false, bound(a, c));
        continue;
      }
      const Rational diff = abs(Rational(yv) - exact(a, c));
      accumulate_entry(acc, &diff, true, bound(a, c));
    }
}

void sq_accumulate(SqAgreement& acc, const Mat<Rational>& exact, const Mat<Mpfr>& computed, const MatD& bound) {
  ++acc.inputs;
  for (Eigen::Index a = 0; a < exact.rows(); ++a)
    for (Eigen::Index c = 0; c < exact.cols(); ++c) {
      if (!mpfr_number_p(computed(a, c).backend().data())) {
        accumulate_entry(acc, nullptr, false, bound(a, c));
        continue;
      }
      const Rational diff = abs(mpfr_to_rational(computed(a, c)) - exact(a, c));
      accumulate_entry(acc, &diff, true, bound(a, c));
    }
}


namespace {

// Inputs first .. first+count−1 of the enumeration (index bits t*d + j) as a batch.
InputBatch enumeration_batch(uint64_t first, int64_t count, int d) {
  InputBatch batch;
  batch.kind = InputKind::boolean;
  batch.k = 2;
  batch.d = d;
  batch.count = count;
  batch.bits.resize(static_cast<size_t>(count) * 2);   // d ≤ 10: one word per token
  const uint64_t mask = (uint64_t{1} << d) - 1;
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t index = first + static_cast<uint64_t>(i);
    batch.bits[2 * i] = index & mask;
    batch.bits[2 * i + 1] = (index >> d) & mask;
  }
  return batch;
}

// The rigorous total: both parts are upper bounds computed in double; the
// sum's own rounding is covered by the factor.
MatD total_bound(const MatD& forward, double parameter) {
  return (forward.array() + parameter).matrix() * tolerance::kSqBoundEvaluationFactor;
}

// The exact check and the fast path's agreement, over every input.
struct FastPass {
  SqAgreement acc;
  int64_t mismatches = 0, first_mismatch = -1;
};

// Inputs first .. first+count−1 (`batch`; the fast path's outputs `y`): the exact
// forward pass against the closed form, and `y` against it within the bound.
// Each thread accumulates its own share; the merge does not depend on the order.
void check_chunk(const SqFamily& f, const Layer& exported, const InputBatch& batch, const std::vector<double>& y,
                 int64_t first, int64_t count, double e_double, int threads, FastPass& pass) {
  const int kd = 2 * f.params.d;
#pragma omp parallel num_threads(threads)
  {
    SqAgreement local;
    int64_t local_mismatches = 0, local_first = -1;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < count; ++i) {
      const MatD x = batch.sample(i);
      const Mat<Rational> exact = sq_forward_exact(f, x);
      if (exact != sq_closed_form(f, x)) {
        ++local_mismatches;
        if (local_first < 0) local_first = first + i;
      }
      sq_accumulate(local, exact, y.data() + i * kd, total_bound(forward_error_bound(exported, x), e_double));
    }
#pragma omp critical
    {
      merge(pass.acc, local);
      pass.mismatches += local_mismatches;
      if (local_first >= 0 && (pass.first_mismatch < 0 || local_first < pass.first_mismatch))
        pass.first_mismatch = local_first;
    }
  }
}

// 1. Exact check and the fast path, every input, in chunks. Returns "" or why
// the fast path could not answer.
std::string exact_and_fast(const SqFamily& f, const Layer& exported, const FastForward& fast,
                           const SqVerifyOptions& opt, int64_t total, double e_double, Progress& progress,
                           FastPass& pass) {
  const SqFamilyParams& P = f.params;
  const int threads = std::max(1, opt.threads);
  constexpr int64_t kChunk = 8192;
  for (int64_t first = 0; first < total; first += kChunk) {
    const int64_t count = std::min(kChunk, total - first);
    const InputBatch batch = opt.enumerate ? enumeration_batch(static_cast<uint64_t>(first), count, P.d)
                                           : draw_inputs(opt.seed, Stream::inputs, InputKind::boolean, 2, P.d,
                                                         static_cast<uint64_t>(first), count, threads);
    const FastForwardResult fr = fast.run(batch, threads);
    if (!fr.status.ok())
      return "the fast path cannot answer input " + std::to_string(first + fr.status.first_unanswered) +
             " (its logits or outputs overflow double)";
    check_chunk(f, exported, batch, fr.y, first, count, e_double, threads, pass);
    progress.update(first + count);
  }
  return "";
}

// The full layer's parameters rounded away from zero: its bound is monotone
// in |θ_i| and |w_i| for this family (proofs/sq_family.md §5).
Layer rounded_away_from_zero(const LayerT<Mpfr>& ref_full, int d) {
  Layer up;
  for (const auto& h : ref_full.heads) {
    MatD th(d, d), w(d, d);
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c) {
        th(r, c) = mpfr_get_d(h.theta(r, c).backend().data(), MPFR_RNDA);
        w(r, c) = mpfr_get_d(h.w(r, c).backend().data(), MPFR_RNDA);
      }
    up.heads.push_back({th, w});
  }
  return up;
}

// 2. Both MPFR passes on `checks` evenly spread inputs (single thread: the MPFR
//    default precision is process-wide).
void mpfr_passes(const SqFamily& f, const Layer& exported, const SqVerifyOptions& opt, int64_t total, int64_t checks,
                 double e_double, SqVerifyReport& rep) {
  const SqFamilyParams& P = f.params;
  const double e_full = sq_mpfr_parameter_error(f, opt.precision);
  ScopedPrecision precision(opt.precision);
  const double u = std::ldexp(1.0, -static_cast<int>(rep.precision_bits));
  const LayerT<Mpfr> ref_exported = convert_layer<Mpfr>(exported);
  const LayerT<Mpfr> ref_full = sq_layer_mpfr(f);
  const Layer up = rounded_away_from_zero(ref_full, P.d);
  SqAgreement acc_exported, acc_full;
  Progress mp("hard: MPFR passes", checks);
  for (int64_t j = 0; j < checks; ++j) {
    const int64_t index = static_cast<int64_t>((static_cast<__int128>(j) * total) / checks);
    const MatD x = opt.enumerate ? boolean_input<double>(static_cast<uint64_t>(index), 2, P.d)
                                 : draw_inputs(opt.seed, Stream::inputs, InputKind::boolean, 2, P.d,
                                               static_cast<uint64_t>(index), 1, 1).sample(0);
    const Mat<Rational> exact = sq_forward_exact(f, x);
    const Mat<Mpfr> xm = cast_matrix<Mpfr>(x);
    for (int pass = 0; pass < 2; ++pass) {
      const Mat<Mpfr> ym = forward_reference<Mpfr>(pass == 0 ? ref_exported : ref_full, xm);
      // Exact comparison: every MPFR entry converted to its exact rational value.
      const MatD bound = total_bound(forward_error_bound(pass == 0 ? exported : up, x, u), pass == 0 ? e_double : e_full);
      sq_accumulate(pass == 0 ? acc_exported : acc_full, exact, ym, bound);
    }
    mp.update(j + 1);
  }
  rep.mpfr_exported = acc_exported;
  rep.mpfr_exported.parameter_error = e_double;
  rep.mpfr_full = acc_full;
  rep.mpfr_full.parameter_error = e_full;
}

}  // namespace

SqVerifyReport sq_verify(const SqFamily& f, const Layer& exported, const SqVerifyOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  const SqFamilyParams& P = f.params;
  SqVerifyReport rep;
  const double e_double = sq_exported_parameter_error(f, exported, rep.error);
  if (!rep.error.empty()) return rep;
  rep.enumerated = opt.enumerate;
  if (opt.enumerate && 2 * P.d > kMaxEnumerationBits) {
    rep.error = "enumeration needs 2d ≤ " + std::to_string(kMaxEnumerationBits) + ", got d = " + std::to_string(P.d);
    return rep;
  }
  const int64_t total = opt.enumerate ? (int64_t{1} << (2 * P.d)) : opt.samples;
  rep.inputs = total;
  const FastForward fast(exported);
  // Alive until the end: the MPFR passes' progress is nested in this one.
  Progress progress("hard: verify", total);
  FastPass pass;
  rep.error = exact_and_fast(f, exported, fast, opt, total, e_double, progress, pass);
  if (!rep.error.empty()) return rep;
  rep.exact_mismatches = pass.mismatches;
  rep.first_mismatch = pass.first_mismatch;
  rep.fast = pass.acc;
  rep.fast.parameter_error = e_double;
  const int64_t checks = std::min<int64_t>(std::max<int64_t>(opt.mpfr_checks, 0), total);
  rep.precision_bits = effective_precision_bits(opt.precision);
  if (checks > 0) mpfr_passes(f, exported, opt, total, checks, e_double, rep);
  rep.ok = rep.exact_mismatches == 0 && rep.fast.ok() && rep.mpfr_exported.ok() && rep.mpfr_full.ok();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

}  // namespace mha
