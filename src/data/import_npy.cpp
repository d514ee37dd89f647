#include "data/import_npy.hpp"

#include "data/instance_io.hpp"

namespace mha {

ImportResult import_attention_npy(const std::array<NpyArray, 4>& w, const std::array<std::string, 4>& names, int heads) {
  auto failure = [](std::string what) {
    ImportResult r;
    r.error = std::move(what);
    return r;
  };
  std::array<MatD, 4> m;
  for (size_t i = 0; i < 4; ++i) {
    const NpyArray& a = w[i];
    if (a.dtype != NpyDtype::float64 || a.shape.size() != 2)
      return failure(names[i] + ": expected a 2-D float64 or float32 array, got " + to_string(a.dtype) + " of shape " +
                     npy_shape_string(a.shape));
    if (a.shape[0] > kMaxInstanceD || a.shape[1] > kMaxInstanceD)
      return failure(names[i] + ": shape " + npy_shape_string(a.shape) + " exceeds d = " +
                     std::to_string(kMaxInstanceD) + ", the largest an instance file holds");
    m[i] = Eigen::Map<const MatD>(a.f64.data(), a.shape[0], a.shape[1]);
  }
  if (heads > kMaxInstanceHeads)
    return failure(std::to_string(heads) + " heads exceed " + std::to_string(kMaxInstanceHeads) +
                   ", the most an instance file holds");
  return import_attention(m[0], m[1], m[2], m[3], heads);
}

}  // namespace mha
