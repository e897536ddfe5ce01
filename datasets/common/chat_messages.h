// Checking chat messages read from a user's file before they become a trial's input, so an error
// names the user's field ("prompts.jsonl:4: field \"messages\"[1] ...") rather than the tasks file's.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate {

// An Error "<where>: field \"<field>\"..." unless `messages` is a non-empty array of objects, each with
// a non-empty string "role" and a "content" that is a string, an array of parts, or null (an assistant
// turn with tool calls).
void check_chat_messages(const nlohmann::json& messages, const std::string& where, const std::string& field);

}  // namespace kvgate
