// kvgate calibrate: K/V scales from calibration text through the bf16 model.
#include <memory>

#include "cli_common.h"

namespace kvgate::cli {

namespace {
struct CalibrateOptions {
  std::string model_dir, data, out, granularity = "tensor", device;
};
}  // namespace

void register_calibrate(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand("calibrate", "Compute calibrated KV scales (absmax per layer, per KV head) with the reference decoder");
  sub->add_option("--model-dir", o->model_dir, "Hugging Face checkpoint directory")->required();
  sub->add_option("--data", o->data, "Calibration text file")->required();
  sub->add_option("--out", o->out, "scales.json to write")->required();
  sub->add_option("--granularity", o->granularity, "tensor or head")->check(CLI::IsMember({"tensor", "head"}))->capture_default_str();
  sub->add_option("--device", o->device, "cuda or cpu")->check(CLI::IsMember({"cuda", "cpu"}));
  commands.add(sub, [o] { return not_built("calibrate", 13); });
}

}  // namespace kvgate::cli
