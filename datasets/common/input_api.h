// How a long-context trial's text reaches the model: as one chat user message (the server applies
// the chat template) or as a raw completion prompt (RULER style, ending in an answer prefix the
// model continues). Counting follows the same choice, so the whole rendered input is measured.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/tokenizer/token_counter.h"

namespace kvgate {

enum class InputApi { chat, completions };

// "chat" | "completions"; an Error names `flag` otherwise.
InputApi parse_input_api(std::string_view text, std::string_view flag = "--api");
const char* to_string(InputApi api);

// {"messages": [{"role": "user", "content": text}]} or {"prompt": text}.
nlohmann::json render_input(InputApi api, std::string text);

// Tokens of a rendered input: count_chat for messages (template and generation prompt included),
// count_text for a prompt.
std::size_t count_input(const TokenCounter& counter, const nlohmann::json& input);

// Tokens kept free under the target: a completion prompt may get a BOS token from the server that
// count_text does not see; chat templates already hold theirs.
std::int64_t reserved_special_tokens(InputApi api);

}  // namespace kvgate
