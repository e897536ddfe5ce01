// Rotary position embedding as transformers computes it: the inverse frequencies of
// ROPE_INIT_FUNCTIONS (default, linear, llama3, yarn) with their fp32 steps, and rotate_half applied
// to unpermuted q/k (pairs i and i + head_dim/2), cos/sin scaled by the attention factor.
#include <algorithm>
#include <cmath>

#include "kernels/ops_ref.h"

namespace kvgate::kernels {

namespace {

constexpr double kPi = 3.141592653589793;

// 1 / base^(2i/dim), each step rounded to fp32 as torch does: the exponent arange(0, dim, 2).float()
// / dim, the power, the reciprocal.
float default_inv_freq(double theta, int dim, int i) {
  const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
  const float power = static_cast<float>(std::pow(theta, static_cast<double>(exponent)));
  return 1.0f / power;
}

// yarn's get_mscale: 0.1 * mscale * ln(scale) + 1 for scale > 1.
double yarn_mscale(double scale, double mscale) { return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0; }

// yarn's find_correction_dim: the dimension at which `rotations` full turns fit the original context.
double correction_dim(double rotations, int dim, double base, double max_pos) {
  return (dim * std::log(max_pos / (rotations * 2.0 * kPi))) / (2.0 * std::log(base));
}

}  // namespace

float rope_inv_freq_ref(const RopeParams& p, float* inv_freq) {
  const int half = p.dim / 2;
  switch (p.type) {
    case RopeType::standard:
      for (int i = 0; i < half; ++i) inv_freq[i] = default_inv_freq(p.theta, p.dim, i);
      return 1.0f;
    case RopeType::linear: {
      const float factor = static_cast<float>(p.factor);
      for (int i = 0; i < half; ++i) inv_freq[i] = default_inv_freq(p.theta, p.dim, i) / factor;
      return 1.0f;
    }
    case RopeType::llama3: {
      // Long wavelengths are divided by factor, short ones kept, the band between interpolated.
      const double old_ctx = p.original_max_position_embeddings;
      const float low_wavelen = static_cast<float>(old_ctx / p.low_freq_factor);
      const float high_wavelen = static_cast<float>(old_ctx / p.high_freq_factor);
      const float factor = static_cast<float>(p.factor);
      for (int i = 0; i < half; ++i) {
        const float f = default_inv_freq(p.theta, p.dim, i);
        const float wavelen = static_cast<float>(2.0 * kPi) / f;
        float llama = wavelen > low_wavelen ? f / factor : f;
        const float smooth = (static_cast<float>(old_ctx) / wavelen - static_cast<float>(p.low_freq_factor)) /
                             static_cast<float>(p.high_freq_factor - p.low_freq_factor);
        const float smoothed = (1.0f - smooth) * llama / factor + smooth * llama;
        const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
        inv_freq[i] = medium ? smoothed : llama;
      }
      return 1.0f;
    }
    case RopeType::yarn: {
      const double factor = p.factor;
      double attention = p.attention_factor;
      if (attention <= 0.0)
        attention = (p.mscale != 0.0 && p.mscale_all_dim != 0.0)
                        ? yarn_mscale(factor, p.mscale) / yarn_mscale(factor, p.mscale_all_dim)
                        : yarn_mscale(factor, 1.0);
      const double max_pos = p.original_max_position_embeddings;
      double low = correction_dim(p.beta_fast, p.dim, p.theta, max_pos);
      double high = correction_dim(p.beta_slow, p.dim, p.theta, max_pos);
      if (p.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
      }
      low = std::max(low, 0.0);
      high = std::min(high, static_cast<double>(p.dim - 1));
      if (low == high) high += 0.001;  // transformers: prevent a singularity
      const float lowf = static_cast<float>(low), span = static_cast<float>(high - low);
      const float factorf = static_cast<float>(factor);
      for (int i = 0; i < half; ++i) {
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(p.dim);
        const float pos_freq = static_cast<float>(std::pow(p.theta, static_cast<double>(exponent)));
        const float extrapolation = 1.0f / pos_freq;
        const float interpolation = 1.0f / (factorf * pos_freq);
        const float ramp = std::clamp((static_cast<float>(i) - lowf) / span, 0.0f, 1.0f);
        const float extrapolation_factor = 1.0f - ramp;
        inv_freq[i] = interpolation * (1.0f - extrapolation_factor) + extrapolation * extrapolation_factor;
      }
      return static_cast<float>(attention);
    }
  }
  return 1.0f;
}

void rope_ref(float* x, int rows, int heads, int head_dim, const int* positions, const float* inv_freq,
              float attention_scaling) {
  const int half = head_dim / 2;
  for (int r = 0; r < rows; ++r) {
    const float pos = static_cast<float>(positions[r]);
    for (int i = 0; i < half; ++i) {
      const float angle = inv_freq[i] * pos;  // fp32 product, as torch's inv_freq @ position_ids
      const float c = static_cast<float>(std::cos(static_cast<double>(angle))) * attention_scaling;
      const float s = static_cast<float>(std::sin(static_cast<double>(angle))) * attention_scaling;
      for (int h = 0; h < heads; ++h) {
        float* v = x + (static_cast<std::size_t>(r) * heads + h) * head_dim;
        const float x1 = v[i], x2 = v[i + half];
        v[i] = x1 * c - x2 * s;         // x * cos + rotate_half(x) * sin, rotate_half = (-x2, x1)
        v[i + half] = x2 * c + x1 * s;
      }
    }
  }
}

}  // namespace kvgate::kernels
