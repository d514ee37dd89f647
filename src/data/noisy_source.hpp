// Labels as users have them: another source's labels with Gaussian noise added.
//
// Sample n's labels become y_n + σ_n·g_n, where g_n is a (k·d)-vector of iid
// standard normals drawn from (seed, Stream::label_noise, n) — a pure function
// of the sample index, like the inputs — and σ_n = relative · rms(y_n), with
// rms(y_n) = ‖y_n‖_F/√(k·d). "Relative label noise ε" thus means that the
// noise's root mean square is ε times that of the sample's exact labels. The
// inputs pass through unchanged. Used to study the learner on noisy labels
// (`--label-noise`); the truth, when known, stays the noiseless instance.
#pragma once

#include "data/oracle.hpp"

#include <memory>

namespace mha {

class NoisySource : public SampleSource {
 public:
  // Precondition: relative ≥ 0 and finite (std::invalid_argument otherwise).
  NoisySource(std::unique_ptr<SampleSource> inner, double relative, uint64_t seed);

  int k() const override { return inner_->k(); }
  int d() const override { return inner_->d(); }
  int64_t available() const override { return inner_->available(); }
  LabelledBatch draw(uint64_t first, int64_t count, int threads) const override;

  double relative() const { return relative_; }
  const SampleSource& inner() const { return *inner_; }

 private:
  std::unique_ptr<SampleSource> inner_;
  double relative_;
  uint64_t seed_;
};

}  // namespace mha
