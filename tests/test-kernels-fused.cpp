// test-kernels cases of the CUDA engine's fused epilogues and its greedy argmax, called
// as harness/decoder_cuda/cuda_forward.cpp calls them:
//   QKV_SPLIT       qkv_split after the fused QKV GEMM (bias, q/k norm, RoPE, split) against
//                   qkv_split_ref, the CPU path's bias add, rmsnorm_ref and rope_ref composed
//   SWIGLU_FUSED    swiglu_fused on the interleaved gate and up columns of one GEMM output against
//                   swiglu_fused_ref (bias adds and swiglu_ref); fp32 output, or bf16 as the engine's
//                   bf16 GEMMs take it, those bits checked against the fp32 output's RNE rounding
//   ARGMAX_CHUNKED  argmax_rows_chunked (64 chunks a row, then a merge) against sample_ref's greedy
//                   pick, row by row: ties, NaNs, all -inf, NaN at index 0, maxima in the last chunk
// Device outputs (and the argmax workspace) are poisoned and guarded on both sides.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/float_formats.h"
#include "tests/kernel_case.h"
#include "kernels/ops_ref.h"
#if defined(KVGATE_HAVE_CUDA)
#include "kernels/decoder_cuda.h"
#endif

namespace kcase {

namespace {

namespace kk = kvgate::kernels;
#if defined(KVGATE_HAVE_CUDA)
namespace kc = kvgate::kernels::cuda;
#endif

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- QKV_SPLIT -------------------------------------------------------------------------------
// The RoPE tables the kernel reads: its scaling types enter only through inv_freq and the
// attention scaling (yarn's is not 1).
kk::RopeParams rope_params(const std::string& type, int d) {
  if (type == "linear") return {.type = kk::RopeType::linear, .dim = d, .theta = 1e4, .factor = 2};
  if (type == "llama3")
    return {.type = kk::RopeType::llama3, .dim = d, .theta = 5e5, .factor = 8, .low_freq_factor = 1, .high_freq_factor = 4,
            .original_max_position_embeddings = 8192};
  if (type == "yarn")  // Qwen3's long-context setting
    return {.type = kk::RopeType::yarn, .dim = d, .theta = 1e6, .factor = 4, .original_max_position_embeddings = 32768};
  return {.dim = d, .theta = 1e6};  // Qwen3's default
}

struct QkvShape {
  int rows = 1, q_heads = 1, kv_heads = 1, head_dim = 128;
  bool norm = false, bias = false;
  const char* rope = "default";
  int max_pos = 40960;  // positions drawn in [0, max_pos); the last row sits at max_pos - 1
};

struct QkvSplitCase final : KernelCase {
  QkvShape s;
  std::vector<float> qkv, bias, q_norm, k_norm, inv;
  std::vector<int> pos;
  float scaling = 1.0f;
  static constexpr float kEps = 1e-6f;
  explicit QkvSplitCase(QkvShape s_) : s(s_) {}
  std::string op() const override { return "QKV_SPLIT"; }
  std::string vars() const override {
    return "rows=" + std::to_string(s.rows) + ",heads=" + std::to_string(s.q_heads) + "/" + std::to_string(s.kv_heads) +
           ",d=" + std::to_string(s.head_dim) + (s.norm ? ",qk_norm" : "") + (s.bias ? ",bias" : "") + ",rope=" + s.rope;
  }
  int width() const { return (s.q_heads + 2 * s.kv_heads) * s.head_dim; }
  std::size_t q_size() const { return static_cast<std::size_t>(s.rows) * s.q_heads * s.head_dim; }
  std::size_t kv_size() const { return static_cast<std::size_t>(s.rows) * s.kv_heads * s.head_dim; }
  // fp32 rounding of the bias add, the norm and cos/sin against fp64 (measured <= 3e-15).
  double max_nmse_twin() const override { return 1e-12; }
  // The norm's fp64 sum in another order, device cos/sin (as RMSNORM and ROPE).
  double max_nmse_gpu() const override { return 1e-13; }
  bool has_gpu() const override { return kCuda; }
  void init(Rng& rng) override {
    qkv.resize(static_cast<std::size_t>(s.rows) * width());
    fill_normal(rng, qkv, 2.0);
    for (std::size_t i = 0; i < qkv.size(); i += 101) qkv[i] *= 10;  // outliers, as real projections have
    bias.resize(width());
    fill_normal(rng, bias, 0.5);
    q_norm.resize(s.head_dim);
    k_norm.resize(s.head_dim);
    fill_normal(rng, q_norm, 0.3, 1.0);
    fill_normal(rng, k_norm, 0.3, 1.0);
    inv.resize(s.head_dim / 2);
    scaling = kk::rope_inv_freq_ref(rope_params(s.rope, s.head_dim), inv.data());
    pos.resize(s.rows);
    for (auto& p : pos) p = static_cast<int>(rng.below(s.max_pos));
    pos.back() = s.max_pos - 1;
  }
  // fp64 from the formula; the angle is fp32(inv_freq * pos), as transformers computes it (ops_ref.h).
  std::vector<double> reference() override {
    const int d = s.head_dim, half = d / 2, heads = s.q_heads + 2 * s.kv_heads;
    std::vector<double> q, k, v, x(d);
    for (int r = 0; r < s.rows; ++r)
      for (int h = 0; h < heads; ++h) {
        const std::size_t off = static_cast<std::size_t>(r) * width() + static_cast<std::size_t>(h) * d;
        for (int j = 0; j < d; ++j) x[j] = double(qkv[off + j]) + (s.bias ? double(bias[h * d + j]) : 0.0);
        const bool is_q = h < s.q_heads, is_v = h >= s.q_heads + s.kv_heads;
        std::vector<double>& dst = is_q ? q : is_v ? v : k;
        if (is_v) {
          dst.insert(dst.end(), x.begin(), x.end());
          continue;
        }
        if (s.norm) {
          double ss = 0;
          for (double e : x) ss += e * e;
          const double inv_rms = 1.0 / std::sqrt(ss / d + double(kEps));
          const std::vector<float>& w = is_q ? q_norm : k_norm;
          for (int j = 0; j < d; ++j) x[j] = w[j] * x[j] * inv_rms;
        }
        std::vector<double> y(d);
        for (int j = 0; j < half; ++j) {
          const double a = static_cast<float>(inv[j] * static_cast<float>(pos[r]));
          const double c = std::cos(a) * scaling, sn = std::sin(a) * scaling;
          y[j] = x[j] * c - x[j + half] * sn;
          y[j + half] = x[j + half] * c + x[j] * sn;
        }
        dst.insert(dst.end(), y.begin(), y.end());
      }
    q.insert(q.end(), k.begin(), k.end());
    q.insert(q.end(), v.begin(), v.end());
    return q;
  }
  bool cpu(std::vector<double>& out) override {
    Guarded<float> q(q_size()), k(kv_size()), v(kv_size());
    kk::qkv_split_ref({.qkv = qkv.data(), .bias = s.bias ? bias.data() : nullptr, .q_norm = s.norm ? q_norm.data() : nullptr,
                       .k_norm = s.norm ? k_norm.data() : nullptr, .eps = kEps, .positions = pos.data(), .inv_freq = inv.data(),
                       .attention_scaling = scaling, .rows = s.rows, .q_heads = s.q_heads, .kv_heads = s.kv_heads,
                       .head_dim = s.head_dim, .q = q.data(), .k = k.data(), .v = v.data()});
    out.assign(q.data(), q.data() + q_size());
    out.insert(out.end(), k.data(), k.data() + kv_size());
    out.insert(out.end(), v.data(), v.data() + kv_size());
    return q.guards_intact() && k.guards_intact() && v.guards_intact();
  }
  bool gpu(std::vector<double>& out) override {
#if defined(KVGATE_HAVE_CUDA)
    auto dqkv = to_device(qkv);
    auto db = to_device(bias);
    auto dqn = to_device(q_norm);
    auto dkn = to_device(k_norm);
    auto dpos = to_device(pos);
    auto dinv = to_device(inv);
    DeviceGuarded<float> q(q_size()), k(kv_size()), v(kv_size());
    kc::qkv_split({.qkv = dqkv->get(), .bias = s.bias ? db->get() : nullptr, .q_norm = s.norm ? dqn->get() : nullptr,
                   .k_norm = s.norm ? dkn->get() : nullptr, .eps = kEps, .positions = dpos->get(), .inv_freq = dinv->get(),
                   .attention_scaling = scaling, .rows = s.rows, .q_heads = s.q_heads, .kv_heads = s.kv_heads,
                   .head_dim = s.head_dim, .q = q.get(), .k = k.get(), .v = v.get()},
                  nullptr);
    device_sync();
    std::vector<float> hq, hk, hv;
    const bool intact = q.download(hq) && k.download(hk) && v.download(hv);
    out.assign(hq.begin(), hq.end());
    out.insert(out.end(), hk.begin(), hk.end());
    out.insert(out.end(), hv.begin(), hv.end());
    return intact;
#else
    (void)out;
    return false;
#endif
  }
};

// ---- SWIGLU_FUSED ----------------------------------------------------------------------------
struct SwigluShape {
  int rows = 1, inter = 1;
  bool gate_bias = false, up_bias = false;
  bool bf16 = false;  // the engine's bf16 GEMM mode: only the bf16 output is written
};

struct SwigluFusedCase final : KernelCase {
  SwigluShape s;
  std::vector<float> gu, gb, ub;
  explicit SwigluFusedCase(SwigluShape s_) : s(s_) {}
  std::string op() const override { return "SWIGLU_FUSED"; }
  std::string vars() const override {
    return "rows=" + std::to_string(s.rows) + ",inter=" + std::to_string(s.inter) + (s.gate_bias ? ",gate_bias" : "") +
           (s.up_bias ? ",up_bias" : "") + (s.bf16 ? ",out=bf16" : ",out=fp32");
  }
  std::size_t n() const { return static_cast<std::size_t>(s.rows) * s.inter; }
  double max_nmse_gpu() const override { return 1e-12; }  // expf's last bit, as SWIGLU
  bool has_gpu() const override { return kCuda; }
  void init(Rng& rng) override {
    gu.resize(2 * n());
    for (int r = 0; r < s.rows; ++r)
      for (int c = 0; c < 2 * s.inter; ++c)
        gu[static_cast<std::size_t>(r) * 2 * s.inter + c] = static_cast<float>(rng.normal() * (c % 2 == 0 ? 3.0 : 1.0));
    // Gate outliers past expf's range: exp(-g) overflows to inf (silu -> -0) or underflows (silu -> g).
    for (std::size_t i = 500; i < gu.size(); i += 998) gu[i] = (i / 998) % 2 ? 120.0f : -120.0f;
    gb.resize(s.inter);
    ub.resize(s.inter);
    fill_normal(rng, gb, 0.5);
    fill_normal(rng, ub, 0.5);
  }
  std::vector<double> reference() override {
    std::vector<double> r(n());
    for (int i = 0; i < s.rows; ++i)
      for (int c = 0; c < s.inter; ++c) {
        const std::size_t row = static_cast<std::size_t>(i) * 2 * s.inter;
        const double g = double(gu[row + 2 * c]) + (s.gate_bias ? double(gb[c]) : 0.0);
        const double u = double(gu[row + 2 * c + 1]) + (s.up_bias ? double(ub[c]) : 0.0);
        r[static_cast<std::size_t>(i) * s.inter + c] = g / (1.0 + std::exp(-g)) * u;
      }
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    Guarded<float> o(n());
    kk::swiglu_fused_ref(gu.data(), s.rows, s.inter, s.gate_bias ? gb.data() : nullptr, s.up_bias ? ub.data() : nullptr, o.data());
    return copy_out(o, n(), out);
  }
  // fp32 mode: the fp32 output. bf16 mode: the engine's call (bf16 only), and the same inputs into
  // fp32; the case's output is the fp32 one, and any bf16 value that is not f32_to_bf16 of it
  // (float_formats.h: RNE) turns that element into NaN. Exact, so an expf last-bit difference that
  // moves a bf16 rounding cannot fail the case, and a wrong rounding always does.
  bool gpu(std::vector<double>& out) override {
#if defined(KVGATE_HAVE_CUDA)
    auto dgu = to_device(gu);
    auto dgb = to_device(gb);
    auto dub = to_device(ub);
    const float* gbp = s.gate_bias ? dgb->get() : nullptr;
    const float* ubp = s.up_bias ? dub->get() : nullptr;
    DeviceGuarded<float> o(n());
    kc::swiglu_fused(dgu->get(), s.rows, s.inter, gbp, ubp, o.get(), nullptr, nullptr);
    device_sync();
    std::vector<float> h;
    bool intact = o.download(h);
    out.assign(h.begin(), h.end());
    if (s.bf16) {
      DeviceGuarded<std::uint16_t> ob(n());
      kc::swiglu_fused(dgu->get(), s.rows, s.inter, gbp, ubp, nullptr, ob.get(), nullptr);
      device_sync();
      std::vector<std::uint16_t> hb;
      intact = ob.download(hb) && intact;
      for (std::size_t i = 0; i < n(); ++i)
        if (hb[i] != kk::f32_to_bf16(h[i])) out[i] = kNaN;
    }
    return intact;
#else
    (void)out;
    return false;
#endif
  }
};

// ---- ARGMAX_CHUNKED --------------------------------------------------------------------------
constexpr int kChunks = 64;  // the kernel's chunks per row, for placing maxima at chunk edges
#if defined(KVGATE_HAVE_CUDA)
static_assert(kc::kArgmaxChunks == kChunks);
#endif
constexpr int kArgmaxPatterns = 13;

// Row r of a case gets pattern r % kArgmaxPatterns (small n clamps the positions; the reference is
// computed from whatever the row holds).
void fill_argmax_row(Rng& rng, float* l, int n, int pattern) {
  const int per = (n + kChunks - 1) / kChunks;
  const auto at = [n](long i) { return static_cast<int>(std::clamp<long>(i, 0, n - 1)); };
  for (int i = 0; i < n; ++i) l[i] = static_cast<float>(3.0 * rng.normal());
  switch (pattern) {
    case 0: break;  // plain random logits
    case 1: {  // the maximum at two neighbouring ids (neighbouring threads) and again in a later chunk
      const int b = at(n * 37L / 100);
      l[b] = l[at(b + 1L)] = l[at(n - 2L)] = 50.0f;
      break;
    }
    case 2: l[n - 1] = 40.0f; break;  // the maximum alone at the last id, in the last chunk
    case 3: {  // NaN at every 7th id from 1, the maximum just after one
      for (int i = 1; i < n; i += 7) l[i] = kNaN;
      l[at(7L * ((n * 4L / 5) / 7) + 2)] = 30.0f;
      break;
    }
    case 4:  // NaN at id 0: sample_ref keeps 0 even with a larger logit later
      l[0] = kNaN;
      if (n > 1) l[std::max(1, n / 2)] = 40.0f;
      break;
    case 5: std::fill(l, l + n, -kInf); break;  // all -inf: 0
    case 6: std::fill(l, l + n, kNaN); break;   // all NaN: 0
    case 7: {  // -inf and NaN everywhere but one finite logit in the last chunk
      std::fill(l, l + n, -kInf);
      for (int i = 2; i < n; i += 3) l[i] = kNaN;
      l[at(n - 2L)] = -1e30f;
      break;
    }
    case 8:  // integer logits in [-3, 3]: the maximum repeated across threads and chunks
      for (int i = 0; i < n; ++i) l[i] = std::clamp(std::round(l[i] / 2.0f), -3.0f, 3.0f);
      break;
    case 9:  // -0 before +0, all else -1: they are equal (+0 > -0 is false), the first wins
      std::fill(l, l + n, -1.0f);
      l[at(n - 1L)] = 0.0f;
      l[at(n / 3L)] = -0.0f;
      break;
    case 10:  // +inf twice, a NaN before them
      l[at(n / 8L)] = kNaN;
      l[at(n * 3L / 4)] = kInf;
      l[at(n / 4L)] = kInf;
      break;
    case 11: {  // equal maxima at the last id of chunk 31 and the first of chunk 32: the earlier wins
      const long b = 32L * per;
      l[at(b)] = l[at(b - 1)] = 45.0f;
      break;
    }
    case 12:  // the maximum at id 0, NaN right after it, the same maximum at the end
      l[at(n - 1L)] = 45.0f;
      if (n > 1) l[1] = kNaN;
      l[0] = 45.0f;
      break;
    default: break;
  }
}

struct ArgmaxCase final : KernelCase {
  int rows, n;
  std::vector<float> logits;
  ArgmaxCase(int rows_, int n_) : rows(rows_), n(n_) {}
  std::string op() const override { return "ARGMAX_CHUNKED"; }
  std::string vars() const override { return "rows=" + std::to_string(rows) + ",n=" + std::to_string(n); }
  double max_nmse_twin() const override { return 0.0; }  // the same ids
  double max_nmse_gpu() const override { return 0.0; }
  bool has_gpu() const override { return kCuda; }
  void init(Rng& rng) override {
    logits.resize(static_cast<std::size_t>(rows) * n);
    for (int r = 0; r < rows; ++r) fill_argmax_row(rng, logits.data() + static_cast<std::size_t>(r) * n, n, r % kArgmaxPatterns);
  }
  // sample_ref's greedy rule restated: 0 when logit 0 is NaN or no logit is a number, else the
  // lowest id whose logit equals the largest number (-0 == +0).
  std::vector<double> reference() override {
    std::vector<double> ids;
    for (int r = 0; r < rows; ++r) {
      const float* l = logits.data() + static_cast<std::size_t>(r) * n;
      double mx = -INFINITY;
      bool any = false;
      for (int i = 0; i < n; ++i)
        if (!std::isnan(l[i])) {
          mx = any ? std::max(mx, double(l[i])) : double(l[i]);
          any = true;
        }
      int id = 0;
      if (!std::isnan(l[0]) && any)
        while (double(l[id]) != mx) ++id;
      ids.push_back(id);
    }
    return ids;
  }
  // The CPU path's greedy pick (harness/decoder/generate.cpp): sample_ref at temperature 0.
  bool cpu(std::vector<double>& out) override {
    kk::SamplerWorkspace ws;
    out.clear();
    for (int r = 0; r < rows; ++r) out.push_back(kk::sample_ref(logits.data() + static_cast<std::size_t>(r) * n, n, {}, 0.0, ws));
    return true;
  }
  // As cuda_forward.cpp: all rows in one call, the workspace of argmax_workspace_bytes(rows)
  // (poisoned: every chunk must write its slot; guarded: none past it).
  bool gpu(std::vector<double>& out) override {
#if defined(KVGATE_HAVE_CUDA)
    auto dl = to_device(logits);
    DeviceGuarded<int> ids(rows);
    DeviceGuarded<unsigned char> ws(kc::argmax_workspace_bytes(rows));
    kc::argmax_rows_chunked(dl->get(), rows, n, ids.get(), ws.get(), nullptr);
    device_sync();
    std::vector<int> h;
    std::vector<unsigned char> w;
    const bool intact = ids.download(h) && ws.download(w);
    out.assign(h.begin(), h.end());
    return intact;
#else
    (void)out;
    return false;
#endif
  }
};

}  // namespace

void add_fused_cases(std::vector<std::unique_ptr<KernelCase>>& cases) {
  // Qwen3-8B (hidden 4096 -> q 32 x 128, k/v 8 x 128): a decode step and prefill chunks, q/k norm,
  // default RoPE (theta 1e6) and yarn (positions up to 131072); Qwen2.5-7B-like (28/4 heads) with
  // biases and no norm; both at once; then small and odd shapes: head_dim 16 (fewer than the
  // block's 64 threads), 48, 64 and 256 (the kernel's largest), GQA 1 to 5, linear and llama3 RoPE.
  const std::vector<QkvShape> qkv = {
      {.rows = 1, .q_heads = 32, .kv_heads = 8, .norm = true},
      {.rows = 37, .q_heads = 32, .kv_heads = 8, .norm = true},
      {.rows = 5, .q_heads = 32, .kv_heads = 8, .norm = true, .rope = "yarn", .max_pos = 131072},
      {.rows = 1, .q_heads = 32, .kv_heads = 8},
      {.rows = 7, .q_heads = 28, .kv_heads = 4, .bias = true},
      {.rows = 3, .q_heads = 32, .kv_heads = 8, .norm = true, .bias = true, .rope = "llama3"},
      {.rows = 9, .q_heads = 3, .kv_heads = 1, .head_dim = 16, .norm = true, .bias = true, .rope = "linear", .max_pos = 100},
      {.rows = 4, .q_heads = 5, .kv_heads = 1, .head_dim = 48, .norm = true, .max_pos = 7},
      {.rows = 2, .q_heads = 4, .kv_heads = 2, .head_dim = 256, .norm = true, .bias = true, .rope = "yarn"},
      {.rows = 11, .q_heads = 6, .kv_heads = 3, .head_dim = 64, .rope = "llama3", .max_pos = 3},
      {.rows = 1, .q_heads = 1, .kv_heads = 1, .head_dim = 2, .norm = true, .bias = true},
      // Prefill chunks: from 128 rows a block takes every head of its row (a warp a head).
      {.rows = 130, .q_heads = 32, .kv_heads = 8, .norm = true, .rope = "yarn", .max_pos = 131072},
      {.rows = 128, .q_heads = 5, .kv_heads = 1, .head_dim = 48, .norm = true, .bias = true, .max_pos = 300},
      {.rows = 129, .q_heads = 4, .kv_heads = 2, .head_dim = 256, .norm = true, .rope = "llama3"},
      // A chunk of 65,536 rows (--prefill-chunks' largest): past grid y's 65,535, so the rows are grid x.
      {.rows = 65536, .q_heads = 1, .kv_heads = 1, .head_dim = 16, .norm = true, .max_pos = 131072},
  };
  for (const QkvShape& s : qkv) cases.push_back(std::make_unique<QkvSplitCase>(s));
  // Qwen3-8B's intermediate 12288 in both engine modes, a decode step and a prefill chunk; biases
  // (gate, up, both); odd sizes.
  const std::vector<SwigluShape> swiglu = {
      {.rows = 1, .inter = 12288, .bf16 = true},
      {.rows = 1, .inter = 12288},
      {.rows = 33, .inter = 12288, .bf16 = true},
      {.rows = 5, .inter = 12288, .gate_bias = true, .up_bias = true},
      {.rows = 3, .inter = 7, .gate_bias = true, .up_bias = true, .bf16 = true},
      {.rows = 17, .inter = 1000, .gate_bias = true},
      {.rows = 4, .inter = 4099, .up_bias = true, .bf16 = true},
      {.rows = 1, .inter = 1},
      {.rows = 300, .inter = 66, .gate_bias = true, .bf16 = true},
  };
  for (const SwigluShape& s : swiglu) cases.push_back(std::make_unique<SwigluFusedCase>(s));
  // Qwen3's vocabulary 151936 (2374 a chunk) with every pattern in one call, and a decode step of
  // one row; a ragged vocabulary; vocabularies with empty chunks (100: 2 a chunk, 50 used; 63;
  // 7; 1).
  for (auto [rows, n] : std::vector<std::pair<int, int>>{{13, 151936}, {1, 151936}, {13, 128257}, {26, 100}, {13, 63}, {13, 7}, {13, 1}})
    cases.push_back(std::make_unique<ArgmaxCase>(rows, n));
}

}  // namespace kcase
