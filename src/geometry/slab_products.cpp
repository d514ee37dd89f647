#include "geometry/slab_products.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mha {

int64_t slab_block_rows(int64_t rows) { return std::max<int64_t>(256, (rows + 63) / 64); }

SlabProducts::SlabProducts(Eigen::MatrixXd u, Eigen::MatrixXd v, Eigen::VectorXd w, Eigen::VectorXd c, int threads,
                           const Processes& processes)
    : u_(std::move(u)), v_(std::move(v)), w_(std::move(w)), c_(std::move(c)), threads_(std::max(threads, 1)),
      processes_(processes) {
  if (v_.rows() != u_.rows() || v_.cols() != u_.cols() || w_.size() != u_.rows() || c_.size() != u_.rows())
    throw std::invalid_argument("SlabProducts: u, v (N × d), w and c (N) must agree");
  check_processes(processes_, "the slab products");
  block_rows_ = slab_block_rows(u_.rows());
  blocks_ = (u_.rows() + block_rows_ - 1) / block_rows_;
  for (int64_t k = 0; k < blocks_; ++k) {
    const auto [first, end] = block(k);
    double f = 0, cc = 0, ww = 0;
    for (int64_t r = first; r < end; ++r) {
      const double w2 = w_(r) * w_(r);
      f += w2 * u_.row(r).squaredNorm() * v_.row(r).squaredNorm();
      cc += c_(r) * c_(r);
      ww += w2;
    }
    frobenius2_ += f;
    c2_ += cc;
    w2_ += ww;
  }
}

std::pair<int64_t, int64_t> SlabProducts::block(int64_t k) const {
  const int64_t first = k * block_rows_;
  return {first, std::min<int64_t>(u_.rows(), first + block_rows_)};
}

void SlabProducts::sum_blocks(std::vector<double>& parts, int64_t per_block, double* out) const {
  gather_blocks(processes_, blocks_, per_block, parts.data());
  std::fill(out, out + per_block, 0.0);
  for (int64_t k = 0; k < blocks_; ++k) {
    const double* p = parts.data() + k * per_block;
    for (int64_t i = 0; i < per_block; ++i) out[i] += p[i];
  }
}

Eigen::MatrixXd SlabProducts::gram_times(const Eigen::MatrixXd& x) const {
  const int dd = d();
  const int64_t nn = n(), b = x.cols();
  if (x.rows() != nn) throw std::invalid_argument("SlabProducts::gram_times: x must have n rows");
  // Θ_j as d × d (Θ[p][q] at (p, q)) side by side.
  Eigen::MatrixXd thetas(dd, b * dd);
  for (int64_t j = 0; j < b; ++j)
    thetas.middleCols(j * dd, dd) =
        Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(x.col(j).data(), dd, dd);
  std::vector<double> parts(static_cast<size_t>(blocks_ * b * nn));
  // Plain variables: clang 14 cannot capture a structured binding in an OpenMP region.
  const std::pair<int64_t, int64_t> mine = my_blocks();
  const int64_t first_block = mine.first, end_block = mine.second;
#pragma omp parallel for schedule(static, 1) num_threads(threads_)
  for (int64_t k = first_block; k < end_block; ++k) {
    const auto [first, end] = block(k);
    const int64_t rows = end - first;
    const auto u = u_.middleRows(first, rows);
    const auto v = v_.middleRows(first, rows);
    const Eigen::MatrixXd t = u * thetas;  // rows × b·d: u_rᵀ Θ_j
    Eigen::MatrixXd scaled(rows, b * dd);  // w_r² (u_rᵀ Θ_j v_r) v_rᵀ
    for (int64_t j = 0; j < b; ++j)
      for (int64_t r = 0; r < rows; ++r) {
        const double w = w_(first + r);
        const double s = w * w * t.row(r).segment(j * dd, dd).dot(v.row(r));
        scaled.row(r).segment(j * dd, dd) = s * v.row(r);
      }
    const Eigen::MatrixXd g = u.transpose() * scaled;  // d × b·d
    double* out = parts.data() + k * b * nn;
    for (int64_t j = 0; j < b; ++j)
      for (int p = 0; p < dd; ++p)
        for (int q = 0; q < dd; ++q) out[j * nn + int64_t{p} * dd + q] = g(p, j * dd + q);
  }
  Eigen::MatrixXd result(nn, b);
  sum_blocks(parts, b * nn, result.data());
  products_ += 2 * b;
  return result;
}

Eigen::VectorXd SlabProducts::transpose_times_target() const {
  const int dd = d();
  const int64_t nn = n();
  std::vector<double> parts(static_cast<size_t>(blocks_ * nn));
  // Plain variables: clang 14 cannot capture a structured binding in an OpenMP region.
  const std::pair<int64_t, int64_t> mine = my_blocks();
  const int64_t first_block = mine.first, end_block = mine.second;
#pragma omp parallel for schedule(static, 1) num_threads(threads_)
  for (int64_t k = first_block; k < end_block; ++k) {
    const auto [first, end] = block(k);
    const int64_t rows = end - first;
    Eigen::MatrixXd scaled(rows, dd);
    for (int64_t r = 0; r < rows; ++r) scaled.row(r) = (w_(first + r) * c_(first + r)) * v_.row(first + r);
    const Eigen::MatrixXd g = u_.middleRows(first, rows).transpose() * scaled;
    double* out = parts.data() + k * nn;
    for (int p = 0; p < dd; ++p)
      for (int q = 0; q < dd; ++q) out[int64_t{p} * dd + q] = g(p, q);
  }
  Eigen::VectorXd result(nn);
  sum_blocks(parts, nn, result.data());
  products_ += 1;
  return result;
}

double SlabProducts::residual_squared(const Eigen::VectorXd& x) const {
  const int dd = d();
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> theta(x.data(), dd, dd);
  const Eigen::MatrixXd theta_m = theta;
  std::vector<double> parts(static_cast<size_t>(blocks_));
  // Plain variables: clang 14 cannot capture a structured binding in an OpenMP region.
  const std::pair<int64_t, int64_t> mine = my_blocks();
  const int64_t first_block = mine.first, end_block = mine.second;
#pragma omp parallel for schedule(static, 1) num_threads(threads_)
  for (int64_t k = first_block; k < end_block; ++k) {
    const auto [first, end] = block(k);
    const Eigen::MatrixXd t = u_.middleRows(first, end - first) * theta_m;
    double sum = 0;
    for (int64_t r = first; r < end; ++r) {
      const double e = w_(r) * t.row(r - first).dot(v_.row(r)) - c_(r);
      sum += e * e;
    }
    parts[static_cast<size_t>(k)] = sum;
  }
  double out = 0;
  sum_blocks(parts, 1, &out);
  products_ += 1;
  return out;
}

}  // namespace mha
