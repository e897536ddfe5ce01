// How `kvgate kld` prints: llama-perplexity --kl-divergence's per-chunk table and final blocks
// (same lines and number formats, so its parsers and eyes read ours), then KLD by context-position
// bucket; or one JSON object (--json) whose mean KL divergence is "kld_mean".
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "harness/kld/kld_run.h"

namespace kvgate::kld {

std::string chunk_header();
std::string chunk_line(int chunk, const Running& r);
// The three final blocks of llama-perplexity, then the position buckets.
std::string report_text(const KldResult& r);
// Every statistic; `context` (model, formats, text, device) is merged in.
nlohmann::json report_json(const KldResult& r, const nlohmann::json& context);

}  // namespace kvgate::kld
