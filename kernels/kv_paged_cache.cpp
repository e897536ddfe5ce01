// PagedKvCache (kv_paged_cuda.h): device pools and codec tables per layer, host page bookkeeping.
#include <algorithm>
#include <string>

#include "kernels/codec_ggml.h"
#include "kernels/codec_nvfp4.h"
#include "kernels/codec_turboquant.h"
#include "harness/core/error.h"
#include "kernels/cuda_check.cuh"
#include "kernels/kv_paged_cuda.h"
#include "kernels/turboquant_centroids.h"

namespace kvgate::kernels::cuda {

const char* kv_family_name(KvFamily f) {
  static const char* names[] = {"f32", "bf16", "f16", "fp8_tensor", "fp8_pth", "int8_pth",
                                "int4_pth", "nvfp4", "q8_0", "q4_0", "tq_fp8_key", "tq_mse"};
  const int i = static_cast<int>(f);
  return i >= 0 && i < static_cast<int>(KvFamily::kCount) ? names[i] : "?";
}

namespace {

float* upload_floats(const std::vector<float>& v, std::vector<void*>& owned) {
  float* p = nullptr;
  KV_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(1, v.size()) * sizeof(float)));
  owned.push_back(p);
  if (!v.empty()) KV_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return p;
}

}  // namespace

KvLayerCodec make_layer_codec(const KvFormatSpec& spec, int layer, const std::function<const float*(const std::vector<float>&)>& table) {
  const std::string& f = spec.format;
  const int d = spec.shape.head_dim;
  KvLayerCodec c;
  c.head_dim = d;
  c.round_bf16 = spec.round_input_bf16;
  if (spec.skipped(layer) || f == "bf16") {
    c.family = KvFamily::kBf16;
    c.k_bytes = c.v_bytes = 2 * d;
  } else if (f == "fp32") {
    c.family = KvFamily::kF32;
    c.k_bytes = c.v_bytes = 4 * d;
  } else if (f == "kivi2") {  // materialized: fp32 slots holding what the store reads (kv_paged_cuda.h)
    c.family = KvFamily::kF32;
    c.k_bytes = c.v_bytes = 4 * d;
    c.kivi_group = spec.kivi_group;
    c.kivi_residual = spec.kivi_residual;
    c.kivi_bits = spec.kivi_bits;
  } else if (f == "fp16") {
    c.family = KvFamily::kF16;
    c.k_bytes = c.v_bytes = 2 * d;
  } else if (f == "fp8_e4m3" || f == "fp8_e5m2") {
    c.family = KvFamily::kFp8Tensor;
    c.fp8_kind = f == "fp8_e4m3" ? Fp8Kind::kE4M3 : Fp8Kind::kE5M2;
    c.k_bytes = c.v_bytes = d;
    c.k_scales = table(spec.scales.k[layer]);
    c.v_scales = table(spec.scales.v[layer]);
  } else if (f == "fp8_per_token_head" || f == "int8_per_token_head") {
    c.family = f == "fp8_per_token_head" ? KvFamily::kFp8Pth : KvFamily::kInt8Pth;
    c.rounding = spec.rounding;
    c.k_bytes = c.v_bytes = d + 4;
  } else if (f == "int4_per_token_head") {
    c.family = KvFamily::kInt4Pth;
    c.k_bytes = c.v_bytes = d / 2 + 4;
    if (!spec.hadamard_signs.empty()) c.signs = table(spec.hadamard_signs);
  } else if (f == "nvfp4") {
    c.family = KvFamily::kNvfp4;
    c.k_bytes = c.v_bytes = d / 2 + d / kNvfp4Block;
    c.k_scales = table(spec.scales.k[layer]);
    c.v_scales = table(spec.scales.v[layer]);
  } else if (f == "q8_0" || f == "q4_0") {
    c.family = f == "q8_0" ? KvFamily::kQ8_0 : KvFamily::kQ4_0;
    c.k_bytes = c.v_bytes = d / kGgmlBlock * (f == "q8_0" ? kQ8_0Bytes : kQ4_0Bytes);
    c.k_rot = spec.k_rotation_block;
    c.v_rot = spec.v_rotation_block;
  } else if (f.rfind("turboquant_", 0) == 0) {
    const TurboQuantPreset& p = spec.turboquant;
    c.family = p.key_bits == 8 ? KvFamily::kTqFp8Key : KvFamily::kTqMse;
    c.key_bits = p.key_bits;
    c.value_bits = p.value_bits;
    c.norm_correction = p.norm_correction;
    c.k_bytes = tq_key_bytes(d, p.key_bits);
    c.v_bytes = tq_slot_bytes(d, p) - c.k_bytes;
    if (p.key_bits != 8) {
      const LloydMaxTable& t = turboquant_table(d, p.key_bits);
      c.centroids = table(t.centroids);
      c.midpoints = table(t.midpoints);
    }
  } else {
    throw Error("--kv-format " + f + " has no CUDA codec; use --device cpu", kExitInternal);
  }
  return c;
}

PagedKvCache::PagedKvCache(const KvFormatSpec& spec, const PagedKvOptions& options) : spec_(spec), o_(options) {
  const KvShape& sh = spec_.shape;
  if (o_.page_tokens != 64) throw Error("PagedKvCache: page_tokens must be 64 (the attention tile)", kExitInternal);
  if (sh.head_dim > kMaxHeadDim || sh.head_dim % 16 != 0)
    throw Error("--device cuda: head_dim " + std::to_string(sh.head_dim) + " is not supported (a multiple of 16 up to " +
                std::to_string(kMaxHeadDim) + "); use --device cpu");
  if (o_.max_seqs <= 0 || o_.max_tokens_per_seq <= 0)
    throw Error("PagedKvCache: max_seqs and max_tokens_per_seq must be positive", kExitInternal);
  max_pages_ = (o_.max_tokens_per_seq + o_.page_tokens - 1) / o_.page_tokens;
  if (o_.num_pages <= 0) o_.num_pages = max_pages_ * o_.max_seqs;
  const auto upload = [&](const std::vector<float>& v) -> const float* { return upload_floats(v, owned_); };
  for (int l = 0; l < sh.layers; ++l) {
    const KvLayerCodec c = make_layer_codec(spec_, l, upload);
    codecs_.push_back(c);
    std::uint8_t *kp = nullptr, *vp = nullptr;
    KV_CUDA_CHECK(cudaMalloc(&kp, static_cast<std::size_t>(o_.num_pages) * sh.kv_heads * o_.page_tokens * c.k_bytes));
    k_pool_.push_back(kp);
    KV_CUDA_CHECK(cudaMalloc(&vp, static_cast<std::size_t>(o_.num_pages) * sh.kv_heads * o_.page_tokens * c.v_bytes));
    v_pool_.push_back(vp);
  }
  table_.assign(static_cast<std::size_t>(o_.max_seqs) * max_pages_, -1);
  seq_pages_.assign(o_.max_seqs, 0);
  for (int p = o_.num_pages - 1; p >= 0; --p) free_.push_back(p);
  KV_CUDA_CHECK(cudaMalloc(&d_table_, table_.size() * sizeof(int)));
  KV_CUDA_CHECK(cudaMemcpy(d_table_, table_.data(), table_.size() * sizeof(int), cudaMemcpyHostToDevice));
  const std::size_t am = static_cast<std::size_t>(sh.layers) * sh.kv_heads * 2;
  KV_CUDA_CHECK(cudaMalloc(&d_absmax_, am * sizeof(float)));
  KV_CUDA_CHECK(cudaMemset(d_absmax_, 0, am * sizeof(float)));
}

PagedKvCache::~PagedKvCache() {
  for (auto* p : k_pool_) cudaFree(p);
  for (auto* p : v_pool_) cudaFree(p);
  for (auto* p : owned_) cudaFree(p);
  cudaFree(d_table_);
  cudaFree(d_absmax_);
}

double PagedKvCache::pool_bytes() const {
  double b = 0;
  for (int l = 0; l < spec_.shape.layers; ++l) b += static_cast<double>(k_region_bytes(l) + v_region_bytes(l));
  return b * o_.num_pages * spec_.shape.kv_heads;
}

double PagedKvCache::device_bytes_per_token(const KvFormatSpec& spec) {
  if (spec.format != "kivi2") return spec.bytes_per_token();
  double b = 0;
  for (int l = 0; l < spec.shape.layers; ++l)
    b += spec.skipped(l) ? spec.layers[l].k + spec.layers[l].v : 8.0 * spec.shape.head_dim;
  return b * spec.shape.kv_heads;
}

std::size_t PagedKvCache::k_region_bytes(int layer) const { return static_cast<std::size_t>(o_.page_tokens) * codecs_[layer].k_bytes; }
std::size_t PagedKvCache::v_region_bytes(int layer) const { return static_cast<std::size_t>(o_.page_tokens) * codecs_[layer].v_bytes; }

void PagedKvCache::reserve(int seq, int tokens) {
  if (seq < 0 || seq >= o_.max_seqs) throw Error("PagedKvCache: sequence slot out of range", kExitInternal);
  if (tokens > o_.max_tokens_per_seq)
    throw Error("--device cuda: a sequence of " + std::to_string(tokens) + " tokens exceeds the engine's context of " +
                std::to_string(o_.max_tokens_per_seq) + " tokens (raise the engine's max context)");
  const int need = (tokens + o_.page_tokens - 1) / o_.page_tokens;
  while (seq_pages_[seq] < need) {
    if (free_.empty()) throw Error("--device cuda: the KV cache pool is full (lower the batch or the context)");
    table_[static_cast<std::size_t>(seq) * max_pages_ + seq_pages_[seq]++] = free_.back();
    free_.pop_back();
    dirty_ = true;
  }
}

void PagedKvCache::release(int seq) {
  for (int i = 0; i < seq_pages_[seq]; ++i) {
    int& p = table_[static_cast<std::size_t>(seq) * max_pages_ + i];
    free_.push_back(p);
    p = -1;
    dirty_ = true;
  }
  seq_pages_[seq] = 0;
}

void PagedKvCache::sync_block_table(cudaStream_t s) {
  if (!dirty_) return;
  dirty_ = false;
  KV_CUDA_CHECK(cudaMemcpyAsync(d_table_, table_.data(), table_.size() * sizeof(int), cudaMemcpyHostToDevice, s));
  // The host vector may change right after: wait for the copy (it is small).
  KV_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace kvgate::kernels::cuda
