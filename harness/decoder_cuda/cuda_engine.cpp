// make_cuda_engine (engine.h): the CUDA engine. One worker thread owns the device: callers of
// generate()/score() queue a request and wait; the worker prefills new requests (chunks of max_rows
// rows; generation requests admitted together share each chunk, prefill_together(); scoring requests
// and kivi2 one at a time, kivi2 in the CPU Session's chunks, prefill_chunk()), then runs one decode step for every
// active sequence together (one forward over a batch of rows, so throughput grows with the batch),
// samples each on the device (greedy: the argmax; temperature: kernels::cuda::sample_rows, the CPU
// path's sampler rule and Rng stream, sampling.h), and finishes sequences on stop tokens, stop strings or
// the token budget exactly as generate.cpp does. Kernel switches (decoder/kernel_switches.h):
// "gemm" (the GEMM operand dtype; bf16 default), "attention_splits", "prefill" (tensor_core
// default, bf16x3, or the generic kernel), "cuda_graphs" (decode steps replayed as CUDA graphs;
// default true), "prefill_pool" (quantized pages decoded once a layer before the prefill attention;
// default true), and the attention emulation (q_fp8, pv_fp8, pv_accum, ...), which runs the generic
// attention kernel's emulating instantiation; anything else is an Error.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "kernels/cuda_info.h"
#include "harness/decoder/engine.h"
#include "harness/decoder/kernel_switches.h"
#include "harness/decoder/score.h"
#include "harness/decoder/session.h"
#include "harness/decoder_cuda/cuda_forward.h"
#include "kernels/kv_format.h"

namespace kvgate::decoder {

namespace kc = kernels::cuda;

namespace {

struct Request {
  bool scoring = false;
  std::vector<int> prompt, continuation;
  GenerateOptions gen;
  PositionFn on_position;
  std::promise<void> done;
  Generation generation;
  ContinuationScore score;
  // decode state
  int slot = -1, pos = 0, last = -1;
  std::unique_ptr<Rng> rng;
  std::size_t longest_stop = 0;
};

class CudaEngine final : public Engine {
 public:
  CudaEngine(std::shared_ptr<const Model> model, const EngineOptions& options) : model_(std::move(model)), options_(options) {
    if (kernels::cuda_device_count() == 0)
      throw Error("--device cuda: no CUDA device (" + kernels::cuda_describe() + "); use --device cpu");
    KernelSwitches k = resolve_kernel_switches(options_.kernel_switches);
    const kc::GemmType gemm = k.gemm == "fp32" ? kc::GemmType::kF32 : kc::GemmType::kBf16;
    const ModelConfig& mc = model_->config();
    // llama.cpp rounds Q rotated as its K cache is (q_vec_dot); a bad format fails in CudaForward.
    if (k.attention.q_vec_dot != kernels::QVecDot::kNone)
      k.attention.q_vec_dot_rot =
          kernels::resolve_kv_format(options_.kv, {.layers = mc.num_layers, .kv_heads = mc.num_kv_heads, .head_dim = mc.head_dim})
              .k_rotation_block;
    attention_ = k.attention;
    // Engine numerics by default: the user's engine multiplies bf16 operands, and one tensor-core
    // product per element instead of three makes a 128K prefill 1.7x faster with a bf16 cache
    // (docs/reference-decoder.md, "Numerics").
    attention_.numerics = resolve_numerics(k.numerics, default_numerics("cuda"));
    prefill_ = kc::prefill_kernel_named(k.prefill);
    if (k.prefill_chunk > 0) kivi_chunk_ = k.prefill_chunk;
    if (prefill_ == kc::PrefillKernel::kBf16x3 && attention_.numerics == kernels::AttentionNumerics::kEngine)
      throw Error("--kernel-switches: \"prefill\": \"bf16x3\" is a term count of exact numerics; add \"numerics\": \"exact\" "
                  "(or drop \"prefill\": engine numerics already take one bf16 term of Q and P)");
    if (options_.max_batch <= 0) throw Error("--max-batch must be positive");
    weights_ = CudaWeights::upload(*model_, gemm);
    // Prefill chunks as the user's engine takes them on this GPU (cuda_default_prefill_chunk).
    const kernels::CudaDeviceInfo gpu = kernels::cuda_current_device();
    const int chunk = k.prefill_chunk > 0 ? k.prefill_chunk : cuda_default_prefill_chunk(gpu.name, gpu.total_bytes);
    forward_ = std::make_unique<CudaForward>(model_->config(), weights_,
                                             CudaForwardOptions{.kv = options_.kv,
                                                                .max_rows = std::max(chunk, options_.max_batch),
                                                                .max_seqs = options_.max_batch,
                                                                .splits = k.attention_splits,
                                                                .emulation = attention_,
                                                                .prefill = prefill_,
                                                                .prefill_pool = k.prefill_pool,
                                                                .cuda_graphs = k.cuda_graphs,
                                                                .gemv_rows = k.gemv_rows});
    for (int s = options_.max_batch - 1; s >= 0; --s) free_slots_.push_back(s);
    worker_ = std::thread([this] { run(); });
  }

  ~CudaEngine() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  Generation generate(std::span<const int> prompt, const GenerateOptions& options) override {
    if (prompt.empty()) throw Error("generate: the prompt has no tokens");
    if (!options.stop.empty() && !options.token_text)
      throw Error("generate: stop strings need a tokenizer to decode text", kExitInternal);
    for (const std::string& s : options.stop)
      if (s.empty()) throw Error("stop strings must not be empty");
    auto r = std::make_unique<Request>();
    r->prompt.assign(prompt.begin(), prompt.end());
    r->gen = options;
    return std::move(submit(std::move(r))->generation);
  }

  ContinuationScore score(std::span<const int> prompt, std::span<const int> continuation, const PositionFn& on_position) override {
    if (prompt.empty()) throw Error("score: the prompt has no tokens (the first continuation token needs a context)");
    if (continuation.empty()) throw Error("score: the continuation has no tokens");
    auto r = std::make_unique<Request>();
    r->scoring = true;
    r->prompt.assign(prompt.begin(), prompt.end());
    r->continuation.assign(continuation.begin(), continuation.end());
    r->on_position = on_position;
    return std::move(submit(std::move(r))->score);
  }

  KvAbsmax kv_absmax() const override {
    std::lock_guard<std::mutex> lock(absmax_mu_);
    return absmax_;
  }

  nlohmann::json describe() const override {
    nlohmann::json d = {
            {"device", "cuda"},
            {"gpu", kernels::cuda_describe()},
            {"kv", forward_->cache().spec().record()},
            {"kernel_switches", options_.kernel_switches},
            {"attention_numerics", numerics_name(attention_.numerics)},
            {"gemm", kc::gemm_type_name(weights_->type)},
            {"cuda_graphs", forward_->options().cuda_graphs},
            {"prefill_pool", forward_->options().prefill_pool},
            {"fused_gemms", "qkv, gate_up"},
            {"gemv", forward_->options().gemv_rows > 0 && weights_->type == kc::GemmType::kBf16
                         ? "steps of up to " + std::to_string(forward_->options().gemv_rows) +
                               " rows: hand-written GEMV (input rmsnorms fused, swiglu in gate_up's epilogue)"
                         : std::string("off (cuBLAS)")},
            {"attention", attention_.active()
                              ? "paged split-K attention emulating an engine kernel (kernel_switches), generic kernel"
                              : std::string("paged split-K decode, fp32 softmax and accumulation, K/V dequantized in registers or "
                                            "shared memory; prefill ") +
                                    (prefill_ == kc::PrefillKernel::kGeneric ? "generic CUDA-core kernel (fp32)"
                                     : attention_.numerics == kernels::AttentionNumerics::kEngine
                                         ? "tensor-core kernel (wgmma on compute capability 9.0), Q and P rounded to bf16 (engine "
                                           "numerics), fp32 accumulation"
                                     : prefill_ == kc::PrefillKernel::kBf16x3
                                         ? "tensor-core kernel, bf16x3 operands (2^-16 per product), fp32 accumulation"
                                     : prefill_ == kc::PrefillKernel::kMmaSync
                                         ? "tensor-core kernel on mma.sync, operands split into bf16 terms to fp32 precision, "
                                           "fp32 accumulation"
                                         : "tensor-core kernel (wgmma on compute capability 9.0), operands split into bf16 terms "
                                           "to fp32 precision, fp32 accumulation")},
            {"max_batch", options_.max_batch},
            {"max_context", forward_->options().max_context},
            {"prefill_chunk", prefill_chunk()}};
    if (kivi())
      d["kv_storage"] = "fp32 materialization of kivi2: per token what the CPU store reads (the inputs in the "
                        "full-precision window, dequantized groups after); fp32's speed and memory, not 2-bit's";
    return d;
  }

 private:
  // Queues the request, waits for the worker, and hands it back (its error rethrown).
  std::unique_ptr<Request> submit(std::unique_ptr<Request> r) {
    Request* p = r.get();
    std::future<void> f = r->done.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(r));
    }
    cv_.notify_all();
    std::exception_ptr error;
    try {
      f.get();
    } catch (...) {
      error = std::current_exception();
    }
    std::unique_ptr<Request> out;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = std::find_if(finished_.begin(), finished_.end(), [p](const auto& x) { return x.get() == p; });
      if (it != finished_.end()) {
        out = std::move(*it);
        finished_.erase(it);
      }
    }
    if (error) std::rethrow_exception(error);
    if (!out) throw Error("CUDA engine: a finished request went missing", kExitInternal);
    return out;
  }

  // Worker: admit, prefill, decode together, finish.
  void run() {
    for (;;) {
      std::vector<std::unique_ptr<Request>> admitted;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty() || !active_.empty(); });
        if (stop_ && queue_.empty() && active_.empty()) return;
        // Every waiting request a slot is free for: prefilled now, then decoded with the others.
        while (!queue_.empty() && !free_slots_.empty()) {
          queue_.front()->slot = free_slots_.back();
          free_slots_.pop_back();
          admitted.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      // Generation requests admitted together are prefilled together (prefill_together); scoring
      // requests and kivi2 prompts (whose reads depend on its chunking) one at a time.
      std::vector<std::unique_ptr<Request>> together;
      for (auto& r : admitted) {
        try {
          if (r->scoring) {
            score_request(*r);
            finish(std::move(r), nullptr);
          } else if (!kivi()) {
            if (prepare_generation(*r)) finish(std::move(r), nullptr);
            else together.push_back(std::move(r));
          } else if (start_generation(*r)) {
            finish(std::move(r), nullptr);
          } else {
            active_.push_back(std::move(r));
          }
        } catch (...) {
          finish(std::move(r), std::current_exception());
        }
      }
      if (!together.empty()) prefill_together(std::move(together));
      if (!active_.empty()) {
        try {
          decode_step();
        } catch (...) {
          const std::exception_ptr e = std::current_exception();
          for (auto& r : active_) finish(std::move(r), e);
          active_.clear();
        }
      }
    }
  }

  // Runs `tokens` of one sequence from position `pos0` in chunks; on_rows(first_row_index, rows)
  // is called after each chunk whose rows >= logits_from have logits (device buffer).
  template <class Fn>
  void prefill(int slot, const std::vector<int>& tokens, int pos0, int logits_from, Fn on_rows) {
    const int chunk = prefill_chunk(), n = static_cast<int>(tokens.size());
    std::vector<int> seqs, pos;
    for (int off = 0; off < n; off += chunk) {
      const int m = std::min(chunk, n - off);
      seqs.assign(m, slot);
      pos.resize(m);
      for (int i = 0; i < m; ++i) pos[i] = pos0 + off + i;
      const int first = std::clamp(logits_from - off, 0, m);
      forward_->forward(std::span<const int>(tokens.data() + off, m), seqs, pos, first);
      if (first < m) on_rows(off + first, m - first);
    }
  }

  // Rows per prefill forward. kivi2's reads depend on when its groups are quantized, and a forward
  // reads the state after all its rows (kv_paged_cuda.h): its prompts go in the CPU Session's
  // chunks (max_chunk rows from position 0), so every query reads what it reads on the CPU.
  int prefill_chunk() const {
    const int rows = forward_->options().max_rows;
    return kivi() ? std::min(rows, kivi_chunk_) : rows;
  }
  bool kivi() const { return forward_->cache().spec().format == "kivi2"; }

  // Prefill and the first token; true when the request is already finished.
  bool start_generation(Request& r) {
    if (prepare_generation(r)) return true;
    int token = -1;
    prefill(r.slot, r.prompt, 0, static_cast<int>(r.prompt.size()) - 1, [&](int, int rows) { token = pick(r, rows - 1); });
    r.pos = static_cast<int>(r.prompt.size());
    return accept(r, token);
  }

  // A generation request's checks (tokens, context) and decode state before its prefill; true when
  // it is already finished (no tokens asked for).
  bool prepare_generation(Request& r) {
    r.generation.prompt_tokens = static_cast<int>(r.prompt.size());
    r.generation.finish_reason = "length";
    check_tokens(r.prompt);
    if (r.gen.max_tokens <= 0) {
      release(r);
      return true;
    }
    if (static_cast<int>(r.prompt.size()) + r.gen.max_tokens > forward_->options().max_context + 1)
      throw Error("--device cuda: prompt (" + std::to_string(r.prompt.size()) + " tokens) plus max_tokens (" +
                  std::to_string(r.gen.max_tokens) + ") exceeds the engine's context of " +
                  std::to_string(forward_->options().max_context) + " tokens");
    r.rng = std::make_unique<Rng>(r.gen.seed);
    for (const std::string& s : r.gen.stop) r.longest_stop = std::max(r.longest_stop, s.size());
    r.pos = 0;
    return false;
  }

  // Prefills the prompts of several checked generation requests together: each forward takes up to
  // prefill_chunk() rows, shared out in equal blocks (a request needing less than its share leaves
  // the rest to the others), each request's rows consecutive and ascending. A request whose prompt
  // ends in this forward gives its last row at the end of the forward, so the logits rows
  // [first_logit, rows) are exactly the finishing requests' last rows, in order. That row is a tile
  // of its own while its sequence's other rows sit earlier in the same forward: every layer writes
  // all rows' K/V (qkv_split_write) before its attention reads the cache, so it sees them. One
  // request alone runs exactly the chunks prefill() runs.
  //
  // Determinism: another request's rows change the row count of the cuBLAS GEMMs and the attention's
  // split count (sized per call from the tiles), which may round differently, so a prompt prefilled
  // beside others matches it prefilled alone up to fp32 rounding; decode steps already batch
  // concurrent sequences, so concurrent results are equal only up to that rounding anyway. Greedy
  // tokens are equal except at near ties.
  void prefill_together(std::vector<std::unique_ptr<Request>> reqs) {
    const int chunk = prefill_chunk();
    std::vector<int> tokens, seqs, pos, take;
    std::vector<Request*> finishing;
    while (!reqs.empty()) {
      // Rows per request: equal shares of what is left, until the chunk is full or every prompt placed.
      const int k = static_cast<int>(reqs.size());
      take.assign(k, 0);
      int left = chunk, open = k;
      while (left > 0 && open > 0) {
        const int share = std::max(1, left / open);
        open = 0;
        for (int i = 0; i < k && left > 0; ++i) {
          const int rest = static_cast<int>(reqs[i]->prompt.size()) - reqs[i]->pos - take[i];
          const int t = std::min({share, rest, left});
          take[i] += t;
          left -= t;
          open += rest - t > 0;
        }
      }
      // Pages first, request by request: a full KV pool fails the request that asked, not the forward.
      bool dropped = false;
      for (int i = 0; i < k; ++i) {
        if (take[i] == 0) continue;
        try {
          forward_->cache().reserve(reqs[i]->slot, reqs[i]->pos + take[i]);
        } catch (...) {
          finish(std::move(reqs[i]), std::current_exception());
          dropped = true;
        }
      }
      if (dropped) {
        std::erase_if(reqs, [](const auto& r) { return !r; });
        continue;
      }
      tokens.clear();
      seqs.clear();
      pos.clear();
      finishing.clear();
      const auto add = [&](const Request& r, int p) {
        tokens.push_back(r.prompt[p]);
        seqs.push_back(r.slot);
        pos.push_back(p);
      };
      for (int i = 0; i < k; ++i) {
        Request& r = *reqs[i];
        const bool ends = r.pos + take[i] == static_cast<int>(r.prompt.size());
        for (int p = r.pos; p < r.pos + take[i] - (ends ? 1 : 0); ++p) add(r, p);
        if (ends) finishing.push_back(&r);
      }
      for (Request* r : finishing) add(*r, static_cast<int>(r->prompt.size()) - 1);
      const int rows = static_cast<int>(tokens.size()), first = rows - static_cast<int>(finishing.size());
      std::vector<int> ids(finishing.size(), -1);
      try {
        forward_->forward(tokens, seqs, pos, first);
        // The first tokens: every greedy row's argmax at once, sampled rows one draw each.
        bool any_greedy = false;
        for (const Request* r : finishing) any_greedy |= r->gen.sampler.temperature <= 0.0;
        if (any_greedy) forward_->argmax(static_cast<int>(finishing.size()), ids.data());
        for (std::size_t j = 0; j < finishing.size(); ++j) {
          Request& r = *finishing[j];
          if (r.gen.sampler.temperature <= 0.0) continue;
          const kernels::cuda::SampleRow draw{r.gen.sampler, r.rng->uniform()};
          forward_->sample(static_cast<int>(j), {&draw, 1}, &ids[j]);
        }
      } catch (...) {  // the device failed the shared forward: every request in it fails
        const std::exception_ptr e = std::current_exception();
        for (auto& r : reqs) finish(std::move(r), e);
        return;
      }
      for (int i = 0; i < k; ++i) reqs[i]->pos += take[i];
      for (std::size_t j = 0; j < finishing.size(); ++j) {
        const auto it = std::find_if(reqs.begin(), reqs.end(), [&](const auto& r) { return r.get() == finishing[j]; });
        std::unique_ptr<Request> r = std::move(*it);
        try {
          if (accept(*r, ids[j])) finish(std::move(r), nullptr);
          else active_.push_back(std::move(r));
        } catch (...) {
          finish(std::move(r), std::current_exception());
        }
      }
      std::erase_if(reqs, [](const auto& r) { return !r; });
    }
  }

  // The next token of logits row `row` of the last forward (greedy or sampled on the device).
  int pick(Request& r, int row) {
    if (r.gen.sampler.temperature <= 0.0) {
      std::vector<int> ids(row + 1);
      forward_->argmax(row + 1, ids.data());
      return ids[row];
    }
    const kernels::cuda::SampleRow draw{r.gen.sampler, r.rng->uniform()};
    int id = -1;
    forward_->sample(row, {&draw, 1}, &id);
    return id;
  }

  // generate.cpp's stop rules; true when finished.
  bool accept(Request& r, int token) {
    Generation& g = r.generation;
    g.tokens.push_back(token);
    const GenerateOptions& o = r.gen;
    if (std::find(o.stop_token_ids.begin(), o.stop_token_ids.end(), token) != o.stop_token_ids.end()) {
      g.finish_reason = "stop";
      return true;
    }
    if (o.token_text) {
      const std::size_t before = g.text.size();
      g.text += o.token_text(token);
      const std::size_t from = before >= r.longest_stop ? before - r.longest_stop + 1 : 0;
      std::size_t cut = std::string::npos;
      for (const std::string& s : o.stop) cut = std::min(cut, g.text.find(s, from));
      if (cut != std::string::npos) {
        g.text.resize(cut);
        g.finish_reason = "stop";
        return true;
      }
    }
    if (static_cast<int>(g.tokens.size()) >= o.max_tokens) return true;
    r.last = token;
    return false;
  }

  void decode_step() {
    const int b = static_cast<int>(active_.size());
    std::vector<int> tokens(b), seqs(b), pos(b);
    for (int i = 0; i < b; ++i) {
      tokens[i] = active_[i]->last;
      seqs[i] = active_[i]->slot;
      pos[i] = active_[i]->pos;
    }
    forward_->forward(tokens, seqs, pos, 0, /*greedy=*/true);  // the argmax is part of the step (its graph)
    bool any_sampled = false;
    for (auto& r : active_) any_sampled |= r->gen.sampler.temperature > 0.0;
    std::vector<int> greedy(b), sampled(b);
    forward_->ids_to_host(b, greedy.data());
    if (any_sampled) {  // every row's draw on the device at once (greedy rows take their argmax below)
      std::vector<kernels::cuda::SampleRow> draws(b);
      for (int i = 0; i < b; ++i) {
        const Request& r = *active_[i];
        draws[i].params = r.gen.sampler;
        if (r.gen.sampler.temperature > 0.0) draws[i].u = r.rng->uniform();  // one draw a sampled token, as the CPU path
      }
      forward_->sample(0, draws, sampled.data());
    }
    std::vector<std::unique_ptr<Request>> still;
    for (int i = 0; i < b; ++i) {
      Request& r = *active_[i];
      ++r.pos;
      const int token = r.gen.sampler.temperature <= 0.0 ? greedy[i] : sampled[i];
      bool done = false;
      try {
        done = accept(r, token);
      } catch (...) {
        finish(std::move(active_[i]), std::current_exception());
        continue;
      }
      if (done) finish(std::move(active_[i]), nullptr);
      else still.push_back(std::move(active_[i]));
    }
    active_ = std::move(still);
  }

  void score_request(Request& r) {
    check_tokens(r.prompt);
    const int vocab = model_->config().vocab_size;
    check_continuation(r.continuation, vocab);
    std::vector<int> tokens(r.prompt);
    tokens.insert(tokens.end(), r.continuation.begin(), r.continuation.end() - 1);
    if (static_cast<int>(tokens.size()) > forward_->options().max_context)
      throw Error("--device cuda: scoring " + std::to_string(tokens.size()) + " tokens exceeds the engine's context of " +
                  std::to_string(forward_->options().max_context) + " tokens");
    const int slot = r.slot;
    const int n = static_cast<int>(r.continuation.size());
    const int offset = static_cast<int>(r.prompt.size()) - 1;
    ContinuationScore& s = r.score;
    s.logprobs.resize(n);
    prefill(slot, tokens, 0, offset, [&](int first, int rows) {
      host_logits_.resize(static_cast<std::size_t>(rows) * vocab);
      forward_->logits_to_host(rows, host_logits_.data());
      for (int k = 0; k < rows; ++k) {
        const float* logits = host_logits_.data() + static_cast<std::size_t>(k) * vocab;
        const int i = first + k - offset;
        score_position(logits, vocab, i, r.continuation[i], s);
        if (r.on_position) r.on_position(i, std::span<const float>(logits, vocab));
      }
    });
  }

  void check_tokens(const std::vector<int>& tokens) const { check_token_ids(tokens, model_->config().vocab_size); }

  void release(Request& r) {
    if (r.slot < 0) return;
    forward_->cache().release(r.slot);
    std::lock_guard<std::mutex> lock(mu_);
    free_slots_.push_back(r.slot);
    r.slot = -1;
  }

  void finish(std::unique_ptr<Request> r, std::exception_ptr error) {
    try {
      release(*r);
      KvAbsmax a;
      forward_->absmax(a.k, a.v);
      std::lock_guard<std::mutex> lock(absmax_mu_);
      absmax_ = std::move(a);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    Request* p = r.get();
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_.push_back(std::move(r));  // kept alive until the caller has read its result
    }
    if (error) p->done.set_exception(error);
    else p->done.set_value();
  }

  std::shared_ptr<const Model> model_;
  EngineOptions options_;
  kernels::AttentionEmulation attention_;
  kc::PrefillKernel prefill_ = kc::PrefillKernel::kTensorCore;  // kernel switch "prefill"
  int kivi_chunk_ = SessionOptions{}.max_chunk;  // the CPU Session's chunk (kernel switch "prefill_chunk")
  std::shared_ptr<CudaWeights> weights_;
  std::unique_ptr<CudaForward> forward_;
  std::vector<float> host_logits_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<std::unique_ptr<Request>> queue_;
  std::vector<std::unique_ptr<Request>> active_;    // worker thread only
  std::vector<std::unique_ptr<Request>> finished_;
  std::vector<int> free_slots_;
  std::thread worker_;

  mutable std::mutex absmax_mu_;
  KvAbsmax absmax_;
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine(std::shared_ptr<const Model> model, const EngineOptions& options) {
  return std::make_unique<CudaEngine>(std::move(model), options);
}

}  // namespace kvgate::decoder
