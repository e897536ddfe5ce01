#include "datasets/mrcr/mrcr_chat.h"

#include "harness/core/error.h"

namespace kvgate::mrcr {

using nlohmann::json;

json merge_consecutive_user_turns(const json& messages, std::string_view separator) {
  json out = json::array();
  for (const json& m : messages) {
    const bool user = m.value("role", std::string()) == "user";
    if (user && !m.contains("content")) throw Error("merge user turns: a user message has no \"content\"");
    if (user && !m["content"].is_string())
      throw Error("merge user turns: a user message's content is not a string (content parts cannot be merged)");
    if (user && !out.empty() && out.back().value("role", std::string()) == "user") {
      std::string& prev = out.back()["content"].get_ref<std::string&>();
      prev += separator;
      prev += m["content"].get_ref<const std::string&>();
    } else {
      out.push_back(m);
    }
  }
  return out;
}

std::int64_t merged_message_index(const json& messages, std::int64_t index) {
  std::int64_t merged = -1;
  for (std::int64_t i = 0; i <= index && i < static_cast<std::int64_t>(messages.size()); ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    const bool joins = k > 0 && messages[k].value("role", std::string()) == "user" &&
                       messages[k - 1].value("role", std::string()) == "user";
    if (!joins) ++merged;
  }
  return merged;
}

std::int64_t content_chars(const json& messages) {
  std::int64_t n = 0;
  for (const json& m : messages) {
    if (!m.contains("content") || !m["content"].is_string()) continue;
    for (unsigned char c : m["content"].get_ref<const std::string&>()) n += (c & 0xC0) != 0x80;
  }
  return n;
}

}  // namespace kvgate::mrcr
