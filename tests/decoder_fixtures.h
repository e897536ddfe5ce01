// Helpers for the reference-decoder tests: random-weight checkpoints written into a TempDir.
#pragma once
#include <memory>
#include <string>

#include "harness/decoder/make_model.h"
#include "harness/decoder/model.h"
#include "harness/tokenizer/chat_template.h"
#include "tests/test_util.h"

namespace kvtest {

// A checkpoint from `options` in a fresh directory under `tmp`, loaded.
inline std::shared_ptr<const kvgate::decoder::Model> make_and_load(const TempDir& tmp, const std::string& name,
                                                                   const kvgate::decoder::MakeModelOptions& options) {
  const std::string dir = tmp.file(name);
  kvgate::decoder::make_model(options, dir);
  return kvgate::decoder::Model::load(dir);
}

// A small checkpoint every KV format accepts: head_dim 64 fits q8_0/q4_0 blocks and rotation,
// NVFP4 blocks, the Hadamard sizes and KIVI's groups.
inline kvgate::decoder::MakeModelOptions every_format_model() {
  return {.seed = 7, .layers = 4, .hidden = 128, .head_dim = 64, .intermediate = 256, .merges = 64};
}

// Chat options with add_generation_prompt (set by name: ChatOptions has many fields).
inline kvgate::ChatOptions with_generation_prompt() {
  kvgate::ChatOptions o;
  o.add_generation_prompt = true;
  return o;
}

}  // namespace kvtest
