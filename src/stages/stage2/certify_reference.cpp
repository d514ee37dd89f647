#include "stages/stage2/certify_reference.hpp"

#include "model/reference.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/tolerance.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>

namespace mha {

namespace {
using MatM = Mat<Mpfr>;

Mpfr smallest_singular_value(const MatM& a) {
  Eigen::JacobiSVD<Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>> svd(a);
  return svd.singularValues()(svd.singularValues().size() - 1);
}

struct Solved {
  RowVec<Mpfr> v;
  Mpfr residual;
  Mpfr y_norm;
};

Solved solve(const LayerT<Mpfr>& layer, const MatM& x, const MatM& w_hat, int row, const MatD* label_noise = nullptr) {
  MatM y = forward_reference<Mpfr>(layer, x);
  if (label_noise) y += cast_matrix<Mpfr>(*label_noise);
  const MatM b = x * w_hat;
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> bt = b.transpose();
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, 1> ya = y.row(row).transpose();
  Eigen::HouseholderQR<Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>> qr(bt);
  Solved s;
  s.v = qr.solve(ya).transpose();
  s.residual = (y.row(row) - s.v * b).norm();
  s.y_norm = y.row(row).norm();
  return s;
}
}  // namespace

ReferenceRow certify_row_reference(const Layer& layer, const MatD& x, const MatD& w_hat, int row, unsigned bits) {
  ScopedPrecision precision(bits);
  const Solved s = solve(convert_layer<Mpfr>(layer), cast_matrix<Mpfr>(x), cast_matrix<Mpfr>(w_hat), row);
  ReferenceRow out;
  out.v = to_double_matrix<Mpfr>(s.v);
  out.residual = s.residual.convert_to<double>();
  out.relative_residual = Mpfr(s.residual / s.y_norm).convert_to<double>();
  return out;
}

LemmaQuantities certification_lemma(const Layer& layer, const MatD& x, const MatD& w_hat, int row, unsigned bits,
                                    const MatD* label_noise) {
  ScopedPrecision precision(bits);
  const LayerT<Mpfr> ref = convert_layer<Mpfr>(layer);
  const MatM xm = cast_matrix<Mpfr>(x), wm = cast_matrix<Mpfr>(w_hat);
  const Solved s = solve(ref, xm, wm, row, label_noise);
  const Mpfr noise_norm = label_noise ? Mpfr(cast_matrix<Mpfr>(MatD(label_noise->row(row))).norm()) : Mpfr(0);
  const int k = static_cast<int>(x.rows()), d = layer.d(), m = layer.m();
  MatM c_matrix(k * m, d);
  Mpfr c_sq(0), deviation(0);
  LemmaQuantities q;
  for (int i = 0; i < m; ++i) {
    const MatM a = attention<Mpfr>(ref.heads[i].theta, xm);
    const RowVec<Mpfr> diff = a.row(row) - s.v;
    c_sq += diff.squaredNorm();
    deviation = std::max(deviation, Mpfr(diff.norm()));
    q.head_rows.push_back(to_double_matrix<Mpfr>(a.row(row)));
    const MatM logits = xm * ref.heads[i].theta * xm.transpose();
    std::vector<double> diffs(k);
    for (int j = 0; j < k; ++j) diffs[j] = Mpfr(logits(row, j) - logits(row, row)).convert_to<double>();
    q.head_logit_differences.push_back(diffs);
    for (int j = 0; j < k; ++j) c_matrix.row(i * k + j) = xm.row(j) * ref.heads[i].w;
  }
  const Mpfr sigma = smallest_singular_value(c_matrix);
  const Mpfr w_term = (s.v * xm * (ref.w_sum() - wm)).norm();
  // The identity y_a − v̂ᵀB = cᵀC − v̂ᵀX(Ŵ − W_Σ) + e_a is exact for exact values; the
  // MPFR values carry relative errors below 2^20·2^-bits (at most 2^20 rounded
  // terms per quantity), so the computed bound adds that much of every term.
  Mpfr magnitude = forward_reference<Mpfr>(ref, xm).row(row).norm() + s.v.norm() * (xm * wm).norm() +
                   Mpfr(sqrt(c_sq)) * c_matrix.norm() + (s.v * xm).norm() * (ref.w_sum() - wm).norm() + noise_norm;
  const Mpfr allowance = ldexp(magnitude, 20 - static_cast<int>(current_precision_bits()));
  q.deviation = deviation.convert_to<double>();
  q.c_norm = Mpfr(sqrt(c_sq)).convert_to<double>();
  q.sigma_min_c = sigma.convert_to<double>();
  q.c_matrix_norm = c_matrix.norm().convert_to<double>();
  q.w_term = w_term.convert_to<double>();
  q.residual = s.residual.convert_to<double>();
  q.noise_norm = noise_norm.convert_to<double>();
  q.bound = Mpfr((s.residual + w_term + noise_norm + allowance) / sigma).convert_to<double>();
  q.bound_without_noise = Mpfr((s.residual + w_term + allowance) / sigma).convert_to<double>();
  q.v = to_double_matrix<Mpfr>(s.v);
  return q;
}

namespace {
// The decision chain of certify_row_fast on reference values, with a band per
// comparison: `within` says a value is too close to its threshold to decide.
struct Chain {
  RowVerdict verdict = RowVerdict::certified;
  std::string undecided_at;
  bool decide(const char* name, double value, double threshold, double band, bool passes) {
    if (std::abs(value - threshold) <= band) {
      undecided_at = name;
      return false;
    }
    return passes;
  }
};

// The v_min decisions of v_min_partners (certify.hpp) on reference values, each
// entry against v_min with band dv: true when some pair passes (partners filled);
// false when none does or a decision is undecided (chain says which).
bool decide_partners(Chain& chain, const RowVec<double>& v, int row, const CertifyOptions& o, double dv,
                     std::vector<int>& partners) {
  const int k = static_cast<int>(v.size());
  if (o.v_min_rule == CertifyOptions::VMinRule::every_entry) {
    const double vmin = v.minCoeff();
    if (!chain.decide("min v vs v_min", vmin, o.v_min, dv, vmin >= o.v_min)) return false;
    partners = all_partners(k, row);
    return true;
  }
  if (!chain.decide("v_a vs v_min", v(row), o.v_min, dv, v(row) >= o.v_min)) return false;
  for (int j = 0; j < k; ++j) {
    if (j == row) continue;
    const bool passes = v(j) >= o.v_min;
    if (!chain.decide("v_j vs v_min", v(j), o.v_min, dv, passes) && !chain.undecided_at.empty()) return false;
    if (passes) partners.push_back(j);
  }
  return !partners.empty();
}

namespace tol = mha::tolerance;

// Whether the rank decides the row (`check` then holds the answer). Fast says rank
// deficient when its smallest LDLᵀ pivot is ≤ t = max diag(G)·k·2⁻⁵². Its pivots
// are ≥ λ_min(Ĝ) ≥ σ_min(B)² − E, so above t + E the fast path must not say rank
// deficient; below, its pivots are not determined by σ_min alone.
bool rank_decides(const MatM& b, double b_frobenius, double sigma, int k, int d, const RowCertificate& fast,
                  CertificationCheck& check) {
  const double gram_error = (tol::gamma(d) + tol::gamma(3LL * k + 1)) * b_frobenius * b_frobenius;
  const double max_diag = b.rowwise().squaredNorm().maxCoeff().convert_to<double>();
  const double rank_threshold = max_diag * k * 0x1p-52;
  if (!(sigma * sigma > rank_threshold + 2 * gram_error)) {
    check.reference = RowVerdict::rank_deficient;
    check.undecided = fast.verdict != RowVerdict::rank_deficient;
    if (check.undecided) check.undecided_at = "rank (σ_min(B)² within the Gram matrix's rounding of the pivot threshold)";
    return true;
  }
  return false;
}

// The row's least squares v* in MPFR, its sizes, and the bands of v* and ρ*.
struct ReferenceSolve {
  RowVec<Mpfr> v;
  double y_norm = 0, v_norm = 0, residual = 0;
  double ref_error = 0;  // the reference's own error, added to every band
  double dv = 0, drho = 0;
};

ReferenceSolve solve_reference(const MatM& b, const RowVec<Mpfr>& ya, double b_frobenius, double sigma, int k, int d,
                               unsigned bits) {
  ReferenceSolve s;
  // v* by Householder QR of Bᵀ (no squaring of the condition number).
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> bt = b.transpose();
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, 1> yt = ya.transpose();
  s.v = Eigen::HouseholderQR<Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic>>(bt).solve(yt).transpose();
  s.y_norm = ya.norm().convert_to<double>();
  s.v_norm = s.v.norm().convert_to<double>();
  s.residual = (ya - s.v * b).norm().convert_to<double>();
  // The reference's own error (QR at `bits`, relative to the sizes involved) is
  // added to every band: γ_{4kd}(2^−bits) of the terms' magnitudes.
  s.ref_error = tol::reference_relative_error(bits, 4LL * k * d) * (s.v_norm + s.y_norm + s.residual + 1.0);
  s.dv = tol::certification_solution_bound(b_frobenius, sigma, s.y_norm, s.v_norm, k, d) + s.ref_error;
  s.drho = tol::certification_residual_bound(b_frobenius, s.y_norm, s.v_norm, s.residual, s.dv, k, d) + s.ref_error;
  return s;
}

// The double values the fast decision chain compares, taken at v*, each with its band.
struct ChainValues {
  RowVec<double> vd;       // v* rounded
  double nu = 0;           // the label noise's bound (0 without noise)
  int delta_roundings = 4;
  double delta = 0, ddelta = 0;
  double relative = 0, drelative = 0;
  double sum = 0, dsum = 0;
};

ChainValues chain_values(const MatD& x, const MatD& y, int row, const CertifyOptions& o, const ReferenceSolve& s,
                         int k) {
  const double u = tol::kDoubleUnitRoundoff;
  ChainValues c;
  c.vd = to_double_matrix<Mpfr>(s.v);
  const double x_norm = cast_matrix<Mpfr>(x).norm().convert_to<double>();
  // ν (label noise, 0 without it) is the same double function of the same y on
  // both paths, so it adds no band of its own; adding it is one more rounding.
  c.nu = label_noise_bound(y, row, o);
  c.delta_roundings = c.nu > 0 ? 5 : 4;
  c.delta = (s.residual + o.w_error * (c.vd * x).norm() + c.nu) / o.sigma_min;
  c.ddelta = (s.drho + o.w_error * x_norm * s.dv) / o.sigma_min * tol::bound_evaluation_factor(4) +
             tol::gamma(c.delta_roundings) * c.delta;
  c.relative = s.residual / s.y_norm;
  c.drelative = s.drho / s.y_norm * tol::bound_evaluation_factor(2) + 2 * u * c.relative;
  c.sum = c.vd.sum();
  c.dsum = std::sqrt(double(k)) * s.dv + tol::gamma(k) * c.vd.cwiseAbs().sum() + u;
  return c;
}

// The fast path's decision chain on the reference values: residual ≤ τ, the
// v_min pairs (`partners`), v > δ and |Σv − 1| ≤ √k δ, each within its band.
Chain decide_chain(const ChainValues& c, int row, const CertifyOptions& o, double dv, int k,
                   std::vector<int>& partners) {
  Chain chain;
  if (!chain.decide("relative residual vs τ", c.relative, o.tau, c.drelative, c.relative <= o.tau)) {
    chain.verdict = RowVerdict::residual_too_large;
  } else if (!decide_partners(chain, c.vd, row, o, dv, partners)) {
    chain.verdict = RowVerdict::below_v_min;
  } else {
    double used_min = c.vd(row);
    for (int j : partners) used_min = std::min(used_min, c.vd(j));
    if (!chain.decide("min v vs δ", used_min - c.delta, 0.0, dv + c.ddelta, used_min > c.delta) ||
        !chain.decide("|Σv − 1| vs √k δ", std::abs(c.sum - 1.0) - std::sqrt(double(k)) * c.delta, 0.0,
                      c.dsum + std::sqrt(double(k)) * c.ddelta, std::abs(c.sum - 1.0) <= std::sqrt(double(k)) * c.delta))
      chain.verdict = RowVerdict::too_uncertain;
  }
  return chain;
}

// The reference slab of the pair (row, j), with the bounds on the fast slab's
// distance from it. δ* (delta_ref) is within delta_error of the fast δ̂.
ReferenceSlab reference_slab(const MatM& xm, const ReferenceSolve& s, const Mpfr& delta_ref, double delta_error,
                             int row, int j, unsigned bits) {
  const int d = static_cast<int>(xm.cols());
  const long long n = static_cast<long long>(d) * d;
  const RowVec<Mpfr>& v = s.v;
  ReferenceSlab rs;
  rs.slab.row = row;
  rs.slab.other = j;
  rs.slab.a.resize(static_cast<size_t>(n));
  double a_l1 = 0;
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c) {
      rs.slab.a[r * d + c] = Mpfr(xm(row, r) * (xm(j, c) - xm(row, c))).convert_to<double>();
      a_l1 += std::abs(rs.slab.a[r * d + c]);
    }
  const Mpfr centre = log(Mpfr(v(j) / v(row)));
  const Mpfr eta = log(Mpfr(v(j) / (v(j) - delta_ref))) + log(Mpfr(v(row) / (v(row) - delta_ref)));
  rs.slab.b = centre.convert_to<double>();
  rs.slab.eta = eta.convert_to<double>();
  const double vj = v(j).convert_to<double>(), va = v(row).convert_to<double>();
  // The MPFR values' own error: v* and δ* within ref_error, moved through ln and
  // log1p (derivatives ≤ 1/(w − δ*) each, four terms), and their last roundings.
  const double ref = 4.0 * s.ref_error / (std::min(vj, va) - Mpfr(delta_ref).convert_to<double>()) +
                     tol::reference_relative_error(bits, 8) * (std::abs(rs.slab.b) + rs.slab.eta);
  rs.centre_bound = tol::slab_centre_difference_bound(vj, va, rs.slab.b, s.dv) + ref;
  rs.width_bound =
      tol::slab_width_difference_bound(vj, va, Mpfr(delta_ref).convert_to<double>(), rs.slab.eta, s.dv, delta_error) + ref;
  rs.normal_bound = tol::slab_normal_difference_bound(a_l1, n);
  return rs;
}

// The reference's slabs (proofs/certification.md, "The body on two paths"). δ* in
// MPFR; the fast δ̂ is within ddelta of the δ above, and that δ (evaluated in
// double from ρ* and v*: the k·d products and d-term norm of ‖v X‖ and four more
// operations) within γ_{k+d+6} δ of δ*.
void add_reference_slabs(const MatD& x, const MatM& b, const RowVec<Mpfr>& ya, const ReferenceSolve& s,
                         const ChainValues& c, const std::vector<int>& partners, int row, const CertifyOptions& o,
                         unsigned bits, CertificationCheck& check) {
  const int k = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  const MatM xm = cast_matrix<Mpfr>(x);
  const Mpfr delta_ref =
      (Mpfr((ya - s.v * b).norm()) + Mpfr(o.w_error) * Mpfr((s.v * xm).norm()) + Mpfr(c.nu)) / Mpfr(o.sigma_min);
  const double delta_error = c.ddelta + tol::gamma(static_cast<long long>(k) + d + c.delta_roundings + 2) * c.delta;
  for (int j : partners) check.reference_slabs.push_back(reference_slab(xm, s, delta_ref, delta_error, row, j, bits));
}

}  // namespace

CertificationCheck compare_certification_row(const MatD& x, const MatD& y, const MatD& b_matrix, int row,
                                             const CertifyOptions& o, const RowCertificate& fast, unsigned bits) {
  CertificationCheck check;
  check.fast = fast.verdict;
  if (!tokens_distinct(x)) {  // an exact comparison of the inputs: no arithmetic to check
    check.reference = RowVerdict::duplicate_tokens;
    return check;
  }
  ScopedPrecision precision(bits);
  const int k = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  const MatM b = cast_matrix<Mpfr>(b_matrix);
  const RowVec<Mpfr> ya = cast_matrix<Mpfr>(MatD(y.row(row)));
  const double b_frobenius = b.norm().convert_to<double>();
  const double sigma = smallest_singular_value(b).convert_to<double>();
  if (rank_decides(b, b_frobenius, sigma, k, d, fast, check)) return check;
  const ReferenceSolve s = solve_reference(b, ya, b_frobenius, sigma, k, d, bits);
  check.v_bound = s.dv;
  if (fast.verdict != RowVerdict::rank_deficient && fast.verdict != RowVerdict::duplicate_tokens && fast.v.size() == k)
    check.v_difference = (cast_matrix<Mpfr>(MatD(fast.v)) - s.v).norm().convert_to<double>();
  const ChainValues c = chain_values(x, y, row, o, s, k);
  std::vector<int> partners;  // the j whose pairs pass v_min, decided with band dv
  const Chain chain = decide_chain(c, row, o, s.dv, k, partners);
  check.reference = chain.verdict;
  check.undecided = !chain.undecided_at.empty();
  check.undecided_at = chain.undecided_at;
  if (check.reference == RowVerdict::certified && !check.undecided)
    add_reference_slabs(x, b, ya, s, c, partners, row, o, bits, check);
  return check;
}

}  // namespace mha
