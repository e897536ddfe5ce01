#include "kernels/kv_format.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "kernels/codec_ggml.h"
#include "kernels/codec_nvfp4.h"
#include "harness/core/error.h"
#include "harness/core/json_fields.h"
#include "harness/core/rng.h"
#include "kernels/hadamard.h"

namespace kvgate::kernels {

using nlohmann::json;

const std::vector<std::string>& kv_format_names() {
  static const std::vector<std::string> names = {
      "fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp8_per_token_head", "int8_per_token_head",
      "int4_per_token_head", "nvfp4", "q8_0", "q4_0", "turboquant_k8v4", "turboquant_4bit_nc",
      "turboquant_k3v4_nc", "turboquant_3bit_nc", "kivi2"};
  return names;
}

bool KvFormatSpec::skipped(int layer) const {
  return std::binary_search(skip_layers.begin(), skip_layers.end(), layer);
}

double KvFormatSpec::bytes_per_token() const {
  double total = 0;
  for (const auto& l : layers) total += (l.k + l.v) * shape.kv_heads;
  return total;
}

double KvFormatSpec::bytes_for_sequence(long long tokens) const {
  double total = bytes_per_token() * static_cast<double>(tokens);
  if (format == "kivi2") {
    // Keys: tokens past the last multiple of `residual` stay bf16; values: the last `residual` tokens.
    const long long r = kivi_residual;
    const long long k_full = tokens - (tokens / r) * r, v_full = std::min(tokens, r);
    const double bf16 = 2.0 * shape.head_dim;
    for (const auto& l : layers)
      if (l.codec == "kivi2")
        total += shape.kv_heads * (k_full * (bf16 - l.k) + v_full * (bf16 - l.v));
  }
  return total;
}

json KvFormatSpec::record() const {
  json r = {{"format", format}};
  for (const auto& [key, value] : params.items()) r[key] = value;
  r["bytes_per_token"] = bytes_per_token();
  return r;
}

namespace {

// Strict reading of KvStoreOptions::params: every key must be one the format knows.
class Params {
 public:
  // null (an empty brace initializer) means no parameters.
  Params(const json& p, std::string format) : p_(p.is_null() ? empty() : p), format_(std::move(format)) {
    if (!p_.is_object())
      throw Error("--kv-format " + format_ + ": parameters must be a JSON object, got " + describe_json_value(p_));
  }
  const json* find(const char* key) {
    known_.insert(key);
    auto it = p_.find(key);
    return it == p_.end() || it->is_null() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw Error("--kv-format " + format_ + ": parameter \"" + key + "\" " + what);
  }
  double number(const char* key, double def) {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_number() || !std::isfinite(v->get<double>())) fail(key, "must be a finite number, got " + describe_json_value(*v));
    return v->get<double>();
  }
  bool boolean(const char* key, bool def) {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_boolean()) fail(key, "must be true or false, got " + describe_json_value(*v));
    return v->get<bool>();
  }
  long long integer(const char* key, long long def) {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<std::uint64_t>() > (1ull << 62)))
      fail(key, "must be an integer, got " + describe_json_value(*v));
    return v->get<long long>();
  }
  std::string choice(const char* key, const std::string& def, const std::vector<std::string>& allowed) {
    const json* v = find(key);
    if (!v) return def;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : " | ") + a;
    if (!v->is_string() || std::find(allowed.begin(), allowed.end(), v->get<std::string>()) == allowed.end())
      fail(key, "must be " + list + ", got " + describe_json_value(*v));
    return v->get<std::string>();
  }
  static const json& empty() {
    static const json e = json::object();
    return e;
  }
  // After the format has read its parameters: anything left is a typo or a parameter of another format.
  void check_unknown() const {
    for (const auto& [key, value] : p_.items())
      if (!known_.count(key)) {
        std::string list;
        for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
        throw Error("--kv-format " + format_ + ": unknown parameter \"" + key + "\" (this format takes: " +
                    (list.empty() ? std::string("none") : list) + ")");
      }
  }

 private:
  const json& p_;
  std::string format_;
  std::set<std::string> known_;
};

float positive_scale(Params& p, const char* key, double value) {
  if (!(value > 0) || !std::isfinite(static_cast<float>(value)) || static_cast<float>(value) <= 0.0f)
    p.fail(key, "must be a positive fp32 number, got " + std::to_string(value));
  return static_cast<float>(value);
}

// "0,1,-2,-1" or [0, 1, -2, -1] -> sorted, unique, non-negative layer indices.
std::vector<int> parse_skip_layers(Params& p, const json& v, int layers) {
  std::vector<long long> raw;
  if (v.is_string()) {
    std::stringstream ss(v.get<std::string>());
    std::string item;
    while (std::getline(ss, item, ',')) {
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      if (item.empty()) continue;
      std::size_t used = 0;
      long long x = 0;
      try {
        x = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size()) p.fail("skip_layers", "has \"" + item + "\", which is not a layer index (e.g. 0,1,-2,-1)");
      raw.push_back(x);
    }
  } else if (v.is_array()) {
    for (const auto& x : v) {
      if (!x.is_number_integer()) p.fail("skip_layers", "must hold integers, got " + describe_json_value(x));
      raw.push_back(x.get<long long>());
    }
  } else {
    p.fail("skip_layers", "must be a list of layer indices (\"0,1,-2,-1\" or [0, 1, -2, -1]), got " + describe_json_value(v));
  }
  std::vector<int> out;
  for (long long x : raw) {
    const long long i = x < 0 ? x + layers : x;
    if (i < 0 || i >= layers)
      p.fail("skip_layers", "has layer " + std::to_string(x) + ", out of range for a " + std::to_string(layers) +
                                "-layer model (valid: " + std::to_string(-layers) + ".." + std::to_string(layers - 1) + ")");
    out.push_back(static_cast<int>(i));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> turboquant_boundary_layers(int layers) {
  const int n = std::min(2, layers / 2);
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(i);
  for (int i = layers - n; i < layers; ++i) out.push_back(i);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string signs_string(const std::vector<float>& s) {
  std::string out;
  for (float x : s) out += x > 0 ? '+' : '-';
  return out;
}

std::vector<float> parse_signs(Params& p, const json& v, int d) {
  std::vector<float> s;
  if (v.is_string()) {
    for (char c : v.get<std::string>()) {
      if (c != '+' && c != '-') p.fail("hadamard_signs", "must hold only '+' and '-', got '" + std::string(1, c) + "'");
      s.push_back(c == '+' ? 1.0f : -1.0f);
    }
  } else if (v.is_array()) {
    for (const auto& x : v) {
      if (!x.is_number() || (x.get<double>() != 1.0 && x.get<double>() != -1.0))
        p.fail("hadamard_signs", "must hold only 1 and -1, got " + describe_json_value(x));
      s.push_back(x.get<float>());
    }
  } else {
    p.fail("hadamard_signs", "must be a string of '+'/'-' or an array of 1/-1, got " + describe_json_value(v));
  }
  if (static_cast<int>(s.size()) != d)
    p.fail("hadamard_signs", "has " + std::to_string(s.size()) + " signs; the model's head_dim is " + std::to_string(d));
  return s;
}

void require(bool ok, const std::string& format, const std::string& what) {
  if (!ok) throw Error("--kv-format " + format + ": " + what + ": choose another format for this model");
}

KvScaleTable read_scales(Params& p, const json& v, const KvShape& shape) {
  if (v.is_string()) return parse_kv_scales(read_kv_scales_file(v.get<std::string>()), shape, v.get<std::string>());
  return parse_kv_scales(v, shape, "--kv-format parameter \"scales\"");
}

// Bytes of one (token, KV head) of a layer in the format: K, then V.
using LayerBytes = std::pair<double, double>;

// fp8_e4m3, fp8_e5m2, nvfp4: per-tensor (or per-head) scales from the parameters or a scales file.
LayerBytes resolve_scaled_float(Params& p, KvFormatSpec& s, const std::string& f, int d) {
  json& rec = s.params;
  double k_bytes = 0, v_bytes = 0;
  const bool fp4 = f == "nvfp4";
  const char* kk = fp4 ? "k_tensor_scale" : "k_scale";
  const char* vk = fp4 ? "v_tensor_scale" : "v_scale";
  if (const json* v = p.find("scales")) {
    for (const char* k : {kk, vk}) {
      if (p.find(k)) p.fail(k, "conflicts with \"scales\": give one or the other");
    }
    s.scales = read_scales(p, *v, s.shape);
    rec["scales"] = kv_scales_to_json(s.scales);
  } else {
    const float ks = positive_scale(p, kk, p.number(kk, 1.0)), vs = positive_scale(p, vk, p.number(vk, 1.0));
    s.scales = KvScaleTable::uniform(s.shape, ks, vs);
    rec[kk] = ks;
    rec[vk] = vs;
  }
  if (fp4) {
    require(d % kNvfp4Block == 0, f, "head_dim " + std::to_string(d) + " is not a multiple of 16 (the NVFP4 block)");
    k_bytes = v_bytes = d / 2.0 + d / 16.0;
    s.layout = "K and V each: head_dim/2 bytes of E2M1 (element 2i low nibble, 2i+1 high) | head_dim/16 "
               "UE4M3 block scales (one per 16 elements); fp32 tensor scale per layer (not per token)";
  } else {
    k_bytes = v_bytes = d;
    s.layout = "K and V each: head_dim x " + std::string(f == "fp8_e4m3" ? "E4M3" : "E5M2") +
               " = RNE-sat(x / scale); scales per layer or KV head (not per token)";
  }
  return {k_bytes, v_bytes};
}

// int4_per_token_head: the randomized Hadamard transform's signs from the parameters or a seed.
LayerBytes resolve_int4_per_token_head(Params& p, KvFormatSpec& s, const std::string& f, int d) {
  json& rec = s.params;
  double k_bytes = 0, v_bytes = 0;
  require(d % 2 == 0, f, "head_dim " + std::to_string(d) + " is odd (two elements per byte)");
  const bool had = p.boolean("hadamard", true);
  rec["hadamard"] = had;
  if (had) {
    require(is_power_of_two(d), f, "head_dim " + std::to_string(d) + " is not a power of two (the Hadamard size)");
    if (const json* v = p.find("hadamard_signs")) {
      if (p.find("hadamard_seed")) p.fail("hadamard_seed", "conflicts with \"hadamard_signs\": give one or the other");
      s.hadamard_signs = parse_signs(p, *v, d);
    } else {
      const long long seed = p.integer("hadamard_seed", 2654435769LL);
      Rng rng(static_cast<std::uint64_t>(seed));
      for (int i = 0; i < d; ++i) s.hadamard_signs.push_back(rng.bernoulli(0.5) ? 1.0f : -1.0f);
      rec["hadamard_seed"] = seed;
    }
    rec["hadamard_signs"] = signs_string(s.hadamard_signs);
  } else {
    for (const char* k : {"hadamard_signs", "hadamard_seed"})
      if (p.find(k)) p.fail(k, "needs \"hadamard\": true");
  }
  k_bytes = v_bytes = d / 2.0 + 4.0;
  s.layout = std::string(had ? "after the randomized Hadamard H*D*x (rounded to the input dtype), " : "") +
             "K and V each: head_dim/2 bytes of uint4 (element 2i low nibble, 2i+1 high) | fp32 scale "
             "= max((max-min)/15, 1e-6) with the zero point in its 4 low mantissa bits";
  return {k_bytes, v_bytes};
}

// q8_0, q4_0: ggml blocks, rotated as llama.cpp's attn_rot.
LayerBytes resolve_ggml(Params& p, KvFormatSpec& s, const std::string& f, int d) {
  json& rec = s.params;
  double k_bytes = 0, v_bytes = 0;
  require(d % kGgmlBlock == 0, f, "head_dim " + std::to_string(d) + " is not a multiple of 32 (the ggml block)");
  const bool rotate = p.boolean("rotate", d % 64 == 0);
  if (rotate) require(d % 64 == 0, f, "rotate needs head_dim % 64 == 0 (llama.cpp's attn_rot), head_dim is " + std::to_string(d));
  rec["rotate"] = rotate;
  s.k_rotation_block = rotate ? ggml_k_rotation_block(d) : 0;
  s.v_rotation_block = rotate ? ggml_v_rotation_block(d) : 0;
  const int block_bytes = f == "q8_0" ? kQ8_0Bytes : kQ4_0Bytes;
  k_bytes = v_bytes = static_cast<double>(d / kGgmlBlock) * block_bytes;
  s.layout = std::string(rotate ? "after H/sqrt(n) rotation (K: n = " + std::to_string(s.k_rotation_block) +
                                      ", V: n = 64), "
                                : "") +
             "K and V each: head_dim/32 blocks of " +
             (f == "q8_0" ? "{fp16 d; int8 qs[32]} (34 bytes)" : "{fp16 d; uint8 qs[16]} (18 bytes, element j low nibble, j+16 high)");
  return {k_bytes, v_bytes};
}

// turboquant_*: the preset's key and value bits.
LayerBytes resolve_turboquant(Params& p, KvFormatSpec& s, const std::string& f, int d) {
  double k_bytes = 0, v_bytes = 0;
  if (f == "turboquant_k8v4") s.turboquant = {8, 4, false};
  if (f == "turboquant_4bit_nc") s.turboquant = {4, 4, true};
  if (f == "turboquant_k3v4_nc") s.turboquant = {3, 4, true};
  if (f == "turboquant_3bit_nc") s.turboquant = {3, 3, true};
  if (s.turboquant.key_bits != 8)
    require(is_power_of_two(d), f, "head_dim " + std::to_string(d) + " is not a power of two (the Hadamard size)");
  require(d % 8 == 0, f, "head_dim " + std::to_string(d) + " is not a multiple of 8");
  k_bytes = tq_key_bytes(d, s.turboquant.key_bits);
  v_bytes = tq_slot_bytes(d, s.turboquant) - k_bytes;
  s.layout = "one slot per (token, head): [key: " +
             (s.turboquant.key_bits == 8
                  ? std::string("head_dim x E4M3, no scale")
                  : std::to_string(s.turboquant.key_bits) + "-bit Lloyd-Max codes after H/sqrt(d) | fp16 norm") +
             " | value: " + std::to_string(s.turboquant.value_bits) + "-bit codes | fp16 scale | fp16 min], even size (" +
             std::to_string(tq_slot_bytes(d, s.turboquant)) + " bytes at head_dim " + std::to_string(d) + ")";
  return {k_bytes, v_bytes};
}

// kivi2: group size and the full-precision residual window.
LayerBytes resolve_kivi(Params& p, KvFormatSpec& s, const std::string& f, int d) {
  json& rec = s.params;
  double k_bytes = 0, v_bytes = 0;
  const long long g = p.integer("group_size", 32), r = p.integer("residual", 128);
  if (g <= 0 || g > 4096 || g % 16 != 0) p.fail("group_size", "must be a positive multiple of 16 (KIVI packs 16 codes per word)");
  if (r <= 0 || r > (1 << 20)) p.fail("residual", "must be positive (KIVI uses 128)");
  s.kivi_group = static_cast<int>(g);
  s.kivi_residual = static_cast<int>(r);
  if (s.kivi_residual % s.kivi_group != 0)
    p.fail("residual", "must be a positive multiple of group_size (" + std::to_string(s.kivi_group) + ")");
  require(d % s.kivi_group == 0, f, "head_dim " + std::to_string(d) + " is not a multiple of group_size " + std::to_string(s.kivi_group));
  rec["group_size"] = s.kivi_group;
  rec["residual"] = s.kivi_residual;
  rec["bits"] = s.kivi_bits;
  // Keys: per channel, G tokens share an fp16 scale and min; values: per token, G channels do.
  k_bytes = d * s.kivi_bits / 8.0 + d * 4.0 / s.kivi_group;
  v_bytes = d * s.kivi_bits / 8.0 + (d / s.kivi_group) * 4.0;
  s.layout = "keys: per channel, groups of " + std::to_string(s.kivi_group) + " tokens: 2-bit codes | fp16 scale | "
             "fp16 min; values: per token, groups of " + std::to_string(s.kivi_group) +
             " channels: the same; the last tokens (keys: past the last multiple of " + std::to_string(s.kivi_residual) +
             ", values: the last " + std::to_string(s.kivi_residual) + ") stay bf16";
  return {k_bytes, v_bytes};
}

}  // namespace

KvFormatSpec resolve_kv_format(const KvStoreOptions& options, const KvShape& shape) {
  if (shape.layers <= 0 || shape.kv_heads <= 0 || shape.head_dim <= 0)
    throw Error("KV format: layers, kv_heads and head_dim must be positive", kExitInternal);
  if (shape.layers > kMaxLayers || shape.kv_heads > kMaxKvHeads || shape.head_dim > kMaxHeadDim)
    throw Error("KV format: a model with " + std::to_string(shape.layers) + " layers, " + std::to_string(shape.kv_heads) +
                " KV heads and head_dim " + std::to_string(shape.head_dim) + " is beyond what kvgate plans for (at most " +
                std::to_string(kMaxLayers) + ", " + std::to_string(kMaxKvHeads) + " and " + std::to_string(kMaxHeadDim) +
                "): check the config");
  if (options.format == kTestBrokenZeroV) {
    KvFormatSpec s = resolve_kv_format({.format = "bf16", .params = options.params}, shape);
    s.format = kTestBrokenZeroV;
    s.layout = "TEST ONLY, deliberately broken: K as bf16; V reads back as zeros";
    return s;
  }
  const std::string& f = options.format;
  const auto& names = kv_format_names();
  if (std::find(names.begin(), names.end(), f) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw Error("--kv-format " + f + ": unknown KV-cache format (known: " + list + ")");
  }
  KvFormatSpec s;
  s.format = f;
  s.shape = shape;
  const int d = shape.head_dim;
  Params p(options.params, f);
  json& rec = s.params;

  const bool plain = f == "fp32" || f == "bf16";
  if (!plain) {
    s.round_input_bf16 = p.choice("input_dtype", "bf16", {"bf16", "fp32"}) == "bf16";
    rec["input_dtype"] = s.round_input_bf16 ? "bf16" : "fp32";
    if (const json* v = p.find("skip_layers"))
      s.skip_layers = parse_skip_layers(p, *v, shape.layers);
    else if (f.rfind("turboquant_", 0) == 0)
      s.skip_layers = turboquant_boundary_layers(shape.layers);
    rec["skip_layers"] = s.skip_layers;
  } else {
    // fp32 and bf16 take no input rounding; skip layers are accepted (a list shared by several
    // formats) and only change fp32, whose skipped layers are then stored in bf16.
    s.round_input_bf16 = false;
    if (const json* v = p.find("skip_layers")) s.skip_layers = parse_skip_layers(p, *v, shape.layers);
    if (f == "fp32" && !s.skip_layers.empty()) rec["skip_layers"] = s.skip_layers;
    if (f == "bf16") s.skip_layers.clear();
  }

  double k_bytes = 0, v_bytes = 0;
  if (f == "fp32") {
    k_bytes = v_bytes = 4.0 * d;
    s.layout = "K and V: head_dim x fp32 each";
  } else if (f == "bf16" || f == "fp16") {
    k_bytes = v_bytes = 2.0 * d;
    s.layout = "K and V: head_dim x " + f + " each (little-endian)";
  } else if (f == "fp8_e4m3" || f == "fp8_e5m2" || f == "nvfp4") {
    std::tie(k_bytes, v_bytes) = resolve_scaled_float(p, s, f, d);
  } else if (f == "fp8_per_token_head" || f == "int8_per_token_head") {
    if (f == "int8_per_token_head") {
      s.rounding = p.choice("rounding", "rne", {"rne", "trunc"}) == "rne" ? IntRounding::kRne : IntRounding::kTrunc;
      rec["rounding"] = s.rounding == IntRounding::kRne ? "rne" : "trunc";
    }
    k_bytes = v_bytes = d + 4.0;
    s.layout = "K and V each: head_dim x " + std::string(f == "int8_per_token_head" ? "int8" : "E4M3") +
               " | fp32 scale = max(absmax/" + (f == "int8_per_token_head" ? "127" : "448") +
               ", 1e-6) (vLLM keeps the scales in separate [blocks, block_size, kv_heads] tensors)";
  } else if (f == "int4_per_token_head") {
    std::tie(k_bytes, v_bytes) = resolve_int4_per_token_head(p, s, f, d);
  } else if (f == "q8_0" || f == "q4_0") {
    std::tie(k_bytes, v_bytes) = resolve_ggml(p, s, f, d);
  } else if (f.rfind("turboquant_", 0) == 0) {
    std::tie(k_bytes, v_bytes) = resolve_turboquant(p, s, f, d);
  } else if (f == "kivi2") {
    std::tie(k_bytes, v_bytes) = resolve_kivi(p, s, f, d);
  }
  p.check_unknown();

  for (int l = 0; l < shape.layers; ++l) {
    if (s.skipped(l))
      s.layers.push_back({"bf16", 2.0 * d, 2.0 * d});
    else
      s.layers.push_back({f, k_bytes, v_bytes});
  }
  return s;
}

}  // namespace kvgate::kernels
