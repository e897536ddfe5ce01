// The ladder's default calibration text: prompts of the kind the suite scores (its own long-context
// tasks: niah, multicode, mrcr), generated with a seed of their own, so the scales and the layer
// ranking see the activations the gate will, but never a scored trial. Calibration on generated
// prose instead misjudged both on models/demo-outliers (docs/ladder.md has the measurements).
#pragma once
#include <cstdint>
#include <string>

#include "harness/gate/gate.h"

namespace kvgate::gate {

struct CalibrationPrompts {
  std::string text{};        // every prompt's message contents, prompts separated by a blank line
  std::size_t prompts = 0;   // trials whose prompts are in `text`
  std::size_t dropped = 0;   // trials left out because a scored trial has the same input
  std::uint64_t seed = 0;    // the generation seed (never the suite's)
  std::string tasks{};       // "multicode" or "niah, multicode": the tasks the prompts come from
};

// The seed calibration prompts are generated with: derived from the suite's, and never equal to it.
std::uint64_t calibration_seed(std::uint64_t suite_seed);

// `per_bucket` trials for each length bucket of each long-context task of the gate's suite,
// interleaved (one of each bucket of each task, then the next), so any prefix mixes the lengths and
// tasks. A trial whose input equals one of the gate's scored trials (DIR/tasks/<task>.jsonl, when
// present) is dropped. Empty text when the suite has no long-context task (gsm8k and golden prompts
// do not change with the seed: they would be the scored ones).
CalibrationPrompts suite_calibration_prompts(const GateOptions& gate, int per_bucket);

}  // namespace kvgate::gate
