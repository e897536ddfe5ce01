// Makes the backend a run asked for. The reference decoder (issue #13) is built in its own file,
// reference_backend*.cpp, which defines make_reference_backend.
#pragma once
#include <memory>
#include <string>

#include "core/backend.h"
#include "runner/http_backend.h"

namespace kvgate::runner {

struct ReferenceBackendOptions {
  std::string model_dir;  // Hugging Face checkpoint
  std::string kv_format;  // bf16, fp8_e4m3, ...
  std::string device;     // "cuda", "cpu", or "" (cuda when a GPU is present)
};

struct BackendOptions {
  std::string kind = "openai";  // "openai" or "reference"
  HttpBackendOptions http;
  ReferenceBackendOptions reference;
};

std::unique_ptr<Backend> make_backend(const BackendOptions& options);

// Defined by the reference decoder's file (reference_backend_stub.cpp until issue #13 lands).
std::unique_ptr<Backend> make_reference_backend(const ReferenceBackendOptions& options);

}  // namespace kvgate::runner
