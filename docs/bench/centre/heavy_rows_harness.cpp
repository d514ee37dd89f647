// One centre of token_hull_body(d, 2, min(8d², 2¹⁴), 0.05, 1e-3, 1) on 2 threads (docs/bench/centre.md,
// "The heavy-row preconditioner"; built and run by heavy_rows_run.sh): `harness D direct` computes
// the direct centre (dense at d <= 32, streamed beyond) and keeps it in /tmp/i51h/direct_dD.bin;
// `harness D` computes the iterative one and compares it with the kept direct centre.
#include "centre_bodies.hpp"
#include "geometry/iterative_centre.hpp"
#include "geometry/convex_body.hpp"
#include <sys/resource.h>
#include <chrono>
#include <cstdio>
#include <fstream>
using namespace mha;
static double cpu() { rusage u{}; getrusage(RUSAGE_SELF, &u); return u.ru_utime.tv_sec + 1e-6*u.ru_utime.tv_usec + u.ru_stime.tv_sec + 1e-6*u.ru_stime.tv_usec; }
int main(int argc, char** argv) {
  int d = atoi(argv[1]);
  bool direct = argc > 2 && std::string(argv[2]) == "direct";
  int threads = argc > 3 ? atoi(argv[3]) : 2;
  int64_t slabs = std::min<int64_t>(8LL*d*d, 1<<14);
  auto b = test::token_hull_body(d, 2, slabs, 0.05, 1e-3, 1);
  std::string file = "/tmp/i51h/direct_d" + std::to_string(d) + ".bin";
  auto t0 = std::chrono::steady_clock::now(); double c0 = cpu();
  ConvexBody::Centre c;
  centre_detail::IterativeStatistics st;
  if (direct) {
    c = b.body.least_squares_centre(1, d <= 32 ? ConvexBody::CentreMethod::dense : ConvexBody::CentreMethod::streamed, threads);
  } else {
    auto it = centre_detail::iterative_centre(b.body, 1, threads, {}, &st);
    if (!it) { printf("iterative failed\n"); return 1; }
    c = *it;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), cp = cpu() - c0;
  printf("d %d slabs %lld %s wall %.2f cpu %.2f", d, (long long)slabs, direct ? "direct" : "iterative", wall, cp);
  if (!direct) printf(" eig %d (first %d) cg %d products %lld rho %.3e", st.eigen_iterations, st.first_pass_iterations, st.cg_iterations, st.products, c.free_basis_residual);
  printf("\nvalues:"); for (int j = 0; j < 5; ++j) printf(" %.7e", c.singular_values(j)); printf("\n");
  int n = d*d;
  if (direct) {
    std::ofstream f(file, std::ios::binary);
    f.write((const char*)c.x0.data(), 8*n); f.write((const char*)c.free_basis.data(), 8*n); f.write((const char*)c.singular_values.data(), 8*5);
  } else {
    std::ifstream f(file, std::ios::binary);
    if (f) {
      Eigen::VectorXd x0(n), fb(n), sv(5);
      f.read((char*)x0.data(), 8*n); f.read((char*)fb.data(), 8*n); f.read((char*)sv.data(), 8*5);
      Eigen::VectorXd g = c.free_basis.transpose().col(0);
      double sinv = (g - fb * fb.dot(g)).norm();
      double vr = 0; for (int j = 0; j < 5; ++j) vr = std::max(vr, std::abs(c.singular_values(j)-sv(j))/sv(j));
      printf("vs direct: sin %.2e x0rel %.2e ds0 %.2e maxvalrel %.2e\n", sinv, (c.x0-x0).norm()/x0.norm(), std::abs(c.singular_values(0)-sv(0))/sv(0), vr);
    }
  }
}
