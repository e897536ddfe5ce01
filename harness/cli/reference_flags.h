// Flags shared by the commands that load the reference decoder (serve, kld, calibrate; run has its
// own, for --backend reference): the checkpoint, the KV format and its parameters, the device
// and the CPU threads, and the engine they make.
#pragma once
#include <memory>
#include <string>

#include "harness/cli/cli_common.h"
#include "harness/decoder/engine.h"
#include "harness/decoder/kv_flags.h"

namespace kvgate::cli {

struct ReferenceFlags {
  std::string model_dir, device;
  decoder::KvFlags kv;
  std::string kernel_switches;  // --kernel-switches (with `kv`): JSON object or @FILE; "" = exact
  std::string numerics;         // --numerics (with `kv`): "exact" | "engine"; "" = the device's default
  int threads = 1, max_batch = 32;
};

// --model-dir, --device, --threads, --max-batch; with `kv`: --kv-format (required when
// `kv_required`), --kv-params, --kv-skip-layers, --kv-scales, --kernel-switches, --numerics.
void add_reference_flags(CLI::App* sub, ReferenceFlags& f, bool kv, bool kv_required, int default_threads);

// The engine for a KV format on the resolved device; `kernel_switches` from --kernel-switches
// (parse_kernel_switches), or {} for an exact engine (kld's baseline, calibration).
std::unique_ptr<decoder::Engine> make_reference_engine(std::shared_ptr<const decoder::Model> model,
                                                       const ReferenceFlags& f, const kernels::KvStoreOptions& kv,
                                                       const std::string& device,
                                                       const nlohmann::json& kernel_switches = nlohmann::json::object());

// --kernel-switches with --numerics merged in (decoder::with_numerics): what the engine under test takes.
nlohmann::json reference_switches(const ReferenceFlags& f);

// Threads of this machine (at least 1).
int hardware_threads();

}  // namespace kvgate::cli
