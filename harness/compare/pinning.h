// The pinning check: every difference between a reference and a candidate run other than the KV
// settings (the seeds' protocol: "pin everything: same engine version, attention backend, weights
// and sampling; change only the KV dtype and the scale source"). Read from run.json: the endpoint
// probe (engine.summary), the engine log (engine.log.facts, `kvgate run --engine-log`), the
// reference decoder's attention numerics (engine.attention_numerics; absent = exact), sampling,
// tasks sha256, kvgate version. KV settings (kv.*, KV cache dtype, scales, capacity, concurrency)
// are what a comparison changes, so they are never listed.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/manifest.h"

namespace kvgate::compare {

struct PinnedFact {
  std::string field{};   // stable name: "engine_version", "attention_backend", "sampling.temperature", ...
  std::string label{};   // for people: "engine version"
  // The recorded values: nullopt = not recorded in that run; JSON null = recorded as unset.
  std::optional<nlohmann::json> reference{}, candidate{};
};

struct Pinning {
  std::vector<PinnedFact> differences{};  // recorded in both runs, different
  std::vector<PinnedFact> one_sided{};    // recorded in one run only: cannot be checked
  std::vector<std::string> unrecorded{};  // labels of facts neither run recorded (no engine log, ...)
  std::vector<std::string> warnings{};    // different attention backends: the seeds' Hopper FP8 bug
  // The KV settings of both runs (format, scales, skipped layers, kernel switches): what the
  // comparison changes, shown beside the check and never counted as a difference.
  std::vector<PinnedFact> kv_settings{};
  std::vector<std::string> compared{};    // labels of the facts both runs recorded (what "pinned" rests on)
  bool pinned() const { return differences.empty(); }
};

// `reference_label` / `candidate_label` name the runs in the warnings. A KV format recorded by
// neither run (an endpoint without --baseline-kv / --candidate-kv) is listed as unrecorded.
Pinning check_pinning(const RunManifest& reference, const RunManifest& candidate, const std::string& reference_label,
                      const std::string& candidate_label);

// A recorded value as text: strings as is, null as "unset", others as JSON.
std::string value_text(const nlohmann::json& v);

// "KV format bf16 -> fp8_e4m3; KV scales (not recorded) -> calibrated (sha256 3f2a...)": the KV settings in one line.
std::string kv_settings_line(const Pinning& p);

// "engine version 0.10.2 -> 0.19.1" (values as JSON text when not strings; "(not recorded)").
std::string describe(const PinnedFact& f);

}  // namespace kvgate::compare
