#include "harness/decoder/make_model.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <filesystem>
#include <utility>
#include <vector>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/rng.h"
#include "harness/decoder/safetensors.h"
#include "harness/decoder/synthetic_tokenizer.h"

namespace kvgate::decoder {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

struct Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

// Values ~ mean + std * N(0, 1) from the tensor's own stream, rounded to the stored dtype's grid
// by the writer.
Tensor random_tensor(std::uint64_t seed, std::string name, std::vector<std::int64_t> shape, double mean, double std) {
  Rng rng(derive_seed(seed, name));
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  Tensor t{std::move(name), std::move(shape), std::vector<float>(static_cast<std::size_t>(n))};
  for (auto& v : t.values) v = static_cast<float>(mean + std * rng.normal());
  return t;
}

void check(bool ok, const std::string& message) {
  if (!ok) throw Error("make-model: " + message);
}

std::string torch_dtype(const std::string& d) { return d == "bf16" ? "bfloat16" : d == "fp16" ? "float16" : "float32"; }
std::string st_dtype(const std::string& d) { return d == "bf16" ? "BF16" : d == "fp16" ? "F16" : "F32"; }

}  // namespace

json make_model(const MakeModelOptions& o, const std::string& out_dir) {
  check(o.arch == "qwen3" || o.arch == "llama" || o.arch == "qwen2" || o.arch == "mistral",
        "--arch must be qwen3, llama, qwen2 or mistral");
  check(o.layers > 0 && o.hidden > 0 && o.heads > 0 && o.kv_heads > 0 && o.head_dim > 0 && o.intermediate > 0,
        "--layers, --hidden, --heads, --kv-heads, --head-dim and --intermediate must be positive");
  check(o.heads % o.kv_heads == 0, "--heads must be a multiple of --kv-heads");
  check(o.head_dim % 2 == 0, "--head-dim must be even");
  check(o.dtype == "bf16" || o.dtype == "fp16" || o.dtype == "fp32", "--dtype must be bf16, fp16 or fp32");
  check(o.rope_scaling == "none" || o.rope_scaling == "linear" || o.rope_scaling == "llama3" || o.rope_scaling == "yarn",
        "--rope-scaling must be none, linear, llama3 or yarn");
  check(o.rope_config == "legacy" || o.rope_config == "parameters", "--rope-config must be legacy or parameters");
  check(o.rope_factor >= 1.0, "--rope-factor must be at least 1");
  check(o.shards >= 1 && o.shards <= 99, "--shards must be between 1 and 99");
  check(o.max_position > 0, "--max-position must be positive");
  check(o.sliding_window == 0 || o.arch == "mistral", "--sliding-window is for --arch mistral");
  const bool llama_like = o.arch == "llama" || o.arch == "mistral";
  // transformers' Llama and Mistral need hidden_size = heads * head_dim unless head_dim is written;
  // we always write head_dim, so any combination loads.
  const SyntheticTokenizer tok = make_synthetic_tokenizer(o.merges, o.max_position);
  const int vocab = o.vocab > 0 ? o.vocab : tok.size();
  check(vocab >= tok.size(), "--vocab " + std::to_string(o.vocab) + " is smaller than the tokenizer (" +
                                 std::to_string(tok.size()) + " tokens)");
  const bool tie = o.tie_embeddings.value_or(o.arch == "qwen3");
  const double theta = o.rope_theta > 0 ? o.rope_theta : (llama_like ? 10000.0 : 1000000.0);
  const int original = o.original_max_position > 0 ? o.original_max_position
                                                   : static_cast<int>(o.max_position / o.rope_factor);

  // ---- config.json ----
  static const std::map<std::string, std::string> kClass = {
      {"qwen3", "Qwen3ForCausalLM"}, {"llama", "LlamaForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"}, {"mistral", "MistralForCausalLM"}};
  ordered_json cfg = {{"architectures", {kClass.at(o.arch)}},
                      {"model_type", o.arch},
                      {"hidden_size", o.hidden},
                      {"intermediate_size", o.intermediate},
                      {"num_hidden_layers", o.layers},
                      {"num_attention_heads", o.heads},
                      {"num_key_value_heads", o.kv_heads},
                      {"head_dim", o.head_dim},
                      {"vocab_size", vocab},
                      {"hidden_act", "silu"},
                      {"max_position_embeddings", o.max_position},
                      {"rms_norm_eps", 1e-6},
                      {"tie_word_embeddings", tie},
                      {"attention_dropout", 0.0},
                      {"initializer_range", 0.02},
                      {"use_cache", true},
                      {"bos_token_id", tok.endoftext},
                      {"eos_token_id", tok.im_end},
                      {"torch_dtype", torch_dtype(o.dtype)}};
  if (o.arch == "qwen3" || o.arch == "llama") cfg["attention_bias"] = false;
  if (o.arch == "llama") cfg["mlp_bias"] = false;
  if (o.arch == "qwen2" || o.arch == "qwen3") {
    cfg["use_sliding_window"] = false;
    cfg["sliding_window"] = nullptr;
    cfg["max_window_layers"] = o.layers;
  }
  if (o.arch == "mistral") cfg["sliding_window"] = o.sliding_window > 0 ? json(o.sliding_window) : json(nullptr);
  ordered_json scaling = nullptr;
  if (o.rope_scaling == "linear") {
    scaling = {{"rope_type", "linear"}, {"factor", o.rope_factor}};
  } else if (o.rope_scaling == "llama3") {
    scaling = {{"rope_type", "llama3"}, {"factor", o.rope_factor}, {"low_freq_factor", 1.0},
               {"high_freq_factor", 4.0}, {"original_max_position_embeddings", original}};
  } else if (o.rope_scaling == "yarn") {
    scaling = {{"rope_type", "yarn"}, {"factor", o.rope_factor}, {"original_max_position_embeddings", original}};
  }
  if (o.rope_config == "parameters") {
    ordered_json rp = {{"rope_type", scaling.is_null() ? "default" : scaling["rope_type"].get<std::string>()},
                       {"rope_theta", theta}};
    if (!scaling.is_null())
      for (auto it = scaling.begin(); it != scaling.end(); ++it) rp[it.key()] = it.value();
    cfg["rope_parameters"] = rp;
  } else {
    cfg["rope_theta"] = theta;
    cfg["rope_scaling"] = scaling;
  }

  // ---- weights ----
  const std::int64_t h = o.hidden, q = std::int64_t{o.heads} * o.head_dim, kv = std::int64_t{o.kv_heads} * o.head_dim,
                     inter = o.intermediate, v = vocab;
  const double proj = 1.0;  // std of projections: 1 / sqrt(fan_in), times this
  std::vector<Tensor> ts;
  ts.push_back(random_tensor(o.seed, "model.embed_tokens.weight", {v, h}, 0.0, tie ? 2.0 / std::sqrt(double(h)) : 1.0));
  for (int i = 0; i < o.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    ts.push_back(random_tensor(o.seed, p + "input_layernorm.weight", {h}, 1.0, 0.1));
    ts.push_back(random_tensor(o.seed, p + "self_attn.q_proj.weight", {q, h}, 0.0, proj / std::sqrt(double(h))));
    ts.push_back(random_tensor(o.seed, p + "self_attn.k_proj.weight", {kv, h}, 0.0, proj / std::sqrt(double(h))));
    ts.push_back(random_tensor(o.seed, p + "self_attn.v_proj.weight", {kv, h}, 0.0, proj / std::sqrt(double(h))));
    if (o.arch == "qwen2") {
      ts.push_back(random_tensor(o.seed, p + "self_attn.q_proj.bias", {q}, 0.0, 0.1));
      ts.push_back(random_tensor(o.seed, p + "self_attn.k_proj.bias", {kv}, 0.0, 0.1));
      ts.push_back(random_tensor(o.seed, p + "self_attn.v_proj.bias", {kv}, 0.0, 0.1));
    }
    ts.push_back(random_tensor(o.seed, p + "self_attn.o_proj.weight", {h, q}, 0.0, proj / std::sqrt(double(q))));
    if (o.arch == "qwen3") {
      ts.push_back(random_tensor(o.seed, p + "self_attn.q_norm.weight", {o.head_dim}, 1.0, 0.1));
      ts.push_back(random_tensor(o.seed, p + "self_attn.k_norm.weight", {o.head_dim}, 1.0, 0.1));
    }
    ts.push_back(random_tensor(o.seed, p + "post_attention_layernorm.weight", {h}, 1.0, 0.1));
    ts.push_back(random_tensor(o.seed, p + "mlp.gate_proj.weight", {inter, h}, 0.0, proj / std::sqrt(double(h))));
    ts.push_back(random_tensor(o.seed, p + "mlp.up_proj.weight", {inter, h}, 0.0, proj / std::sqrt(double(h))));
    ts.push_back(random_tensor(o.seed, p + "mlp.down_proj.weight", {h, inter}, 0.0, proj / std::sqrt(double(inter))));
  }
  ts.push_back(random_tensor(o.seed, "model.norm.weight", {h}, 1.0, 0.1));
  if (!tie) ts.push_back(random_tensor(o.seed, "lm_head.weight", {v, h}, 0.0, 2.0 / std::sqrt(double(h))));

  // ---- files ----
  namespace fs = std::filesystem;
  make_directories(out_dir);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out_dir, ec)) {  // stale weights would shadow the new ones
    const std::string name = entry.path().filename().string();
    if (name.rfind("model", 0) == 0 && name.find(".safetensors") != std::string::npos) fs::remove(entry.path(), ec);
  }
  const std::map<std::string, std::string> meta = {{"format", "pt"}};
  json files = json::array();
  std::int64_t params = 0;
  for (const Tensor& t : ts) params += static_cast<std::int64_t>(t.values.size());
  const std::string st = st_dtype(o.dtype);
  if (o.shards == 1) {
    std::vector<TensorToWrite> w;
    for (const Tensor& t : ts) w.push_back({t.name, st, t.shape, t.values.data()});
    write_file_atomic(out_dir + "/model.safetensors", serialize_safetensors(w, meta));
    files.push_back("model.safetensors");
  } else {
    check(static_cast<int>(ts.size()) >= o.shards, "--shards is larger than the number of tensors");
    ordered_json weight_map = ordered_json::object();
    std::uint64_t total = 0;
    for (int s = 0; s < o.shards; ++s) {
      char name[64];
      std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, o.shards);
      std::vector<TensorToWrite> w;
      const std::size_t b = ts.size() * s / o.shards, e = ts.size() * (s + 1) / o.shards;
      for (std::size_t i = b; i < e; ++i) {
        w.push_back({ts[i].name, st, ts[i].shape, ts[i].values.data()});
        weight_map[ts[i].name] = name;
        total += ts[i].values.size() * (st == "F32" ? 4 : 2);
      }
      write_file_atomic(out_dir + "/" + name, serialize_safetensors(w, meta));
      files.push_back(name);
    }
    const ordered_json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
    write_file_atomic(out_dir + "/model.safetensors.index.json", index.dump(2) + "\n");
    files.push_back("model.safetensors.index.json");
  }
  const ordered_json gen = {{"bos_token_id", tok.endoftext}, {"eos_token_id", {tok.im_end, tok.endoftext}},
                            {"do_sample", false}};
  write_file_atomic(out_dir + "/config.json", cfg.dump(2) + "\n");
  write_file_atomic(out_dir + "/generation_config.json", gen.dump(2) + "\n");
  write_file_atomic(out_dir + "/tokenizer.json", tok.tokenizer.dump(2) + "\n");
  write_file_atomic(out_dir + "/tokenizer_config.json", tok.tokenizer_config.dump(2) + "\n");
  for (const char* f : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"})
    files.push_back(f);
  return {{"dir", out_dir}, {"files", files}, {"parameters", params}, {"vocab_size", vocab},
          {"tokenizer_size", tok.size()}, {"tie_word_embeddings", tie}};
}

}  // namespace kvgate::decoder
