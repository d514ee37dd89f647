// The aarch64-neon row's four differing golden outputs, traced (docs/reproducibility.md,
// "Other platforms"): Eigen's norm() sums its squares in lanes as wide as the build's
// vector packets (4 doubles with AVX2, 2 with NEON, 1 without packets), so the same
// doubles give another last bit. Recomputes, from the same inputs on every build,
//   - the Gaussian golden instance's rescale Θ *= scale / ‖Θ‖_F (src/model/instance_gen.cpp;
//     `generate --d 8 --k 3 --m 2 --inputs gaussian --seed 5`: first draw, scale 6), and
//   - stage 1's reported w_sum_rel_error ‖Ŵ − W_Σ‖_F / ‖W_Σ‖_F (src/stages/stage1/record.cpp)
//     from the committed w_hat.json and inst.json (tests/golden/expected/).
// Built four ways (x86-64-v3 and aarch64, each with and without Eigen's packets):
//   F="-O2 -ffp-contract=off -DEIGEN_NO_CPUID -isystem /usr/include/eigen3 -Isrc"
//   S="scripts/platform_norm_order.cpp src/numeric/rng.cpp"
//   g++ $F -march=x86-64-v3 $S -o /tmp/avx2 && g++ $F -march=x86-64-v3 -DEIGEN_DONT_VECTORIZE $S -o /tmp/x86-none
//   aarch64-linux-gnu-g++ $F -march=armv8-a $S -o /tmp/neon        (and -DEIGEN_DONT_VECTORIZE: /tmp/arm-none)
//   /tmp/avx2 tests/golden/expected; qemu-aarch64 -L /usr/aarch64-linux-gnu /tmp/neon tests/golden/expected; ...
#include "numeric/rng.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

static MatD matrix(const nlohmann::json& rows) {
  MatD m(rows.size(), rows[0].size());
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) m(i, j) = rows[i][j].get<double>();
  return m;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: platform_norm_order tests/golden/expected\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::printf("doubles in one of Eigen's packets: %d\n", int(Eigen::internal::packet_traits<double>::size));
  for (int i = 0; i < 2; ++i) {
    MatD theta = mha::gaussian_matrix(5, mha::Stream::instance, 0, 2 * i, 8);
    const double norm = theta.norm();
    theta *= 6.0 / norm;
    std::printf("Gaussian instance, head %d: |theta|_F %.17g, scale/|theta|_F %.17g, theta[0][0] %.17g\n", i, norm,
                6.0 / norm, theta(0, 0));
  }
  const auto w_hat = nlohmann::json::parse(std::ifstream(dir + "/w_hat.json"));
  const auto inst = nlohmann::json::parse(std::ifstream(dir + "/inst.json"));
  MatD w_sum = MatD::Zero(inst["d"].get<int>(), inst["d"].get<int>());
  for (const auto& head : inst["heads"]) w_sum += matrix(head["w"]);
  const double difference = (matrix(w_hat["matrix"]) - w_sum).norm(), size = w_sum.norm();
  std::printf("stage 1: |W_hat - W_sum|_F %.17g, |W_sum|_F %.17g, w_sum_rel_error %.17g\n", difference, size,
              difference / size);
}
