// Parses tokenizer.json into a document, except model.vocab and model.merges (most of the file:
// 150K entries each for Qwen3), which stream straight into BpeTables and appear as null in the
// document. Several times faster than building them as JSON values.
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/tokenizer/bpe_model.h"

namespace kvgate::tok {

// Throws kvgate::Error naming `name` when the text is not valid JSON.
nlohmann::json parse_tokenizer_json(std::string_view text, const std::string& name, BpeTables& tables);

}  // namespace kvgate::tok
