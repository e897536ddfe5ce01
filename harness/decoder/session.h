// One sequence being decoded on the CPU: the KV cache (any --kv-format through make_kv_store) and
// the scratch buffers of the forward pass, allocated once. Tokens go through in chunks of at most
// max_chunk; each chunk's K (after q/k norm and RoPE) and V are appended to the store first, then
// every query row attends to the cache as the store returns it, its own token included: exactly
// what step-by-step decoding reads, so chunking changes nothing (results are bit-identical for any
// max_chunk and any thread count). kivi2 is the exception: its store quantizes as tokens arrive,
// so a chunk's rows read the groups its later rows completed, and its results depend on max_chunk
// (the CUDA engine prefills kivi2 in the same chunks).
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "harness/decoder/model.h"
#include "harness/decoder/thread_pool.h"
#include "kernels/kv_store.h"
#include "kernels/ops_ref.h"

namespace kvgate::decoder {

struct SessionOptions {
  kernels::KvStoreOptions kv{};  // the cache format: always explicit (recorded in run.json)
  int max_chunk = 64;          // rows per forward pass while prefilling or teacher forcing
  int threads = 1;             // CPU threads; any count gives the same results
  kernels::AttentionEmulation attention{};  // numerics and engine-kernel emulation (--kernel-switches); default exact
};

// Throws when a token id is outside [0, vocab): the tokenizer does not match the checkpoint.
void check_token_ids(std::span<const int> tokens, int vocab);

class Session {
 public:
  Session(std::shared_ptr<const Model> model, const SessionOptions& options);

  const Model& model() const { return *model_; }
  const kernels::KvStore& kv() const { return *kv_; }
  const SessionOptions& options() const { return options_; }
  int position() const { return position_; }  // tokens in the cache
  void reset();                                // empties the cache

  // Runs `tokens` at positions position() .. position() + n - 1, appending them to the cache. For
  // each of the last `logit_rows` tokens, on_logits(index in tokens, logits[vocab]) is called in
  // order (the pointer is valid during the call). Token ids are checked before anything runs.
  using LogitsFn = std::function<void(int index, const float* logits)>;
  void forward(std::span<const int> tokens, int logit_rows, const LogitsFn& on_logits);
  // One token; returns its logits [vocab], valid until the next call.
  const float* step(int token);

 private:
  void run_chunk(const int* ids, int n, int logits_from);
  void matmul(const float* x, const float* w, const float* bias, float* y, int rows, int k, int cols);
  void attention(int layer, int rows);

  std::shared_ptr<const Model> model_;
  SessionOptions options_;
  std::unique_ptr<kernels::KvStore> kv_;
  ThreadPool pool_;
  int position_ = 0;
  // Scratch, [max_chunk][...]: residual stream, normed input, q/k/v, attention output, MLP.
  std::vector<float> x_, xn_, q_, k_, v_, attn_, tmp_, gate_, up_, logits_;
  std::vector<int> pos_;
  std::vector<float> kv_k_, kv_v_;                   // K/V read from the store for one layer
  std::vector<std::vector<float>> scores_;           // per worker
};

}  // namespace kvgate::decoder
