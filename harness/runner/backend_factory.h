// Makes the backend a run asked for. The reference decoder is built in its own file,
// reference_backend.cpp, which defines make_reference_backend.
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "harness/core/backend.h"
#include "harness/runner/http_backend.h"

namespace kvgate::runner {

struct ReferenceBackendOptions {
  std::string model_dir;  // Hugging Face checkpoint
  std::string kv_format;  // bf16, fp8_e4m3, ...
  std::string device;     // "cuda", "cpu", or "" (cuda when a GPU is present)
  nlohmann::json kv_params = nlohmann::json::object();  // the format's parameters (kv_format.h)
  // Engine-kernel emulation switches (decoder::EngineOptions::kernel_switches); {} = exact attention.
  nlohmann::json kernel_switches = nlohmann::json::object();
  int threads = 1;        // CPU threads per sequence
  int max_batch = 32;     // sequences decoded at once (CPU: sessions side by side)
  bool stream = false;    // record time to first token and inter-token gaps, as --stream does over HTTP
  const std::atomic<bool>* cancel = nullptr;  // set: generations in flight stop ("cancelled")
};

struct BackendOptions {
  std::string kind = "openai";  // "openai" or "reference"
  HttpBackendOptions http;
  ReferenceBackendOptions reference;
};

std::unique_ptr<Backend> make_backend(const BackendOptions& options);

// Defined by reference_backend.cpp: the reference decoder in this process (docs/reference-decoder.md).
std::unique_ptr<Backend> make_reference_backend(const ReferenceBackendOptions& options);

}  // namespace kvgate::runner
