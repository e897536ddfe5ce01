// What the ladder's rungs need beyond a gate run, each made once and kept in DIR/ladder/ so a
// re-run resumes: the calibration text (DIR/ladder/calibration.txt: --calibration-text's, or
// prompts of the suite's own long-context tasks with another seed, calibration_text.h), the
// calibrated scales (scales.json; for fp8_e4m3 also scales.sglang.json, SGLang's / vLLM's
// --quantization-param-path file for the same ladder on a server) and the layers ranked by
// per-layer KLD (per_layer.json).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "harness/decoder/model.h"
#include "harness/gate/ladder.h"

namespace kvgate::gate {

struct LadderInputs {
  std::string dir{};  // DIR/ladder
  Configuration baseline{};
  const LadderOptions* options = nullptr;
  std::shared_ptr<const decoder::Model> model{};  // loaded when first needed
  std::vector<int> tokens{};                       // the calibration text's, when first needed
};

// fp8_e4m3, fp8_e5m2 and nvfp4 take per-tensor scales (kvgate calibrate's formats).
bool takes_scales(const std::string& format);

// DIR/ladder/scales.json for `format` (made on the first call, read back after).
std::string ladder_scales(LadderInputs& in, const std::string& format);

// Every layer, most sensitive first, for `kv` (its scales and kernel switches; its own skipped
// layers ignored).
std::vector<int> ladder_layer_ranking(LadderInputs& in, const KvSettings& kv);

}  // namespace kvgate::gate
