#include "datasets/common/input_api.h"

#include "harness/core/error.h"

namespace kvgate {

InputApi parse_input_api(std::string_view text, std::string_view flag) {
  if (text == "chat") return InputApi::chat;
  if (text == "completions") return InputApi::completions;
  throw Error(std::string(flag) + " " + std::string(text) + ": unknown input style: use chat or completions");
}

const char* to_string(InputApi api) { return api == InputApi::chat ? "chat" : "completions"; }

nlohmann::json render_input(InputApi api, std::string text) {
  if (api == InputApi::completions) return nlohmann::json{{"prompt", std::move(text)}};
  nlohmann::json message = {{"role", "user"}, {"content", std::move(text)}};
  return nlohmann::json{{"messages", nlohmann::json::array({std::move(message)})}};
}

std::size_t count_input(const TokenCounter& counter, const nlohmann::json& input) {
  if (input.contains("messages")) return counter.count_chat(input["messages"]);
  return counter.count_text(input.at("prompt").get_ref<const std::string&>());
}

std::int64_t reserved_special_tokens(InputApi api) { return api == InputApi::completions ? 1 : 0; }

}  // namespace kvgate
