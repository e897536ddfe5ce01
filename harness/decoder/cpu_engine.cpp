// The CPU engine: one Session per sequence in flight (at most max_batch, kept warm between calls),
// each with its own pool of `threads` workers. Concurrent calls decode side by side instead of
// batching; a sequence owns its session from start to end, so every result is bit-identical
// whatever the concurrency, and identical to a lone Session (the golden path). Its attention is
// exact unless the "numerics" switch says "engine": the CPU is the twin the CUDA kernels are checked
// against, its speed does not depend on the mode, and the shipped demo results were measured exact
// (docs/reference-decoder.md, "Numerics").
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <mutex>

#include "harness/core/error.h"
#include "harness/decoder/engine.h"
#include "harness/decoder/kernel_switches.h"
#include "kernels/kv_format.h"

namespace kvgate::decoder {

namespace {

class CpuEngine final : public Engine {
 public:
  CpuEngine(std::shared_ptr<const Model> model, const EngineOptions& o) : model_(std::move(model)), options_(o) {
    if (o.max_batch < 1) throw Error("--max-batch must be at least 1", kExitUsage);
    if (o.threads < 1) throw Error("--threads must be at least 1", kExitUsage);
    const KernelSwitches k = resolve_kernel_switches(o.kernel_switches);
    if (!k.gemm.empty())
      throw Error("--kernel-switches: \"gemm\" sets the CUDA engine's GEMM operand dtype; the CPU engine's matmuls are "
                  "fp32 (drop it, or use --device cuda)");
    if (!k.prefill.empty())
      throw Error("--kernel-switches: \"prefill\" picks the CUDA engine's prefill attention kernel; the CPU engine has one "
                  "exact attention (drop it, or use --device cuda)");
    if (k.attention_splits > 0 && !k.attention.active())
      throw Error("--kernel-switches: \"attention_splits\" alone only divides the CUDA kernel's work; the CPU engine's exact "
                  "attention has no splits (drop it, or add an emulation switch such as \"pv_fp8\")");
    if (k.has_cuda_graphs)
      throw Error("--kernel-switches: \"cuda_graphs\" chooses how the CUDA engine launches its decode steps; the CPU "
                  "engine has no graphs (drop it, or use --device cuda)");
    if (k.has_prefill_pool)
      throw Error("--kernel-switches: \"prefill_pool\" chooses where the CUDA engine decodes quantized pages for its prefill "
                  "attention; the CPU engine decodes each page as it reads it (drop it, or use --device cuda)");
    if (k.has_gemv)
      throw Error("--kernel-switches: \"gemv\" chooses the CUDA engine's kernels for small decode steps; the CPU "
                  "engine has one matrix product (drop it, or use --device cuda)");
    attention_ = k.attention;
    attention_.numerics = resolve_numerics(k.numerics, default_numerics("cpu"));
    if (k.prefill_chunk > 0) max_chunk_ = k.prefill_chunk;
    switches_ = o.kernel_switches.is_object() ? o.kernel_switches : nlohmann::json::object();
    const ModelConfig& c = model_->config();
    shape_ = {.layers = c.num_layers, .kv_heads = c.num_kv_heads, .head_dim = c.head_dim};
    const kernels::KvFormatSpec spec = kernels::resolve_kv_format(o.kv, shape_);  // a bad format fails here, not per request
    record_ = spec.record();
    attention_.q_vec_dot_rot = spec.k_rotation_block;  // llama.cpp rounds Q rotated as its K cache is
    absmax_.k.assign(c.num_layers, std::vector<float>(c.num_kv_heads, 0.0f));
    absmax_.v = absmax_.k;
  }

  Generation generate(std::span<const int> prompt, const GenerateOptions& options) override {
    Lease s(*this);
    Generation g = decoder::generate(*s, prompt, options);
    record_absmax(*s);
    return g;
  }

  ContinuationScore score(std::span<const int> prompt, std::span<const int> continuation,
                          const PositionFn& on_position) override {
    Lease s(*this);
    ContinuationScore r = score_continuation(*s, prompt, continuation, on_position);
    record_absmax(*s);
    return r;
  }

  KvAbsmax kv_absmax() const override {
    std::lock_guard<std::mutex> lock(absmax_mu_);
    return absmax_;
  }

  nlohmann::json describe() const override {
    return {{"engine", "kvgate reference decoder, CPU"},
            {"device", "cpu"},
            {"precision", attention_.active()
                              ? "weights widened to fp32; fp32 matmuls; attention over the KV store emulating an engine "
                                "kernel (kernel_switches)"
                          : attention_.numerics == kernels::AttentionNumerics::kEngine
                              ? "weights widened to fp32; fp32 matmuls; attention over the KV store with Q and the softmax "
                                "weights rounded to bf16 before the products, fp32 accumulation (engine numerics)"
                              : "weights widened to fp32; fp32 matmuls and attention (exact softmax) over the KV store"},
            {"kv", record_},
            {"kernel_switches", switches_},
            {"attention_numerics", numerics_name(attention_.numerics)},
            {"prefill_chunk", max_chunk_},
            {"threads", options_.threads},
            {"max_batch", options_.max_batch},
            {"batching", "none: concurrent sequences run side by side, one session each"}};
  }

 private:
  // A session borrowed for one call; waits while max_batch sequences are in flight.
  class Lease {
   public:
    explicit Lease(CpuEngine& e) : e_(e), s_(e.acquire()) {}
    ~Lease() { e_.release(std::move(s_)); }
    Session& operator*() { return *s_; }

   private:
    CpuEngine& e_;
    std::unique_ptr<Session> s_;
  };

  std::unique_ptr<Session> acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || live_ < options_.max_batch; });
    if (!idle_.empty()) {
      std::unique_ptr<Session> s = std::move(idle_.back());
      idle_.pop_back();
      return s;
    }
    ++live_;
    lock.unlock();
    try {
      return std::make_unique<Session>(
          model_, SessionOptions{.kv = options_.kv, .max_chunk = max_chunk_, .threads = options_.threads, .attention = attention_});
    } catch (...) {
      std::lock_guard<std::mutex> relock(mu_);
      --live_;
      cv_.notify_one();
      throw;
    }
  }

  void release(std::unique_ptr<Session> s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      idle_.push_back(std::move(s));
    }
    cv_.notify_one();
  }

  // The maxima of what this sequence left in its cache (K after q/k norm and RoPE, V as
  // projected; as the store returns them, so a bf16 store gives the maxima of the bf16 values).
  void record_absmax(const Session& s) {
    const kernels::KvStore& kv = s.kv();
    KvAbsmax local;
    local.k.assign(shape_.layers, std::vector<float>(shape_.kv_heads, 0.0f));
    local.v = local.k;
    std::vector<float> k, v;
    for (int l = 0; l < shape_.layers; ++l) {
      const int n = kv.size(l);
      if (n == 0) continue;
      k.resize(static_cast<std::size_t>(n) * shape_.head_dim);
      v.resize(k.size());
      for (int h = 0; h < shape_.kv_heads; ++h) {
        kv.read(l, h, 0, n, k.data(), v.data());
        float mk = 0.0f, mv = 0.0f;
        for (std::size_t i = 0; i < k.size(); ++i) {
          mk = std::max(mk, std::fabs(k[i]));
          mv = std::max(mv, std::fabs(v[i]));
        }
        local.k[l][h] = mk;
        local.v[l][h] = mv;
      }
    }
    std::lock_guard<std::mutex> lock(absmax_mu_);
    for (int l = 0; l < shape_.layers; ++l)
      for (int h = 0; h < shape_.kv_heads; ++h) {
        absmax_.k[l][h] = std::max(absmax_.k[l][h], local.k[l][h]);
        absmax_.v[l][h] = std::max(absmax_.v[l][h], local.v[l][h]);
      }
  }

  std::shared_ptr<const Model> model_;
  EngineOptions options_;
  kernels::KvShape shape_;
  nlohmann::json record_;
  kernels::AttentionEmulation attention_;
  int max_chunk_ = SessionOptions{}.max_chunk;  // rows per prefill forward ("prefill_chunk")
  nlohmann::json switches_ = nlohmann::json::object();
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Session>> idle_;
  int live_ = 0;
  mutable std::mutex absmax_mu_;
  KvAbsmax absmax_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(std::shared_ptr<const Model> model, const EngineOptions& options) {
  return std::make_unique<CpuEngine>(std::move(model), options);
}

}  // namespace kvgate::decoder
