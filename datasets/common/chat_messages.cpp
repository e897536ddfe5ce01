#include "datasets/common/chat_messages.h"

#include "harness/core/error.h"

namespace kvgate {

void check_chat_messages(const nlohmann::json& messages, const std::string& where, const std::string& field) {
  const std::string at = where + ": field \"" + field + "\"";
  if (!messages.is_array()) throw Error(at + " must be an array of chat messages {\"role\": ..., \"content\": ...}");
  if (messages.empty()) throw Error(at + " is empty: a request needs at least one message");
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const nlohmann::json& m = messages[i];
    const std::string item = at + "[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || m["role"].get_ref<const std::string&>().empty())
      throw Error(item + " must be an object with a \"role\" (system, user, assistant, tool)");
    if (!m.contains("content") && !m.contains("tool_calls")) throw Error(item + " has no \"content\"");
    if (m.contains("content") && !(m["content"].is_string() || m["content"].is_array() || m["content"].is_null()))
      throw Error(item + ".content must be a string, an array of parts or null");
  }
}

}  // namespace kvgate
