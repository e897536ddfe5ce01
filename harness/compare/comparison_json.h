// The Comparison as JSON: stable field names documented in docs/compare-json.md. Non-finite numbers
// (an unbounded upper bound) are written as null, never NaN.
#pragma once
#include <nlohmann/json.hpp>

#include "harness/compare/comparison.h"

namespace kvgate::compare {

struct JsonOptions {
  bool trial_pairs = false;  // also write every task's per-trial pairs (large)
};

inline constexpr const char* kCompareSchema = "kvgate-compare/1";

nlohmann::json to_json(const Comparison& c, const JsonOptions& options = {});
nlohmann::json to_json(const stats::McNemarResult& m);  // also what `kvgate stats mcnemar` prints

}  // namespace kvgate::compare
