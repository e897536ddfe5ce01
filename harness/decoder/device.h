// Which device the reference decoder runs on: `--device cuda|cpu`, and when the flag is absent,
// cuda when this build has CUDA and a GPU is visible, cpu otherwise. The choice is always recorded
// (run.json, /server_info, kld and calibrate output), never made silently.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate::decoder {

// "cuda" or "cpu": `requested` when given (checked), else the default described above.
std::string resolve_device(const std::string& requested);

// {"requested": "" | "cuda" | "cpu", "device": resolved, "cuda": cuda_describe()}: for records.
nlohmann::json device_record(const std::string& requested, const std::string& resolved);

}  // namespace kvgate::decoder
