#include "stages/stage3/proxy.hpp"

#include "util/format.hpp"
#include "geometry/clp_settings.hpp"

#include <ClpSimplex.hpp>
#include <CoinError.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace mha {

double least_consistent_factor(const ConvexBody& body, std::string& message) {
  const int n = body.dim();
  const int rows = static_cast<int>(2 * body.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Column-major matrix of the 2N rows over the n + 1 columns (θ, t).
  std::vector<std::vector<std::pair<int, double>>> columns(n + 1);
  std::vector<double> row_lo(rows), row_up(rows);
  for (size_t r = 0; r < body.size(); ++r) {
    const Slab& s = body.slabs()[r];
    if (!(s.eta > 0)) {
      message = "a slab of width 0: no common factor widens it";
      return nan;
    }
    const int lo = static_cast<int>(2 * r), up = lo + 1;
    for (int c = 0; c < n; ++c)
      if (s.a[c] != 0.0) {
        columns[c].push_back({lo, s.a[c]});
        columns[c].push_back({up, s.a[c]});
      }
    columns[n].push_back({lo, s.eta});   // ⟨a, θ⟩ + η t ≥ b
    columns[n].push_back({up, -s.eta});  // ⟨a, θ⟩ − η t ≤ b
    row_lo[lo] = s.b, row_up[lo] = COIN_DBL_MAX;
    row_lo[up] = -COIN_DBL_MAX, row_up[up] = s.b;
  }
  std::vector<CoinBigIndex> start{0};
  std::vector<int> index;
  std::vector<double> value;
  for (const auto& col : columns) {
    for (const auto& [row, v] : col) index.push_back(row), value.push_back(v);
    start.push_back(static_cast<CoinBigIndex>(index.size()));
  }
  std::vector<double> col_lo(n + 1, -body.radius()), col_up(n + 1, body.radius()), obj(n + 1, 0.0);
  col_lo[n] = 0;
  col_up[n] = COIN_DBL_MAX;
  obj[n] = 1;
  try {
    ClpSimplex model;
    model.setLogLevel(0);
    model.loadProblem(n + 1, rows, start.data(), index.data(), value.data(), col_lo.data(), col_up.data(), obj.data(),
                      row_lo.data(), row_up.data());
    factorise_without_lapack(model);
    model.dual();
    if (model.status() != 0) {
      message = format("CLP status %d on the widening LP", model.status());
      return nan;
    }
    message = format("the slabs meet in the box from %.4g times their widths", model.primalColumnSolution()[n]);
    return model.primalColumnSolution()[n];
  } catch (const CoinError& e) {
    message = "CLP error on the widening LP: " + e.message();
    return nan;
  }
}

ConvexBody widened(const ConvexBody& body, double factor) {
  ConvexBody out(body.dim(), body.radius());
  for (Slab s : body.slabs()) {
    s.eta *= factor;
    out.add(std::move(s));
  }
  return out;
}

}  // namespace mha
