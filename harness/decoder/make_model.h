// Deterministic random-weight checkpoints in Hugging Face format (`kvgate make-model`): config.json,
// generation_config.json, model.safetensors (or shards with model.safetensors.index.json), and the
// synthetic tokenizer. Each tensor draws from its own kvgate::Rng stream, derive_seed(seed, name),
// so the same options give byte-identical files on every machine, and transformers loads them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate::decoder {

struct MakeModelOptions {
  std::string arch = "qwen3";  // qwen3, llama, qwen2 (q/k/v bias), mistral
  std::uint64_t seed = 1;
  int layers = 2, hidden = 64, heads = 4, kv_heads = 2, head_dim = 16, intermediate = 128;
  int vocab = 0;     // 0: the tokenizer's size; larger pads (as real checkpoints do)
  int merges = 256;  // BPE merges of the synthetic tokenizer
  std::optional<bool> tie_embeddings = std::nullopt;  // default: qwen3 tied, the others not
  std::string rope_scaling = "none";   // none, linear, llama3, yarn
  double rope_factor = 4.0;
  double rope_theta = 0.0;              // 0: 1e6 for qwen2/qwen3, 10000 otherwise
  int max_position = 4096;
  int original_max_position = 0;        // llama3/yarn; 0: max_position / rope_factor
  std::string rope_config = "legacy";   // legacy (rope_theta + rope_scaling) or parameters (rope_parameters)
  int sliding_window = 0;               // mistral: 0 writes "sliding_window": null
  std::string dtype = "bf16";           // bf16, fp16, fp32
  int shards = 1;
};

// Writes the checkpoint into `out_dir` (created; earlier model*.safetensors* files there are
// replaced). Returns a summary: files, parameter count, vocab.
nlohmann::json make_model(const MakeModelOptions& options, const std::string& out_dir);

}  // namespace kvgate::decoder
