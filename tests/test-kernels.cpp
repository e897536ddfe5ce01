// test-kernels: every CUDA kernel against its CPU twin, and every CPU twin against an fp64
// reference, in one table of cases (style.md §1, after llama.cpp's test-backend-ops).
//
//   test-kernels test [--cpu-only] [-o OP] [-p REGEX]   run the cases (exit 1 on any failure)
//   test-kernels list                                   list the cases
//
// A case has typed parameters, a vars() name, its own error bound (normalized mean squared error,
// NMSE = mse(out, ref) / mse(ref, 0)), fresh random inputs each run, outputs poisoned before each
// run and guard elements around them. Without --cpu-only a GPU is required: its absence fails.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "kernels/cuda_info.h"
#include "kernels/kv_store.h"
#include "kernels/float_formats.h"
#include "tests/kernel_case.h"
#include "kernels/ops_ref.h"
#if defined(KVGATE_HAVE_CUDA)
#include "kernels/decoder_cuda.h"
#include "kernels/gemv.h"
#include "kernels/sampling.h"
#endif

using namespace kcase;

namespace {

#if defined(KVGATE_HAVE_CUDA)
namespace kc = kvgate::kernels::cuda;
#endif


// ---- the reference decoder's ops (kernels/ops_ref.h): CPU twins against fp64 formulas ----------
// Cases with a CUDA kernel (decoder_cuda.h) override has_gpu() and gpu(); the others
// (softmax, flat attention, temperature sampling) run on the host in the CUDA engine as well.
namespace kk = kvgate::kernels;

struct DecoderCase : KernelCase {
  bool has_gpu() const override { return false; }
  bool gpu(std::vector<double>&) override { return false; }
};

// A GPU case: runs `launch` on a poisoned device output of n floats and copies it back.
template <class Launch>
bool gpu_floats(std::size_t n, std::vector<double>& out, Launch launch) {
#if defined(KVGATE_HAVE_CUDA)
  auto o = poisoned_device<float>(n);
  launch(o->get());
  device_sync();
  std::vector<float> h(n);
  o->download(h.data());
  out.assign(h.begin(), h.end());
  return true;
#else
  (void)n, (void)out, (void)launch;
  return false;
#endif
}

#if defined(KVGATE_HAVE_CUDA)
std::vector<std::uint16_t> bf16_bits(const std::vector<float>& v) {
  std::vector<std::uint16_t> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = kk::f32_to_bf16(v[i]);
  return b;
}
#endif
void round_bf16(std::vector<float>& v) {
  for (auto& x : v) x = kk::bf16_to_f32(kk::f32_to_bf16(x));
}


struct EmbeddingCase final : DecoderCase {
  int vocab, dim, n;
  std::vector<float> table;
  std::vector<int> ids;
  EmbeddingCase(int vocab_, int dim_, int n_) : vocab(vocab_), dim(dim_), n(n_) {}
  std::string op() const override { return "EMBEDDING"; }
  std::string vars() const override { return "vocab=" + std::to_string(vocab) + ",dim=" + std::to_string(dim) + ",n=" + std::to_string(n); }
  double max_nmse_twin() const override { return 0.0; }  // a copy
  void init(Rng& rng) override {
    table.resize(static_cast<std::size_t>(vocab) * dim);
    fill_normal(rng, table);
    round_bf16(table);  // the device table is bf16
    ids.resize(n);
    for (auto& i : ids) i = static_cast<int>(rng.below(vocab));
  }
  std::vector<double> reference() override {
    std::vector<double> r;
    for (int i : ids) r.insert(r.end(), table.begin() + static_cast<std::size_t>(i) * dim, table.begin() + static_cast<std::size_t>(i + 1) * dim);
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    Guarded<float> o(static_cast<std::size_t>(n) * dim);
    kk::embedding_ref(table.data(), dim, ids.data(), n, o.data());
    return copy_out(o, o.size(), out);
  }
  bool has_gpu() const override { return kCuda; }
  double max_nmse_gpu() const override { return 0.0; }
  bool gpu(std::vector<double>& out) override {
    return gpu_floats(static_cast<std::size_t>(n) * dim, out, [&](float* o) {
#if defined(KVGATE_HAVE_CUDA)
      auto t = to_device(bf16_bits(table));
      auto i = to_device(ids);
      kc::embedding(t->get(), dim, i->get(), n, o, nullptr);
      device_sync();
#endif
    });
  }
};

struct AddSwigluCase final : DecoderCase {
  bool swiglu;
  std::size_t n;
  std::vector<float> a, b;
  AddSwigluCase(bool swiglu_, std::size_t n_) : swiglu(swiglu_), n(n_) {}
  std::string op() const override { return swiglu ? "SWIGLU" : "ADD"; }
  std::string vars() const override { return "n=" + std::to_string(n); }
  void init(Rng& rng) override {
    a.resize(n);
    b.resize(n);
    fill_normal(rng, a, 3.0);
    fill_normal(rng, b);
  }
  std::vector<double> reference() override {
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double g = a[i];
      r[i] = swiglu ? g / (1.0 + std::exp(-g)) * b[i] : g + b[i];
    }
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    Guarded<float> o(n);
    if (swiglu) {
      kk::swiglu_ref(a.data(), b.data(), static_cast<std::int64_t>(n), o.data());
    } else {
      std::memcpy(o.data(), a.data(), n * sizeof(float));
      kk::add_ref(o.data(), b.data(), static_cast<std::int64_t>(n));
    }
    return copy_out(o, n, out);
  }
  bool has_gpu() const override { return kCuda; }
  double max_nmse_gpu() const override { return swiglu ? 1e-12 : 0.0; }  // expf's last bit
  bool gpu(std::vector<double>& out) override {
    return gpu_floats(n, out, [&](float* o) {
#if defined(KVGATE_HAVE_CUDA)
      auto da = to_device(a);
      auto db = to_device(b);
      if (swiglu) {
        kc::swiglu(da->get(), db->get(), static_cast<std::int64_t>(n), o, nullptr, nullptr);
      } else {
        KV_CUDA_CHECK(cudaMemcpy(o, da->get(), n * sizeof(float), cudaMemcpyDeviceToDevice));
        kc::add(o, db->get(), static_cast<std::int64_t>(n), nullptr);
      }
      device_sync();
#endif
    });
  }
};

struct RmsNormCase final : DecoderCase {
  int rows, dim;
  std::vector<float> x, w;
  RmsNormCase(int rows_, int dim_) : rows(rows_), dim(dim_) {}
  std::string op() const override { return "RMSNORM"; }
  std::string vars() const override { return "rows=" + std::to_string(rows) + ",dim=" + std::to_string(dim); }
  void init(Rng& rng) override {
    x.resize(static_cast<std::size_t>(rows) * dim);
    w.resize(dim);
    fill_normal(rng, x, 5.0);
    fill_normal(rng, w, 0.1, 1.0);
  }
  std::vector<double> reference() override {
    std::vector<double> r(x.size());
    for (int i = 0; i < rows; ++i) {
      double ss = 0;
      for (int j = 0; j < dim; ++j) ss += double(x[i * dim + j]) * x[i * dim + j];
      const double inv = 1.0 / std::sqrt(ss / dim + 1e-6);
      for (int j = 0; j < dim; ++j) r[i * dim + j] = w[j] * x[i * dim + j] * inv;
    }
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    Guarded<float> o(x.size());
    kk::rmsnorm_ref(x.data(), w.data(), rows, dim, 1e-6f, o.data());
    return copy_out(o, x.size(), out);
  }
  bool has_gpu() const override { return kCuda; }
  double max_nmse_gpu() const override { return 1e-13; }
  bool gpu(std::vector<double>& out) override {
    return gpu_floats(x.size(), out, [&](float* o) {
#if defined(KVGATE_HAVE_CUDA)
      auto dx = to_device(x);
      auto dw = to_device(w);
      kc::rmsnorm(dx->get(), dw->get(), rows, dim, 1e-6f, o, nullptr, nullptr);
      device_sync();
#endif
    });
  }
};

struct MatmulCase final : DecoderCase {
  int rows, k, cols;
  bool bias;
  bool bf16;  // inputs exactly representable in bf16; the GPU runs the bf16 cuBLAS GEMM (else fp32)
  std::vector<float> x, w, b;
  MatmulCase(int rows_, int k_, int cols_, bool bias_, bool bf16_ = false)
      : rows(rows_), k(k_), cols(cols_), bias(bias_), bf16(bf16_) {}
  std::string op() const override { return "MATMUL"; }
  std::string vars() const override {
    return "rows=" + std::to_string(rows) + ",k=" + std::to_string(k) + ",cols=" + std::to_string(cols) + (bias ? ",bias" : "") +
           (bf16 ? ",bf16" : "");
  }
  bool has_gpu() const override { return kCuda; }
  // Exact products (bf16 x bf16 fits fp32) and fp32 sums in another order.
  double max_nmse_gpu() const override { return 1e-11; }
  bool gpu(std::vector<double>& out) override {
    return gpu_floats(static_cast<std::size_t>(rows) * cols, out, [&](float* y) {
#if defined(KVGATE_HAVE_CUDA)
      kc::Gemm gemm;
      auto db = to_device(b);
      if (bf16) {
        auto dx = to_device(bf16_bits(x));
        auto dw = to_device(bf16_bits(w));
        gemm.run(kc::GemmType::kBf16, dx->get(), dw->get(), bias ? db->get() : nullptr, y, rows, k, cols, nullptr);
        device_sync();
      } else {
        auto dx = to_device(x);
        auto dw = to_device(w);
        gemm.run(kc::GemmType::kF32, dx->get(), dw->get(), bias ? db->get() : nullptr, y, rows, k, cols, nullptr);
        device_sync();
      }
#endif
    });
  }
  void init(Rng& rng) override {
    x.resize(static_cast<std::size_t>(rows) * k);
    w.resize(static_cast<std::size_t>(cols) * k);
    b.resize(cols);
    fill_normal(rng, x);
    fill_normal(rng, w, 1.0 / std::sqrt(double(k)));
    fill_normal(rng, b);
    if (bf16) {
      round_bf16(x);
      round_bf16(w);
    }
  }
  std::vector<double> reference() override {
    std::vector<double> r(static_cast<std::size_t>(rows) * cols);
    for (int i = 0; i < rows; ++i)
      for (int c = 0; c < cols; ++c) {
        double s = bias ? b[c] : 0.0;
        for (int j = 0; j < k; ++j) s += double(x[static_cast<std::size_t>(i) * k + j]) * w[static_cast<std::size_t>(c) * k + j];
        r[static_cast<std::size_t>(i) * cols + c] = s;
      }
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    Guarded<float> y(static_cast<std::size_t>(rows) * cols);
    // In two column ranges, as the decoder's threads split it: the result must not depend on it.
    kk::MatmulArgs a{.x = x.data(), .w = w.data(), .bias = bias ? b.data() : nullptr, .y = y.data(), .rows = rows, .k = k, .cols = cols};
    a.col_end = cols / 3;
    kk::matmul_ref(a);
    a.col_begin = cols / 3;
    a.col_end = -1;
    kk::matmul_ref(a);
    return copy_out(y, y.size(), out);
  }
};

// The decode-step GEMV (gemv.h) with its fused input step and output. Twin: the separate steps'
// twins (rmsnorm_ref, the rounding to bf16, matmul_ref, the bias, the residual add; for the SwiGLU
// output swiglu_fused_ref on the interleaved gate/up columns, then the rounding to bf16).
struct GemvCase final : DecoderCase {
  enum class In { bf16, f32, rmsnorm };
  enum class Out { f32, swiglu };
  In in;
  Out out_mode;
  int rows, k, cols;
  bool bias, accumulate;  // Out::swiglu: bias = the gate and up biases; never accumulates
  std::vector<float> x, norm, gate_bias, up_bias, w, b, y0;
  GemvCase(In in_, Out out_, int rows_, int k_, int cols_, bool bias_, bool accumulate_)
      : in(in_), out_mode(out_), rows(rows_), k(k_), cols(cols_), bias(bias_), accumulate(accumulate_ && out_ == Out::f32) {}
  std::string op() const override { return "GEMV"; }
  std::string vars() const override {
    static const char* names[] = {"bf16", "f32", "rmsnorm"};
    return std::string("in=") + names[static_cast<int>(in)] + (swiglu() ? ",out=swiglu_bf16" : "") + ",rows=" +
           std::to_string(rows) + ",k=" + std::to_string(k) + ",cols=" + std::to_string(cols) + (bias ? ",bias" : "") +
           (accumulate ? ",acc" : "");
  }
  bool swiglu() const { return out_mode == Out::swiglu; }
  std::size_t outputs() const { return static_cast<std::size_t>(rows) * (swiglu() ? cols / 2 : cols); }
  void init(Rng& rng) override {
    x.resize(static_cast<std::size_t>(rows) * k);
    fill_normal(rng, x, in == In::rmsnorm ? 5.0 : 2.0);
    if (in == In::bf16) round_bf16(x);
    norm.resize(k);
    fill_normal(rng, norm, 0.1, 1.0);
    gate_bias.resize(cols / 2);
    up_bias.resize(cols / 2);
    fill_normal(rng, gate_bias, 0.5);
    fill_normal(rng, up_bias, 0.5);
    w.resize(static_cast<std::size_t>(cols) * k);
    fill_normal(rng, w, 1.0 / std::sqrt(double(k)));
    round_bf16(w);
    b.resize(cols);
    fill_normal(rng, b);
    y0.resize(static_cast<std::size_t>(rows) * cols);
    fill_normal(rng, y0, 4.0);
  }
  // The GEMM operand: the input step in fp32 (the twins), rounded to bf16.
  std::vector<float> operand() const {
    std::vector<float> a(x);
    if (in == In::rmsnorm)
      for (int r = 0; r < rows; ++r) kk::rmsnorm_ref(x.data() + r * k, norm.data(), 1, k, 1e-6f, a.data() + r * k);
    round_bf16(a);
    return a;
  }
  // Input steps computed again in fp64 may round to the other bf16 neighbour now and then; so may
  // the SwiGLU output (sums in another order, expf's last bit).
  double max_nmse_twin() const override { return in == In::rmsnorm || swiglu() ? 1e-7 : 1e-12; }
  // Products exact, sums in another order; rmsnorm's fp64 sum order can flip a bf16 rounding of the operand.
  double max_nmse_gpu() const override { return swiglu() ? 1e-7 : in == In::rmsnorm ? 1e-9 : 1e-11; }
  std::vector<double> reference() override {
    std::vector<double> a(static_cast<std::size_t>(rows) * k);
    for (int r = 0; r < rows; ++r) {
      const float* xr = x.data() + static_cast<std::size_t>(r) * k;
      double inv = 0;
      if (in == In::rmsnorm) {
        double ss = 0;
        for (int i = 0; i < k; ++i) ss += double(xr[i]) * xr[i];
        inv = 1.0 / std::sqrt(ss / k + 1e-6);
      }
      for (int i = 0; i < k; ++i) {
        const double v = in == In::rmsnorm ? norm[i] * xr[i] * inv : xr[i];
        a[static_cast<std::size_t>(r) * k + i] = kk::bf16_to_f32(kk::f32_to_bf16(static_cast<float>(v)));
      }
    }
    std::vector<double> t(static_cast<std::size_t>(rows) * cols), out;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        double s = bias && !swiglu() ? b[c] : 0.0;
        for (int i = 0; i < k; ++i) s += a[static_cast<std::size_t>(r) * k + i] * w[static_cast<std::size_t>(c) * k + i];
        t[static_cast<std::size_t>(r) * cols + c] = (accumulate ? y0[static_cast<std::size_t>(r) * cols + c] : 0.0) + s;
      }
    if (!swiglu()) return t;
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < cols / 2; ++j) {
        const double g = t[static_cast<std::size_t>(r) * cols + 2 * j] + (bias ? double(gate_bias[j]) : 0.0);
        const double u = t[static_cast<std::size_t>(r) * cols + 2 * j + 1] + (bias ? double(up_bias[j]) : 0.0);
        out.push_back(kk::bf16_to_f32(kk::f32_to_bf16(static_cast<float>(g / (1.0 + std::exp(-g)) * u))));
      }
    return out;
  }
  bool cpu(std::vector<double>& out) override {
    const std::vector<float> a = operand();
    Guarded<float> y(static_cast<std::size_t>(rows) * cols);
    kk::matmul_ref({.x = a.data(), .w = w.data(), .bias = bias && !swiglu() ? b.data() : nullptr, .y = y.data(), .rows = rows,
                    .k = k, .cols = cols});
    if (accumulate) {  // x += t: the residual add after the projection
      std::vector<float> t(y.data(), y.data() + y.size());
      std::copy(y0.begin(), y0.end(), y.data());
      kk::add_ref(y.data(), t.data(), static_cast<std::int64_t>(t.size()));
    }
    if (!swiglu()) return copy_out(y, y.size(), out);
    Guarded<float> act(outputs());
    kk::swiglu_fused_ref(y.data(), rows, cols / 2, bias ? gate_bias.data() : nullptr, bias ? up_bias.data() : nullptr, act.data());
    for (std::size_t i = 0; i < outputs(); ++i) act.data()[i] = kk::bf16_to_f32(kk::f32_to_bf16(act.data()[i]));
    return y.guards_intact() && copy_out(act, act.size(), out);
  }
  bool has_gpu() const override { return kCuda; }
  bool gpu(std::vector<double>& out) override {
#if defined(KVGATE_HAVE_CUDA)
    auto dw = to_device(bf16_bits(w));
    auto db = to_device(b);
    auto dn = to_device(norm);
    auto dgb = to_device(gate_bias);
    auto dub = to_device(up_bias);
    auto dx = to_device(x);
    auto dxb = to_device(bf16_bits(x));
    static constexpr kc::GemvInput modes[] = {kc::GemvInput::kBf16, kc::GemvInput::kF32, kc::GemvInput::kRmsNorm};
    kc::GemvArgs args{.input = modes[static_cast<int>(in)],
                      .output = swiglu() ? kc::GemvOutput::kSwigluBf16 : kc::GemvOutput::kF32,
                      .x = in == In::bf16 ? static_cast<const void*>(dxb->get()) : dx->get(),
                      .norm = in == In::rmsnorm ? dn->get() : nullptr,
                      .eps = 1e-6f,
                      .gate_bias = swiglu() && bias ? dgb->get() : nullptr,
                      .up_bias = swiglu() && bias ? dub->get() : nullptr,
                      .w = reinterpret_cast<const kc::bf16_t*>(dw->get()),
                      .bias = bias && !swiglu() ? db->get() : nullptr,
                      .rows = rows,
                      .k = k,
                      .cols = cols,
                      .accumulate = accumulate};
    if (!swiglu())
      return gpu_floats(outputs(), out, [&](float* y) {
        if (accumulate) KV_CUDA_CHECK(cudaMemcpy(y, y0.data(), y0.size() * sizeof(float), cudaMemcpyHostToDevice));
        args.y = y;
        kc::gemv(args, nullptr);
      });
    auto yb = poisoned_device<std::uint16_t>(outputs());
    args.y_bf16 = yb->get();
    kc::gemv(args, nullptr);
    device_sync();
    std::vector<std::uint16_t> h(outputs());
    yb->download(h.data());
    out.clear();
    for (std::uint16_t v : h) out.push_back(kk::bf16_to_f32(v));
    return true;
#else
    (void)out;
    return false;
#endif
  }
};

// The inverse-frequency tables of transformers' ROPE_INIT_FUNCTIONS, from the formulas in fp64.
struct RopeFreqCase final : DecoderCase {
  kk::RopeParams p;
  std::string label;
  RopeFreqCase(std::string label_, kk::RopeParams p_) : p(p_), label(std::move(label_)) {}
  std::string op() const override { return "ROPE_FREQ"; }
  std::string vars() const override { return label + ",dim=" + std::to_string(p.dim); }
  void init(Rng&) override {}
  std::vector<double> reference() override {
    const int half = p.dim / 2;
    std::vector<double> r(half + 1);
    const double pi = 3.141592653589793;
    double attention = 1.0;
    for (int i = 0; i < half; ++i) {
      const double f = std::pow(p.theta, -2.0 * i / p.dim);
      switch (p.type) {
        case kk::RopeType::standard: r[i] = f; break;
        case kk::RopeType::linear: r[i] = f / p.factor; break;
        case kk::RopeType::llama3: {
          const double wl = 2 * pi / f, old = p.original_max_position_embeddings;
          if (wl < old / p.high_freq_factor) r[i] = f;
          else if (wl > old / p.low_freq_factor) r[i] = f / p.factor;
          else {
            const double smooth = (old / wl - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor);
            r[i] = (1 - smooth) * f / p.factor + smooth * f;
          }
          break;
        }
        case kk::RopeType::yarn: {
          const auto cdim = [&](double rot) {
            return p.dim * std::log(p.original_max_position_embeddings / (rot * 2 * pi)) / (2 * std::log(p.theta));
          };
          const double lo = std::max(0.0, std::floor(cdim(p.beta_fast)));
          double hi = std::min(double(p.dim - 1), std::ceil(cdim(p.beta_slow)));
          if (hi == lo) hi += 0.001;
          const double ramp = std::clamp((i - lo) / (hi - lo), 0.0, 1.0);
          r[i] = f / p.factor * ramp + f * (1 - ramp);
          attention = 0.1 * std::log(p.factor) + 1.0;
          break;
        }
      }
    }
    r[half] = attention;
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    Guarded<float> f(p.dim / 2);
    const float scaling = kk::rope_inv_freq_ref(p, f.data());
    out.assign(f.data(), f.data() + p.dim / 2);
    out.push_back(scaling);
    return f.guards_intact();
  }
};

// Rotation of q/k rows. The twin rounds the angle inv_freq * pos to fp32 as transformers does; the
// fp64 reference does not, so the bound allows that rounding at positions up to 4096.
struct RopeCase final : DecoderCase {
  int rows, heads, head_dim;
  std::vector<float> x, inv;
  std::vector<int> pos;
  RopeCase(int rows_, int heads_, int head_dim_) : rows(rows_), heads(heads_), head_dim(head_dim_) {}
  std::string op() const override { return "ROPE"; }
  std::string vars() const override {
    return "rows=" + std::to_string(rows) + ",heads=" + std::to_string(heads) + ",head_dim=" + std::to_string(head_dim);
  }
  double max_nmse_twin() const override { return 1e-7; }
  void init(Rng& rng) override {
    x.resize(static_cast<std::size_t>(rows) * heads * head_dim);
    fill_normal(rng, x);
    inv.resize(head_dim / 2);
    kk::rope_inv_freq_ref({.type = kk::RopeType::standard, .dim = head_dim, .theta = 10000.0}, inv.data());
    pos.resize(rows);
    for (auto& p : pos) p = static_cast<int>(rng.below(4096));
  }
  std::vector<double> reference() override {
    std::vector<double> r(x.size());
    const int half = head_dim / 2;
    for (int i = 0; i < rows; ++i)
      for (int h = 0; h < heads; ++h)
        for (int j = 0; j < half; ++j) {
          const double a = double(inv[j]) * pos[i], c = std::cos(a), s = std::sin(a);
          const std::size_t base = (static_cast<std::size_t>(i) * heads + h) * head_dim;
          r[base + j] = x[base + j] * c - x[base + j + half] * s;
          r[base + j + half] = x[base + j + half] * c + x[base + j] * s;
        }
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    Guarded<float> o(x.size());
    std::memcpy(o.data(), x.data(), x.size() * sizeof(float));
    kk::rope_ref(o.data(), rows, heads, head_dim, pos.data(), inv.data(), 1.0f);
    return copy_out(o, x.size(), out);
  }
  bool has_gpu() const override { return kCuda; }
  double max_nmse_gpu() const override { return 1e-14; }
  bool gpu(std::vector<double>& out) override {
    return gpu_floats(x.size(), out, [&](float* o) {
#if defined(KVGATE_HAVE_CUDA)
      auto di = to_device(inv);
      auto dp = to_device(pos);
      KV_CUDA_CHECK(cudaMemcpy(o, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
      kc::rope(o, rows, heads, head_dim, dp->get(), di->get(), 1.0f, nullptr);
      device_sync();
#endif
    });
  }
};

struct SoftmaxCase final : DecoderCase {
  bool log;
  int n;
  std::vector<float> x;
  SoftmaxCase(bool log_, int n_) : log(log_), n(n_) {}
  std::string op() const override { return log ? "LOG_SOFTMAX" : "SOFTMAX"; }
  std::string vars() const override { return "n=" + std::to_string(n); }
  void init(Rng& rng) override {
    x.resize(n);
    fill_normal(rng, x, 4.0);
  }
  std::vector<double> reference() override {
    double mx = -INFINITY, sum = 0;
    for (float v : x) mx = std::max(mx, double(v));
    for (float v : x) sum += std::exp(v - mx);
    std::vector<double> r(n);
    for (int i = 0; i < n; ++i) r[i] = log ? x[i] - mx - std::log(sum) : std::exp(x[i] - mx) / sum;
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    if (log) {
      Guarded<double> o(n);
      kk::log_softmax_ref(x.data(), n, o.data());
      return copy_out(o, n, out);
    }
    Guarded<float> o(n);
    kk::softmax_ref(x.data(), n, o.data());
    return copy_out(o, n, out);
  }
};

// Attention of query rows (at the last positions, as in a prefill chunk or a decode step) over K/V:
// over flat arrays (ATTENTION) and through a KV store read per KV head (ATTENTION_KV, fp32 store).
struct AttentionCase final : DecoderCase {
  bool through_store;
  int rows, ctx, heads, kv_heads, head_dim, window;
  std::vector<float> q, k, v;
  std::vector<int> pos;
  AttentionCase(bool store, int rows_, int ctx_, int heads_, int kv_heads_, int head_dim_, int window_)
      : through_store(store), rows(rows_), ctx(ctx_), heads(heads_), kv_heads(kv_heads_), head_dim(head_dim_), window(window_) {}
  std::string op() const override { return through_store ? "ATTENTION_KV" : "ATTENTION"; }
  std::string vars() const override {
    return "rows=" + std::to_string(rows) + ",ctx=" + std::to_string(ctx) + ",heads=" + std::to_string(heads) + "/" +
           std::to_string(kv_heads) + ",d=" + std::to_string(head_dim) + (window ? ",window=" + std::to_string(window) : "");
  }
  void init(Rng& rng) override {
    q.resize(static_cast<std::size_t>(rows) * heads * head_dim);
    k.resize(static_cast<std::size_t>(ctx) * kv_heads * head_dim);  // [ctx][kv_heads][d], as appended
    v.resize(k.size());
    fill_normal(rng, q, 2.0);
    fill_normal(rng, k);
    fill_normal(rng, v);
    pos.resize(rows);
    for (int i = 0; i < rows; ++i) pos[i] = ctx - rows + i;
  }
  std::vector<double> reference() override {
    const int d = head_dim, group = heads / kv_heads;
    std::vector<double> r(q.size());
    for (int i = 0; i < rows; ++i)
      for (int h = 0; h < heads; ++h) {
        const int kvh = h / group, b = window ? std::max(0, pos[i] - window + 1) : 0;
        std::vector<double> s;
        double mx = -INFINITY;
        for (int t = b; t <= pos[i]; ++t) {
          double dot = 0;
          for (int j = 0; j < d; ++j)
            dot += double(q[(static_cast<std::size_t>(i) * heads + h) * d + j]) * k[(static_cast<std::size_t>(t) * kv_heads + kvh) * d + j];
          s.push_back(dot / std::sqrt(double(d)));
          mx = std::max(mx, s.back());
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int j = 0; j < d; ++j) {
          double acc = 0;
          for (int t = b; t <= pos[i]; ++t) acc += s[t - b] * v[(static_cast<std::size_t>(t) * kv_heads + kvh) * d + j];
          r[(static_cast<std::size_t>(i) * heads + h) * d + j] = acc / sum;
        }
      }
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    const int d = head_dim, group = heads / kv_heads;
    const float scale = static_cast<float>(1.0 / std::sqrt(double(d)));
    Guarded<float> o(q.size());
    if (through_store) {
      auto store = kk::make_kv_store({"fp32", {}}, {.layers = 2, .kv_heads = kv_heads, .head_dim = d});
      for (int t = 0; t < ctx; ++t)
        for (int layer = 0; layer < 2; ++layer) {
          const std::size_t off = static_cast<std::size_t>(t) * kv_heads * d;
          store->append(layer, (layer ? k.data() : v.data()) + off, (layer ? v.data() : k.data()) + off);
        }
      kk::AttentionWorkspace ws;
      kk::attention_kv_ref({.q = q.data(), .out = o.data(), .q_pos = pos.data(), .rows = rows, .heads = heads,
                            .kv_heads = kv_heads, .head_dim = d, .layer = 1, .window = window, .scale = scale},
                           *store, ws);
    } else {
      // Flat per-head K/V, as a store read returns them.
      std::vector<float> kh(static_cast<std::size_t>(ctx) * d), vh(kh.size()), scores(static_cast<std::size_t>(rows) * ctx);
      for (int kvh = 0; kvh < kv_heads; ++kvh) {
        for (int t = 0; t < ctx; ++t)
          for (int j = 0; j < d; ++j) {
            kh[static_cast<std::size_t>(t) * d + j] = k[(static_cast<std::size_t>(t) * kv_heads + kvh) * d + j];
            vh[static_cast<std::size_t>(t) * d + j] = v[(static_cast<std::size_t>(t) * kv_heads + kvh) * d + j];
          }
        kk::attention_rows_ref({.q = q.data(), .k = kh.data(), .v = vh.data(), .out = o.data(), .q_pos = pos.data(),
                                .rows = rows, .ctx = ctx, .first = 0, .head_dim = d, .group = group,
                                .q_stride = heads * d, .q_offset = kvh * group * d, .out_stride = heads * d,
                                .window = window, .scale = scale, .scores = scores.data()});
      }
    }
    return copy_out(o, q.size(), out);
  }
};

// The sampler against a plain re-statement of its documented rule, over many uniform draws.
struct SampleCase final : DecoderCase {
  int n;
  kk::SamplerParams p;
  bool nans;  // every 5th logit NaN (from id 3): after every number, weight 0
  std::vector<float> logits;
  std::vector<double> us;
  SampleCase(int n_, kk::SamplerParams p_, bool nans_ = false) : n(n_), p(p_), nans(nans_) {}
  std::string op() const override { return "SAMPLE"; }
  std::string vars() const override {
    char b[96];
    std::snprintf(b, sizeof b, "n=%d,t=%g,top_p=%g,top_k=%d%s", n, p.temperature, p.top_p, p.top_k, nans ? ",nan" : "");
    return b;
  }
  double max_nmse_twin() const override { return 0.0; }  // the same ids
  void init(Rng& rng) override {
    logits.resize(n);
    fill_normal(rng, logits, 2.0);
    logits[n / 2] = logits[n / 3];  // a tie
    logits[1] = -0.0f;              // and -0 against +0, equal to the host's comparison
    logits[2] = 0.0f;
    if (nans)
      for (int i = 3; i < n; i += 5) logits[i] = kNaN;
    us.resize(n > 10000 ? 33 : 257);
    for (auto& u : us) u = rng.uniform();
  }
  std::vector<double> reference() override {
    std::vector<std::pair<float, int>> c;
    for (int i = 0; i < n; ++i) c.push_back({logits[i], i});
    std::stable_sort(c.begin(), c.end(), [](auto& a, auto& b) {
      const bool na = std::isnan(a.first), nb = std::isnan(b.first);
      return na != nb ? nb : !na && a.first > b.first;
    });
    std::vector<double> r;
    for (double u : us) {
      if (p.temperature <= 0) {
        r.push_back(c[0].second);
        continue;
      }
      const std::size_t kept0 = p.top_k > 0 ? std::min<std::size_t>(p.top_k, c.size()) : c.size();
      std::vector<double> w;
      double sum = 0;
      for (std::size_t i = 0; i < kept0; ++i)
        sum += w.emplace_back(std::isnan(c[i].first) ? 0.0 : std::exp((double(c[i].first) - c[0].first) / p.temperature));
      std::size_t kept = kept0;
      if (p.top_p < 1) {
        double cum = 0;
        for (kept = 0; kept < kept0;) {
          cum += w[kept++] / sum;
          if (cum >= p.top_p) break;
        }
      }
      double mass = 0;
      for (std::size_t i = 0; i < kept; ++i) mass += w[i];
      double cum = 0;
      int pick = c[kept - 1].second;
      for (std::size_t i = 0; i < kept; ++i)
        if ((cum += w[i]) > u * mass) {
          pick = c[i].second;
          break;
        }
      r.push_back(pick);
    }
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    kk::SamplerWorkspace ws;
    out.clear();
    for (double u : us) out.push_back(kk::sample_ref(logits.data(), n, p, u, ws));
    return true;
  }
  // Greedy runs the engine's argmax_rows_chunked (ARGMAX_CHUNKED has the NaN and tie patterns);
  // temperature sampling the engine's sample_rows, every draw a row (16 rows a launch).
  bool has_gpu() const override { return kCuda; }
  double max_nmse_gpu() const override { return 0.0; }
  bool gpu(std::vector<double>& out) override {
#if defined(KVGATE_HAVE_CUDA)
    if (p.temperature > 0.0) {
      out.clear();
      for (std::size_t u0 = 0; u0 < us.size(); u0 += 16) {
        const int m = static_cast<int>(std::min<std::size_t>(16, us.size() - u0));
        std::vector<float> rows_logits;
        std::vector<kc::SampleRow> rows(m);
        for (int r = 0; r < m; ++r) {
          rows_logits.insert(rows_logits.end(), logits.begin(), logits.end());
          rows[r] = {p, us[u0 + r]};
        }
        auto dl = to_device(rows_logits);
        auto ids = poisoned_device<int>(m);
        const std::size_t bytes = kc::sample_workspace_bytes(m, n);
        auto ws = poisoned_device<char>(bytes);
        kc::sample_rows(dl->get(), n, rows.data(), m, ids->get(), ws->get(), bytes, nullptr);
        device_sync();
        std::vector<int> h(m);
        ids->download(h.data());
        out.insert(out.end(), h.begin(), h.end());
      }
      return true;
    }
    // Ties: copy the best logit to a later index, so "lowest id wins" is checked.
    std::vector<float> l = logits;
    int best = 0;
    for (int i = 1; i < n; ++i)
      if (l[i] > l[best]) best = i;
    if (best + 1 < n) l[n - 1] = l[best];
    auto dl = to_device(l);
    auto ids = poisoned_device<int>(1);
    auto ws = poisoned_device<char>(kc::argmax_workspace_bytes(1));
    kc::argmax_rows_chunked(dl->get(), 1, n, ids->get(), ws->get(), nullptr);
    device_sync();
    int id = -1;
    ids->download(&id);
    out.assign(us.size(), id);
    return true;
#else
    (void)out;
    return false;
#endif
  }
};

void add_decoder_cases(std::vector<std::unique_ptr<KernelCase>>& cases) {
  cases.push_back(std::make_unique<EmbeddingCase>(515, 64, 33));
  for (std::size_t n : {7u, 4099u}) {
    cases.push_back(std::make_unique<AddSwigluCase>(false, n));
    cases.push_back(std::make_unique<AddSwigluCase>(true, n));
  }
  // Qwen3-8B's hidden size, and a row of more than 8 elements a thread of a 1024-thread block.
  for (auto [r, d] : {std::pair{1, 64}, {17, 256}, {96, 16}, {5, 4096}, {3, 9000}}) cases.push_back(std::make_unique<RmsNormCase>(r, d));
  for (auto [r, k, c] : {std::tuple{1, 256, 768}, {5, 100, 37}, {64, 256, 515}, {3, 1024, 64}})
    for (bool b : {false, true}) cases.push_back(std::make_unique<MatmulCase>(r, k, c, b));
  for (auto [r, k, c] : {std::tuple{1, 4096, 1024}, {7, 256, 515}, {200, 512, 96}})
    cases.push_back(std::make_unique<MatmulCase>(r, k, c, true, true));
  // The decode step's shapes (Qwen3-8B: qkv, o, gate_up, down at 1-2 rows), then small ragged ones.
  using In = GemvCase::In;
  using Out = GemvCase::Out;
  for (const auto& [in, o, r, k, c, bias, acc] :
       {std::tuple{In::rmsnorm, Out::f32, 1, 4096, 6144, false, false}, {In::bf16, Out::f32, 1, 4096, 4096, false, true},
        {In::rmsnorm, Out::swiglu, 1, 4096, 24576, false, false}, {In::rmsnorm, Out::swiglu, 2, 4096, 24576, true, false},
        {In::bf16, Out::f32, 1, 12288, 4096, false, true}, {In::bf16, Out::f32, 2, 12288, 4096, true, true},
        {In::bf16, Out::f32, 3, 256, 37, true, false}, {In::f32, Out::f32, 4, 1000, 515, true, true},
        {In::rmsnorm, Out::f32, 4, 136, 1, true, true}, {In::f32, Out::swiglu, 3, 64, 14, true, false},
        {In::bf16, Out::swiglu, 4, 1000, 2, false, false}, {In::bf16, Out::f32, 1, 8, 3, false, true}})
    cases.push_back(std::make_unique<GemvCase>(in, o, r, k, c, bias, acc));
  cases.push_back(std::make_unique<RopeFreqCase>("default", kk::RopeParams{.dim = 128, .theta = 1e6}));
  cases.push_back(std::make_unique<RopeFreqCase>("linear", kk::RopeParams{.type = kk::RopeType::linear, .dim = 64, .theta = 1e4, .factor = 2}));
  cases.push_back(std::make_unique<RopeFreqCase>(
      "llama3", kk::RopeParams{.type = kk::RopeType::llama3, .dim = 128, .theta = 5e5, .factor = 8, .low_freq_factor = 1,
                               .high_freq_factor = 4, .original_max_position_embeddings = 8192}));
  cases.push_back(std::make_unique<RopeFreqCase>(
      "yarn", kk::RopeParams{.type = kk::RopeType::yarn, .dim = 128, .theta = 1e6, .factor = 4,
                             .original_max_position_embeddings = 32768}));
  cases.push_back(std::make_unique<RopeCase>(9, 4, 64));
  cases.push_back(std::make_unique<RopeCase>(1, 2, 128));
  for (int n : {5, 151936}) {
    cases.push_back(std::make_unique<SoftmaxCase>(false, n));
    cases.push_back(std::make_unique<SoftmaxCase>(true, n));
  }
  for (bool store : {false, true}) {
    cases.push_back(std::make_unique<AttentionCase>(store, 1, 1, 4, 2, 16, 0));
    cases.push_back(std::make_unique<AttentionCase>(store, 1, 300, 8, 2, 64, 0));
    cases.push_back(std::make_unique<AttentionCase>(store, 24, 100, 4, 1, 32, 0));
    cases.push_back(std::make_unique<AttentionCase>(store, 24, 100, 4, 4, 16, 16));
  }
  cases.push_back(std::make_unique<SampleCase>(100, kk::SamplerParams{}));
  cases.push_back(std::make_unique<SampleCase>(100, kk::SamplerParams{.temperature = 1.0}));
  cases.push_back(std::make_unique<SampleCase>(1000, kk::SamplerParams{.temperature = 0.7, .top_p = 0.9}));
  cases.push_back(std::make_unique<SampleCase>(1000, kk::SamplerParams{.temperature = 1.3, .top_p = 0.95, .top_k = 40}));
  cases.push_back(std::make_unique<SampleCase>(50, kk::SamplerParams{.temperature = 2.0, .top_k = 1}));
  // Qwen3's vocabulary: the device sampler's sequential passes over many shared-memory chunks.
  cases.push_back(std::make_unique<SampleCase>(151936, kk::SamplerParams{.temperature = 0.7}));
  cases.push_back(std::make_unique<SampleCase>(151936, kk::SamplerParams{.temperature = 1.0, .top_p = 0.9}));
  cases.push_back(std::make_unique<SampleCase>(151936, kk::SamplerParams{.temperature = 0.8, .top_k = 5000}));
  // NaN logits (a broken KV format's output): last, weight 0; top-k reaching into them, top-p not.
  cases.push_back(std::make_unique<SampleCase>(1000, kk::SamplerParams{.temperature = 1.0}, true));
  cases.push_back(std::make_unique<SampleCase>(40, kk::SamplerParams{.temperature = 1.5, .top_k = 38}, true));
  cases.push_back(std::make_unique<SampleCase>(1000, kk::SamplerParams{.temperature = 0.9, .top_p = 0.8}, true));
}

std::vector<std::unique_ptr<KernelCase>> make_test_cases() {
  std::vector<std::unique_ptr<KernelCase>> cases;
  add_decoder_cases(cases);
  add_fused_cases(cases);
  add_kv_cases(cases);
  return cases;
}


// Largest |out - ref| over the largest |ref| (finite entries): the worst element's error.
double max_rel(const std::vector<double>& out, const std::vector<double>& ref) {
  double e = 0, m = 0;
  for (std::size_t i = 0; i < ref.size() && i < out.size(); ++i)
    if (std::isfinite(ref[i]) && std::isfinite(out[i])) {
      e = std::max(e, std::fabs(out[i] - ref[i]));
      m = std::max(m, std::fabs(ref[i]));
    }
  return m == 0 ? e : e / m;
}

// An error bound or measurement: std::to_string's %f prints 1e-13 as 0.000000.
std::string sci(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2e", x);
  return b;
}

int usage() {
  std::fprintf(stderr, "usage: test-kernels test [--cpu-only] [-o OP] [-p REGEX] | test-kernels list\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  bool cpu_only = false;
  std::string op_filter, pattern;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cpu-only") cpu_only = true;
    else if (a == "-o" && i + 1 < argc) op_filter = argv[++i];
    else if (a == "-p" && i + 1 < argc) pattern = argv[++i];
    else return usage();
  }
  auto cases = make_test_cases();
  if (mode == "list") {
    for (auto& c : cases) std::printf("%s\n", c->name().c_str());
    return 0;
  }
  if (mode != "test") return usage();
  const bool gpu = !cpu_only;
  if (gpu && kvgate::kernels::cuda_device_count() == 0) {
    std::fprintf(stderr, "test-kernels: no GPU (%s); run with --cpu-only to check the CPU twins alone\n",
                 kvgate::kernels::cuda_describe().c_str());
    return 1;
  }
  const std::regex re(pattern.empty() ? ".*" : pattern);
  int run = 0, failed = 0, no_gpu = 0;
  for (auto& c : cases) {
    if (!op_filter.empty() && c->op() != op_filter) continue;
    if (!std::regex_search(c->name(), re)) continue;
    // Each case's data comes from its own name, so adding, reordering or filtering cases (-o, -p)
    // never changes another case's data: a case passes or fails the same way however it is run.
    Rng rng(kvgate::derive_seed(20261129, c->name()));
    c->init(rng);
    const std::vector<double> ref = c->reference();
    std::vector<double> twin, dev;
    std::string verdict = "OK", measured;
    try {
      if (!c->cpu(twin)) verdict = "FAIL (twin wrote outside its output)";
      else if (double e = nmse(twin, ref); !(e <= c->max_nmse_twin()))
        verdict = "FAIL (twin NMSE " + sci(e) + " > " + sci(c->max_nmse_twin()) + ")";
      else if (gpu && !c->has_gpu()) {
        verdict = "OK (CPU twin; no GPU kernel yet)";
        ++no_gpu;
      } else if (gpu) {
        if (!c->gpu(dev)) verdict = "FAIL (kernel wrote outside its output)";
        else if (double g = nmse(dev, twin); !(g <= c->max_nmse_gpu()))
          verdict = "FAIL (GPU NMSE " + sci(g) + " > " + sci(c->max_nmse_gpu()) + ")";
        else {  // the measured error, for the docs' numerics tables
          char b[96];
          std::snprintf(b, sizeof b, "nmse=%.2e max_rel=%.2e ", g, max_rel(dev, twin));
          measured = b;
        }
      }
    } catch (const std::exception& e) {
      verdict = std::string("FAIL (") + e.what() + ")";
    }
    ++run;
    failed += verdict.rfind("OK", 0) != 0;
    std::printf("  %-40s %s %s%s\n", c->name().c_str(), gpu ? "[cpu+gpu]" : "[cpu]", measured.c_str(), verdict.c_str());
  }
  std::printf("%d/%d cases passed%s", run - failed, run, gpu ? "" : " (CPU twins only)");
  if (no_gpu) std::printf("; %d of them have no GPU kernel yet (CPU twin checked only)", no_gpu);
  std::printf("\n");
  return failed == 0 && run > 0 ? 0 : 1;
}
