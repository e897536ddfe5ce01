// Reading answers of retrieval tasks: the final answer text, and whole-token matching.
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/trial.h"

namespace kvgate {

// The answer a grader reads: thinking removed (common/thinking.h: inline <think> blocks, a lone
// </think>, an unclosed <think>), then RULER's post-processing: strip, control characters to
// newlines, strip.
std::string final_answer_text(std::string_view response);

// True when `value` occurs in `text` as a whole token: the characters around it are not ASCII
// letters or digits ("1234567" is not in "12345678", "ab-cd" is in "(ab-cd).").
bool contains_token(std::string_view text, std::string_view value);

std::string lower_ascii(std::string_view s);

// Copies the named meta fields of a trial (those present) into grade details, with the bucket:
// what depth x length heatmaps need from results alone.
void copy_trial_fields(const Trial& trial, std::initializer_list<const char*> meta_keys, nlohmann::json& details);

}  // namespace kvgate
