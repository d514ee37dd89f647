// Uses the installed library: generate an instance, draw samples, run the fast
// and the reference (MPFR) forward pass and print their largest difference,
// then verify two stages (forward pass, stage 6's least squares) fast against
// reference within their derived bounds, as `mhalearn verify` does.
#include <mhalearn/mhalearn.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

int main() {
  mha::GenerateOptions options;
  options.d = 8, options.k = 2, options.m = 2, options.scale = 3, options.seed = 21;
  const mha::GenerateResult g = mha::generate_instance(options);
  if (!g.ok) {
    std::fprintf(stderr, "app: error: %s\n", g.error.c_str());
    return 1;
  }
  const mha::SampleOracle oracle(g.instance, /*seed=*/1);
  const mha::LabelledBatch batch = oracle.draw(0, 200, /*threads=*/2);
  const mha::FastForwardResult fast_result = mha::FastForward(g.instance.layer).run(batch.x, 2);
  if (!fast_result.status.ok()) {
    std::fprintf(stderr, "app: error: %s\n", fast_result.status.message().c_str());
    return 1;
  }
  const std::vector<double>& fast = fast_result.y;
  const std::vector<double> reference = mha::forward_mpfr_batch(g.instance.layer, batch.x, 200);
  double max_diff = 0, max_abs = 0;
  for (size_t i = 0; i < fast.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(fast[i] - reference[i]));
    max_abs = std::max(max_abs, std::abs(reference[i]));
  }
  std::printf("mhalearn %s (%s): d=%d k=%d m=%d, %lld samples\n", mha::kVersion, mha::kGitCommit, g.instance.d(),
              g.instance.k, g.instance.m(), (long long)batch.x.count);
  std::printf("max |fast - reference| = %.3e (max |F| = %.3f)\n", max_diff, max_abs);
  mha::VerifyOptions verify_options;
  verify_options.forward_samples = 64;
  bool agree = true;
  for (const mha::Comparison& c : mha::verify_instance(g.instance, {"forward", "6"}, verify_options)) {
    std::printf("verify %s: %s (slack %.2e at %s)\n", c.stage.c_str(), mha::verdict(c), c.slack,
                mha::precision_name(c.precision).c_str());
    agree = agree && c.compared > 0 && c.agree;
  }
  return agree ? 0 : 1;
}
