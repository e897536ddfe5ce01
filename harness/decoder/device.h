// Which device the reference decoder runs on: `--device cuda|cpu`, and when the flag is absent,
// cuda when this build has the CUDA engine (KVGATE_HAS_CUDA_ENGINE, harness/decoder/CMakeLists.txt)
// and a GPU is visible, cpu otherwise, so a machine without a GPU needs no flag. The choice is
// always recorded (run.json, /server_info, kld and calibrate output), never made silently.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate::decoder {

// This binary has the CUDA engine (make_cuda_engine decodes rather than throwing).
bool cuda_engine_built();

// "cuda" or "cpu": `requested` when given (checked), else the default described above.
std::string resolve_device(const std::string& requested);

// {"requested": null | "cuda" | "cpu", "device": resolved, "cuda_engine": bool, "cuda": cuda_describe()}.
nlohmann::json device_record(const std::string& requested, const std::string& resolved);

}  // namespace kvgate::decoder
