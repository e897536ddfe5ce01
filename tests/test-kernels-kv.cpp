// test-kernels cases of the quantized KV cache, for every slot --kv-format:
//   KV_WRITE         the CUDA cache writer against the host codec (kv_head_codec.h): the stored
//                    bytes must be identical (a differing byte turns the output into NaN), and the
//                    running absmax must be the largest |input| written; also through
//                    qkv_split_write (the engine's split and cache write in one kernel)
//   KV_WRITE_KIVI    kivi2's materialized fp32 cache: after each forward call (prefill chunks of
//                    several sequences, decode steps), every slot against KiviKvStore's reads
//   ATTENTION_PAGED  split-K paged attention over the quantized cache against attention_kv_ref on
//                    the host store of the same format (decode: one row per sequence; prefill: a
//                    chunk of rows per sequence; sliding window; forced split counts); with
//                    engine-emulation switches (attention_emulation.h: fp8 Q, fp8 P, FP22 and
//                    two-level P.V accumulation, fixed splits) the emulating generic kernel
//                    against attention_rows_emulated_ref
// The twins are checked against fp64 references computed from the store's dequantized values.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/kernel_case.h"
#include "kernels/kv_format.h"
#include "kernels/kv_head_codec.h"
#include "kernels/kv_store.h"
#include "kernels/ops_ref.h"
#if defined(KVGATE_HAVE_CUDA)
#include "kernels/decoder_cuda.h"
#include "kernels/kv_paged_cuda.h"
#include "kernels/paged_attention_decode.h"
#include "kernels/paged_attention_prefill.h"
#include "kernels/prefill_tile_pool.h"
#endif

namespace kcase {

namespace {

namespace kk = kvgate::kernels;
#if defined(KVGATE_HAVE_CUDA)
namespace kc = kvgate::kernels::cuda;
#endif

std::string params_text(const nlohmann::json& p) { return p.empty() ? "" : "," + p.dump(); }

kk::KvFormatSpec spec_for(const kk::KvStoreOptions& o, int kv_heads, int d) {
  return kk::resolve_kv_format(o, {.layers = 1, .kv_heads = kv_heads, .head_dim = d});
}

#if defined(KVGATE_HAVE_CUDA)
// kv_write of host rows into layer 0 of `cache`: k and v [rows][kv_heads][d], each row's sequence
// slot and position; absmax: the layer's running maxima, or null.
void write_layer0(const kc::PagedKvCache& cache, int kv_heads, const std::vector<float>& k, const std::vector<float>& v,
                  const std::vector<int>& seq, const std::vector<int>& pos, float* absmax) {
  auto dk = to_device(k);
  auto dv = to_device(v);
  auto ds = to_device(seq);
  auto dp = to_device(pos);
  kc::kv_write(cache.codec(0), {.k = dk->get(), .v = dv->get(), .row_seq = ds->get(), .row_pos = dp->get(),
                                .rows = static_cast<int>(seq.size()), .kv_heads = kv_heads, .block_table = cache.block_table(),
                                .max_pages = cache.max_pages_per_seq(), .page_tokens = 64, .k_pool = cache.k_pool(0),
                                .v_pool = cache.v_pool(0), .absmax = absmax},
               nullptr);
}

// The same rows through qkv_split_write, as the engine's decode step writes them: K and V are the
// fused QKV output's K and V heads (after one query head), with no bias, no q/k norm and RoPE at
// position 0 (cos 1, sin 0: the values pass unchanged), so the bytes must equal kv_write's. The
// split's outputs must be the inputs, bit for bit.
bool split_write_layer0(const kc::PagedKvCache& cache, int kv_heads, int d, const std::vector<float>& k, const std::vector<float>& v,
                        const std::vector<int>& seq, const std::vector<int>& pos, float* absmax) {
  const int rows = static_cast<int>(seq.size()), width = (1 + 2 * kv_heads) * d;
  std::vector<float> qkv(static_cast<std::size_t>(rows) * width, 0.5f);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < kv_heads * d; ++i) {
      qkv[static_cast<std::size_t>(r) * width + d + i] = k[static_cast<std::size_t>(r) * kv_heads * d + i];
      qkv[static_cast<std::size_t>(r) * width + (1 + kv_heads) * d + i] = v[static_cast<std::size_t>(r) * kv_heads * d + i];
    }
  auto dqkv = to_device(qkv);
  auto dinv = to_device(std::vector<float>(d / 2, 0.25f));
  auto zeros = to_device(std::vector<int>(rows, 0));
  auto ds = to_device(seq);
  auto dp = to_device(pos);
  kk::DeviceBuffer<float> q(static_cast<std::size_t>(rows) * d), ko(k.size()), vo(v.size());
  kc::qkv_split_write({.qkv = dqkv->get(), .positions = zeros->get(), .inv_freq = dinv->get(), .rows = rows, .q_heads = 1,
                       .kv_heads = kv_heads, .head_dim = d, .q = q.get(), .k = ko.get(), .v = vo.get()},
                      cache.codec(0),
                      {.row_seq = ds->get(), .row_pos = dp->get(), .rows = rows, .kv_heads = kv_heads, .block_table = cache.block_table(),
                       .max_pages = cache.max_pages_per_seq(), .page_tokens = 64, .k_pool = cache.k_pool(0),
                       .v_pool = cache.v_pool(0), .absmax = absmax},
                      nullptr);
  std::vector<float> hk(k.size()), hv(v.size());
  KV_CUDA_CHECK(cudaMemcpy(hk.data(), ko.get(), hk.size() * sizeof(float), cudaMemcpyDeviceToHost));
  KV_CUDA_CHECK(cudaMemcpy(hv.data(), vo.get(), hv.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return std::memcmp(hk.data(), k.data(), k.size() * sizeof(float)) == 0 && std::memcmp(hv.data(), v.data(), v.size() * sizeof(float)) == 0;
}
#endif

// ---- KV_WRITE --------------------------------------------------------------------------------
struct KvWriteCase final : KernelCase {
  kk::KvStoreOptions kv;
  int tokens, kv_heads, d;
  bool fused;               // written by qkv_split_write (split_write_layer0) instead of kv_write
  bool coarse;              // inputs on a grid of 1/4 (+1/8): equal magnitudes of either sign within a vector
  std::vector<float> k, v;  // [tokens][kv_heads][d]
  KvWriteCase(std::string format, nlohmann::json params, int tokens_, int kv_heads_, int d_, bool fused_ = false, bool coarse_ = false)
      : kv{std::move(format), std::move(params)}, tokens(tokens_), kv_heads(kv_heads_), d(d_), fused(fused_), coarse(coarse_) {}
  std::string op() const override { return "KV_WRITE"; }
  std::string vars() const override {
    return kv.format + params_text(kv.params) + ",tokens=" + std::to_string(tokens) + ",kv_heads=" + std::to_string(kv_heads) +
           ",d=" + std::to_string(d) + (fused ? ",qkv_split_write" : "") + (coarse ? ",coarse" : "");
  }
  // The codec's own storage loss (kv-codecs-test checks each format exactly); 3-bit keys are the worst.
  double max_nmse_twin() const override { return kv.format == "fp32" ? 0.0 : 0.1; }
  double max_nmse_gpu() const override { return 0.0; }
  bool has_gpu() const override { return kCuda; }
  void init(Rng& rng) override {
    k.resize(static_cast<std::size_t>(tokens) * kv_heads * d);
    v.resize(k.size());
    fill_normal(rng, k, 1.5);
    fill_normal(rng, v, 0.7, 0.2);
    for (std::size_t i = 0; i < k.size(); i += 97) k[i] *= 8;  // outliers, as real keys have
    if (coarse)
      for (auto* x : {&k, &v})
        for (float& e : *x) e = (std::round(e * 4.0f) + 0.5f) / 4.0f;
  }
  // What the store encodes: inputs rounded to bf16 unless input_dtype is fp32 (the bf16 format
  // rounds in its codec, which the absmax sees too).
  float input(const kk::KvFormatSpec& s, float x) const {
    return s.round_input_bf16 || s.format == "bf16" ? kk::bf16_to_f32(kk::f32_to_bf16(x)) : x;
  }
  // Output: decoded K then V of every (token, head), then absmax of K and V per head.
  std::vector<double> reference() override {
    const kk::KvFormatSpec s = spec_for(kv, kv_heads, d);
    std::vector<double> r;
    for (const auto* src : {&k, &v})
      for (float x : *src) r.push_back(input(s, x));
    append_absmax(s, r);
    return r;
  }
  void append_absmax(const kk::KvFormatSpec& s, std::vector<double>& r) const {
    for (const auto* src : {&k, &v})
      for (int h = 0; h < kv_heads; ++h) {
        float m = 0;
        for (int t = 0; t < tokens; ++t)
          for (int j = 0; j < d; ++j) m = std::max(m, std::fabs(input(s, (*src)[(static_cast<std::size_t>(t) * kv_heads + h) * d + j])));
        r.push_back(m);
      }
  }
  // Host bytes of K (is_k) or V for every (token, head), slot after slot.
  std::vector<std::uint8_t> host_bytes(const kk::KvFormatSpec& s, const kk::HeadCodec& c, bool is_k) const {
    const int bytes = is_k ? c.k_bytes() : c.v_bytes();
    std::vector<std::uint8_t> out(static_cast<std::size_t>(tokens) * kv_heads * bytes);
    std::vector<float> x(d);
    for (int t = 0; t < tokens; ++t)
      for (int h = 0; h < kv_heads; ++h) {
        const float* src = (is_k ? k : v).data() + (static_cast<std::size_t>(t) * kv_heads + h) * d;
        for (int j = 0; j < d; ++j) x[j] = input(s, src[j]);
        std::uint8_t* o = out.data() + (static_cast<std::size_t>(t) * kv_heads + h) * bytes;
        if (is_k) c.encode_k(h, x.data(), o);
        else c.encode_v(h, x.data(), o);
      }
    return out;
  }
  void decode_all(const kk::HeadCodec& c, const std::vector<std::uint8_t>& kb, const std::vector<std::uint8_t>& vb,
                  std::vector<double>& out) const {
    std::vector<float> x(d);
    for (int kind = 0; kind < 2; ++kind)
      for (int t = 0; t < tokens; ++t)
        for (int h = 0; h < kv_heads; ++h) {
          const std::size_t slot = static_cast<std::size_t>(t) * kv_heads + h;
          if (kind == 0) c.decode_k(h, kb.data() + slot * c.k_bytes(), x.data());
          else c.decode_v(h, vb.data() + slot * c.v_bytes(), x.data());
          out.insert(out.end(), x.begin(), x.end());
        }
  }
  bool cpu(std::vector<double>& out) override {
    const kk::KvFormatSpec s = spec_for(kv, kv_heads, d);
    auto c = kk::make_head_codec(s, 0);
    out.clear();
    decode_all(*c, host_bytes(s, *c, true), host_bytes(s, *c, false), out);
    append_absmax(s, out);
    return true;
  }
  bool gpu(std::vector<double>& out) override {
#if defined(KVGATE_HAVE_CUDA)
    const kk::KvFormatSpec s = spec_for(kv, kv_heads, d);
    auto c = kk::make_head_codec(s, 0);
    kc::PagedKvCache cache(s, {.page_tokens = 64, .max_seqs = 2, .max_tokens_per_seq = tokens});
    // Sequence 1 holds the tokens (sequence 0 stays empty: the page lookup must use the table).
    cache.reserve(1, tokens);
    cache.sync_block_table(nullptr);
    const kc::KvLayerCodec& lc = cache.codec(0);
    for (int p = 0; p < cache.max_pages_per_seq(); ++p) {  // poison the pages: every byte must be written
      const std::size_t region = static_cast<std::size_t>(cache.page_of(1, p * 64)) * kv_heads;
      KV_CUDA_CHECK(cudaMemset(cache.k_pool(0) + region * 64 * lc.k_bytes, 0xA5, kv_heads * 64 * lc.k_bytes));
      KV_CUDA_CHECK(cudaMemset(cache.v_pool(0) + region * 64 * lc.v_bytes, 0xA5, kv_heads * 64 * lc.v_bytes));
    }
    std::vector<int> seq(tokens, 1), pos(tokens);
    for (int t = 0; t < tokens; ++t) pos[t] = t;
    bool split_exact = true;
    if (fused) split_exact = split_write_layer0(cache, kv_heads, d, k, v, seq, pos, cache.absmax());
    else write_layer0(cache, kv_heads, k, v, seq, pos, cache.absmax());
    device_sync();
    // Gather the slots back into host order [token][head][bytes].
    std::vector<std::uint8_t> kb(static_cast<std::size_t>(tokens) * kv_heads * lc.k_bytes), vb(static_cast<std::size_t>(tokens) * kv_heads * lc.v_bytes);
    for (int t = 0; t < tokens; ++t)
      for (int h = 0; h < kv_heads; ++h) {
        const std::size_t slot = (static_cast<std::size_t>(cache.page_of(1, t)) * kv_heads + h) * 64 + t % 64;
        const std::size_t mine = static_cast<std::size_t>(t) * kv_heads + h;
        KV_CUDA_CHECK(cudaMemcpy(kb.data() + mine * lc.k_bytes, cache.k_pool(0) + slot * lc.k_bytes, lc.k_bytes, cudaMemcpyDeviceToHost));
        KV_CUDA_CHECK(cudaMemcpy(vb.data() + mine * lc.v_bytes, cache.v_pool(0) + slot * lc.v_bytes, lc.v_bytes, cudaMemcpyDeviceToHost));
      }
    out.clear();
    decode_all(*c, kb, vb, out);
    std::vector<float> am(static_cast<std::size_t>(kv_heads) * 2);
    KV_CUDA_CHECK(cudaMemcpy(am.data(), cache.absmax(), am.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int kind = 0; kind < 2; ++kind)
      for (int h = 0; h < kv_heads; ++h) out.push_back(am[h * 2 + kind]);
    // Bytes must equal the host codec's exactly: any difference poisons the output.
    if (kb != host_bytes(s, *c, true) || vb != host_bytes(s, *c, false) || !split_exact) out[0] = NAN;
    return true;
#else
    (void)out;
    return false;
#endif
  }
};

// ---- KV_WRITE_KIVI ---------------------------------------------------------------------------
// kivi2 on the CUDA engine (kv_paged_cuda.h): kv_write stores the inputs in fp32 slots, then
// quantizes in place what each row's append completes. Forward calls as the engine makes them:
// prefill chunks (chunk i of every sequence batched in one call) then decode steps (one row per
// sequence); after every call, each touched sequence's whole cache must read what KiviKvStore reads
// after the same appends (bit for bit), i.e. key groups and value tokens quantized exactly when the
// token count crosses their thresholds, including inside a chunk.
struct KiviWriteCase final : KernelCase {
  struct Row {
    int seq, pos;
  };
  kk::KvStoreOptions kv;
  std::vector<int> prompts;
  int chunk, steps, kv_heads, d;
  std::vector<std::vector<Row>> calls;
  std::vector<std::vector<float>> k, v;  // per sequence: [prompt + steps][kv_heads][d]
  KiviWriteCase(nlohmann::json params, std::vector<int> prompts_, int chunk_, int steps_, int kv_heads_, int d_)
      : kv{"kivi2", std::move(params)}, prompts(std::move(prompts_)), chunk(chunk_), steps(steps_), kv_heads(kv_heads_), d(d_) {
    const int longest = *std::max_element(prompts.begin(), prompts.end());
    for (int t0 = 0; t0 < longest; t0 += chunk) {
      calls.emplace_back();
      for (int s = 0; s < seqs(); ++s)
        for (int t = t0; t < std::min(prompts[s], t0 + chunk); ++t) calls.back().push_back({s, t});
    }
    for (int i = 0; i < steps; ++i) {
      calls.emplace_back();
      for (int s = 0; s < seqs(); ++s) calls.back().push_back({s, prompts[s] + i});
    }
  }
  int seqs() const { return static_cast<int>(prompts.size()); }
  int len(int s) const { return prompts[s] + steps; }
  std::string op() const override { return "KV_WRITE_KIVI"; }
  std::string vars() const override {
    std::string p;
    for (int n : prompts) p += (p.empty() ? "" : "/") + std::to_string(n);
    return kv.format + params_text(kv.params) + ",prompts=" + p + ",chunk=" + std::to_string(chunk) + ",steps=" +
           std::to_string(steps) + ",kv_heads=" + std::to_string(kv_heads) + ",d=" + std::to_string(d);
  }
  // The reference computes the codes as the format defines them (fp32 arithmetic) and the values
  // in fp64: only code * scale + min's last fp32 bit differs.
  double max_nmse_twin() const override { return 1e-10; }
  double max_nmse_gpu() const override { return 0.0; }
  bool has_gpu() const override { return kCuda; }
  void init(Rng& rng) override {
    k.assign(seqs(), {});
    v.assign(seqs(), {});
    for (int s = 0; s < seqs(); ++s) {
      k[s].resize(static_cast<std::size_t>(len(s)) * kv_heads * d);
      v[s].resize(k[s].size());
      fill_normal(rng, k[s], 1.5);
      fill_normal(rng, v[s], 0.7, 0.2);
      for (std::size_t i = 0; i < k[s].size(); i += 97) k[s][i] *= 8;  // outliers, as real keys have
    }
    // Constant groups (zero range: scale 0, every value the fp16 minimum): key channel 0 of head 0
    // of sequence 0 at every token; the first value group of token 3 of sequence 0, head 0.
    for (int t = 0; t < len(0); ++t) k[0][static_cast<std::size_t>(t) * kv_heads * d] = 0.3f;
    const int g = spec().kivi_group;
    for (int i = 0; i < g; ++i) v[0][static_cast<std::size_t>(3) * kv_heads * d + i] = -1.1f;
  }
  kk::KvFormatSpec spec() const { return spec_for(kv, kv_heads, d); }
  // Token counts of every sequence after each call.
  std::vector<std::vector<int>> counts() const {
    std::vector<std::vector<int>> out;
    std::vector<int> n(seqs(), 0);
    for (const auto& call : calls) {
      for (const Row& r : call) n[r.seq] = std::max(n[r.seq], r.pos + 1);
      out.push_back(n);
    }
    return out;
  }
  // Output: after each call, for each sequence it touched, per head K then V of tokens [0, n).
  template <class Value>
  void snapshot(int call, const std::vector<int>& n, const Value& value, std::vector<double>& out) const {
    std::vector<bool> touched(seqs(), false);
    for (const Row& r : calls[call]) touched[r.seq] = true;
    for (int s = 0; s < seqs(); ++s)
      if (touched[s])
        for (int h = 0; h < kv_heads; ++h)
          for (int kind = 0; kind < 2; ++kind)
            for (int t = 0; t < n[s]; ++t)
              for (int c = 0; c < d; ++c) out.push_back(value(s, kind, t, h, c));
  }
  // KIVI's rule over the rounded inputs, from its definition (codec_kivi.h): a group's min and
  // (max - min) / 3 stored as fp16, codes round-half-even of (x - min) / scale clamped to [0, 3] in
  // fp32 (in fp64 a fp32 input can round across a half step), x = code * scale + min in fp64.
  std::vector<double> reference() override {
    const kk::KvFormatSpec sp = spec();
    const int g = sp.kivi_group, r = sp.kivi_residual;
    auto in = [&](int s, int kind, int t, int h, int c) -> float {
      const float x = (kind == 0 ? k : v)[s][(static_cast<std::size_t>(t) * kv_heads + h) * d + c];
      return sp.round_input_bf16 ? kk::bf16_to_f32(kk::f32_to_bf16(x)) : x;
    };
    auto dequant = [](const std::vector<float>& x, int i) -> double {
      const float mn = *std::min_element(x.begin(), x.end()), mx = *std::max_element(x.begin(), x.end());
      const float s16 = kk::f16_to_f32(kk::f32_to_f16((mx - mn) / 3.0f)), m16 = kk::f16_to_f32(kk::f32_to_f16(mn));
      if (!(s16 > 0)) return m16;
      const float code = std::nearbyint(std::clamp((x[i] - m16) / s16, 0.0f, 3.0f));
      return double(code) * s16 + m16;
    };
    std::vector<double> out;
    std::vector<float> x(g);
    const std::vector<std::vector<int>> n = counts();
    for (int call = 0; call < static_cast<int>(calls.size()); ++call)
      snapshot(call, n[call], [&](int s, int kind, int t, int h, int c) {
        const int count = n[call][s];
        if (kind == 0 && t < count / r * r) {  // key group: channel c of tokens t0 .. t0 + g - 1
          const int t0 = t / g * g;
          for (int i = 0; i < g; ++i) x[i] = in(s, 0, t0 + i, h, c);
          return dequant(x, t - t0);
        }
        if (kind == 1 && t < count - r) {  // value: channels c0 .. c0 + g - 1 of token t
          const int c0 = c / g * g;
          for (int i = 0; i < g; ++i) x[i] = in(s, 1, t, h, c0 + i);
          return dequant(x, c - c0);
        }
        return double(in(s, kind, t, h, c));
      }, out);
    return out;
  }
  bool cpu(std::vector<double>& out) override {
    std::vector<std::unique_ptr<kk::KvStore>> st;
    for (int s = 0; s < seqs(); ++s) st.push_back(kk::make_kv_store(kv, {.layers = 1, .kv_heads = kv_heads, .head_dim = d}));
    out.clear();
    const std::vector<std::vector<int>> n = counts();
    std::vector<std::vector<float>> kr(seqs()), vr(seqs());  // [head][token][d] of the last read
    for (int call = 0; call < static_cast<int>(calls.size()); ++call) {
      for (const Row& r : calls[call]) {
        const std::size_t off = static_cast<std::size_t>(r.pos) * kv_heads * d;
        st[r.seq]->append(0, k[r.seq].data() + off, v[r.seq].data() + off);
      }
      for (int s = 0; s < seqs(); ++s) {
        const std::size_t per_head = static_cast<std::size_t>(n[call][s]) * d;
        kr[s].resize(per_head * kv_heads);
        vr[s].resize(per_head * kv_heads);
        for (int h = 0; h < kv_heads; ++h)
          st[s]->read(0, h, 0, n[call][s], kr[s].data() + h * per_head, vr[s].data() + h * per_head);
      }
      snapshot(call, n[call], [&](int s, int kind, int t, int h, int c) {
        return double((kind == 0 ? kr : vr)[s][(static_cast<std::size_t>(h) * n[call][s] + t) * d + c]);
      }, out);
    }
    return true;
  }
  bool gpu(std::vector<double>& out) override {
#if defined(KVGATE_HAVE_CUDA)
    const kk::KvFormatSpec sp = spec();
    int longest = 0;
    for (int s = 0; s < seqs(); ++s) longest = std::max(longest, len(s));
    kc::PagedKvCache cache(sp, {.page_tokens = 64, .max_seqs = seqs() + 1, .max_tokens_per_seq = longest});
    const kc::KvLayerCodec& lc = cache.codec(0);
    if (lc.family != kc::KvFamily::kF32 || lc.k_bytes != 4 * d || lc.kivi_group != sp.kivi_group ||
        lc.kivi_residual != sp.kivi_residual)
      throw std::runtime_error("kivi2 layer is not a materialized fp32 layer");
    // Poison every slot (NaN): a value read before kv_write stored it shows.
    const std::size_t pool = static_cast<std::size_t>(cache.options().num_pages) * kv_heads * 64 * d;
    KV_CUDA_CHECK(cudaMemset(cache.k_pool(0), 0xFF, pool * sizeof(float)));
    KV_CUDA_CHECK(cudaMemset(cache.v_pool(0), 0xFF, pool * sizeof(float)));
    std::vector<float> kp(pool), vp(pool);
    out.clear();
    const std::vector<std::vector<int>> n = counts();
    auto slot_of = [&](int s) { return seqs() - s; };  // reversed slots, pages interleaved by the calls
    for (int call = 0; call < static_cast<int>(calls.size()); ++call) {
      std::vector<float> kin, vin;
      std::vector<int> seq, pos;
      for (const Row& r : calls[call]) {
        const std::size_t off = static_cast<std::size_t>(r.pos) * kv_heads * d, w = static_cast<std::size_t>(kv_heads) * d;
        kin.insert(kin.end(), k[r.seq].begin() + off, k[r.seq].begin() + off + w);
        vin.insert(vin.end(), v[r.seq].begin() + off, v[r.seq].begin() + off + w);
        seq.push_back(slot_of(r.seq));
        pos.push_back(r.pos);
      }
      for (int s = 0; s < seqs(); ++s)
        if (n[call][s] > 0) cache.reserve(slot_of(s), n[call][s]);
      cache.sync_block_table(nullptr);
      write_layer0(cache, kv_heads, kin, vin, seq, pos, nullptr);
      device_sync();
      KV_CUDA_CHECK(cudaMemcpy(kp.data(), cache.k_pool(0), pool * sizeof(float), cudaMemcpyDeviceToHost));
      KV_CUDA_CHECK(cudaMemcpy(vp.data(), cache.v_pool(0), pool * sizeof(float), cudaMemcpyDeviceToHost));
      snapshot(call, n[call], [&](int s, int kind, int t, int h, int c) {
        const std::size_t at = ((static_cast<std::size_t>(cache.page_of(slot_of(s), t)) * kv_heads + h) * 64 + t % 64) * d + c;
        return double((kind == 0 ? kp : vp)[at]);
      }, out);
    }
    return true;
#else
    (void)out;
    return false;
#endif
  }
};

// ---- ATTENTION_PAGED -------------------------------------------------------------------------
// The switches of an emulating case, as --kernel-switches spells them (for the case name).
std::string emu_text(const kk::AttentionEmulation& e) {
  if (!e.active()) return "";
  std::string t = ",emu={";
  if (e.q_fp8) t += "q_fp8" + (e.q_scale != 1.0f ? ":" + std::to_string(e.q_scale) : std::string()) + ";";
  if (e.q_vec_dot == kk::QVecDot::kQ8_0) t += "q_vec_dot:q8_0;";
  if (e.q_vec_dot == kk::QVecDot::kF16) t += "q_vec_dot:f16;";
  if (e.q_vec_dot != kk::QVecDot::kNone && e.q_vec_dot_rot) t += "rot:" + std::to_string(e.q_vec_dot_rot) + ";";
  if (e.pv_fp8) t += "pv_fp8;";
  if (e.pv_accum == kk::PvAccum::kReduced) t += "reduced;";
  if (e.pv_accum == kk::PvAccum::kTwoLevel) t += "two_level:" + std::to_string(e.pv_promote_every) + ";";
  return t + "splits:" + std::to_string(e.splits) + "}";
}

struct PagedAttentionCase final : KernelCase {
  kk::KvStoreOptions kv;
  int seqs, ctx, rows, heads, kv_heads, d, window, splits;
  kk::AttentionEmulation emu{};
  std::string prefill;  // kernel switch "prefill": "" (tensor_core), "bf16x3", "generic" or "mma_sync"
  std::string decode;   // decode path: "" (the kernel chosen for the format), "tensor_core" or "cuda_core"
  bool out_bf16 = false;  // run again with bf16 output: every value must be the fp32 run's RNE rounding
  // Token magnitudes that rise and fall across pages (V 2^-4 .. 1.5 x 2^4, K 2^-1 .. 2^1): the
  // per-token scales of the tensor-core kernel's P terms must be rescaled when a page raises them.
  bool spread = false;
  // The prefill kernel takes the pages from a tile pool (prefill_tile_pool.h) decoded before it; the
  // case fails where the call takes none. The launch without it runs too: fp8 per tensor must give
  // the same bits (the same tiles and softmax), the others the same values to a rounding of the
  // softmax's rescale factor; where the pool's kernel takes 128 keys a step (prefill_pool_pairs_takes)
  // its weights round against other running maxima, each launch within the engine bound of the twin:
  // compared at 4 times it (the NMSE of a difference of two errors each within it).
  bool pool = false;
  // The prefill kernel multiplies fp16 operands (prefill_f16_operands_takes: an fp16 cache in engine
  // numerics), or (with pool) fp16 images of a q8_0, q4_0 or TurboQuant cache
  // (prefill_f16_images_takes); the case fails where the call does not. The launch with two bf16
  // terms an fp16 element (prefill_f16 off) runs too: the same products, so the same values to the
  // summation order; the images' launch against the exact values' (prefill_f16 off, no pool) differs
  // by the fp16 rounding of K and V, which moves weights across bf16 rounding boundaries: compared
  // at the engine bound's NMSE.
  bool f16 = false;
  double q_sigma = 2.0;  // Q's standard deviation (fp16 operands scale each query vector into range)
  // Every byte of the K and V pools NaN before the cache is written: the rows of a sequence's last,
  // partial page past its tokens must never reach the output (a NaN V row times p = 0 is NaN), since
  // a page a finished sequence left holds anything.
  bool poison = false;
  // The bf16 ring's producer copies whole pages by TMA (prefill_page_maps_takes: bf16, fp16 and the
  // fp16 images in engine numerics; every case gives the cache's size, as the engine does); the case
  // fails where the call does not. Wherever a call takes TMA, the launch without the cache's size
  // (cp.async copies) runs too and must give the same bits.
  bool tma = false;
  std::vector<std::vector<float>> k, v, q;  // per sequence: [ctx_s][kv_heads][d], [rows][heads][d]
  PagedAttentionCase(std::string format, nlohmann::json params, int seqs_, int ctx_, int rows_, int heads_, int kv_heads_,
                     int d_, int window_ = 0, int splits_ = 0)
      : kv{std::move(format), std::move(params)}, seqs(seqs_), ctx(ctx_), rows(rows_), heads(heads_), kv_heads(kv_heads_), d(d_),
        window(window_), splits(splits_) {}
  std::string op() const override { return "ATTENTION_PAGED"; }
  std::string vars() const override {
    return kv.format + params_text(kv.params) + ",seqs=" + std::to_string(seqs) + ",ctx=" + std::to_string(ctx) +
           ",rows=" + std::to_string(rows) + ",heads=" + std::to_string(heads) + "/" + std::to_string(kv_heads) +
           ",d=" + std::to_string(d) + (window ? ",window=" + std::to_string(window) : "") +
           (splits ? ",splits=" + std::to_string(splits) : "") + emu_text(emu) + (prefill.empty() ? "" : ",prefill=" + prefill) +
           (decode.empty() ? "" : ",decode=" + decode) + (out_bf16 ? ",out=bf16" : "") + (spread ? ",spread" : "") + (pool ? ",pool" : "") +
           (f16 ? ",f16" : "") + (poison ? ",poison" : "") + (tma ? ",tma" : "") + (q_sigma != 2.0 ? ",q_sigma=" + std::to_string(q_sigma) : "") + (emu.numerics == kk::AttentionNumerics::kEngine ? ",numerics=engine" : "");
  }
  // Emulation against exact attention over the same (Q-rounded) inputs: fp8 softmax weights and
  // FP22 accumulation cost up to ~1e-4 (measured <= 2e-5 on these shapes).
  // Engine numerics: the reference rounds the same bf16 operands from fp64 scores, so a weight next
  // to a bf16 rounding boundary may round the other way (up to 3e-9 measured; a missing rounding of
  // Q or P costs ~4e-6).
  double max_nmse_twin() const override {
    return emu.online() ? 1e-3 : emu.numerics == kk::AttentionNumerics::kEngine ? 1e-7 : 1e-10;
  }
  // The emulating kernel follows its twin step for step (double exps, exact k-step sums); only the
  // softmax denominator's summation order and the split merge's expf differ.
  // bf16x3 prefill: each product to 2^-16, not fp32's 2^-24.
  // Engine numerics: the twin rounds each weight exp(s - row max) to bf16, the kernels exp(s -
  // running max) of each page of keys, as FlashAttention does (other values, each rounded by up to
  // 2^-9), and the prefill kernel rounds a rotated format's Q in the rotated basis: 5e-7 to 1.3e-5
  // apart on an H100 (q8_0, rotated, the largest). That is also about what a missing rounding costs
  // (~4e-6), so this bound checks the kernels' engine path runs and stays at bf16 distance; that it
  // rounds at all is cuda-engine-test's (engine and exact logits differ, each within tolerance of
  // its CPU twin). Spread token magnitudes: the tokens of 16 times larger V carry the output, so
  // those roundings average over few weights (the per-token-head kernels also round p times the
  // token's V scale where the twin rounds p): 2.9e-5 measured (int4_per_token_head), and 3.1e-5
  // between q8_0's fp16 images and its exact values, on an H100.
  double max_nmse_gpu() const override {
    if (emu.numerics == kk::AttentionNumerics::kEngine) return spread ? 1e-4 : 3e-5;
    return emu.active() ? 1e-9 : prefill == "bf16x3" ? 1e-8 : 1e-10;
  }
  bool has_gpu() const override { return kCuda; }
  int ctx_of(int s) const { return std::max(rows, ctx - 37 * s); }  // ragged lengths
  void init(Rng& rng) override {
    k.assign(seqs, {});
    v.assign(seqs, {});
    q.assign(seqs, {});
    for (int s = 0; s < seqs; ++s) {
      k[s].resize(static_cast<std::size_t>(ctx_of(s)) * kv_heads * d);
      v[s].resize(k[s].size());
      q[s].resize(static_cast<std::size_t>(rows) * heads * d);
      fill_normal(rng, k[s]);
      fill_normal(rng, v[s]);
      fill_normal(rng, q[s], q_sigma);
      if (spread)
        for (std::size_t i = 0; i < k[s].size(); ++i) {
          const int t = static_cast<int>(i / (static_cast<std::size_t>(kv_heads) * d));
          v[s][i] *= static_cast<float>(std::ldexp(1.0 + (t % 5) / 8.0, (t / 97) % 9 - 4));
          k[s][i] *= static_cast<float>(std::ldexp(1.0, (t / 61) % 3 - 1));
        }
    }
  }
  std::unique_ptr<kk::KvStore> store_of(int s) const {
    auto st = kk::make_kv_store(kv, {.layers = 1, .kv_heads = kv_heads, .head_dim = d});
    for (int t = 0; t < ctx_of(s); ++t) {
      const std::size_t off = static_cast<std::size_t>(t) * kv_heads * d;
      st->append(0, k[s].data() + off, v[s].data() + off);
    }
    return st;
  }
  std::vector<int> positions(int s) const {
    std::vector<int> p(rows);
    for (int i = 0; i < rows; ++i) p[i] = ctx_of(s) - rows + i;
    return p;
  }
  // fp64 attention over the store's dequantized K/V; engine numerics round Q and the weights
  // exp(s - max) to bf16, the sum taken from the unrounded weights.
  std::vector<double> reference() override {
    std::vector<double> r;
    const int group = heads / kv_heads;
    const bool engine = emu.numerics == kk::AttentionNumerics::kEngine;
    const auto bf16 = [](double x) { return double(kk::bf16_to_f32(kk::f32_to_bf16(static_cast<float>(x)))); };
    for (int s = 0; s < seqs; ++s) {
      auto st = store_of(s);
      const int n = ctx_of(s);
      std::vector<std::vector<float>> kh(kv_heads, std::vector<float>(static_cast<std::size_t>(n) * d)), vh = kh;
      for (int h = 0; h < kv_heads; ++h) st->read(0, h, 0, n, kh[h].data(), vh[h].data());
      const std::vector<int> pos = positions(s);
      for (int i = 0; i < rows; ++i)
        for (int h = 0; h < heads; ++h) {
          const int kvh = h / group, b = window ? std::max(0, pos[i] - window + 1) : 0;
          std::vector<float> qr(d);  // Q as the emulated kernel rounds it
          kk::emu_q_row(emu, q[s].data() + (static_cast<std::size_t>(i) * heads + h) * d, qr.data(), d);
          std::vector<double> sc;
          double mx = -INFINITY;
          for (int t = b; t <= pos[i]; ++t) {
            double dot = 0;
            for (int j = 0; j < d; ++j) dot += double(qr[j]) * kh[kvh][static_cast<std::size_t>(t) * d + j];
            sc.push_back(dot / std::sqrt(double(d)));
            mx = std::max(mx, sc.back());
          }
          double sum = 0;
          for (double& e : sc) sum += (e = std::exp(e - mx));
          for (int j = 0; j < d; ++j) {
            double acc = 0;
            for (int t = b; t <= pos[i]; ++t)
              acc += (engine ? bf16(sc[t - b]) : sc[t - b]) * vh[kvh][static_cast<std::size_t>(t) * d + j];
            r.push_back(acc / sum);
          }
        }
    }
    return r;
  }
  bool cpu(std::vector<double>& out) override {
    out.clear();
    const float scale = static_cast<float>(1.0 / std::sqrt(double(d)));
    for (int s = 0; s < seqs; ++s) {
      auto st = store_of(s);
      const std::vector<int> pos = positions(s);
      Guarded<float> o(q[s].size());
      kk::AttentionWorkspace ws;
      kk::attention_kv_ref({.q = q[s].data(), .out = o.data(), .q_pos = pos.data(), .rows = rows, .heads = heads,
                            .kv_heads = kv_heads, .head_dim = d, .layer = 0, .window = window, .scale = scale,
                            .emulation = emu},
                           *st, ws);
      if (!o.guards_intact()) return false;
      out.insert(out.end(), o.data(), o.data() + q[s].size());
    }
    return true;
  }
  bool gpu(std::vector<double>& out) override {
#if defined(KVGATE_HAVE_CUDA)
    const kk::KvFormatSpec spec = spec_for(kv, kv_heads, d);
    kc::PagedKvCache cache(spec, {.page_tokens = 64, .max_seqs = seqs + 1, .max_tokens_per_seq = ctx});
    // Sequences take slots in reverse and pages interleaved, so a wrong table lookup shows.
    int max_len = 0;
    for (int t0 = 0; t0 < ctx; t0 += 64)
      for (int s = 0; s < seqs; ++s)
        if (t0 < ctx_of(s)) cache.reserve(seqs - s, std::min(ctx_of(s), t0 + 64));
    cache.sync_block_table(nullptr);
    const kc::KvLayerCodec& lc = cache.codec(0);
    if (poison) {
      const std::size_t rows_of_pool = static_cast<std::size_t>(cache.options().num_pages) * kv_heads * 64;
      KV_CUDA_CHECK(cudaMemset(cache.k_pool(0), 0xFF, rows_of_pool * lc.k_bytes));
      KV_CUDA_CHECK(cudaMemset(cache.v_pool(0), 0xFF, rows_of_pool * lc.v_bytes));
    }
    std::vector<float> kall, vall, qall;
    std::vector<int> wseq, wpos, qpos;
    std::vector<kc::AttentionTile> tiles;
    const int per_tile = kc::attention_rows_per_tile(heads / kv_heads);
    for (int s = 0; s < seqs; ++s) {
      kall.insert(kall.end(), k[s].begin(), k[s].end());
      vall.insert(vall.end(), v[s].begin(), v[s].end());
      for (int t = 0; t < ctx_of(s); ++t) {
        wseq.push_back(seqs - s);
        wpos.push_back(t);
      }
      const std::vector<int> pos = positions(s);
      for (int i = 0; i < rows; ++i) {
        const int r = static_cast<int>(qpos.size());
        if (i % per_tile == 0) tiles.push_back({seqs - s, r, 0});
        ++tiles.back().rows;
        qpos.push_back(pos[i]);
      }
      qall.insert(qall.end(), q[s].begin(), q[s].end());
      max_len = std::max(max_len, ctx_of(s));
    }
    write_layer0(cache, kv_heads, kall, vall, wseq, wpos, nullptr);
    const int ntiles = static_cast<int>(tiles.size());
    const int sp = emu.active() ? emu.splits : splits > 0 ? splits : kc::attention_splits(ntiles, kv_heads, max_len, 64);
    auto ws = poisoned_device<float>(kc::attention_workspace_floats(ntiles, kv_heads, sp, d));
    auto dq = to_device(qall);
    auto dqp = to_device(qpos);
    auto dt = to_device(tiles);
    auto o = poisoned_device<float>(qall.size());
    kc::PagedAttentionArgs args{.q = dq->get(), .out = o->get(), .row_pos = dqp->get(), .tiles = dt->get(), .num_tiles = ntiles,
                                .heads = heads, .kv_heads = kv_heads, .window = window,
                                .max_tile_rows = std::min(rows, per_tile), .max_ctx = max_len,
                                .scale = static_cast<float>(1.0 / std::sqrt(double(d))), .block_table = cache.block_table(),
                                .max_pages = cache.max_pages_per_seq(), .page_tokens = 64, .k_pool = cache.k_pool(0),
                                .v_pool = cache.v_pool(0), .cache_pages = cache.options().num_pages, .splits = sp,
                                .workspace = ws->get(), .emulation = emu,
                                .prefill = kc::prefill_kernel_named(prefill),
                                .decode = decode == "cuda_core"     ? kc::DecodeKernel::kCudaCore
                                          : decode == "tensor_core" ? kc::DecodeKernel::kTensorCore
                                                                    : kc::DecodeKernel::kAuto};
    // A case that names the tensor-core decode kernel must run it: paged_attention falls back to the
    // CUDA-core kernel (or the prefill path) silently, and the fallback would pass the comparison.
    if (decode == "tensor_core" && !(kc::decode_attention_supported(lc, args.max_tile_rows, heads / kv_heads) &&
                                     kc::decode_tensor_core_takes(lc)))
      throw std::runtime_error("decode=tensor_core names a kernel this call does not run");
    kc::PrefillTilePool tile_pool;
    if (pool && !tile_pool.prepare(lc, args, tiles.data(), ntiles, qpos.data(), nullptr))
      throw std::runtime_error("pool names a tile pool this call does not take");
    const bool images = f16 && kv.format != "fp16";
    const bool pairs = pool && kc::prefill_pool_pairs_takes(lc, args);
    if (images ? !(args.pool_table && kc::prefill_f16_images_takes(lc, args)) : f16 && !kc::prefill_f16_operands_takes(lc, args))
      throw std::runtime_error("f16 names fp16 operands this call does not take");
    const bool maps = kc::prefill_page_maps_takes(lc, args);
    if (tma && !maps) throw std::runtime_error("tma names TMA page copies this call does not take");
    kc::paged_attention(lc, args, nullptr);
    device_sync();
    std::vector<float> h(qall.size());
    o->download(h.data());
    out.assign(h.begin(), h.end());
    // The call again with other arguments b, into a fresh poisoned output: its results.
    const auto run_again = [&](kc::PagedAttentionArgs b) {
      auto ob = poisoned_device<float>(qall.size());
      b.out = ob->get();
      kc::paged_attention(lc, b, nullptr);
      device_sync();
      std::vector<float> r(qall.size());
      ob->download(r.data());
      return r;
    };
    if (maps) {  // the same launch with every page copied by cp.async: the same tiles, the same bits
      kc::PagedAttentionArgs copies = args;
      copies.cache_pages = 0;
      const std::vector<float> hc = run_again(copies);
      for (std::size_t i = 0; i < hc.size(); ++i)
        if (hc[i] != h[i]) out[i] = kNaN;
    }
    if (pool || f16) {  // the same launch without the pool, or with two bf16 terms an fp16 element
      kc::PagedAttentionArgs direct = args;
      direct.tile_pool = nullptr, direct.pool_plan = nullptr, direct.pool_seqs = direct.pool_pages = 0;
      direct.prefill_f16 = false;
      if (f16 && (kc::prefill_f16_operands_takes(lc, direct) || kc::prefill_f16_images_takes(lc, direct)))
        throw std::runtime_error("prefill_f16 off still takes fp16 operands");
      const std::vector<float> hd = run_again(direct);
      const bool same_softmax = kv.format == "fp8_e4m3" || kv.format == "fp8_e5m2";
      if (images || pairs) {
        const double e = nmse(std::vector<double>(h.begin(), h.end()), std::vector<double>(hd.begin(), hd.end()));
        const double bound = (images ? 1 : 4) * max_nmse_gpu();
        if (!(e <= bound))
          throw std::runtime_error(std::string(images ? "fp16 images against the exact values" : "128 keys a step against 64") +
                                   ": NMSE " + std::to_string(e) + " > " + std::to_string(bound));
      } else {
        for (std::size_t i = 0; i < hd.size(); ++i)
          if (same_softmax ? hd[i] != h[i] : !(std::abs(hd[i] - h[i]) <= 1e-5f * std::max(1.0f, std::abs(hd[i])))) out[i] = kNaN;
      }
    }
    if (out_bf16) {  // the same launch again, bf16 out
      auto ob = poisoned_device<std::uint16_t>(qall.size());
      args.out = nullptr;
      args.out_bf16 = ob->get();
      kc::paged_attention(lc, args, nullptr);
      device_sync();
      std::vector<std::uint16_t> hb(qall.size());
      ob->download(hb.data());
      for (std::size_t i = 0; i < hb.size(); ++i)
        if (hb[i] != kk::f32_to_bf16(h[i])) out[i] = kNaN;
    }
    return true;
#else
    (void)out;
    return false;
#endif
  }
};

}  // namespace

void add_kv_cases(std::vector<std::unique_ptr<KernelCase>>& cases) {
  using nlohmann::json;
  // Every slot format with its defaults, and the parameters that change the bytes.
  std::vector<std::pair<std::string, json>> formats;
  for (const std::string& f : kk::kv_format_names())
    if (f != "kivi2") formats.push_back({f, json::object()});
  formats.push_back({"fp8_e4m3", {{"k_scale", 0.05}, {"v_scale", 0.02}}});
  formats.push_back({"int8_per_token_head", {{"rounding", "trunc"}, {"input_dtype", "fp32"}}});
  formats.push_back({"int4_per_token_head", {{"hadamard", false}}});
  formats.push_back({"q4_0", {{"rotate", false}}});
  formats.push_back({"nvfp4", {{"k_tensor_scale", 0.01}, {"v_tensor_scale", 0.02}}});
  // kivi2's materialized cache: {params, prompts, prefill chunk, decode steps, kv_heads, head_dim}.
  // Chunks that straddle the thresholds (24 against R 32; 50 against R 64), the engine's 64-row
  // chunks at the defaults, one 256-row chunk crossing eight key windows, and decode steps that
  // cross key windows and quantize a value each step; inputs in bf16 and in fp32.
  using Prompts = std::vector<int>;
  cases.push_back(std::make_unique<KiviWriteCase>(json{{"group_size", 16}, {"residual", 32}}, Prompts{75, 40, 17}, 24, 40, 2, 32));
  cases.push_back(std::make_unique<KiviWriteCase>(json::object(), Prompts{250, 120, 70}, 64, 12, 2, 64));
  cases.push_back(std::make_unique<KiviWriteCase>(json{{"group_size", 16}, {"residual", 64}, {"input_dtype", "fp32"}},
                                                  Prompts{130, 64}, 50, 10, 3, 48));
  cases.push_back(std::make_unique<KiviWriteCase>(json{{"group_size", 32}, {"residual", 32}}, Prompts{300}, 256, 5, 1, 128));
  for (const auto& [f, p] : formats) {
    cases.push_back(std::make_unique<KvWriteCase>(f, p, 70, 3, 128));
    cases.push_back(std::make_unique<KvWriteCase>(f, p, 13, 2, 128, /*fused=*/true));
    // decode: a batch of ragged sequences, one row each, GQA 4
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 3, 300, 1, 8, 2, 128));
  }
  // kv_write's warp-parallel encoders at 8 elements a lane, and its serial path for a head size
  // (96) the parallel one does not take.
  for (const char* f : {"bf16", "fp16", "fp8_e5m2", "fp8_per_token_head", "int8_per_token_head", "int4_per_token_head"})
    cases.push_back(std::make_unique<KvWriteCase>(f, json::object(), 9, 2, 256));
  for (const char* f : {"fp32", "bf16", "int8_per_token_head"}) cases.push_back(std::make_unique<KvWriteCase>(f, json::object(), 9, 2, 96));
  for (const char* f : {"bf16", "int4_per_token_head", "q8_0"})
    for (int d : {64, 256}) cases.push_back(std::make_unique<KvWriteCase>(f, json::object(), 7, 2, d, /*fused=*/true));
  cases.push_back(std::make_unique<KvWriteCase>("bf16", json::object(), 7, 2, 96, /*fused=*/true));
  // The codec formats' warp-parallel encoders at 2 and 8 elements a lane (q4_0's nibble pairs across
  // lanes, NVFP4's blocks over 8 and 2 lanes, 3-bit codes across lane boundaries, the rotations at 64
  // and 256), and coarse inputs: ties of magnitude of either sign across lanes (q4_0 takes the first;
  // unrotated, so the grid stays), equal minima and maxima (TurboQuant's values).
  for (const char* f : {"q4_0", "nvfp4", "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_3bit_nc"})
    for (int d : {64, 256}) cases.push_back(std::make_unique<KvWriteCase>(f, json::object(), 7, 2, d, /*fused=*/true));
  const std::pair<const char*, json> coarse[] = {{"q8_0", json{{"rotate", false}}}, {"q4_0", json{{"rotate", false}}},
                                                 {"turboquant_4bit_nc", json::object()}, {"turboquant_k3v4_nc", json::object()}};
  for (const auto& [f, p] : coarse) {
    cases.push_back(std::make_unique<KvWriteCase>(f, p, 13, 2, 128, /*fused=*/true, /*coarse=*/true));
    cases.push_back(std::make_unique<KvWriteCase>(f, p, 9, 2, 128, /*fused=*/false, /*coarse=*/true));
  }
  // A prefill chunk's rows (128 or more: a block a row, a warp a head) through qkv_split_write.
  for (const char* f : {"bf16", "fp8_e4m3", "int4_per_token_head", "q8_0", "turboquant_k8v4"})
    cases.push_back(std::make_unique<KvWriteCase>(f, json::object(), 140, 3, 128, /*fused=*/true));
  // Shapes, head_dim 64/256, prefill chunks, windows and forced splits on a few formats.
  for (const char* f : {"bf16", "fp8_e4m3", "int4_per_token_head", "turboquant_k3v4_nc", "q8_0"}) {
    cases.push_back(std::make_unique<KvWriteCase>(f, json::object(), 5, 2, 64));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, json::object(), 2, 200, 24, 4, 4, 64, 0, 3));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, json::object(), 1, 1000, 9, 16, 2, 128, 100));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, json::object(), 2, 130, 1, 4, 1, 256, 0, 1));
  }
  cases.push_back(std::make_unique<PagedAttentionCase>("bf16", json::object(), 1, 1, 1, 2, 2, 16));  // one token
  // The bf16/fp16 fast path (head_dim 128, <= 4 query vectors a tile): windows, splits, two-row tiles.
  cases.push_back(std::make_unique<PagedAttentionCase>("bf16", json::object(), 2, 700, 1, 8, 2, 128, 100, 5));
  cases.push_back(std::make_unique<PagedAttentionCase>("fp16", json::object(), 2, 500, 2, 4, 2, 128));
  cases.push_back(std::make_unique<PagedAttentionCase>("bf16", json::object(), 3, 90, 1, 4, 4, 128, 0, 2));
  cases.push_back(std::make_unique<PagedAttentionCase>("fp32", json::object(), 4, 2100, 1, 32, 8, 128));

  // Engine emulation (--kernel-switches): {format, params, seqs, ctx, rows, heads, kv_heads, d, window, emulation}.
  using kk::PvAccum;
  using kk::QVecDot;
  const json fp8_scaled = {{"k_scale", 0.05}, {"v_scale", 0.02}};
  struct EmuCase {
    const char* format;
    json params;
    int seqs, ctx, rows, heads, kv_heads, d, window;
    kk::AttentionEmulation e;
  };
  const std::vector<EmuCase> emu_cases = {
      {"fp8_e4m3", fp8_scaled, 3, 300, 1, 8, 2, 128, 0, {.q_fp8 = true}},
      {"fp8_e4m3", fp8_scaled, 3, 300, 1, 8, 2, 128, 0, {.q_fp8 = true, .q_scale = 0.004f}},  // Q saturates at 448
      {"fp8_e4m3", fp8_scaled, 3, 300, 1, 8, 2, 128, 0, {.pv_fp8 = true}},
      {"fp8_e4m3", fp8_scaled, 3, 300, 1, 8, 2, 128, 0, {.pv_fp8 = true, .pv_accum = PvAccum::kReduced}},
      {"fp8_e4m3", fp8_scaled, 3, 300, 1, 8, 2, 128, 0,
       {.q_fp8 = true, .pv_fp8 = true, .pv_accum = PvAccum::kTwoLevel, .pv_promote_every = 64}},
      {"fp8_e4m3", json::object(), 1, 4100, 1, 32, 8, 128, 0, {.pv_fp8 = true, .pv_accum = PvAccum::kReduced}},
      {"fp8_e4m3", json::object(), 1, 4100, 1, 32, 8, 128, 0,
       {.pv_fp8 = true, .pv_accum = PvAccum::kTwoLevel, .pv_promote_every = 128, .splits = 5}},
      {"bf16", json::object(), 2, 700, 1, 8, 2, 128, 100, {.pv_fp8 = true, .pv_accum = PvAccum::kReduced, .splits = 3}},
      // prefill tiles: vectors of one tile with their own ranges and splits
      {"bf16", json::object(), 1, 1000, 9, 16, 2, 128, 100, {.q_fp8 = true, .pv_fp8 = true, .pv_accum = PvAccum::kReduced}},
      {"int4_per_token_head", json::object(), 2, 200, 24, 4, 4, 64, 0,
       {.pv_fp8 = true, .pv_accum = PvAccum::kTwoLevel, .pv_promote_every = 32, .splits = 3}},
      {"q8_0", json::object(), 2, 130, 1, 4, 1, 256, 0, {.q_fp8 = true, .pv_fp8 = true, .pv_accum = PvAccum::kReduced, .splits = 2}},
      // llama.cpp's Q vec_dot rounding, on the caches it pairs with: q8_0 blocks for q8_0 and q4_0 (in
      // the basis of their K rotation, as the engines set it: head_dim 128 -> 128, 64 -> 64; and
      // unrotated), f16 for f16; a prefill tile of 3 rows x GQA 4; a head_dim of 80 (a last block of 16).
      {"q8_0", json::object(), 2, 300, 1, 8, 2, 128, 0, {.q_vec_dot = QVecDot::kQ8_0, .q_vec_dot_rot = 128}},
      {"q4_0", json::object(), 2, 300, 3, 8, 2, 128, 0, {.q_vec_dot = QVecDot::kQ8_0, .q_vec_dot_rot = 128}},
      {"q4_0", {{"rotate", false}}, 2, 300, 1, 8, 2, 128, 0, {.q_vec_dot = QVecDot::kQ8_0}},
      {"fp16", json::object(), 2, 300, 1, 8, 2, 128, 0, {.q_vec_dot = QVecDot::kF16}},
      {"q4_0", json::object(), 1, 200, 1, 4, 1, 64, 0,
       {.pv_fp8 = true, .splits = 2, .q_vec_dot = QVecDot::kQ8_0, .q_vec_dot_rot = 64}},
      {"fp16", json::object(), 1, 150, 2, 4, 2, 80, 0, {.q_vec_dot = QVecDot::kQ8_0}},
  };
  for (const EmuCase& c : emu_cases) {
    auto pc = std::make_unique<PagedAttentionCase>(c.format, c.params, c.seqs, c.ctx, c.rows, c.heads, c.kv_heads, c.d, c.window);
    pc->emu = c.e;
    cases.push_back(std::move(pc));
  }
  // Engine numerics (bf16 Q and P, fp32 accumulation; the CUDA engine's default): decode rows of
  // ragged sequences, prefill tiles with a window, GQA 8 at head_dim 128, and quantized caches.
  const kk::AttentionEmulation engine{.numerics = kk::AttentionNumerics::kEngine};
  const std::vector<EmuCase> engine_cases = {
      {"bf16", json::object(), 3, 300, 1, 8, 2, 128, 0, engine},
      {"bf16", json::object(), 2, 200, 24, 4, 4, 64, 0, engine},
      {"bf16", json::object(), 1, 1000, 9, 16, 2, 128, 100, engine},
      {"fp8_e4m3", fp8_scaled, 2, 1500, 1, 32, 4, 128, 0, engine},
      // fp8 prefill tiles through the pipelined ring (decoded_ring): two sequences sharing blocks,
      // partial last pages; e5m2 with a window.
      {"fp8_e4m3", fp8_scaled, 2, 1500, 37, 32, 4, 128, 0, engine},
      {"fp8_e5m2", json::object(), 1, 1000, 9, 16, 2, 128, 100, engine},
      {"int4_per_token_head", json::object(), 2, 700, 2, 4, 2, 128, 150, engine},
      {"q8_0", json::object(), 2, 130, 37, 8, 2, 128, 0, engine},
  };
  // FlashAttention-3's fp8 Q and P under engine numerics (fp8_operands_fast): prefill tiles and
  // decode rows run the tensor-core prefill kernel (wgmma at head_dim 128, mma.sync at 64).
  // A q_scale that is no power of two: the kernel multiplies the fp8 code and descales the scores.
  // q4_0 rotates K onto Q, which the tensor-core kernel would round after: the emulating kernel runs.
  const kk::AttentionEmulation fa3{.q_fp8 = true, .pv_fp8 = true, .numerics = kk::AttentionNumerics::kEngine};
  kk::AttentionEmulation fa3_scaled = fa3;
  fa3_scaled.q_scale = 0.37f;
  const std::vector<EmuCase> fa3_cases = {
      {"fp8_e4m3", fp8_scaled, 2, 1500, 37, 32, 4, 128, 0, fa3},
      {"fp8_e4m3", fp8_scaled, 3, 300, 1, 8, 2, 128, 0, fa3},  // decode rows: the same kernel
      {"bf16", json::object(), 2, 700, 1, 32, 8, 64, 0, fa3_scaled},
      {"fp8_e4m3", fp8_scaled, 2, 700, 24, 4, 4, 64, 0, fa3_scaled},
      {"q4_0", json::object(), 1, 300, 20, 8, 2, 128, 0, fa3},
      {"bf16", json::object(), 1, 1000, 9, 16, 2, 128, 100, {.pv_fp8 = true, .numerics = kk::AttentionNumerics::kEngine}},
  };
  for (const auto* list : {&engine_cases, &fa3_cases})
    for (const EmuCase& c : *list) {
      auto pc = std::make_unique<PagedAttentionCase>(c.format, c.params, c.seqs, c.ctx, c.rows, c.heads, c.kv_heads, c.d, c.window);
      pc->emu = c.e;
      cases.push_back(std::move(pc));
    }
  // Prefill tiles through the tile pool (engine numerics, the formats the wgmma kernel decodes):
  // sequences in reversed slots with interleaved pages and ragged ends, GQA 8 with partial tiles,
  // forced splits; FlashAttention-3's fp8 Q and P on it.
  for (const auto& [f, p] : std::vector<std::pair<std::string, json>>{{"fp8_e4m3", fp8_scaled},
                                                                      {"fp8_e5m2", json::object()},
                                                                      {"fp8_per_token_head", json::object()},
                                                                      {"int8_per_token_head", json::object()},
                                                                      {"int4_per_token_head", json::object()},
                                                                      {"int4_per_token_head", {{"hadamard", false}}},
                                                                      {"nvfp4", {{"k_tensor_scale", 0.01}, {"v_tensor_scale", 0.02}}}})
    for (const EmuCase& c : std::vector<EmuCase>{{"", json(), 3, 300, 12, 8, 2, 128, 0, engine},
                                                 {"", json(), 2, 1500, 37, 32, 4, 128, 0, engine},
                                                 {"", json(), 2, 700, 24, 8, 2, 128, 0, engine}}) {
      auto pc = std::make_unique<PagedAttentionCase>(f, p, c.seqs, c.ctx, c.rows, c.heads, c.kv_heads, c.d, c.window,
                                                     c.ctx == 700 ? 3 : 0);
      pc->emu = c.e;
      pc->pool = true;
      cases.push_back(std::move(pc));
    }
  {
    auto pc = std::make_unique<PagedAttentionCase>("fp8_e4m3", fp8_scaled, 2, 1500, 37, 32, 4, 128);
    pc->emu = fa3;
    pc->pool = true;
    cases.push_back(std::move(pc));
  }
  // The decode path of every other format (paged_attention_decode.cu: head_dim 128, <= 4 query
  // vectors a tile): 24 pages in one split (the cp.async ring wraps many times), two-row tiles with a
  // window and forced splits, GQA 1 with three rows (3 query vectors), and GQA 8 (Qwen3-32B's
  // 64/8: two blocks of 4 query vectors per KV head).
  for (const auto& [f, p] : formats) {
    if (f == "fp32") continue;
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 2, 1500, 1, 8, 2, 128, 0, 1));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 2, 700, 2, 4, 2, 128, 150, 3));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 1, 260, 3, 2, 2, 128));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 2, 900, 1, 16, 2, 128));
  }
  // Other GQA groups on the decode path: 7 (Qwen2.5-7B's 28/4; the second part has 3 vectors), 5
  // (a part of 1), 16 (four parts), on both decode kernels.
  for (const auto& [f, heads, kv_heads, kernel] :
       {std::tuple{"bf16", 28, 4, "cuda_core"}, {"fp8_e4m3", 28, 4, "tensor_core"}, {"int4_per_token_head", 10, 2, ""},
        {"q8_0", 32, 2, ""}, {"fp16", 32, 2, "tensor_core"}}) {
    auto pc = std::make_unique<PagedAttentionCase>(f, json::object(), 3, 600, 1, heads, kv_heads, 128, 0, 0);
    pc->decode = kernel;
    cases.push_back(std::move(pc));
  }
  // bf16 output (what the engine's bf16 GEMMs read) from each merge: the decode path's (13 splits
  // over batch 1's 8 KV heads, both kernels), the generic kernel's (head_dim 64) and the prefill
  // path's.
  for (const char* kernel : {"tensor_core", "cuda_core"}) {
    auto pc = std::make_unique<PagedAttentionCase>("fp8_e4m3", json::object(), 1, 1700, 1, 32, 8, 128);
    pc->decode = kernel;
    pc->out_bf16 = true;
    cases.push_back(std::move(pc));
  }
  for (auto [ctx, rows, d] : {std::array<int, 3>{900, 1, 64}, {300, 37, 128}}) {
    auto pc = std::make_unique<PagedAttentionCase>("bf16", json::object(), 2, ctx, rows, 8, 2, d);
    pc->out_bf16 = true;
    cases.push_back(std::move(pc));
  }
  // The formats both decode kernels take (bf16, fp16, fp8 per tensor, the per-token-head ones, q8_0
  // and q4_0 with their block rotations and without, nvfp4 with tensor scales of 1, below 1 and above
  // 1, the last giving subnormal block scales; turboquant_k8v4): the cases above run the one chosen
  // for the format; these shapes run each kernel by name.
  std::vector<std::pair<std::string, json>> both = formats;
  both.push_back({"q8_0", {{"rotate", false}}});
  both.push_back({"nvfp4", {{"k_tensor_scale", 64.0}, {"v_tensor_scale", 32.0}}});  // subnormal e4m3 block scales
  for (const auto& [f, p] : both) {
    if (f == "fp32" || (f.rfind("turboquant_", 0) == 0 && f != "turboquant_k8v4")) continue;  // CUDA-core only
    for (const char* kernel : {"tensor_core", "cuda_core"})
      for (const auto& [seqs, ctx, rows, heads, window, splits] :
           {std::array<int, 6>{2, 1500, 1, 8, 0, 1}, std::array<int, 6>{2, 700, 2, 4, 150, 3}}) {
        auto pc = std::make_unique<PagedAttentionCase>(f, p, seqs, ctx, rows, heads, 2, 128, window, splits);
        pc->decode = kernel;
        cases.push_back(std::move(pc));
      }
  }
  for (const char* f :
       {"fp8_per_token_head", "int8_per_token_head", "int4_per_token_head", "q8_0", "q4_0", "nvfp4", "turboquant_k8v4"})
    for (const char* kernel : {"tensor_core", "cuda_core"}) {
      auto pc = std::make_unique<PagedAttentionCase>(f, json::object(), 2, 1500, 1, 8, 2, 128);
      pc->decode = kernel;
      pc->spread = true;
      cases.push_back(std::move(pc));
    }
  // The split merge past one round of loads (decode_combine_kernel: 16 splits a slice, 64 a block):
  // 79 pages in 79 splits, so each slice takes two rounds, on each decode kernel.
  for (const char* kernel : {"tensor_core", "cuda_core"}) {
    auto pc = std::make_unique<PagedAttentionCase>("fp8_e4m3", json::object(), 1, 5000, 1, 8, 2, 128, 0, 80);
    pc->decode = kernel;
    cases.push_back(std::move(pc));
  }
  // The tensor-core prefill path (paged_attention_prefill.cu: tiles of >= 2 rows, head_dim 64/128,
  // every format but fp32) for every format: GQA 4 with partial tiles over three ragged sequences
  // (a block's 4 tiles span two sequences), GQA 2 with head_dim 64, GQA 8 with a window and 3
  // forced splits, GQA 1 with head_dim 64 over 1100 tokens (18 pages in one split).
  for (const auto& [f, p] : formats) {
    if (f == "fp32") continue;
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 3, 300, 37, 8, 2, 128));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 2, 200, 20, 4, 2, 64));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 1, 400, 9, 16, 2, 128, 100, 3));
    cases.push_back(std::make_unique<PagedAttentionCase>(f, p, 1, 1100, 33, 2, 2, 64, 0, 1));
  }
  // Head_dim 128 over 35 pages in one split: the wgmma kernel's ring (bf16: four slots on mbarriers)
  // and its warpgroups' alternating turns wrap many times; a block's 8 tiles span both sequences, so
  // the ring's page count runs on from one sequence into the next.
  for (const char* f : {"bf16", "fp8_e4m3"}) cases.push_back(std::make_unique<PagedAttentionCase>(f, json::object(), 2, 2200, 40, 8, 2, 128, 0, 1));
  // Per-token scales on the prefill path (tiles of codes; K's scale on the score, V's on p): token
  // magnitudes that rise and fall across pages, over two sequences with a rotation (int4's default)
  // and without.
  for (const auto& [f, p] : std::vector<std::pair<std::string, json>>{
           {"fp8_per_token_head", json::object()}, {"int8_per_token_head", json::object()},
           {"int4_per_token_head", json::object()}, {"int4_per_token_head", {{"hadamard", false}}}}) {
    for (bool engine : {false, true}) {  // and in engine numerics (the wgmma kernel's one-term Q)
      auto pc = std::make_unique<PagedAttentionCase>(f, p, 2, 700, 29, 8, 2, 128);
      pc->spread = true;
      if (engine) pc->emu.numerics = kk::AttentionNumerics::kEngine;
      cases.push_back(std::move(pc));
    }
  }
  // The decoded formats in engine numerics over 35 pages in one split: their rings wrap many times.
  for (const char* f : {"fp8_e4m3", "int8_per_token_head", "int4_per_token_head", "nvfp4"}) {
    auto pc = std::make_unique<PagedAttentionCase>(f, json::object(), 2, 2200, 40, 8, 2, 128, 0, 1);
    pc->emu.numerics = kk::AttentionNumerics::kEngine;
    cases.push_back(std::move(pc));
  }
  // And over sequences of two pages, three of them in one block: each sequence's range is shorter
  // than the raw ring's lead (the copies of pages pb + 2.. are skipped), and the ring's page count
  // runs on across the three.
  for (const char* f : {"fp8_e4m3", "fp8_per_token_head", "int4_per_token_head", "nvfp4"}) {
    auto pc = std::make_unique<PagedAttentionCase>(f, json::object(), 3, 100, 12, 8, 2, 128, 0, 1);
    pc->emu.numerics = kk::AttentionNumerics::kEngine;
    cases.push_back(std::move(pc));
  }
  // The same shape on the generic kernel ({"prefill": "generic"}: its error against the twin is the
  // reference), in bf16x3 mode ({"prefill": "bf16x3"}: 2^-16 per product, a looser bound) and on the
  // mma.sync kernel ({"prefill": "mma_sync"}: the default runs wgmma on an H100/H200);
  // docs/bench-notes/cuda-decoder-measurements.md, Numerics, compares them.
  for (const char* f : {"bf16", "fp16", "fp8_e4m3", "int8_per_token_head", "int4_per_token_head", "q4_0", "turboquant_k3v4_nc"})
    for (const char* mode : {"generic", "bf16x3", "mma_sync"}) {
      auto pc = std::make_unique<PagedAttentionCase>(f, json::object(), 3, 300, 37, 8, 2, 128);
      pc->prefill = mode;
      cases.push_back(std::move(pc));
    }
  // fp16 prefill tiles with fp16 operands (engine numerics on the wgmma kernel): the shapes of the
  // pool cases, a window, 35 pages in one split (the ring wraps), token magnitudes that rise and fall,
  // and queries of largest |q| about 2^17 (past fp16's range unless scaled) and 2^-8.
  for (const auto& [seqs, ctx, rows, heads, kv_heads, window, splits, q_sigma, spread] :
       std::vector<std::tuple<int, int, int, int, int, int, int, double, bool>>{{3, 300, 12, 8, 2, 0, 0, 2.0, false},
                                                                                {2, 1500, 37, 32, 4, 0, 0, 2.0, false},
                                                                                {2, 700, 24, 8, 2, 0, 3, 2.0, true},
                                                                                {1, 1000, 9, 16, 2, 100, 0, 2.0, false},
                                                                                {2, 2200, 40, 8, 2, 0, 1, 2.0, false},
                                                                                {2, 300, 37, 8, 2, 0, 0, 32768.0, false},
                                                                                {2, 300, 37, 8, 2, 0, 0, 1.0 / 1024, false}}) {
    auto pc = std::make_unique<PagedAttentionCase>("fp16", json::object(), seqs, ctx, rows, heads, kv_heads, 128, window, splits);
    pc->emu = engine;
    pc->f16 = true;
    pc->q_sigma = q_sigma;
    pc->spread = spread;
    cases.push_back(std::move(pc));
  }
  // The wgmma kernel's bf16 ring (its copies write zeros past a page's tokens) over NaN-poisoned
  // pools: bf16 in both numerics, fp16 operands and the fp16 cache's own kernel (f16's second launch);
  // ragged lengths (300, 263, 226: partial last pages), several sequences a block, a 35-page split.
  for (const auto& [f, eng, seqs, ctx, rows, splits] : std::vector<std::tuple<std::string, bool, int, int, int, int>>{
           {"bf16", true, 3, 300, 37, 0}, {"bf16", false, 3, 300, 37, 0}, {"bf16", true, 2, 2200, 40, 1}, {"fp16", true, 3, 300, 37, 0}}) {
    auto pc = std::make_unique<PagedAttentionCase>(f, json::object(), seqs, ctx, rows, 8, 2, 128, 0, splits);
    if (eng) pc->emu = engine;
    pc->f16 = f == "fp16";
    pc->poison = true;
    pc->tma = eng;
    cases.push_back(std::move(pc));
  }
  // fp16 images of the formats whose values need several bf16 terms: llama.cpp's q8_0 (rotated, its
  // default at head_dim 128) and q4_0, TurboQuant's fp8 keys and its rotated Lloyd-Max keys.
  for (const auto& [f, p] : std::vector<std::pair<std::string, json>>{{"q8_0", json::object()},
                                                                      {"q4_0", {{"rotate", false}}},
                                                                      {"turboquant_k8v4", json::object()},
                                                                      {"turboquant_4bit_nc", json::object()}})
    for (const auto& [seqs, ctx, rows, heads, kv_heads, splits, spread] :
         std::vector<std::tuple<int, int, int, int, int, int, bool>>{{3, 300, 12, 8, 2, 0, false}, {2, 1500, 37, 32, 4, 0, false},
                                                                     {2, 700, 24, 8, 2, 3, true}}) {
      auto pc = std::make_unique<PagedAttentionCase>(f, p, seqs, ctx, rows, heads, kv_heads, 128, 0, splits);
      pc->emu = engine;
      pc->pool = true;
      pc->f16 = true;
      pc->spread = spread;
      pc->tma = true;
      cases.push_back(std::move(pc));
    }
}

}  // namespace kcase
