// Chat templates on arbitrary bytes: a clean kvgate::Error (syntax, undefined values, budgets) or
// a render, never a crash or a hang.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/error.h"
#include "harness/tokenizer/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is 2+2? {{ not a tag }}"},
    {"role": "assistant", "content": "<think>\nhm\n</think>\n\n4", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]},
    {"role": "tool", "content": "42"},
    {"role": "user", "content": "\u6771\u4eac"}])");
  try {
    kvgate::ChatTemplate t(std::string(reinterpret_cast<const char*>(data), size),
                           nlohmann::ordered_json{{"bos_token", "<s>"}, {"eos_token", "</s>"}});
    kvgate::ChatOptions o;
    o.add_generation_prompt = true;
    o.now_unix_seconds = 0;
    o.tools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {}}}])");
    (void)t.render(messages, o);
  } catch (const kvgate::Error&) {
  }
  return 0;
}
