#include "model/layer.hpp"

#include <Eigen/QR>

#include <cmath>

namespace mha {

Eigen::MatrixXd head_hull_directions(const Layer& layer) {
  const int m = layer.m();
  const Eigen::Index n = Eigen::Index{layer.d()} * layer.d();
  if (m < 2) return Eigen::MatrixXd(0, n);
  const auto flat = [&](int i) { return Eigen::Map<const Eigen::VectorXd>(layer.heads[i].theta.data(), n); };
  Eigen::MatrixXd differences(n, m - 1);
  for (int i = 1; i < m; ++i) differences.col(i - 1) = flat(i) - flat(0);
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(differences);
  return (qr.householderQ() * Eigen::MatrixXd::Identity(n, m - 1)).transpose();
}

const char* to_string(InputKind kind) { return kind == InputKind::boolean ? "boolean" : "gaussian"; }

bool parse_input_kind(const std::string& name, InputKind& out) {
  if (name == "boolean") return out = InputKind::boolean, true;
  if (name == "gaussian") return out = InputKind::gaussian, true;
  return false;
}

namespace {
std::string check_matrix(const MatD& a, int d, const std::string& what) {
  if (a.rows() != d || a.cols() != d)
    return what + " has shape " + std::to_string(a.rows()) + "x" + std::to_string(a.cols()) +
           ", expected " + std::to_string(d) + "x" + std::to_string(d);
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c)
      if (!std::isfinite(a(r, c)))
        return what + " has a non-finite entry at (" + std::to_string(r) + "," + std::to_string(c) + ")";
  return "";
}
}  // namespace

std::string validate_layer(const Layer& layer) {
  if (layer.m() == 0) return "the layer has no heads (m = 0)";
  const int d = layer.d();
  if (d <= 0) return "dimension d must be positive";
  for (int i = 0; i < layer.m(); ++i) {
    const std::string head = "head " + std::to_string(i);
    if (auto e = check_matrix(layer.heads[i].theta, d, head + " theta"); !e.empty()) return e;
    if (auto e = check_matrix(layer.heads[i].w, d, head + " W"); !e.empty()) return e;
  }
  return "";
}

std::string validate_instance(const Instance& inst) {
  if (auto e = validate_layer(inst.layer); !e.empty()) return e;
  if (inst.k < 1) return "sequence length k must be at least 1, got " + std::to_string(inst.k);
  if (inst.k > inst.d())
    return "k = " + std::to_string(inst.k) + " exceeds d = " + std::to_string(inst.d()) +
           " (MATH.md §2 needs k <= d)";
  return "";
}

}  // namespace mha
