// kvgate kld: teacher-forced, cache-reading KL divergence of a KV format against bf16. A thin
// layer over kld/kld_run.h and kld/kld_report.h.
#include <iostream>
#include <memory>
#include <thread>

#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/sha256.h"
#include "harness/decoder/device.h"
#include "harness/decoder/model_text.h"
#include "harness/kld/kld_report.h"
#include "harness/kld/per_layer.h"
#include "kernels/kv_format.h"
#include "harness/cli/reference_flags.h"

namespace kvgate::cli {

namespace {
struct KldCli {
  ReferenceFlags ref;
  std::string text, base_format = "bf16";
  long long ctx = 0, max_chunks = 0;
  int buckets = 8;
  bool json = false, second_half = false, per_layer = false;
};

// The text's ids cut into chunks of ctx tokens (the tail that does not fill one is dropped, as
// llama-perplexity does); where the tokenizer adds a BOS, it replaces each chunk's first token.
std::vector<std::vector<int>> make_chunks(const std::vector<int>& ids, int ctx, long long max_chunks, int bos) {
  std::vector<std::vector<int>> chunks;
  for (std::size_t at = 0; at + ctx <= ids.size(); at += ctx) {
    if (max_chunks > 0 && static_cast<long long>(chunks.size()) >= max_chunks) break;
    chunks.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(at), ids.begin() + static_cast<std::ptrdiff_t>(at + ctx));
    if (bos >= 0) chunks.back()[0] = bos;
  }
  return chunks;
}

int kld(const KldCli& c) {
  const std::string device = decoder::resolve_device(c.ref.device);
  const kernels::KvStoreOptions test_kv = decoder::kv_store_options(c.ref.kv);
  const kernels::KvStoreOptions base_kv{.format = c.base_format};
  // The test side only: the baseline runs in the device's default numerics, so on the CPU
  // `--kv-format bf16 --numerics engine` is the KLD of engine numerics against exact.
  const nlohmann::json switches = reference_switches(c.ref);
  if (c.per_layer && test_kv.format == "bf16")
    throw Error("--per-layer --kv-format bf16: that is the baseline itself; give the format to test (e.g. --kv-format fp8_e4m3)");
  if (c.per_layer && c.base_format != "bf16")
    throw Error("--per-layer keeps every layer but one in bf16 and scores against bf16: drop --base-kv-format " + c.base_format);
  const std::string content = read_file(c.text);
  auto model = decoder::Model::load(c.ref.model_dir);
  const decoder::ModelConfig& cfg = model->config();
  const decoder::ModelText text = decoder::ModelText::load(c.ref.model_dir, cfg);
  const std::vector<std::int32_t> ids32 = text.tokenizer().encode(content, false);
  const std::vector<int> ids(ids32.begin(), ids32.end());
  if (c.ctx > cfg.max_position_embeddings)
    throw Error("--ctx " + std::to_string(c.ctx) + ": longer than the model's max_position_embeddings " +
                std::to_string(cfg.max_position_embeddings));
  const int ctx = static_cast<int>(c.ctx > 0 ? c.ctx : std::min<long long>(static_cast<long long>(ids.size()), cfg.max_position_embeddings));
  if (ctx < 2 || static_cast<long long>(ids.size()) < ctx)
    throw Error(c.text + ": " + std::to_string(ids.size()) + " tokens, too few for one chunk of --ctx " + std::to_string(ctx) +
                " (at least 2): give a longer text or a smaller --ctx");
  const std::vector<std::int32_t> bos_ids = text.tokenizer().encode("", true);
  const std::vector<std::vector<int>> chunks = make_chunks(ids, ctx, c.max_chunks, bos_ids.empty() ? -1 : bos_ids[0]);

  const kernels::KvShape shape{.layers = cfg.num_layers, .kv_heads = cfg.num_kv_heads, .head_dim = cfg.head_dim};
  nlohmann::json context = {{"model_dir", c.ref.model_dir},
                            {"text", c.text},
                            {"text_sha256", sha256_hex(content)},
                            {"text_tokens", ids.size()},
                            {"kv", kernels::resolve_kv_format(test_kv, shape).record()},
                            {"base_kv", kernels::resolve_kv_format(base_kv, shape).record()},
                            {"kernel_switches", switches},
                            {"device", decoder::device_record(c.ref.device, device)},
                            {"scored", c.second_half ? "second half of each chunk (llama-perplexity)" : "every position after the first"},
                            {"definition", "KLD(base || Q) over the whole vocabulary per position, teacher-forced, every position "
                                           "attending over the cache as stored"}};
  kld::KldRunOptions o{.second_half = c.second_half, .buckets = c.buckets};
  if (c.per_layer) {
    context["per_layer_definition"] =
        "each layer alone quantized in the tested format (every other layer bf16 through skip_layers), against bf16";
    decoder::EngineOptions candidate{.device = device, .kv = test_kv, .max_batch = c.ref.max_batch, .threads = c.ref.threads,
                                     .kernel_switches = switches};
    if (!c.json)
      std::cout << "kvgate kld --per-layer: " << c.ref.model_dir << ", kv " << test_kv.format << " in one layer at a time against "
                << c.base_format << " on " << device << ": " << chunks.size() << " chunks of " << ctx << " tokens, "
                << cfg.num_layers << " layers\n" << std::flush;
    const auto progress = [&](int done, int layers) {
      if (!c.json) std::cout << "  layer " << done << "/" << layers << " done\n" << std::flush;
    };
    // per_layer_kld makes its own engines (a bf16 one, then one per layer): none are made here.
    nlohmann::json engine;
    const std::vector<kld::LayerKld> layers = kld::per_layer_kld(model, candidate, chunks, o, progress, &engine);
    context["engine"] = engine;
    if (c.json)
      std::cout << kld::per_layer_json(layers, context).dump(2) << "\n";
    else
      std::cout << "\n====== KL divergence per layer (that layer alone quantized), largest first ======\n"
                << kld::per_layer_text(layers);
    return 0;
  }
  auto base = make_reference_engine(model, c.ref, base_kv, device);
  auto test = make_reference_engine(model, c.ref, test_kv, device, switches);
  context["engine"] = test->describe();
  context["base_attention_numerics"] = base->describe().value("attention_numerics", "exact");
  if (!c.json) {
    const std::string numerics = context["engine"].value("attention_numerics", "exact"),
                      base_numerics = context["base_attention_numerics"].get<std::string>();
    const std::string modes = numerics == base_numerics ? "" : ", " + numerics + " numerics against " + base_numerics;
    std::cout << "kvgate kld: " << c.ref.model_dir << ", kv " << test_kv.format << " against " << c.base_format << " on "
              << device << modes << ": " << chunks.size() << " chunks of " << ctx << " tokens (" << ids.size()
              << " in the text), every position reading the cache\n\n"
              << kld::chunk_header() << std::flush;
    o.on_chunk = [](int chunk, const kld::Running& r) { std::cout << kld::chunk_line(chunk, r) << std::flush; };
  }
  const kld::KldResult r = kld::run_kld(*base, *test, chunks, o);
  if (c.json)
    std::cout << kld::report_json(r, context).dump(2) << "\n";
  else
    std::cout << kld::report_text(r);
  return 0;
}
}  // namespace

void register_kld(CLI::App& app, Commands& commands) {
  auto c = std::make_shared<KldCli>();
  CLI::App* sub = app.add_subcommand("kld", "KL divergence against bf16 with every position reading the quantized cache");
  add_reference_flags(sub, c->ref, /*kv=*/true, /*kv_required=*/true, std::max(1, hardware_threads() / 2));
  sub->add_option("--text", c->text, "Text file to score")->required()->check(CLI::ExistingFile);
  sub->add_option("--ctx", c->ctx, "Tokens per chunk (default: the whole text, up to the model's maximum)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--chunks", c->max_chunks, "Score at most this many chunks (0: all)")->check(CLI::NonNegativeNumber);
  sub->add_option("--base-kv-format", c->base_format, "The baseline's KV format")->capture_default_str();
  sub->add_option("--buckets", c->buckets, "Context-position buckets of the KLD-by-position table")
      ->check(CLI::Range(1, 4096))->capture_default_str();
  sub->add_flag("--second-half", c->second_half, "Score only the second half of each chunk, as llama-perplexity does");
  sub->add_flag("--per-layer", c->per_layer,
                "Quantize one layer at a time (the others bf16) and rank the layers by KLD: which layers hurt");
  sub->add_flag("--json", c->json, "One JSON object (kld_mean, percentiles, same-top-token %, by_position, ...)");
  commands.add(sub, [c] { return kld(*c); });
}

}  // namespace kvgate::cli
