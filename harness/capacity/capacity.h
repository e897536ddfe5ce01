// The KV-cache capacity planner: how many tokens and whole sequences of a length fit in the memory
// an engine leaves for its KV cache, per format (seed 000, "Worked capacity example"):
//   budget    = gpu_mem * mem_util - weights / tp - overhead                    (per GPU)
//   tokens    = floor(budget / bytes_per_token), rounded down to whole cache blocks
//   sequences = floor(budget / bytes of one seq_len sequence)
// bytes_per_token is the format library's (kv_format.h) at the KV heads one GPU holds: with tensor
// parallelism the KV heads split across ranks (replicated when there are fewer heads than ranks),
// and the rank with the most heads limits. GB are 10^9 bytes, as GPU and checkpoint sizes are quoted.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/capacity/model_dims.h"
#include "kernels/kv_store.h"

namespace kvgate::capacity {

struct CapacityOptions {
  double gpu_mem_gb = 141.0;   // one H200
  double mem_util = 0.92;      // vLLM's --gpu-memory-utilization default
  double overhead_gb = 6.0;    // activations, CUDA graphs, runtime (read the real figure from the engine's log)
  std::optional<double> weights_gb;  // default: the config's parameter count in weights_dtype
  std::string weights_dtype = "bf16";
  long long seq_len = 32768;
  int tp = 1;
  int block_size = 1;  // tokens per cache block (vLLM: 16); 1 = plain arithmetic, as the seed's example
};

struct CapacityRow {
  std::string format;
  nlohmann::json kv;            // the resolved format (kv_format.h record), at the whole model's shape
  std::string layout;           // the format's byte layout of one (token, KV head)
  int kv_heads_per_gpu = 0;
  double bytes_per_token = 0;   // per GPU
  double bytes_per_sequence = 0;
  double usable_bytes = 0;      // gpu_mem * mem_util
  double weights_bytes = 0;     // per GPU
  std::string weights_source;   // "--weights-gb" or "config.json, bf16"
  double overhead_bytes = 0;
  double kv_budget_bytes = 0;   // may be negative: the weights do not fit
  long long tokens = 0;
  long long sequences = 0;
};

// Errors name the flag: a tp the KV heads do not divide, a non-positive memory, and so on.
CapacityRow plan_capacity(const ModelDims& model, const kernels::KvStoreOptions& format, const CapacityOptions& options);

nlohmann::json capacity_json(const CapacityRow& row, const ModelDims& model, const CapacityOptions& options);
// The table `kvgate capacity` prints: a header with the budget, one row per format.
// With `layouts`, each row is followed by its format's byte layout.
std::string capacity_table(const std::vector<CapacityRow>& rows, const ModelDims& model, const CapacityOptions& options,
                           bool layouts = false);

}  // namespace kvgate::capacity
