#include "centre_bodies.hpp"
#include "geometry/iterative_centre.hpp"
#include "geometry/convex_body.hpp"
#include <chrono>
#include <cstdio>
using namespace mha;
int main(int argc, char** argv) {
  int d = argc > 1 ? atoi(argv[1]) : 16;
  int m = argc > 2 ? atoi(argv[2]) : 2;
  double accept = argc > 3 ? atof(argv[3]) : 0.05;
  int64_t slabs = argc > 4 ? atoll(argv[4]) : std::min<int64_t>(8LL*d*d, 1<<14);
  bool dense = argc > 5 ? atoi(argv[5]) : 1;
  auto t0 = std::chrono::steady_clock::now();
  auto b = test::token_hull_body(d, m, slabs, accept, 1e-3, 1);
  auto t1 = std::chrono::steady_clock::now();
  printf("body %.2fs rank_one %d\n", std::chrono::duration<double>(t1-t0).count(), b.body.rank_one_normals());
  centre_detail::IterativeStatistics st;
  auto it = centre_detail::iterative_centre(b.body, m-1, 2, {}, &st);
  auto t2 = std::chrono::steady_clock::now();
  printf("iterative %.2fs ok %d eig its %d (first %d) cg %d products %lld\n", std::chrono::duration<double>(t2-t1).count(), (int)it.has_value(), st.eigen_iterations, st.first_pass_iterations, st.cg_iterations, st.products);
  if (!it) return 1;
  printf("rho %.3e smax %.4e values:", it->free_basis_residual, it->largest_singular_value);
  for (int j = 0; j < it->singular_values.size(); ++j) printf(" %.6e", it->singular_values(j));
  printf("\n");
  if (!dense) return 0;
  auto c = b.body.least_squares_centre(m-1, d <= 32 ? ConvexBody::CentreMethod::dense : ConvexBody::CentreMethod::streamed, 2);
  auto t3 = std::chrono::steady_clock::now();
  printf("old %.2fs values:", std::chrono::duration<double>(t3-t2).count());
  for (int j = 0; j < it->singular_values.size(); ++j) printf(" %.6e", c.singular_values(j));
  printf(" smax %.4e\n", c.singular_values(c.singular_values.size()-1));
  Eigen::MatrixXd F = c.free_basis.transpose(), G = it->free_basis.transpose();
  double sinv = (G - F * (F.transpose() * G)).norm();
  printf("sin %.3e  x0 rel %.3e  resid old %.6e new %.6e\n", sinv, (it->x0 - c.x0).norm()/c.x0.norm(), c.weighted_residual, it->weighted_residual);
}
