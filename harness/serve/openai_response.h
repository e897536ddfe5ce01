// Response bodies and SSE chunks of `kvgate serve`, in the OpenAI shapes the SDKs parse.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvgate::serve {

struct Choice {
  std::string text;
  std::string finish_reason;  // "stop" or "length"
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

struct ResponseHead {
  std::string id;     // "chatcmpl-..." or "cmpl-..."
  long long created = 0;
  std::string model;
};

nlohmann::json usage_json(int prompt_tokens, int completion_tokens);
// Usage summed over the choices.
nlohmann::json usage_json(const std::vector<Choice>& choices);

nlohmann::json chat_completion(const ResponseHead& head, const Choice& choice);
nlohmann::json text_completion(const ResponseHead& head, const std::vector<Choice>& choices);

// One streamed chunk: `delta` for chat ({"role"} / {"content"} / {}), text for completions;
// finish_reason null until the last; usage null except in the include_usage chunk (no choices).
nlohmann::json chat_chunk(const ResponseHead& head, const nlohmann::json& delta, const nlohmann::json& finish_reason);
nlohmann::json completion_chunk(const ResponseHead& head, const std::string& text, const nlohmann::json& finish_reason);
nlohmann::json usage_chunk(const ResponseHead& head, bool chat, const nlohmann::json& usage);

// "data: <json>\n\n"
std::string sse_event(const nlohmann::json& j);
inline const char* sse_done() { return "data: [DONE]\n\n"; }

}  // namespace kvgate::serve
