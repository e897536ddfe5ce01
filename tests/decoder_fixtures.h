// Helpers for the reference-decoder tests: random-weight checkpoints written into a TempDir.
#pragma once
#include <memory>
#include <string>

#include "decoder/make_model.h"
#include "decoder/model.h"
#include "test_util.h"

namespace kvtest {

// A checkpoint from `options` in a fresh directory under `tmp`, loaded.
inline std::shared_ptr<const kvgate::decoder::Model> make_and_load(const TempDir& tmp, const std::string& name,
                                                                   const kvgate::decoder::MakeModelOptions& options) {
  const std::string dir = tmp.file(name);
  kvgate::decoder::make_model(options, dir);
  return kvgate::decoder::Model::load(dir);
}

}  // namespace kvtest
