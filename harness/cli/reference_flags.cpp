#include "harness/cli/reference_flags.h"

#include <algorithm>
#include <thread>

namespace kvgate::cli {

nlohmann::json reference_switches(const ReferenceFlags& f) {
  return decoder::with_numerics(decoder::parse_kernel_switches(f.kernel_switches), f.numerics);
}

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

void add_reference_flags(CLI::App* sub, ReferenceFlags& f, bool kv, bool kv_required, int default_threads) {
  f.threads = default_threads;
  sub->add_option("--model-dir", f.model_dir, "Hugging Face checkpoint directory (config.json, safetensors, tokenizer.json)")
      ->required();
  if (kv) {
    CLI::Option* fmt = sub->add_option("--kv-format", f.kv.format, "KV-cache format (bf16, fp8_e4m3, int4_per_token_head, ...; docs/kv-formats.md)");
    if (kv_required) fmt->required();
    else fmt->capture_default_str();
    sub->add_option("--kv-params", f.kv.params,
                    "The format's parameters as a JSON object or @FILE, e.g. '{\"k_scale\": 0.05}' (docs/kv-formats.md)");
    sub->add_option("--kv-skip-layers", f.kv.skip_layers, "Layers kept in bf16, e.g. 0,1,-2,-1 (negative from the end)");
    sub->add_option("--kv-scales", f.kv.scales, "KV scales file (kvgate calibrate's, or SGLang's --quantization-param-path JSON)")
        ->check(CLI::ExistingFile);
    sub->add_option("--kernel-switches", f.kernel_switches,
                    "Engine-kernel switches as a JSON object or @FILE, e.g. '{\"q_fp8\": true, \"pv_fp8\": true, "
                    "\"pv_accum\": \"reduced\"}' (FA3's fp8 Q and P.V, Hopper's FP22 accumulator, the two_level fix; "
                    "llama.cpp's Q rounding, \"q_vec_dot\": \"q8_0\"|\"f16\"; recorded; docs/reference-decoder.md lists them)");
    sub->add_option("--numerics", f.numerics,
                    "Attention numerics: exact (fp32 Q and softmax weights; the CPU default) or engine (Q and softmax weights "
                    "rounded to bf16, fp32 accumulation, as FlashAttention/FlashInfer; the CUDA default); the kernel switch "
                    "\"numerics\" (docs/reference-decoder.md, \"Numerics\")")
        ->check(CLI::IsMember({"exact", "engine"}));
  }
  sub->add_option("--device", f.device, "cuda or cpu (default: cuda when a GPU is present; recorded)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  sub->add_option("--threads", f.threads, "CPU threads per sequence")->check(CLI::Range(1, 1024))->capture_default_str();
  sub->add_option("--max-batch", f.max_batch, "Sequences decoded at once (the rest wait)")->check(CLI::Range(1, 4096))->capture_default_str();
}

std::unique_ptr<decoder::Engine> make_reference_engine(std::shared_ptr<const decoder::Model> model, const ReferenceFlags& f,
                                                       const kernels::KvStoreOptions& kv, const std::string& device,
                                                       const nlohmann::json& kernel_switches) {
  return decoder::make_engine(std::move(model), {.device = device,
                                                 .kv = kv,
                                                 .max_batch = f.max_batch,
                                                 .threads = f.threads,
                                                 .kernel_switches = kernel_switches});
}

}  // namespace kvgate::cli
