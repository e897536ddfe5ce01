// The CPU twins of the reference decoder's kernels: small free functions on flat row-major arrays,
// the exact maths the CUDA kernels must reproduce (tests/test-kernels.cpp checks both). They follow
// Hugging Face transformers' fp32 numerics, with fp64 where a long sum decides the result (norms,
// softmax denominators). No allocation except where a workspace is passed in; no threads.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/attention_emulation.h"

namespace kvgate::kernels {

class KvStore;

// ---- embedding, residual, MLP activation ------------------------------------------------------

// out[i][:] = table[ids[i]][:], rows of `dim`. ids must be in range (the caller checks).
void embedding_ref(const float* table, int dim, const int* ids, int n, float* out);
// x[i] += y[i]: the residual connection.
void add_ref(float* x, const float* y, std::int64_t n);
// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)) as torch computes it in fp32.
void swiglu_ref(const float* gate, const float* up, std::int64_t n, float* out);

// ---- RMSNorm ---------------------------------------------------------------------------------

// Hugging Face LlamaRMSNorm on `rows` rows of `dim`: var = mean(x^2) (fp64 sum, rounded to fp32),
// x * (1/sqrt(var + eps)) in fp32, then weight * that. out may alias x. Qwen3's q_norm/k_norm are
// this over head_dim with rows = tokens * heads.
void rmsnorm_ref(const float* x, const float* weight, int rows, int dim, float eps, float* out);

// ---- matrix product --------------------------------------------------------------------------

// y[r][c] = sum_k x[r][k] * w[c][k] (+ bias[c]): x times a Hugging Face Linear weight
// (out_features x in_features) transposed. Summation order is fixed and independent of blocking
// and threads: lane j of 8 accumulates k = j (mod 8) in order, lanes reduce as
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), the k % 8 tail adds in order, then the bias.
struct MatmulArgs {
  const float* x = nullptr;     // [rows][k]
  const float* w = nullptr;     // [cols][k]
  const float* bias = nullptr;  // [cols] or null
  float* y = nullptr;           // [rows][cols]
  int rows = 0, k = 0, cols = 0;
  int col_begin = 0, col_end = -1;  // compute only columns [col_begin, col_end) (-1: cols), for splitting work
};
void matmul_ref(const MatmulArgs& a);

// ---- rotary position embedding ---------------------------------------------------------------

enum class RopeType { standard, linear, llama3, yarn };

// transformers' rope_parameters (or legacy rope_theta + rope_scaling), already validated.
struct RopeParams {
  RopeType type = RopeType::standard;
  int dim = 0;                  // rotary dimension (= head_dim: partial rotary is not supported)
  double theta = 10000.0;
  double factor = 1.0;          // linear, llama3, yarn
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  int original_max_position_embeddings = 0;              // llama3, yarn
  double beta_fast = 32.0, beta_slow = 1.0;              // yarn
  double attention_factor = 0.0;                         // yarn: 0 means derive from factor/mscale
  double mscale = 0.0, mscale_all_dim = 0.0;             // yarn (DeepSeek style), 0 = unset
  bool truncate = true;                                  // yarn: floor/ceil the correction range
};

// The inverse frequencies [dim/2] and the cos/sin scaling of transformers' ROPE_INIT_FUNCTIONS,
// computed with its fp32 steps. Returns the attention scaling (1 except yarn).
float rope_inv_freq_ref(const RopeParams& p, float* inv_freq);

// In place on x [rows][heads * head_dim], row r at position positions[r]: transformers'
// rotate_half convention on unpermuted weights, angle = fp32(inv_freq[i] * pos), cos/sin from fp64
// rounded to fp32, times attention_scaling; pairs (i, i + head_dim/2).
void rope_ref(float* x, int rows, int heads, int head_dim, const int* positions, const float* inv_freq,
              float attention_scaling);

// ---- after the fused QKV and gate/up GEMMs ---------------------------------------------------
// The twins of the CUDA engine's fused epilogues (decoder_cuda.h's qkv_split, swiglu_fused): the CPU
// path's unfused steps (harness/decoder/session.cpp) composed, so the fused kernels are held to them.

// qkv [rows][q_heads*d | kv_heads*d | kv_heads*d] (one GEMM's output for the stacked q, k, v
// weights) plus bias[c] (fp32, as matmul_ref adds it), then rmsnorm_ref over every q head with
// q_norm and every k head with k_norm (each when set), then rope_ref on q and k; into q
// [rows][q_heads*d], k and v [rows][kv_heads*d].
struct QkvSplitArgs {
  const float* qkv = nullptr;
  const float* bias = nullptr;    // [(q_heads + 2 kv_heads) * d] or null
  const float* q_norm = nullptr;  // [d] or null
  const float* k_norm = nullptr;  // [d] or null
  float eps = 1e-6f;
  const int* positions = nullptr;  // [rows]
  const float* inv_freq = nullptr;  // [d/2]
  float attention_scaling = 1.0f;
  int rows = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
};
void qkv_split_ref(const QkvSplitArgs& a);
// gate_up [rows][inter][2] (gate j, up j: one GEMM's output for the interleaved weights) plus
// gate_bias and up_bias (either may be null), then swiglu_ref: out [rows][inter].
void swiglu_fused_ref(const float* gate_up, int rows, int inter, const float* gate_bias, const float* up_bias, float* out);

// ---- softmax and log-softmax -----------------------------------------------------------------

// out[i] = exp(x[i] - max) / sum, the sum in fp64. out may alias x.
void softmax_ref(const float* x, int n, float* out);
// log-softmax in fp64: out[i] = x[i] - max - log(sum exp(x - max)).
void log_softmax_ref(const float* x, int n, double* out);

// ---- attention over the KV cache -------------------------------------------------------------

// Causal attention of query rows over K/V already dequantized into flat arrays: query row r (at
// position q_pos[r]) attends to cache rows max(0, q_pos[r] - window + 1) .. q_pos[r] (window 0: no
// limit). Scores are fp32 dot products (cpu_lanes.h's fixed order) times `scale`; the softmax is
// fp32 exp(s - max) with an fp64 sum, p = fp32(e / sum); the output an fp32 sum of p * V in cache
// order.
struct AttentionArgs {
  const float* q = nullptr;   // [rows][q_stride]: the group's heads start at q_offset
  const float* k = nullptr;   // [ctx - first][head_dim]: cache rows first..ctx-1
  const float* v = nullptr;   // [ctx - first][head_dim]
  float* out = nullptr;       // [rows][out_stride], same head offsets as q
  const int* q_pos = nullptr; // [rows], each < ctx
  int rows = 0, ctx = 0, first = 0, head_dim = 0;  // every row attends only to rows >= first
  int group = 1;              // query heads sharing this KV head (GQA)
  int q_stride = 0, q_offset = 0, out_stride = 0;
  int window = 0;
  float scale = 1.0f;
  float* scores = nullptr;    // workspace [rows][ctx - first]
  // Engine numerics (AttentionNumerics::kEngine): Q rounded to bf16 before the scores; the softmax
  // weights p = exp(s - max) rounded to bf16 before P.V, the row sum taken from the unrounded p.
  bool bf16_q = false, bf16_p = false;
};
void attention_rows_ref(const AttentionArgs& a);
// The same rows under engine-kernel emulation (attention_emulation.h): Q rounded through fp8
// and/or the paged online softmax with fp8 P and reduced or two-level P.V accumulation, split as
// e.splits says. The CPU twin of the CUDA generic kernel's emulating instantiation. `scores` unused.
void attention_rows_emulated_ref(const AttentionArgs& a, const AttentionEmulation& e);

// The whole attention of one layer reading the KV store, as a decode step reads the engine's cache:
// for each KV head, K/V of positions 0..max(q_pos) are read (dequantized) once from `store`, then
// every query row attends to them. q [rows][heads*head_dim] -> out [rows][heads*head_dim].
// emulation.numerics kEngine rounds Q and P to bf16 (AttentionArgs::bf16_q, bf16_p).
struct KvAttentionArgs {
  const float* q = nullptr;
  float* out = nullptr;
  const int* q_pos = nullptr;
  int rows = 0, heads = 0, kv_heads = 0, head_dim = 0, layer = 0, window = 0;
  float scale = 1.0f;
  AttentionEmulation emulation{};  // off: exact attention
};
struct AttentionWorkspace {
  std::vector<float> k, v, scores;
};
void attention_kv_ref(const KvAttentionArgs& a, const KvStore& store, AttentionWorkspace& ws);

// ---- sampling --------------------------------------------------------------------------------

// How the next token is drawn from one row of logits (kvgate's documented sampler):
//  - temperature 0: greedy, the largest logit, ties to the lowest id; `u` is unused.
//  - otherwise candidates are ordered by logit (descending, ties by lower id; NaN logits after every
//    number, in id order, with weight 0); top_k > 0 keeps the
//    first top_k; probabilities p = exp((l - l_max) / temperature) / sum (fp64); top_p < 1 keeps
//    the shortest prefix whose probability reaches top_p (at least one); then, with M the kept
//    candidates' summed weight exp(...), the first whose cumulative weight exceeds u * M is drawn.
// u is one uniform draw in [0, 1) (kvgate::Rng::uniform(), one per sampled token).
struct SamplerParams {
  double temperature = 0.0;
  double top_p = 1.0;
  int top_k = 0;  // 0: no limit
};
struct SamplerWorkspace {
  std::vector<int> order;
  std::vector<double> prob;
};
int sample_ref(const float* logits, int n, const SamplerParams& p, double u, SamplerWorkspace& ws);

}  // namespace kvgate::kernels
