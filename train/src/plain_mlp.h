// A multilayer perceptron evaluated with plain loops: what rollout workers run (no libtorch in the hot loop, no
// shared state between threads), and the floor the TorchScript scorer is measured against.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace rlsched::train {

struct PlainLayer {
  int in = 0, out = 0;
  std::vector<float> weight;  // [out][in], row-major
  std::vector<float> bias;    // [out]
};

struct PlainMlp {
  std::vector<float> mean, inv_std;  // input normalisation, [in]
  std::vector<PlainLayer> layers;    // ReLU between layers, none after the last
  /// It uses a feature on the predicted run time, so the simulators must fill PendingJob::predicted_run_time in.
  bool reads_predicted_run_time = false;

  int inputs() const { return layers.empty() ? 0 : layers.front().in; }

  /// Scores `rows` rows of x (row-major, rows x inputs()) into out[rows]. `scratch` is reused between calls.
  void forward(const float* x, std::size_t rows, float* out, std::vector<float>& scratch) const {
    std::size_t widest = static_cast<std::size_t>(inputs());
    for (const PlainLayer& l : layers) widest = std::max(widest, static_cast<std::size_t>(l.out));
    scratch.resize(2 * widest);
    float* a = scratch.data();
    float* b = scratch.data() + widest;
    for (std::size_t r = 0; r < rows; ++r) {
      const float* row = x + r * static_cast<std::size_t>(inputs());
      for (int i = 0; i < inputs(); ++i) a[i] = (row[i] - mean[i]) * inv_std[i];
      for (std::size_t li = 0; li < layers.size(); ++li) {
        const PlainLayer& l = layers[li];
        const bool last = li + 1 == layers.size();
        for (int o = 0; o < l.out; ++o) {
          const float* w = l.weight.data() + static_cast<std::size_t>(o) * static_cast<std::size_t>(l.in);
          float s = l.bias[o];
          for (int i = 0; i < l.in; ++i) s += w[i] * a[i];
          b[o] = last || s > 0 ? s : 0.0f;
        }
        std::swap(a, b);
      }
      out[r] = a[0];
    }
  }
};

}  // namespace rlsched::train
