// Chat templates: a checkpoint's Jinja `chat_template` rendered as transformers'
// apply_chat_template does (trim_blocks, lstrip_blocks, special tokens and kwargs as variables,
// raise_exception, strftime_now, tojson with Python's json.dumps layout, continue_final_message).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kvgate {

namespace jinja {
class Template;
}

struct ChatOptions {
  bool add_generation_prompt = false;  // transformers' default; counters pass true
  bool continue_final_message = false;  // end the text inside the last message (no closing tag)
  nlohmann::ordered_json tools;        // null, or an array of tool schemas (the template sees None)
  nlohmann::ordered_json documents;    // null, or an array
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();  // more template variables, e.g. {"enable_thinking": false}
  std::string template_name;  // a named template of the checkpoint ("tool_use"); empty: "default"
  // strftime_now() formats this instant (UTC) when set; otherwise the local clock, as transformers.
  std::optional<std::int64_t> now_unix_seconds;
};

class ChatTemplate {
 public:
  // Parses the template; throws kvgate::Error naming the line on a syntax error or a construct
  // outside the supported subset. `special_tokens` is an object of template variables such as
  // {"bos_token": "<s>", "eos_token": "</s>"}.
  ChatTemplate(std::string source, nlohmann::ordered_json special_tokens);
  ~ChatTemplate();

  // The rendered conversation. Errors (a template's raise_exception, undefined values, bad
  // messages) are kvgate::Error naming the template line.
  std::string render(const nlohmann::ordered_json& messages, const ChatOptions& options) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  nlohmann::ordered_json special_tokens_;
  std::shared_ptr<const jinja::Template> template_;
};

}  // namespace kvgate
