// kvgate calibrate: K/V scales from calibration text through the bf16 model. A thin layer over
// calibrate/calibrate.h.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "harness/calibrate/calibrate.h"
#include "harness/calibrate/range_report.h"
#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/jsonl.h"
#include "harness/core/log.h"
#include "harness/core/sha256.h"
#include "harness/decoder/device.h"
#include "harness/decoder/model_text.h"
#include "harness/cli/reference_flags.h"

namespace kvgate::cli {

namespace {
struct CalibrateCli {
  ReferenceFlags ref;
  std::string data, out, sglang_out, kv_format = "fp8_e4m3", granularity = "tensor";
  long long ctx = 2048, max_tokens = 0;
  int tp = 1;
  bool report = false, json = false;
  double report_scale = 0;  // 0: the scales being written
};

// "scales.json" -> "scales.sglang.json"
std::string default_sglang_path(const std::string& out) {
  std::filesystem::path p(out);
  const std::string stem = p.extension() == ".json" ? p.stem().string() : p.filename().string();
  return (p.parent_path() / (stem + ".sglang.json")).string();
}

std::string model_type(const std::string& dir, const decoder::ModelConfig& cfg) {
  const nlohmann::json j = nlohmann::json::parse(read_file((std::filesystem::path(dir) / "config.json").string()), nullptr, false);
  if (j.is_object() && j.contains("model_type") && j["model_type"].is_string()) return j["model_type"].get<std::string>();
  return decoder::arch_name(cfg.arch);
}

int run_calibrate(const CalibrateCli& c) {
  const double fmax = calibrate::format_max(c.kv_format);  // a format without scales fails before any work
  if (c.report && c.kv_format == "nvfp4")
    throw Error("--report: clip and flush fractions are for the per-tensor FP8 formats; calibrate with --kv-format "
                "fp8_e4m3 or fp8_e5m2 to get the report, or drop --report");
  const bool export_sglang = c.kv_format == "fp8_e4m3" || !c.sglang_out.empty();
  if (export_sglang && c.kv_format != "fp8_e4m3")
    throw Error("--sglang-out: SGLang's --quantization-param-path takes float8_e4m3fn scales only; drop it for --kv-format " +
                c.kv_format);
  const std::string sglang_path = c.sglang_out.empty() ? default_sglang_path(c.out) : c.sglang_out;
  const std::string device = decoder::resolve_device(c.ref.device);
  const std::string content = read_file(c.data);
  auto model = decoder::Model::load(c.ref.model_dir);
  const decoder::ModelConfig& cfg = model->config();
  const decoder::ModelText text = decoder::ModelText::load(c.ref.model_dir, cfg);
  if (c.ctx > cfg.max_position_embeddings)
    throw Error("--ctx " + std::to_string(c.ctx) + ": longer than the model's max_position_embeddings " +
                std::to_string(cfg.max_position_embeddings));
  std::vector<std::int32_t> ids = text.tokenizer().encode(content, false);
  if (c.max_tokens > 0 && static_cast<long long>(ids.size()) > c.max_tokens) ids.resize(static_cast<std::size_t>(c.max_tokens));
  if (ids.empty()) throw Error(c.data + ": no text to calibrate on (the file encodes to no tokens)");
  std::vector<std::vector<int>> windows;
  for (std::size_t at = 0; at < ids.size(); at += static_cast<std::size_t>(c.ctx))
    windows.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(at),
                         ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), at + static_cast<std::size_t>(c.ctx))));

  // The cache the engines hold before they quantize: bf16 (the maxima of the values as cached).
  auto engine = make_reference_engine(model, c.ref, {.format = "bf16"}, device);
  const calibrate::CalibrateOptions o{.kv_format = c.kv_format,
                                      .granularity = c.granularity,
                                      .parallel = device == "cuda" ? c.ref.max_batch : 1};
  const calibrate::Calibration cal = calibrate::calibrate(*engine, windows, o);
  const nlohmann::json provenance = {{"model_dir", c.ref.model_dir},
                                     {"data", c.data},
                                     {"data_sha256", sha256_hex(content)},
                                     {"ctx", c.ctx},
                                     {"device", decoder::device_record(c.ref.device, device)}};
  const nlohmann::json scales = calibrate::kvgate_scales_json(cal, o, provenance);
  // Checked by the reader --kv-scales uses before anything is written.
  const kernels::KvShape shape{.layers = cfg.num_layers, .kv_heads = cfg.num_kv_heads, .head_dim = cfg.head_dim};
  kernels::parse_kv_scales(scales, shape, c.out);
  nlohmann::json sglang;
  if (export_sglang) sglang = calibrate::sglang_scales_json(cal.scales, c.kv_format, model_type(c.ref.model_dir, cfg), c.tp);
  write_file_atomic(c.out, scales.dump(2) + "\n");
  if (export_sglang) write_file_atomic(sglang_path, sglang.dump(2) + "\n");
  float kmax = 0, vmax = 0;
  for (std::size_t l = 0; l < cal.amax.k.size(); ++l)
    for (std::size_t h = 0; h < cal.amax.k[l].size(); ++h) {
      kmax = std::max(kmax, cal.amax.k[l][h]);
      vmax = std::max(vmax, cal.amax.v[l][h]);
    }
  nlohmann::json summary{{"out", c.out},
                         {"sglang_out", export_sglang ? nlohmann::json(sglang_path) : nlohmann::json(nullptr)},
                         {"kv_format", c.kv_format},
                         {"format_max", fmax},
                         {"granularity", c.granularity},
                         {"layers", cfg.num_layers},
                         {"tokens", cal.tokens},
                         {"windows", cal.windows},
                         {"k_amax", kmax},
                         {"v_amax", vmax},
                         {"device", device}};
  if (!c.report) {
    std::cout << summary.dump() << "\n";
    return 0;
  }
  const kernels::KvScaleTable report_scales =
      c.report_scale > 0 ? calibrate::uniform_scales(cfg.num_layers, cfg.num_kv_heads, static_cast<float>(c.report_scale))
                         : cal.scales;
  char label[128];
  if (c.report_scale > 0)
    std::snprintf(label, sizeof label, "scale %g in every layer", c.report_scale);
  else
    std::snprintf(label, sizeof label, "the calibrated scales written (granularity %s)", c.granularity.c_str());
  const std::vector<calibrate::LayerRange> ranges = calibrate::range_report(model, windows, report_scales, c.kv_format, c.ref.threads);
  if (c.json) {
    summary["range_report"] = calibrate::range_report_json(ranges, c.kv_format, label);
    std::cout << summary.dump(2) << "\n";
  } else {
    std::cout << summary.dump() << "\n\n" << calibrate::range_report_text(ranges, c.kv_format, label);
  }
  return 0;
}
}  // namespace

void register_calibrate(CLI::App& app, Commands& commands) {
  auto c = std::make_shared<CalibrateCli>();
  CLI::App* sub = app.add_subcommand("calibrate", "Compute calibrated KV scales (absmax per layer, per KV head) with the reference decoder");
  add_reference_flags(sub, c->ref, /*kv=*/false, false, hardware_threads());
  sub->add_option("--data", c->data, "Calibration text file")->required()->check(CLI::ExistingFile);
  sub->add_option("--out", c->out, "scales.json to write (kvgate's format; --kv-scales reads it)")->required();
  sub->add_option("--kv-format", c->kv_format, "The format the scales are for: fp8_e4m3, fp8_e5m2 or nvfp4")
      ->check(CLI::IsMember({"fp8_e4m3", "fp8_e5m2", "nvfp4"}))->capture_default_str();
  sub->add_option("--granularity", c->granularity, "tensor (a scale per layer) or head (per KV head)")
      ->check(CLI::IsMember({"tensor", "head"}))->capture_default_str();
  sub->add_option("--ctx", c->ctx, "Tokens per calibration window")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--max-tokens", c->max_tokens, "Use at most this many tokens of --data (0: all)")->check(CLI::NonNegativeNumber);
  sub->add_option("--sglang-out", c->sglang_out,
                  "Where to write the SGLang --quantization-param-path export (fp8_e4m3; default: OUT with .sglang.json)");
  sub->add_option("--tp", c->tp, "Tensor-parallel ranks of the SGLang export (each rank: the max over the KV heads it holds)")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  sub->add_flag("--report", c->report,
                "Also print each layer's K/V range: absmax, 99.99th percentile, clipped and flushed-to-zero fractions and "
                "round-trip RMS error at the written scales (or --report-scale); runs the text once more on the CPU");
  sub->add_option("--report-scale", c->report_scale, "Scale of every layer in the --report (e.g. 1: uncalibrated)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--json", c->json, "With --report: one JSON object, the summary plus \"range_report\"");
  commands.add(sub, [c] {
    if ((c->report_scale > 0 || c->json) && !c->report) throw Error("--report-scale and --json go with --report: add --report");
    return run_calibrate(*c);
  });
}

}  // namespace kvgate::cli
