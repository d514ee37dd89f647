#include "stages/stage5/span_membership.hpp"

#include "geometry/convex_body_clp.hpp"

#include "numeric/rng.hpp"
#include "util/clock.hpp"
#include "util/format.hpp"
#include "geometry/clp_settings.hpp"

#include <ClpSimplex.hpp>
#include <CoinError.hpp>

#include <Eigen/SVD>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

namespace mha {

namespace {

Eigen::Map<const Eigen::VectorXd> normal_of(const Slab& s, int n) { return {s.a.data(), n}; }

// CLP's primal tolerance for the cut LPs: 1% of the thinnest slab in CLP's units (as
// ConvexBody's LPs: a solver setting, the answer is certified afterwards), in [10⁻¹³, 10⁻⁷].
double primal_tolerance(const ConvexBody& body) {
  double tol = 1e-7;
  for (const Slab& s : body.slabs()) {
    double amax = 0;
    for (double v : s.a) amax = std::max(amax, std::abs(v));
    if (s.eta > 0 && amax > 0) tol = std::min(tol, 0.01 * s.eta / amax);
  }
  return std::max(tol, 1e-13);
}

// The relaxation: CLP's LP max ⟨v, θ⟩ over the box and the cuts so far, warm-started
// after every batch of cuts.
class CutLp {
 public:
  CutLp(const ConvexBody& body, const Eigen::VectorXd& v) : body_(body), n_(body.dim()) {
    std::vector<double> lo(n_, -body.radius()), up(n_, body.radius()), obj(v.data(), v.data() + n_);
    std::vector<CoinBigIndex> start(n_ + 1, 0);
    model_.setLogLevel(0);
    model_.loadProblem(n_, 0, start.data(), nullptr, nullptr, lo.data(), up.data(), obj.data(), nullptr, nullptr);
    model_.setOptimizationDirection(-1.0);  // maximise
    model_.setDualTolerance(convex_body_detail::kClpDualTolerance);  // the body's LPs' setting
    model_.setPrimalTolerance(primal_tolerance(body));
  }
  void add(const std::vector<int>& rows) {
    std::vector<double> lo, up, values;
    std::vector<CoinBigIndex> starts{0};
    std::vector<int> columns;
    for (int r : rows) {
      const Slab& s = body_.slabs()[r];
      lo.push_back(s.b - s.eta);
      up.push_back(s.b + s.eta);
      for (int c = 0; c < n_; ++c)
        if (s.a[c] != 0.0) {
          columns.push_back(c);
          values.push_back(s.a[c]);
        }
      starts.push_back(static_cast<CoinBigIndex>(columns.size()));
    }
    model_.addRows(static_cast<int>(rows.size()), lo.data(), up.data(), starts.data(), columns.data(), values.data());
  }
  // Solves; false when CLP did not reach an optimum (status and its text in `why`).
  bool solve(std::string& why) {
    factorise_without_lapack(model_);
    model_.dual();
    if (model_.status() != 0) model_.primal();  // the dual simplex can stall after many added rows
    if (model_.status() == 0) return true;
    why = format("CLP status %d (secondary %d)", model_.status(), model_.secondaryStatus());
    return false;
  }
  Eigen::VectorXd point() const {
    return Eigen::Map<const Eigen::VectorXd>(model_.primalColumnSolution(), n_)
        .cwiseMax(-body_.radius())
        .cwiseMin(body_.radius());
  }

 private:
  const ConvexBody& body_;
  int n_;
  ClpSimplex model_;
};

// One optimisation, max ⟨v, θ⟩ over P, by cutting planes: the certified LP on the final
// cut set, its point and its dual spread over every slab. False (with `why`) on failure.
struct CutResult {
  ConvexBody::LpResult lp;
  Eigen::VectorXd dual;  // over every slab
  int64_t queries = 0, cuts = 0;
};

bool maximise_by_cuts(const ConvexBody& body, const Eigen::VectorXd& v, const MembershipSpanOptions& o, CutResult& out,
                      std::string& why) {
  const int n = body.dim();
  const int64_t slabs = static_cast<int64_t>(body.size());
  const int per_query = o.cuts_per_query > 0 ? o.cuts_per_query : std::max(16, n / 8);
  const int64_t max_queries = o.max_queries > 0 ? o.max_queries : slabs + 10;
  std::vector<char> cut(body.size(), 0);
  std::vector<int> cut_rows;
  try {
    CutLp lp(body, v);
    // Cutting planes on CLP's raw points, then the certified solve of the final cut set,
    // whose point the oracle is asked about once more (it may lie elsewhere on the same face).
    for (int certified_rounds = 0; certified_rounds < 4; ++certified_rounds) {
      for (;;) {
        if (out.queries == max_queries) {
          why = format("no convergence after %lld oracle queries", (long long)out.queries);
          return false;
        }
        if (!lp.solve(why)) return false;
        ++out.queries;
        const std::vector<int> rows = separating_slabs(body, lp.point(), per_query, cut);
        if (rows.empty()) break;
        for (int r : rows) cut[r] = 1, cut_rows.push_back(r);
        lp.add(rows);
      }
      ConvexBody relaxation(n, body.radius());
      for (int r : cut_rows) relaxation.add(body.slabs()[r]);
      out.lp = relaxation.maximise(v);
      if (out.lp.status != ConvexBody::LpResult::optimal) {
        why = std::string("the final relaxation's LP: ") + to_string(out.lp.status) + " (" + out.lp.message + ")";
        return false;
      }
      ++out.queries;
      const std::vector<int> rows = separating_slabs(body, out.lp.x, per_query, cut);
      if (rows.empty()) {
        out.cuts = static_cast<int64_t>(cut_rows.size());
        out.dual = Eigen::VectorXd::Zero(slabs);
        for (size_t i = 0; i < cut_rows.size(); ++i) out.dual(cut_rows[i]) = out.lp.dual(static_cast<Eigen::Index>(i));
        return true;
      }
      for (int r : rows) cut[r] = 1, cut_rows.push_back(r);
      lp.add(rows);
    }
    why = "the certified relaxation's point kept violating new slabs";
    return false;
  } catch (const CoinError& e) {
    why = "CLP error: " + e.message();
    return false;
  }
}

}  // namespace

std::vector<int> separating_slabs(const ConvexBody& body, const Eigen::VectorXd& theta, int limit,
                                  const std::vector<char>& skip) {
  const int n = body.dim();
  const double norm = theta.norm();
  std::vector<std::pair<double, int>> violated;
  for (size_t r = 0; r < body.size(); ++r) {
    if (!skip.empty() && skip[r]) continue;
    const Slab& s = body.slabs()[r];
    const Eigen::Map<const Eigen::VectorXd> a = normal_of(s, n);
    const double excess = std::abs(a.dot(theta) - s.b) - s.eta;
    if (excess > active_set_tolerance(s, norm)) violated.push_back({excess / a.norm(), static_cast<int>(r)});
  }
  const size_t keep = std::min(violated.size(), static_cast<size_t>(std::max(limit, 1)));
  std::partial_sort(violated.begin(), violated.begin() + static_cast<std::ptrdiff_t>(keep), violated.end(),
                    [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  std::vector<int> rows;
  for (size_t i = 0; i < keep; ++i) rows.push_back(violated[i].second);
  return rows;
}

Eigen::VectorXd membership_direction(uint64_t seed, int index, int n) {
  Eigen::VectorXd u(n);
  for (int e = 0; e < n; ++e) u(e) = normal_block(seed, Stream::span_directions, static_cast<uint64_t>(index), 0,
                                                  static_cast<uint64_t>(e / 4))[e % 4];
  return u / u.norm();
}

void read_span(MembershipSpan& s, int m) {
  const int n = static_cast<int>(s.base_point.size()), r = static_cast<int>(s.differences.cols());
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(s.differences, Eigen::ComputeThinU);
  s.singular_values = svd.singularValues();
  const int free = m - 1;
  s.hull_directions = svd.matrixU().leftCols(free).transpose();
  s.gap = r < m ? 0
          : s.singular_values(free) > 0 ? s.singular_values(free - 1) / s.singular_values(free)
                                        : std::numeric_limits<double>::infinity();
  if (free == 0) s.gap = 0;
  s.hull_point = s.base_point - s.hull_directions.transpose() * (s.hull_directions * s.base_point);
  const double x0_norm = s.hull_point.norm();
  s.span_basis.resize(free + (x0_norm > 0 ? 1 : 0), n);
  if (x0_norm > 0) s.span_basis.row(0) = (s.hull_point / x0_norm).transpose();
  s.span_basis.bottomRows(free) = s.hull_directions;
}

MembershipSpan span_by_membership(const ConvexBody& body, int m, const ActiveSetResult& base,
                                  const MembershipSpanOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const int n = body.dim();
  MembershipSpan s;
  const auto fail = [&](std::string why) {
    s.failure = std::move(why);
    s.seconds = seconds_since(start);
    return s;
  };
  if (m < 1) return fail("stage 5: m must be at least 1");
  if (base.status != ActiveSetResult::optimal || !base.inside_ball)
    return fail("stage 5: K has no point (its minimum-norm point: " +
                std::string(base.status == ActiveSetResult::optimal ? "outside the ball" : base.message) + ")");
  s.base_point = base.x;
  const int r = o.directions > 0 ? o.directions : m;
  if (m > 1 && r < m - 1) return fail("stage 5: fewer directions than hull dimensions");
  s.differences.resize(n, m > 1 ? r : 0);
  for (int j = 0; m > 1 && j < r; ++j) {
    MembershipOptimum opt;
    opt.direction = membership_direction(o.seed, j, n);
    CutResult hi, lo;
    std::string why;
    if (!maximise_by_cuts(body, opt.direction, o, hi, why) || !maximise_by_cuts(body, -opt.direction, o, lo, why))
      return fail(format("stage 5: direction %d: %s", j, why.c_str()));
    opt.x_max = hi.lp.x;
    opt.x_min = lo.lp.x;
    opt.value_max = opt.direction.dot(opt.x_max);
    opt.value_min = opt.direction.dot(opt.x_min);
    opt.upper_max = hi.lp.upper;
    opt.lower_min = -lo.lp.upper;
    opt.dual_max = hi.dual;
    opt.dual_min = lo.dual;
    opt.queries = hi.queries + lo.queries;
    opt.cuts_max = hi.cuts;
    opt.cuts_min = lo.cuts;
    s.oracle_queries += opt.queries;
    s.differences.col(j) = opt.x_max - opt.x_min;
    s.optima.push_back(std::move(opt));
  }
  if (m == 1) {
    s.hull_directions.resize(0, n);
    s.hull_point = s.base_point;
    s.span_basis = s.base_point.transpose().normalized();
  } else {
    read_span(s, m);
  }
  if (m > 1 && r >= m && s.gap < 10)
    s.message = format("the optimisers' differences have no clear gap after m − 1 = %d directions (s_{m−1}/s_m = %.3g): "
                       "K is not thin across the hull at the widths it was found with", m - 1, s.gap);
  s.seconds = seconds_since(start);
  return s;
}

}  // namespace mha
