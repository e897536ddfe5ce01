// A task's length buckets for one model: the suite's list, or its doubling ladder, kept within the
// model's maximum context (read from the server's /v1/models max_model_len or the checkpoint's
// config.json) less the tokens a trial may generate.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/gate/suite.h"

namespace kvgate::gate {

struct ResolvedLengths {
  std::vector<std::int64_t> buckets{};
  std::vector<std::int64_t> dropped{};  // listed buckets beyond the limit (warned)
  std::int64_t limit = 0;               // max_context - reserve; 0 when the context is unknown
};

// Ladder: from, 2 from, 4 from, ... while <= limit, then the limit itself rounded down to a
// multiple of 1024 ("up to the maximum context") when it is at least 10% above the last rung; `to`
// caps the ladder when set. A list: the buckets <= limit (all of them when the context is unknown).
// `max_context` 0 = unknown: a ladder up to "max" then is an Error that says to pass --max-context.
// Errors about the context name `source` (where the limit came from) and end with `advice(wanted)`
// (how to start the engine with `wanted` tokens per request), when given.
ResolvedLengths resolve_lengths(const LengthSpec& spec, std::int64_t max_context, int reserve, const std::string& where,
                                const std::string& source = "",
                                const std::function<std::string(std::int64_t)>& advice = {});

}  // namespace kvgate::gate
