#include "verify/parts.hpp"

#include "geometry/convex_body.hpp"
#include "geometry/exact_programs.hpp"
#include "numeric/multiprecision.hpp"
#include "numeric/precision.hpp"
#include "numeric/rng.hpp"
#include "numeric/softmax.hpp"
#include "numeric/tolerance.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

namespace mha {

namespace {

namespace tol = mha::tolerance;

std::string format(const char* fmt, double a = 0, double b = 0, double c = 0, double d = 0, double e = 0) {
  char line[320];
  std::snprintf(line, sizeof line, fmt, a, b, c, d, e);
  return line;
}

// ---- stage 3

}  // namespace

ReferenceMargin reference_margin(const MatD& x, const MatD& proxy, int a, unsigned bits) {
  ScopedPrecision precision(bits);
  const int k = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  const Mat<Mpfr> xm = cast_matrix<Mpfr>(x), pm = cast_matrix<Mpfr>(proxy);
  const RowVec<Mpfr> xp = xm.row(a) * pm;
  std::vector<Mpfr> logits(k);
  for (int b = 0; b < k; ++b) logits[b] = xp.dot(xm.row(b));
  ReferenceMargin r;
  for (int b = 1; b < k; ++b)
    if (logits[b] > logits[r.argmax]) r.argmax = b;
  Mpfr second = -std::numeric_limits<double>::infinity();
  for (int b = 0; b < k; ++b)
    if (b != r.argmax && logits[b] > second) second = logits[b];
  r.margin = Mpfr(logits[r.argmax] - second).convert_to<double>();
  // M = max_b |x_a||P||x_b|ᵀ in double (nonnegative terms: the factor in logit_margin_bound covers it).
  const RowVec<double> xa_p = x.row(a).cwiseAbs() * proxy.cwiseAbs();
  const double abs_max = (xa_p * x.cwiseAbs().transpose()).maxCoeff();
  r.band = tol::logit_margin_bound(abs_max, r.margin, d) +
           2.0 * tol::reference_relative_error(current_precision_bits(), 2LL * d + 2) * abs_max;
  return r;
}

ComparisonPart compare_selection(const SampleSource& source, const MatD& proxy, const MarginResult& fast,
                                 uint64_t first_sample, int64_t prefix_samples, unsigned bits) {
  ScopedPrecision precision(bits);
  const double tau = fast.report.threshold;
  const uint64_t examined = first_sample + static_cast<uint64_t>(fast.report.pilot_samples);
  const int64_t prefix = std::min<int64_t>(prefix_samples, fast.report.samples);
  std::map<std::pair<int64_t, int>, const SelectedEvent*> kept;
  for (const SelectedEvent& e : fast.selected) kept[{e.sample, e.row}] = &e;
  ComparisonPart part;
  part.name = "selection";
  part.quantity = "|μ_fast − μ_ref| per kept event; keep/drop per row";
  int decisions = 0, agreements = 0, disagreements = 0;
  // One row: the fast decision (kept or not, with its margin and argmax when kept)
  // against the reference's side of τ.
  auto decide = [&](const MatD& x, int64_t sample, int a) {
    const auto it = kept.find({sample, a});
    const SelectedEvent* event = it == kept.end() ? nullptr : it->second;
    const ReferenceMargin ref = reference_margin(x, proxy, a, bits);
    if (event) part.record(std::abs(event->margin - ref.margin), ref.band);
    else ++part.compared;
    ++decisions;
    const BandSide side = side_of(ref.margin, tau, ref.band);
    if (side == BandSide::undecided) {
      ++part.undecided;
      return;
    }
    // Decided and kept: the margin exceeds twice every logit's error, so the argmax is determined too.
    const bool agrees = (side == BandSide::above) == (event != nullptr) && (!event || event->argmax == ref.argmax);
    agreements += agrees;
    disagreements += !agrees;
    if (!agrees) part.agree = false;
  };
  if (prefix > 0) {
    const LabelledBatch batch = source.draw(examined, prefix, 1);
    for (int64_t s = 0; s < batch.x.count; ++s) {
      const MatD x = batch.x.sample(s);
      for (int a = 0; a < x.rows(); ++a) decide(x, static_cast<int64_t>(examined) + s, a);
    }
  }
  int later = 0;
  for (const SelectedEvent& e : fast.selected) {
    if (e.sample < static_cast<int64_t>(examined) + prefix) continue;  // re-decided with its sample above
    const LabelledBatch one = source.draw(static_cast<uint64_t>(e.sample), 1, 1);
    decide(one.x.sample(0), e.sample, e.row);
    ++later;
  }
  part.detail = format("τ = %.6g; %.0f rows re-decided (every row of %.0f examined samples and %.0f later kept events): ",
                       tau, decisions, double(prefix), later) +
                std::to_string(agreements) + " agree, " + std::to_string(part.undecided) + " undecided, " +
                std::to_string(disagreements) + " disagree";
  return part;
}

// ---- stages 2 and 4

namespace {

Eigen::VectorXd flat(const MatD& theta) { return Eigen::Map<const Eigen::VectorXd>(theta.data(), theta.size()); }

struct Bodies {
  ConvexBody fast, reference;
  std::vector<const ReferenceSlab*> bounds;  // per slab, in the bodies' order
  int rows_both = 0, rows_excluded = 0, slab_count_mismatch = 0;
};

BandSide membership_side(const ConvexBody& reference, const std::vector<const ReferenceSlab*>& bounds,
                         const Eigen::VectorXd& theta) {
  const long long n = reference.dim();
  const double theta_max = theta.cwiseAbs().maxCoeff();
  const Mat<Mpfr> tm = cast_matrix<Mpfr>(MatD(theta.transpose()));
  const unsigned bits = current_precision_bits();
  bool undecided = false;
  const auto& slabs = reference.slabs();
  for (size_t r = 0; r < slabs.size(); ++r) {
    Mpfr dot(0);
    double abs_dot = 0;
    for (long long c = 0; c < n; ++c) {
      dot += Mpfr(slabs[r].a[c]) * tm(0, c);
      abs_dot += std::abs(slabs[r].a[c] * theta(c));
    }
    const double value = Mpfr(abs(dot - slabs[r].b) - slabs[r].eta).convert_to<double>();
    const ReferenceSlab& rb = *bounds[r];
    const double band = tol::slab_membership_band(abs_dot, std::abs(slabs[r].b), slabs[r].eta, n, rb.centre_bound,
                                                  rb.width_bound, rb.normal_bound, theta_max) +
                        tol::reference_relative_error(bits, n + 4) * (abs_dot + std::abs(slabs[r].b) + slabs[r].eta);
    const BandSide side = side_of(value, 0.0, band);
    if (side == BandSide::above) return BandSide::above;  // outside, whatever the rest
    undecided |= side == BandSide::undecided;
  }
  const double norm = Mpfr(tm.norm()).convert_to<double>();
  const double radius = reference.radius();
  const BandSide ball = side_of(norm, radius, tol::ball_membership_band(norm, radius, n) +
                                                 tol::reference_relative_error(bits, n + 2) * norm);
  if (ball == BandSide::above) return BandSide::above;
  return undecided || ball == BandSide::undecided ? BandSide::undecided : BandSide::below;
}

}  // namespace

BandSide reference_membership(const ConvexBody& reference, const std::vector<const ReferenceSlab*>& bounds,
                              const Eigen::VectorXd& theta, unsigned bits) {
  ScopedPrecision precision(bits);
  return membership_side(reference, bounds, theta);
}

namespace {

// The band of the constraint that binds at `theta` along g, as a step along g.
struct Exit {
  double s = std::numeric_limits<double>::infinity();
  int slab = -1;  // −1: the ball
};

// How far x0 + s g stays in the fast body (double, approximate: it only places test points).
Exit exit_along(const ConvexBody& body, const Eigen::VectorXd& x0, const Eigen::VectorXd& g) {
  Exit e;
  const long long n = body.dim();
  for (size_t r = 0; r < body.slabs().size(); ++r) {
    const auto a = Eigen::Map<const Eigen::VectorXd>(body.slabs()[r].a.data(), n);
    const double c0 = a.dot(x0) - body.slabs()[r].b, c1 = a.dot(g);
    if (c1 == 0) continue;
    const double s = c1 > 0 ? (body.slabs()[r].eta - c0) / c1 : (-body.slabs()[r].eta - c0) / c1;
    if (s < e.s) e = {s, static_cast<int>(r)};
  }
  // ‖x0 + s g‖ = R with ‖g‖ = 1.
  const double p = x0.dot(g), q = x0.squaredNorm() - body.radius() * body.radius();
  const double s_ball = -p + std::sqrt(std::max(p * p - q, 0.0));
  if (s_ball < e.s) e = {s_ball, -1};
  return e;
}

ComparisonPart compare_slabs(const Bodies& bodies) {
  ComparisonPart part;
  part.name = "body slabs";
  part.quantity = "|b̂ − b*|, |η̂ − η*|, ‖â − a*‖₁ per slab";
  const auto& fs = bodies.fast.slabs();
  const auto& rs = bodies.reference.slabs();
  for (size_t r = 0; r < fs.size(); ++r) {
    const ReferenceSlab& rb = *bodies.bounds[r];
    part.record(std::abs(fs[r].b - rs[r].b), rb.centre_bound);
    part.record(std::abs(fs[r].eta - rs[r].eta), rb.width_bound);
    double l1 = 0;
    for (size_t c = 0; c < fs[r].a.size(); ++c) l1 += std::abs(fs[r].a[c] - rs[r].a[c]);
    part.record(l1 * tol::bound_evaluation_factor(static_cast<long long>(fs[r].a.size())), rb.normal_bound);
  }
  if (bodies.slab_count_mismatch > 0) part.agree = false;
  part.detail = std::to_string(fs.size()) + " slabs of " + std::to_string(bodies.rows_both) +
                " rows both paths certify; " + std::to_string(bodies.rows_excluded) +
                " rows certified on one path only or undecided (left out of both bodies)" +
                (bodies.slab_count_mismatch > 0
                     ? "; " + std::to_string(bodies.slab_count_mismatch) + " rows with a different number of slabs"
                     : "");
  return part;
}

ComparisonPart compare_membership(const Bodies& bodies, const Layer& truth, const BodyOptions& o) {
  ComparisonPart part;
  part.name = "body membership";
  part.quantity = "inside/outside per test point";
  const long long n = bodies.fast.dim();
  const int d = truth.d();
  std::vector<std::pair<std::string, Eigen::VectorXd>> points;
  for (size_t i = 0; i < truth.heads.size(); ++i) points.emplace_back("Θ_" + std::to_string(i + 1), flat(truth.heads[i].theta));
  const Eigen::VectorXd x0 = bodies.fast.least_squares_centre(std::max(truth.m() - 1, 0)).x0;
  points.emplace_back("fast centre", x0);
  // Along rays from the fast centre to the fast body's boundary: points at ∓4 and
  // ∓¼ of the binding constraint's band (the ¼ ones are meant to be undecided).
  for (int ray = 0; ray < o.boundary_rays; ++ray) {
    Eigen::VectorXd g = flat(gaussian_matrix(o.seed, Stream::verify, 100 + ray, 0, d));
    g.normalize();
    const Exit e = exit_along(bodies.fast, x0, g);
    if (!std::isfinite(e.s)) continue;
    const Eigen::VectorXd p = x0 + e.s * g;
    double band, slope;
    if (e.slab >= 0) {
      const Slab& s = bodies.reference.slabs()[e.slab];
      const auto a = Eigen::Map<const Eigen::VectorXd>(s.a.data(), n);
      const ReferenceSlab& rb = *bodies.bounds[e.slab];
      band = tol::slab_membership_band(a.cwiseAbs().dot(p.cwiseAbs()), std::abs(s.b), s.eta, n, rb.centre_bound,
                                       rb.width_bound, rb.normal_bound, p.cwiseAbs().maxCoeff());
      slope = std::abs(a.dot(g));
    } else {
      band = tol::ball_membership_band(p.norm(), bodies.fast.radius(), n);
      slope = std::abs(p.dot(g)) / p.norm();
    }
    for (double c : {-4.0, -0.25, 0.25, 4.0})
      points.emplace_back("ray " + std::to_string(ray) + format(" %+.2f band", c), p + (c * band / slope) * g);
  }
  int inside = 0, outside = 0, disagreements = 0;
  for (const auto& [name, theta] : points) {
    const bool fast_inside = bodies.fast.contains(theta);
    const BandSide ref = membership_side(bodies.reference, bodies.bounds, theta);
    ++part.compared;
    if (ref == BandSide::undecided) {
      ++part.undecided;
      continue;
    }
    (ref == BandSide::below ? inside : outside)++;
    if (fast_inside != (ref == BandSide::below)) {
      ++disagreements;
      part.agree = false;
    }
  }
  part.detail = std::to_string(part.compared) + " points (the true Θ_i, the fast centre, " +
                std::to_string(o.boundary_rays) + " rays × 4 offsets around the boundary): reference inside " +
                std::to_string(inside) + ", outside " + std::to_string(outside) + ", undecided " +
                std::to_string(part.undecided) + "; disagreements " + std::to_string(disagreements);
  return part;
}

// shift(y) = Σ_r |y_r| (Δb_r + Δη_r + R‖Δa_r‖₁) with the a priori bounds, rounded upward
// by its evaluation factor (3 N roundings of nonnegative terms).
double dual_shift(const Eigen::VectorXd& y, const Bodies& bodies, double radius) {
  double s = 0;
  for (Eigen::Index r = 0; r < y.size(); ++r) {
    const ReferenceSlab& rb = *bodies.bounds[r];
    s += std::abs(y(r)) * (rb.centre_bound + rb.width_bound + radius * rb.normal_bound);
  }
  return s * tol::bound_evaluation_factor(4 * y.size() + 4);
}

double bracket_gap(const ConvexBody::LpResult& r) { return std::max(r.upper, r.value) - std::min(r.lower, r.value); }

ComparisonPart compare_widths(const Bodies& bodies, const Layer& truth, const BodyOptions& o) {
  ComparisonPart part;
  part.name = "body widths";
  part.quantity = "|w_fast − w_ref| per direction (LP widths of the two bodies)";
  const long long n = bodies.fast.dim();
  const int d = truth.d();
  std::vector<Eigen::VectorXd> directions;
  const auto& slabs = bodies.reference.slabs();
  for (int r = 0; r < std::min<int>(o.slab_directions, static_cast<int>(slabs.size())); ++r)
    directions.push_back(Eigen::Map<const Eigen::VectorXd>(slabs[r].a.data(), n).normalized());
  if (truth.m() >= 2) directions.push_back(flat(truth.heads[0].theta - truth.heads[1].theta).normalized());
  for (int i = 0; i < o.random_directions; ++i)
    directions.push_back(flat(gaussian_matrix(o.seed, Stream::verify, 200 + i, 0, d)).normalized());
  // The exact programs (CGAL) where their stated range allows: the reference
  // body's widths exactly instead of CLP's value (the bound holds for the exact
  // optimum too: proofs/certification.md, "The body on two paths").
  const bool exact = n <= 36 && slabs.size() <= 100;
  int skipped = 0, exact_widths = 0;
  std::string skipped_why;
  for (const Eigen::VectorXd& u : directions) {
    const ConvexBody::Width f = bodies.fast.width(u), r = bodies.reference.width(u);
    const bool certified = f.max.certified && f.min.certified && r.max.certified && r.min.certified &&
                           f.max.status == ConvexBody::LpResult::optimal && f.min.status == ConvexBody::LpResult::optimal &&
                           r.max.status == ConvexBody::LpResult::optimal && r.min.status == ConvexBody::LpResult::optimal;
    if (!certified) {  // no rigorous bracket on one side: the bound would rest on an assumption
      ++skipped;
      skipped_why = f.max.message + " / " + r.max.message;
      continue;
    }
    double bound = 0;
    for (auto [fl, rl] : {std::pair{&f.max, &r.max}, std::pair{&f.min, &r.min}})
      bound += tol::lp_value_difference_bound(bracket_gap(*fl), bracket_gap(*rl), dual_shift(fl->dual, bodies, o.radius),
                                              dual_shift(rl->dual, bodies, o.radius));
    // The widths as differences of the two values, each rounded (u|w| each; the
    // exact width converted to double within 2u|w|).
    double reference_width = r.width;
    double rounding = tol::kDoubleUnitRoundoff * (std::abs(f.width) + std::abs(r.width));
    if (exact) {
      const ExactLpResult hi = exact_maximise(bodies.reference, u), lo = exact_minimise(bodies.reference, u);
      if (hi.status == ExactStatus::optimal && lo.status == ExactStatus::optimal) {
        reference_width = Rational(hi.value - lo.value).convert_to<double>();
        rounding = tol::kDoubleUnitRoundoff * (std::abs(f.width) + 2.0 * std::abs(reference_width));
        ++exact_widths;
      }
    }
    part.record(std::abs(f.width - reference_width), (bound + rounding) * tol::bound_evaluation_factor(3));
  }
  part.detail = std::to_string(part.compared) + " directions (" + std::to_string(std::min<int>(o.slab_directions, static_cast<int>(slabs.size()))) +
                " slab normals, the true hull direction, " + std::to_string(o.random_directions) + " random); reference widths " +
                (exact_widths > 0 ? "exact (CGAL) for " + std::to_string(exact_widths) : "by CLP's certified brackets") +
                (skipped > 0 ? "; " + std::to_string(skipped) + " not certified, left out: " + skipped_why : "");
  return part;
}

}  // namespace

std::vector<ComparisonPart> compare_body(const std::vector<BodyRow>& rows, const Layer& truth, const BodyOptions& o,
                                         unsigned bits) {
  ScopedPrecision precision(bits);
  const long long n = static_cast<long long>(truth.d()) * truth.d();
  Bodies bodies{ConvexBody(static_cast<int>(n), o.radius), ConvexBody(static_cast<int>(n), o.radius), {}, 0, 0, 0};
  for (const BodyRow& row : rows) {
    const bool fast = !row.fast_slabs.empty();
    const bool reference = !row.check->reference_slabs.empty();
    if (!fast && !reference) continue;
    if (fast != reference) {  // one path certifies the row (a verdict disagreement, or undecided)
      ++bodies.rows_excluded;
      continue;
    }
    if (row.fast_slabs.size() != row.check->reference_slabs.size()) {
      ++bodies.slab_count_mismatch;
      continue;
    }
    ++bodies.rows_both;
    for (size_t j = 0; j < row.fast_slabs.size(); ++j) {
      const SlabConstraint& f = row.fast_slabs[j];
      const ReferenceSlab& r = row.check->reference_slabs[j];
      bodies.fast.add(Slab{f.a, f.b, f.eta});
      bodies.reference.add(Slab{r.slab.a, r.slab.b, r.slab.eta});
      bodies.bounds.push_back(&r);
    }
  }
  std::vector<ComparisonPart> parts;
  parts.push_back(compare_slabs(bodies));
  if (bodies.fast.size() == 0) {
    parts.back().detail += "; no slab: no body to compare";
    return parts;
  }
  parts.push_back(compare_membership(bodies, truth, o));
  parts.push_back(compare_widths(bodies, truth, o));
  return parts;
}

// ---- stage 6

namespace {

using MatM = Mat<Mpfr>;

// One net point's design on a batch in MPFR, rows (n, a) = A(X_n)[a,:] X_n, with the
// entrywise bound on the fast design's distance from it.
struct ReferenceDesign {
  MatM design;
  MatD error;  // |D̂ − D| ≤ error entrywise
};

ReferenceDesign reference_design(const MatD& theta, const std::vector<MatD>& xs) {
  const Eigen::Index k = xs.front().rows(), d = theta.rows();
  ReferenceDesign r;
  r.design.resize(static_cast<Eigen::Index>(xs.size()) * k, d);
  r.error.resize(static_cast<Eigen::Index>(xs.size()) * k, d);
  const MatM tm = cast_matrix<Mpfr>(theta);
  for (size_t n = 0; n < xs.size(); ++n) {
    const MatM xm = cast_matrix<Mpfr>(xs[n]);
    const MatM logits = xm * tm * xm.transpose();
    const MatM a = softmax_rows<Mpfr>(logits);
    r.design.middleRows(n * k, k) = a * xm;
    // The fast logits fl(fl(XΘ)Xᵀ) are within γ_{2d}|X||Θ||X|ᵀ (Higham (3.13)); the
    // softmax's relative error follows (double_softmax_relative_error), then A X's.
    const MatD abs_logits = xs[n].cwiseAbs() * theta.cwiseAbs() * xs[n].cwiseAbs().transpose();
    const MatD ld = to_double_matrix<Mpfr>(logits);
    const MatD ad = to_double_matrix<Mpfr>(a);
    for (Eigen::Index row = 0; row < k; ++row) {
      const double logit_error = tol::gamma(2 * d) * abs_logits.row(row).maxCoeff() * tol::bound_evaluation_factor(2 * d + 2);
      const double span = ld.row(row).maxCoeff() - ld.row(row).minCoeff() + 2 * logit_error;
      const double eps = tol::design_entry_relative_error(
          tol::double_softmax_relative_error(logit_error, span, static_cast<int>(k)), static_cast<int>(k));
      // A|X| in double from the rounded attention (u each) and |X|: k-term sums, γ_{k+2} more.
      r.error.row(n * k + row) = eps * (ad.row(row) * xs[n].cwiseAbs()) * (1.0 + tol::gamma(k + 3));
    }
  }
  return r;
}

struct TupleReference {
  double objective = 0;
  double bound = std::numeric_limits<double>::infinity();
};

TupleReference reference_tuple(const std::vector<const ReferenceDesign*>& train, const std::vector<const ReferenceDesign*>& val,
                               const MatM& y_train, const MatM& y_val, unsigned bits) {
  const Eigen::Index m = static_cast<Eigen::Index>(train.size()), d = y_train.cols();
  const Eigen::Index rows = y_train.rows(), vrows = y_val.rows(), cols = m * d;
  MatM dt(rows, cols), dv(vrows, cols);
  MatD et(rows, cols), ev(vrows, cols);
  for (Eigen::Index i = 0; i < m; ++i) {
    dt.middleCols(i * d, d) = train[i]->design;
    dv.middleCols(i * d, d) = val[i]->design;
    et.middleCols(i * d, d) = train[i]->error;
    ev.middleCols(i * d, d) = val[i]->error;
  }
  // W* by the normal equations at `bits` (LLT of the Gram matrix).
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> gram = dt.transpose() * dt;
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> rhs = dt.transpose() * y_train;
  const Eigen::Matrix<Mpfr, Eigen::Dynamic, Eigen::Dynamic> w = gram.llt().solve(rhs);
  const MatM r_val = dv * w - y_val;
  const MatM r_train = dt * w - y_train;
  const double rho = Mpfr(r_val.norm()).convert_to<double>();
  const double y2 = Mpfr(y_val.squaredNorm()).convert_to<double>();
  const double w_fro = Mpfr(w.norm()).convert_to<double>();
  const double r_train_fro = Mpfr(r_train.norm()).convert_to<double>();
  const double y_train_fro = Mpfr(y_train.norm()).convert_to<double>();
  const double y_val_fro = std::sqrt(y2);
  TupleReference out;
  out.objective = Mpfr(r_val.squaredNorm() / y_val.squaredNorm()).convert_to<double>();
  // Singular values of the exact training design D from its rounding to double (u‖D‖_F
  // away, Weyl) by Jacobi (jacobi_singular_value_bound).
  const MatD dt_double = to_double_matrix<Mpfr>(dt);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd{Eigen::MatrixXd(dt_double)};
  const double s_hi = svd.singularValues()(0), s_lo = svd.singularValues()(cols - 1);
  const double d_fro = dt_double.norm() * (1.0 + tol::gamma(rows * cols + 2));
  const double shift = tol::jacobi_singular_value_bound(rows, cols) * s_hi + tol::kDoubleUnitRoundoff * d_fro;
  const double sigma_min = s_lo - shift, sigma_max = s_hi + shift, norm2_lower = s_hi - shift;
  const double e_train = et.norm() * tol::bound_evaluation_factor(rows * cols + 2);  // ‖D̂ − D‖₂ ≤ ‖|ΔD|‖_F
  const double e_val = ev.norm() * tol::bound_evaluation_factor(vrows * cols + 2);
  if (!(sigma_min > e_train)) return out;  // no bound: the design is too close to singular
  const double kappa = sigma_max / sigma_min;
  // W̃ (exact least squares of the fast design) against W*, then Ŵ (normal equations in double) against W̃.
  const double dw_design = tol::least_squares_perturbation_bound(kappa, e_train / norm2_lower, w_fro, r_train_fro, norm2_lower);
  const double dw_solve = tol::certification_solution_bound(d_fro + e_train, sigma_min - e_train, y_train_fro,
                                                            w_fro + dw_design, static_cast<int>(cols), static_cast<int>(rows));
  // The reference's own W error (normal equations at `bits`).
  const double dw_reference = tol::normal_equations_relative_bound(kappa, rows, cols, bits) * w_fro;
  const double dw = (dw_design + dw_solve + dw_reference) * tol::bound_evaluation_factor(3);
  // ‖R̂ − R*‖_F: the fast validation design, the W error, and fl(Σ_i D̂_i Ŵ_i − Y) (md + m + 1 roundings per entry).
  const double dv_fro = Mpfr(dv.norm()).convert_to<double>();
  const double residual_error = (e_val * (w_fro + dw) + dv_fro * dw +
                                 tol::gamma(cols + m + 1) * ((dv_fro + e_val) * (w_fro + dw) + y_val_fro)) *
                                tol::bound_evaluation_factor(10);
  out.bound = tol::objective_from_residual_bound(rho, residual_error, y2, vrows * d) +
              tol::reference_relative_error(bits, 4 * (rows + cols)) * out.objective;
  return out;
}

}  // namespace

WinnerCheck check_winner(size_t fast_winner, const std::vector<double>& reference_objectives,
                         const std::vector<double>& bounds) {
  size_t best = 0;
  for (size_t t = 1; t < reference_objectives.size(); ++t)
    if (reference_objectives[t] < reference_objectives[best]) best = t;
  if (fast_winner == best) return WinnerCheck::same;
  if (fast_winner >= reference_objectives.size()) return WinnerCheck::different;
  const double gap = reference_objectives[fast_winner] - reference_objectives[best];
  return gap <= bounds[fast_winner] + bounds[best] ? WinnerCheck::tie : WinnerCheck::different;
}

ComparisonPart compare_net(const SampleSource& source, const NetCandidates& fast, unsigned bits) {
  ScopedPrecision precision(bits);
  const int k = source.k(), d = source.d();
  const LabelledBatch train = source.draw(fast.first_sample, fast.train_samples, 1);
  const LabelledBatch val = source.draw(fast.first_sample + static_cast<uint64_t>(fast.train_samples),
                                        fast.validation_samples, 1);
  std::vector<MatD> train_xs, val_xs;
  for (int64_t n = 0; n < train.x.count; ++n) train_xs.push_back(train.x.sample(n));
  for (int64_t n = 0; n < val.x.count; ++n) val_xs.push_back(val.x.sample(n));
  const MatM y_train = cast_matrix<Mpfr>(Eigen::Map<const MatD>(train.y.data(), train.x.count * k, d));
  const MatM y_val = cast_matrix<Mpfr>(Eigen::Map<const MatD>(val.y.data(), val.x.count * k, d));
  std::vector<ReferenceDesign> train_designs, val_designs;
  for (const MatD& theta : fast.thetas) {
    train_designs.push_back(reference_design(theta, train_xs));
    val_designs.push_back(reference_design(theta, val_xs));
  }
  ComparisonPart part;
  part.name = "net";
  part.quantity = "|E_fast − E_ref| per candidate tuple (relative validation error)";
  std::vector<TupleReference> ref(fast.tuples.size());
  int not_compared = 0;
  for (size_t t = 0; t < fast.tuples.size(); ++t) {
    std::vector<const ReferenceDesign*> tr, va;
    for (int64_t p : fast.tuples[t]) {
      tr.push_back(&train_designs[p]);
      va.push_back(&val_designs[p]);
    }
    ref[t] = reference_tuple(tr, va, y_train, y_val, bits);
    if (!std::isfinite(ref[t].bound) || !std::isfinite(fast.errors[t])) {
      ++not_compared;  // no derived bound (design near singular) or no fast value
      continue;
    }
    part.record(std::abs(fast.errors[t] - ref[t].objective), ref[t].bound);
  }
  size_t best = 0;
  for (size_t t = 1; t < ref.size(); ++t)
    if (ref[t].objective < ref[best].objective) best = t;
  const size_t f = fast.winner;
  std::vector<double> objectives, bounds;
  for (const TupleReference& r : ref) {
    objectives.push_back(r.objective);
    bounds.push_back(r.bound);
  }
  const WinnerCheck check = check_winner(f, objectives, bounds);
  std::string winner;
  if (check == WinnerCheck::same) {
    winner = "the fast winner is the reference winner";
  } else if (check == WinnerCheck::tie) {
    ++part.undecided;  // a tie within the derived bounds: the ranking is not decided by the arithmetic
    winner = format("tie: the fast winner's reference error %.6e is within the bounds of the reference winner's %.6e",
                    f < ref.size() ? ref[f].objective : 0.0, ref[best].objective);
  } else {
    part.agree = false;
    winner = format("the fast winner (reference error %.6e) is not the reference winner (%.6e) beyond their bounds",
                    f < ref.size() ? ref[f].objective : 0.0, ref[best].objective);
  }
  part.detail = std::to_string(fast.tuples.size()) + " tuples of " + std::to_string(fast.thetas.size()) +
                " net points, " + std::to_string(fast.train_samples) + " + " + std::to_string(fast.validation_samples) +
                " samples; " + winner + format("; winner's E = %.6e", ref[best].objective) +
                (not_compared > 0 ? "; " + std::to_string(not_compared) + " tuples without a bound" : "");
  return part;
}

}  // namespace mha
