#include "harness/serve/openai_response.h"

namespace kvgate::serve {

using nlohmann::json;

json usage_json(int prompt_tokens, int completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

json usage_json(const std::vector<Choice>& choices) {
  int p = 0, c = 0;
  for (const Choice& x : choices) {
    p += x.prompt_tokens;
    c += x.completion_tokens;
  }
  return usage_json(p, c);
}

json chat_completion(const ResponseHead& h, const Choice& c) {
  return {{"id", h.id},
          {"object", "chat.completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices",
           json::array({{{"index", 0},
                         {"message", {{"role", "assistant"}, {"content", c.text}}},
                         {"logprobs", nullptr},
                         {"finish_reason", c.finish_reason}}})},
          {"usage", usage_json(c.prompt_tokens, c.completion_tokens)}};
}

json text_completion(const ResponseHead& h, const std::vector<Choice>& choices) {
  json list = json::array();
  for (std::size_t i = 0; i < choices.size(); ++i)
    list.push_back({{"index", i}, {"text", choices[i].text}, {"logprobs", nullptr}, {"finish_reason", choices[i].finish_reason}});
  return {{"id", h.id},
          {"object", "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices", std::move(list)},
          {"usage", usage_json(choices)}};
}

json chat_chunk(const ResponseHead& h, const json& delta, const json& finish_reason) {
  return {{"id", h.id},
          {"object", "chat.completion.chunk"},
          {"created", h.created},
          {"model", h.model},
          {"choices", json::array({{{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", finish_reason}}})}};
}

json completion_chunk(const ResponseHead& h, const std::string& text, const json& finish_reason) {
  return {{"id", h.id},
          {"object", "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices", json::array({{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", finish_reason}}})}};
}

json usage_chunk(const ResponseHead& h, bool chat, const json& usage) {
  return {{"id", h.id},
          {"object", chat ? "chat.completion.chunk" : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices", json::array()},
          {"usage", usage}};
}

std::string sse_event(const json& j) { return "data: " + j.dump() + "\n\n"; }

}  // namespace kvgate::serve
