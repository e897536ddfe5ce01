#include "harness/gate/ladder_inputs.h"

#include <algorithm>
#include <filesystem>

#include "harness/calibrate/calibrate.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/log.h"
#include "harness/core/sha256.h"
#include "harness/decoder/model_text.h"
#include "harness/gate/calibration_text.h"
#include "harness/gate/plan.h"
#include "harness/gate/trial_gen.h"
#include "harness/kld/per_layer.h"
#include "datasets/haystack/prose_generator.h"
#include "kernels/kv_scales.h"

namespace kvgate::gate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The fallback calibration text (a suite without long-context tasks): prose the trials never hold.
constexpr std::uint64_t kCalibrationSeed = 0x6c61646465720001ull;

const std::string& model_dir(const LadderInputs& in) { return in.baseline.backend.reference.model_dir; }

const decoder::Model& model(LadderInputs& in) {
  if (!in.model) in.model = decoder::Model::load(model_dir(in));
  return *in.model;
}

decoder::EngineOptions engine_options(const LadderInputs& in, const kernels::KvStoreOptions& kv, const json& switches) {
  const runner::ReferenceBackendOptions& r = in.baseline.backend.reference;
  return {.device = r.device.empty() ? "cpu" : r.device, .kv = kv, .max_batch = r.max_batch, .threads = r.threads,
          .kernel_switches = switches};
}

std::string generated_prose(std::size_t bytes) {
  haystack::ProseGenerator g(kCalibrationSeed);
  std::string text;
  while (text.size() < bytes) {
    const haystack::Sentence s = g.next();
    if (!text.empty()) text += s.paragraph_start ? "\n\n" : " ";
    text += s.text;
  }
  return text;
}

// The default calibration text: prompts of the suite's own long-context tasks (another seed than
// the trials', none equal to a scored one), enough for `want` tokens; kvgate's generated prose when
// the suite has no long-context task.
std::string default_calibration_text(LadderInputs& in, const decoder::ModelText& mt, long long want) {
  const GateOptions& g = in.options->gate;
  long long per_round = 0;  // tokens of one trial of every bucket of every long-context task
  for (const PlannedTask& p : plan_gate(g, false).tasks)
    if (is_long_context(p.spec->task))
      for (std::int64_t b : p.buckets) per_round += b;
  if (per_round > 0) {
    int per_bucket = static_cast<int>(std::max<long long>(1, (want + per_round - 1) / per_round));
    for (int tries = 0; tries < 4; ++tries, per_bucket *= 2) {
      const CalibrationPrompts c = suite_calibration_prompts(g, per_bucket);
      if (c.text.empty()) break;
      const auto n = static_cast<long long>(mt.tokenizer().encode(c.text, false).size());
      if (n >= want || tries == 3) {
        log_info("ladder: calibration text: " + std::to_string(c.prompts) + " prompts of " + c.tasks + " (seed " +
                 std::to_string(c.seed) + ", not the trials' " + std::to_string(g.suite.seed) + "; " + std::to_string(c.dropped) +
                 " equal to a scored trial left out), " + std::to_string(n) + " tokens");
        return c.text;
      }
    }
  }
  log_info("ladder: calibration text: kvgate's generated prose (the suite has no long-context task to take prompts from)");
  std::size_t bytes = static_cast<std::size_t>(want) * 5;
  while (true) {
    std::string text = generated_prose(bytes);
    if (static_cast<long long>(mt.tokenizer().encode(text, false).size()) >= want) return text;
    bytes *= 2;
  }
}

// The calibration text's tokens: --calibration-text's, or the default text until `want` tokens
// (kept in DIR/ladder/calibration.txt, so a resumed ladder reads the same text).
const std::vector<int>& tokens(LadderInputs& in, long long want) {
  if (!in.tokens.empty()) return in.tokens;
  const LadderOptions& o = *in.options;
  const decoder::ModelText mt = decoder::ModelText::load(model_dir(in), model(in).config());
  const std::string kept = in.dir + "/calibration.txt";
  std::string text;
  if (!o.calibration_text.empty()) text = read_file(o.calibration_text);
  else if (fs::exists(kept)) text = read_file(kept);
  else text = default_calibration_text(in, mt, want);
  if (o.calibration_text.empty() && !fs::exists(kept)) write_file_atomic(kept, text);
  for (const std::int32_t id : mt.tokenizer().encode(text, false)) in.tokens.push_back(id);
  if (in.tokens.empty())
    throw Error((o.calibration_text.empty() ? kept : o.calibration_text) + ": no calibration text (it encodes to no tokens)");
  if (static_cast<long long>(in.tokens.size()) > want) in.tokens.resize(static_cast<std::size_t>(want));
  return in.tokens;
}

std::vector<std::vector<int>> windows(const std::vector<int>& ids, std::size_t size, std::size_t max_windows, bool whole_only) {
  std::vector<std::vector<int>> out;
  for (std::size_t at = 0; at < ids.size() && out.size() < max_windows; at += size) {
    const std::size_t end = std::min(ids.size(), at + size);
    if (whole_only && end - at < size) break;
    out.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(at), ids.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return out;
}

std::string model_type(const std::string& dir) {
  const json j = json::parse(read_file(dir + "/config.json"), nullptr, false);
  return j.is_object() && j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "llama";
}

}  // namespace

bool takes_scales(const std::string& format) { return format == "fp8_e4m3" || format == "fp8_e5m2" || format == "nvfp4"; }

std::string ladder_scales(LadderInputs& in, const std::string& format) {
  const std::string path = in.dir + "/scales.json";
  if (fs::exists(path)) {
    const json j = kernels::read_kv_scales_file(path);
    if (j.contains("calibration") && j["calibration"].value("kv_format", format) == format) {
      log_info("ladder: calibrated scales already in " + path);
      return path;
    }
    throw Error(path + ": scales for another format than " + format + ": delete it (or pass another --out) to calibrate again");
  }
  make_directories(in.dir);
  const LadderOptions& o = *in.options;
  const std::vector<int>& ids = tokens(in, o.calibration_tokens);
  const std::vector<std::vector<int>> w = windows(ids, static_cast<std::size_t>(o.calibration_ctx), ids.size(), false);
  // The cache the engines hold before they quantize: bf16, so the maxima are of the values as cached.
  auto engine = decoder::make_engine(in.model, engine_options(in, {.format = "bf16"}, json::object()));
  const calibrate::CalibrateOptions co{.kv_format = format, .granularity = "tensor", .parallel = 1};
  const calibrate::Calibration cal = calibrate::calibrate(*engine, w, co);
  const json provenance = {{"model_dir", model_dir(in)},
                           {"data", o.calibration_text.empty() ? in.dir + "/calibration.txt" : o.calibration_text},
                           {"tokens", ids.size()},
                           {"ctx", o.calibration_ctx},
                           {"by", "kvgate gate --ladder"}};
  const json scales = calibrate::kvgate_scales_json(cal, co, provenance);
  const decoder::ModelConfig& cfg = model(in).config();
  kernels::parse_kv_scales(scales, {.layers = cfg.num_layers, .kv_heads = cfg.num_kv_heads, .head_dim = cfg.head_dim}, path);
  if (format == "fp8_e4m3")  // the file a server takes, for the same ladder on an endpoint (docs/ladder.md)
    write_file_atomic(in.dir + "/scales.sglang.json",
                      calibrate::sglang_scales_json(cal.scales, format, model_type(model_dir(in)), 1).dump(2) + "\n");
  write_file_atomic(path, scales.dump(2) + "\n");
  log_info("ladder: calibrated " + format + " scales on " + std::to_string(cal.tokens) + " tokens -> " + path);
  return path;
}

std::vector<int> ladder_layer_ranking(LadderInputs& in, const KvSettings& kv) {
  const std::string path = in.dir + "/per_layer.json";
  std::vector<int> order;
  if (fs::exists(path)) {
    const json j = json::parse(read_file(path), nullptr, false);
    if (!j.is_object() || !j.contains("per_layer") || !j["per_layer"].is_array() || j.value("kv", json()) != kv.record())
      throw Error(path + ": not the ranking of " + kv.name() + ": delete it (or pass another --out) to rank the layers again");
    for (const json& row : j["per_layer"]) order.push_back(row.at("layer").get<int>());
    log_info("ladder: layers already ranked in " + path);
    return order;
  }
  make_directories(in.dir);
  const LadderOptions& o = *in.options;
  const long long need = static_cast<long long>(o.kld_ctx) * o.kld_chunks;
  const std::vector<int>& ids = tokens(in, std::max(o.calibration_tokens, need));
  const std::vector<std::vector<int>> chunks =
      windows(ids, static_cast<std::size_t>(o.kld_ctx), static_cast<std::size_t>(o.kld_chunks), true);
  if (chunks.empty())
    throw Error("ladder: the calibration text holds " + std::to_string(ids.size()) + " tokens, fewer than one chunk of " +
                std::to_string(o.kld_ctx) + " for ranking the layers: give a longer --calibration-text");
  model(in);
  KvSettings only = kv;
  only.skip_layers.clear();
  const decoder::EngineOptions eo = engine_options(in, {.format = kv.format, .params = only.kv_params()}, kv.kernel_switches);
  const std::vector<kld::LayerKld> ranked = kld::per_layer_kld(in.model, eo, chunks, {}, [&](int done, int layers) {
    if (o.log) o.log("ladder: per-layer KLD " + std::to_string(done) + "/" + std::to_string(layers) + " layers");
  });
  for (const kld::LayerKld& l : ranked) order.push_back(l.layer);
  json context = {{"kv", kv.record()}, {"chunks", chunks.size()}, {"ctx", o.kld_ctx}, {"model_dir", model_dir(in)}};
  write_file_atomic(path, kld::per_layer_json(ranked, context).dump(2) + "\n");
  return order;
}

}  // namespace kvgate::gate
