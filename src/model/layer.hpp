// The multi-head attention layer of MATH.md §1 and the instance that wraps it.
//
//   F(X) = Σ_i softmax_rows(X Θ_i Xᵀ) X W_i,   X in R^{k×d}, rows are tokens.
#pragma once

#include "numeric/scalar.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mha {

// Head i: attention matrix Θ_i and projection W_i, both d×d.
template <class T>
struct HeadT {
  Mat<T> theta;
  Mat<T> w;
};

template <class T>
struct LayerT {
  std::vector<HeadT<T>> heads;
  int d() const { return heads.empty() ? 0 : static_cast<int>(heads.front().theta.rows()); }
  int m() const { return static_cast<int>(heads.size()); }
  Mat<T> w_sum() const {
    Mat<T> s = Mat<T>::Zero(d(), d());
    for (const auto& h : heads) s += h.w;
    return s;
  }
};

using Head = HeadT<double>;
using Layer = LayerT<double>;

// Orthonormal directions of the heads' affine hull aff{Θ_i}, as the rows of an
// (m − 1) × d² matrix over vec(Θ) (Θ's storage order): the Householder QR of the
// differences Θ_i − Θ_1, i = 2..m. No rows for one head.
Eigen::MatrixXd head_hull_directions(const Layer& layer);

template <class T>
LayerT<T> convert_layer(const Layer& layer) {
  LayerT<T> out;
  for (const auto& h : layer.heads) out.heads.push_back({cast_matrix<T>(h.theta), cast_matrix<T>(h.w)});
  return out;
}

enum class InputKind { boolean, gaussian };
const char* to_string(InputKind kind);
// Returns false for an unknown name.
bool parse_input_kind(const std::string& name, InputKind& out);

// A learning problem: the layer, the sequence length k of its inputs and the
// input distribution. `provenance` is kept verbatim as JSON text, and so is
// `extensions`: exact data a producer attaches (e.g. the SQ-hard family's
// rationals), written under "extensions" when not empty.
struct Instance {
  Layer layer;
  int k = 0;
  InputKind inputs = InputKind::boolean;
  std::string provenance_json = "{}";
  std::string extensions_json = "{}";
  int d() const { return layer.d(); }
  int m() const { return layer.m(); }
};

// Shape and value checks shared by every entry point (file readers, generator,
// CLI). Returns an empty string when valid, else a one-line description.
std::string validate_layer(const Layer& layer);
std::string validate_instance(const Instance& inst);

}  // namespace mha
