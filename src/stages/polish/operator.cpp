#include "stages/polish/operator.hpp"

#include "numeric/softmax.hpp"

#include <algorithm>

namespace mha {

AttentionLinearization::AttentionLinearization(const Layer& layer, const std::vector<MatD>& xs, int threads,
                                               const Processes& processes)
    : xs_(xs),
      k_(xs.empty() ? 0 : static_cast<int>(xs.front().rows())),
      d_(layer.d()),
      m_(layer.m()),
      threads_(threads),
      processes_(processes),
      attention_(xs.size() * layer.m()),
      values_(xs.size() * layer.m()) {
  const int64_t n = static_cast<int64_t>(xs.size());
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t t = 0; t < n; ++t)
    for (int i = 0; i < m_; ++i) {
      const MatD& x = xs_[t];
      attention_[t * m_ + i] = softmax_rows<double>(x * layer.heads[i].theta * x.transpose());
      values_[t * m_ + i] = x * layer.heads[i].w;
    }
}

MatD AttentionLinearization::apply(const Eigen::VectorXd& v) const {
  MatD out;
  apply(v, out);
  return out;
}

void AttentionLinearization::apply(const Eigen::VectorXd& v, MatD& out) const {
  const int64_t n = static_cast<int64_t>(xs_.size()), dd = int64_t{d_} * d_;
  out.resize(n * k_, d_);
  out.setZero();
  // Plain variables: clang 14 cannot capture a structured binding in an OpenMP region.
  const std::pair<int64_t, int64_t> block = processes_.share(n);
  const int64_t first = block.first, end = block.second;
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t t = first; t < end; ++t) {
    const MatD& x = xs_[t];
    for (int i = 0; i < m_; ++i) {
      const MatD& a = attention_[t * m_ + i];
      const MatD logit_change = x * Eigen::Map<const MatD>(v.data() + i * dd, d_, d_) * x.transpose();
      MatD attention_change(k_, k_);
      for (int r = 0; r < k_; ++r) {
        const double mean = a.row(r).dot(logit_change.row(r));
        for (int l = 0; l < k_; ++l) attention_change(r, l) = a(r, l) * (logit_change(r, l) - mean);
      }
      out.middleRows(t * k_, k_) += attention_change * values_[t * m_ + i];
    }
  }
  gather_blocks(processes_, n, int64_t{k_} * d_, out.data());  // row-major: sample t's rows are contiguous
}

template <class PerSample>
Eigen::VectorXd AttentionLinearization::ordered_sum(const PerSample& per_sample) const {
  const int64_t n = static_cast<int64_t>(xs_.size());
  const int64_t chunks = (n + kSampleChunk - 1) / kSampleChunk;
  Eigen::MatrixXd& partial = partial_;  // column ch: chunk ch's sum (each column written below or gathered)
  partial.resize(parameters(), chunks);
  const std::pair<int64_t, int64_t> block = processes_.share(chunks);
  const int64_t first = block.first, end = block.second;
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t ch = first; ch < end; ++ch) {
    Eigen::VectorXd sum = Eigen::VectorXd::Zero(parameters());
    for (int64_t t = ch * kSampleChunk; t < std::min(n, (ch + 1) * kSampleChunk); ++t) per_sample(t, sum);
    partial.col(ch) = sum;
  }
  gather_blocks(processes_, chunks, parameters(), partial.data());  // column-major: a chunk's sum is contiguous
  Eigen::VectorXd total = Eigen::VectorXd::Zero(parameters());
  for (int64_t ch = 0; ch < chunks; ++ch) total += partial.col(ch);
  return total;
}

Eigen::VectorXd AttentionLinearization::apply_transpose(const MatD& r) const {
  const int64_t dd = int64_t{d_} * d_;
  return ordered_sum([&](int64_t t, Eigen::VectorXd& out) {
    const MatD& x = xs_[t];
    for (int i = 0; i < m_; ++i) {
      const MatD& a = attention_[t * m_ + i];
      const MatD rho = r.middleRows(t * k_, k_) * values_[t * m_ + i].transpose();  // ρ[a,l] = r_a · V_l
      MatD s(k_, k_);
      for (int row = 0; row < k_; ++row) {
        const double mean = a.row(row).dot(rho.row(row));
        for (int l = 0; l < k_; ++l) s(row, l) = a(row, l) * (rho(row, l) - mean);
      }
      Eigen::Map<MatD>(out.data() + i * dd, d_, d_) += x.transpose() * s * x;
    }
  });
}

Eigen::VectorXd AttentionLinearization::gram_diagonal() const {
  const int64_t dd = int64_t{d_} * d_;
  return ordered_sum([&](int64_t t, Eigen::VectorXd& out) {
    const MatD& x = xs_[t];
    for (int i = 0; i < m_; ++i) {
      const MatD& a = attention_[t * m_ + i];
      const MatD& v = values_[t * m_ + i];
      for (int row = 0; row < k_; ++row) {
        // centred(l, c) = A[row,l](V[l,c] − ȳ[c]); row c of centredᵀ X is g_{i,row,c}
        const Eigen::RowVectorXd y_head = a.row(row) * v;
        MatD centred(k_, d_);
        for (int l = 0; l < k_; ++l) centred.row(l) = a(row, l) * (v.row(l) - y_head);
        const MatD g = centred.transpose() * x;
        const Eigen::RowVectorXd g_squares = g.cwiseAbs2().colwise().sum();  // Σ_c g_{i,row,c}[q]²
        Eigen::Map<MatD>(out.data() + i * dd, d_, d_) +=
            x.row(row).cwiseAbs2().transpose() * g_squares;  // x_row[p]² · Σ_c g[q]²
      }
    }
  });
}

Eigen::MatrixXd AttentionLinearization::head_gram_block(int head) const {
  // H[(p,q),(p',q')] = Σ_{n,a} x_a[p] x_a[p'] G[q,q'] with G = XᵀKX (d × d): both factors
  // are symmetric, so only pairs p ≤ p' and q ≤ q' are formed, as one product AᵀB of
  // (pairs × terms)(terms × pairs) — d⁴/4 entries, a quarter of Zᵀ(KZ)'s and 4k times
  // fewer flops — then spread into the d² × d² block. Terms (sample, row) a chunk of
  // kGramSampleChunk samples at a time, in order; column chunks of fixed width run in
  // parallel (the same bytes for any thread count).
  const int64_t n = static_cast<int64_t>(xs_.size()), dd = int64_t{d_} * d_;
  const int64_t pairs = int64_t{d_} * (d_ + 1) / 2;
  std::vector<int> first_of(static_cast<size_t>(pairs)), second_of(static_cast<size_t>(pairs));
  {
    int64_t at = 0;
    for (int p = 0; p < d_; ++p)
      for (int q = p; q < d_; ++q, ++at) {
        first_of[static_cast<size_t>(at)] = p;
        second_of[static_cast<size_t>(at)] = q;
      }
  }
  const int64_t chunk_terms = std::min(n, kGramSampleChunk) * k_;
  Eigen::MatrixXd tokens(chunk_terms, pairs), weights(chunk_terms, pairs);
  Eigen::MatrixXd reduced = Eigen::MatrixXd::Zero(pairs, pairs);
  constexpr int64_t kColumnChunk = 256;
  const int64_t column_chunks = (pairs + kColumnChunk - 1) / kColumnChunk;
  for (int64_t first = 0; first < n; first += kGramSampleChunk) {
    const int64_t count = std::min(kGramSampleChunk, n - first);
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t u = 0; u < count; ++u) {
      const int64_t t = first + u;
      const MatD& x = xs_[t];
      const MatD& a = attention_[t * m_ + head];
      const MatD& v = values_[t * m_ + head];
      for (int row = 0; row < k_; ++row) {
        const Eigen::RowVectorXd y_head = a.row(row) * v;
        MatD centred(k_, d_);
        for (int l = 0; l < k_; ++l) centred.row(l) = a(row, l) * (v.row(l) - y_head);
        const MatD kx = (centred * centred.transpose()) * x;  // K X (k × d)
        const MatD g = x.transpose() * kx;                    // XᵀKX (d × d)
        const int64_t term = u * k_ + row;
        for (int64_t e = 0; e < pairs; ++e) {
          const int p = first_of[static_cast<size_t>(e)], q = second_of[static_cast<size_t>(e)];
          tokens(term, e) = x(row, p) * x(row, q);
          weights(term, e) = g(p, q);
        }
      }
    }
    const int64_t terms = count * k_;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t ch = 0; ch < column_chunks; ++ch) {
      const int64_t begin = ch * kColumnChunk, size = std::min(pairs, begin + kColumnChunk) - begin;
      reduced.middleCols(begin, size).noalias() +=
          tokens.topRows(terms).transpose() * weights.topRows(terms).middleCols(begin, size);
    }
  }
  // pair_index[p][p'] for p ≤ p' (and its mirror).
  std::vector<int64_t> pair_index(static_cast<size_t>(dd));
  for (int64_t e = 0; e < pairs; ++e) {
    const int p = first_of[static_cast<size_t>(e)], q = second_of[static_cast<size_t>(e)];
    pair_index[static_cast<size_t>(p) * d_ + q] = pair_index[static_cast<size_t>(q) * d_ + p] = e;
  }
  Eigen::MatrixXd block(dd, dd);
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int64_t col = 0; col < dd; ++col) {
    const int p2 = static_cast<int>(col / d_), q2 = static_cast<int>(col % d_);
    for (int64_t rowi = 0; rowi < dd; ++rowi) {
      const int p1 = static_cast<int>(rowi / d_), q1 = static_cast<int>(rowi % d_);
      block(rowi, col) = reduced(pair_index[static_cast<size_t>(p1) * d_ + p2], pair_index[static_cast<size_t>(q1) * d_ + q2]);
    }
  }
  return block;
}

}  // namespace mha
