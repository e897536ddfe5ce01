// Chat-shape helpers shared by generated and official MRCR trials.
#pragma once
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvgate::mrcr {

// Merges each run of consecutive "user" messages into one message whose content is the contents
// joined by `separator` (AISBench joins with "\n"). The official prompts open with two user turns
// (the few-shot preamble, then the first ask), which chat templates requiring strict alternation
// reject. Contents must be strings; other messages are kept as they are.
nlohmann::json merge_consecutive_user_turns(const nlohmann::json& messages, std::string_view separator = "\n");

// Where message `index` of `messages` lands after merge_consecutive_user_turns (a user message that
// follows a user message joins it).
std::int64_t merged_message_index(const nlohmann::json& messages, std::int64_t index);

// Total characters (Unicode code points) of all message contents.
std::int64_t content_chars(const nlohmann::json& messages);

}  // namespace kvgate::mrcr
