// A device-neutral decoder of many sequences: what `run --backend reference`, `serve`, `kld` and
// `calibrate` use. The CPU engine (sessions on a thread pool, session.h) is the golden path; the
// CUDA engine batches sequences over a paged cache and must produce the same tokens (greedy) and
// logits to 1e-2 relative in bf16. Precision, KV format and kernel switches are always explicit
// and reported by describe() for run.json.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/decoder/generate.h"
#include "harness/decoder/model.h"
#include "harness/decoder/score.h"
#include "kernels/kv_store.h"

namespace kvgate::decoder {

struct EngineOptions {
  std::string device = "cpu";       // "cpu" or "cuda"; never chosen silently
  kernels::KvStoreOptions kv{};     // the cache format and its parameters
  int max_batch = 32;               // sequences decoded together (CUDA); CPU: sessions kept warm
  int threads = 1;                  // CPU worker threads
  // Engine-kernel emulation switches of the CUDA attention (e.g. {"q_fp8": true,
  // "pv_accum": "fp8_two_level"}): storage loss and kernel loss kept apart. Empty = exact.
  nlohmann::json kernel_switches = nlohmann::json::object();
};

// Running absolute maxima of every K and V written to the cache, [layer][kv_head] (calibration).
struct KvAbsmax {
  std::vector<std::vector<float>> k, v;
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Thread-safe: concurrent calls are decoded together where the device batches.
  virtual Generation generate(std::span<const int> prompt, const GenerateOptions& options) = 0;
  // Teacher-forced scoring in which every position reads the cache (score.h).
  virtual ContinuationScore score(std::span<const int> prompt, std::span<const int> continuation,
                                  const PositionFn& on_position = {}) = 0;
  // Maxima over everything this engine has written to its caches since it was made.
  virtual KvAbsmax kv_absmax() const = 0;
  // {"device", "kv": format record, "kernel_switches", "threads"/"gpu", ...} for run.json.
  virtual nlohmann::json describe() const = 0;
};

// Dispatches on options.device; an unavailable device is an Error saying what to use instead.
std::unique_ptr<Engine> make_engine(std::shared_ptr<const Model> model, const EngineOptions& options);
std::unique_ptr<Engine> make_cpu_engine(std::shared_ptr<const Model> model, const EngineOptions& options);
// Defined by the CUDA build (harness/decoder CUDA sources); a build without CUDA throws an Error.
std::unique_ptr<Engine> make_cuda_engine(std::shared_ptr<const Model> model, const EngineOptions& options);

}  // namespace kvgate::decoder
