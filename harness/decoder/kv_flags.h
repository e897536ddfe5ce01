// The KV-format flags shared by `run --backend reference`, `serve`, `kld` and `calibrate`:
// --kv-format F, --kv-params JSON (the format's parameters, kv_format.h), --kv-skip-layers L and
// --kv-scales FILE (shorthands for the "skip_layers" and "scales" parameters). One parameter given
// twice is an error rather than a silent winner.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/kv_store.h"

namespace kvgate::decoder {

struct KvFlags {
  std::string format;
  std::string params;       // a JSON object, or @FILE holding one; "" for none
  std::string skip_layers;  // "0,1,-2,-1"; "" for none
  std::string scales;       // path of a scales file (kvgate's or SGLang's layout); "" for none
};

kernels::KvStoreOptions kv_store_options(const KvFlags& flags);

// What a resumed run must match besides the format: the parameters, and the sha256 of a scales
// file named by path (its content, not only its name).
nlohmann::json kv_identity(const kernels::KvStoreOptions& options);

// --kernel-switches: a JSON object (or @FILE holding one) of engine-kernel emulation switches for
// the CUDA engine (EngineOptions::kernel_switches); "" is {} (exact attention).
nlohmann::json parse_kernel_switches(const std::string& flag_value);

// --numerics exact|engine: `switches` with "numerics" set to it; "" returns them unchanged. A
// "numerics" switch (--kernel-switches, a candidate's switches=) that says otherwise is an Error.
nlohmann::json with_numerics(nlohmann::json switches, const std::string& numerics);

}  // namespace kvgate::decoder
