#include "harness/tokenizer/chat_template.h"

#include <ctime>

#include "harness/core/error.h"
#include "harness/tokenizer/jinja/template.h"
#include "harness/tokenizer/jinja/strings.h"
#include "harness/tokenizer/utf8.h"

namespace kvgate {

namespace {
// The engine works on code points: every string it sees must be valid UTF-8.
void check_utf8(const nlohmann::ordered_json& j, const char* what) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (const std::size_t bad = tok::find_invalid_utf8(s); bad != tok::kValidUtf8)
      throw Error(std::string(what) + " contain a string that is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      check_utf8(nlohmann::ordered_json(it.key()), what);
      check_utf8(it.value(), what);
    }
  } else if (j.is_array()) {
    for (const auto& e : j) check_utf8(e, what);
  }
}

std::shared_ptr<const jinja::Template> compile(const std::string& source) {
  if (const std::size_t bad = tok::find_invalid_utf8(source); bad != tok::kValidUtf8)
    throw Error("chat template is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  return std::make_shared<jinja::Template>(source);
}
}  // namespace

ChatTemplate::ChatTemplate(std::string source, nlohmann::ordered_json special_tokens)
    : source_(std::move(source)), special_tokens_(std::move(special_tokens)), template_(compile(source_)) {
  check_utf8(special_tokens_, "chat template special tokens");
}

ChatTemplate::~ChatTemplate() = default;

namespace {
std::string strftime_at(const std::string& format, const ChatOptions& o) {
  std::tm tm{};
  if (o.now_unix_seconds) {
    const std::time_t t = static_cast<std::time_t>(*o.now_unix_seconds);
    gmtime_r(&t, &tm);
  } else {
    const std::time_t t = std::time(nullptr);
    localtime_r(&t, &tm);
  }
  std::string buf(256 + format.size() * 4, '\0');
  const std::size_t n = std::strftime(buf.data(), buf.size(), format.c_str(), &tm);
  buf.resize(n);
  return buf;
}

// transformers: with continue_final_message the text stops right after the last message's content.
std::string cut_after_final_message(std::string rendered, const nlohmann::ordered_json& messages) {
  if (!messages.is_array() || messages.empty() || !messages.back().is_object())
    throw Error("continue_final_message: the conversation has no final message");
  const auto& content = messages.back().contains("content") ? messages.back()["content"] : nlohmann::ordered_json();
  std::string final;
  if (content.is_string()) {
    final = content.get<std::string>();
  } else if (content.is_array()) {
    bool found = false;
    for (auto it = content.rbegin(); it != content.rend(); ++it)
      if (it->is_object() && it->contains("text") && (*it)["text"].is_string()) {
        final = (*it)["text"].get<std::string>();
        found = true;
        break;
      }
    if (!found) throw Error("continue_final_message is set but the final message has no text to continue");
  } else {
    throw Error("continue_final_message is set but the final message has no text content");
  }
  const std::string stripped = jinja::py_strip(final, std::nullopt, true, true);
  const std::size_t loc = rendered.rfind(stripped);
  if (loc == std::string::npos)
    throw Error("continue_final_message is set but the final message does not appear in the rendered chat");
  const std::string lstripped = jinja::py_strip(final, std::nullopt, true, false);
  // Python: rendered[loc : loc + len(final.lstrip())] == final keeps the message's trailing space.
  if (rendered.compare(loc, lstripped.size(), final) == 0) rendered.resize(loc + lstripped.size());
  else rendered.resize(loc + stripped.size());
  return rendered;
}
}  // namespace

std::string ChatTemplate::render(const nlohmann::ordered_json& messages, const ChatOptions& o) const {
  if (!messages.is_array()) throw Error("chat messages must be a JSON array of {\"role\", \"content\"} objects");
  if (o.continue_final_message && o.add_generation_prompt)
    throw Error("continue_final_message and add_generation_prompt are not compatible: use one");
  if (!o.variables.is_object()) throw Error("chat template variables must be a JSON object");
  check_utf8(messages, "chat messages");
  check_utf8(o.variables, "chat template variables");
  check_utf8(o.tools, "chat tools");
  check_utf8(o.documents, "chat documents");

  // transformers: special tokens, then kwargs (which may override them), then the named arguments.
  auto vars = std::make_shared<jinja::Dict>();
  for (auto it = special_tokens_.begin(); it != special_tokens_.end(); ++it)
    vars->set(jinja::Value(it.key()), jinja::from_json(it.value()));
  for (auto it = o.variables.begin(); it != o.variables.end(); ++it) vars->set(jinja::Value(it.key()), jinja::from_json(it.value()));
  vars->set(jinja::Value("messages"), jinja::from_json(messages));
  vars->set(jinja::Value("tools"), jinja::from_json(o.tools));
  vars->set(jinja::Value("documents"), jinja::from_json(o.documents));
  vars->set(jinja::Value("add_generation_prompt"), jinja::Value(o.add_generation_prompt));

  std::vector<std::pair<std::string, jinja::NativeFunction>> functions;
  functions.emplace_back("raise_exception", [](jinja::ValueList& args, jinja::Kwargs&) -> jinja::Value {
    throw Error("chat template raised an error: " + (args.empty() ? std::string() : args[0].to_str()));
  });
  functions.emplace_back("strftime_now", [&o](jinja::ValueList& args, jinja::Kwargs&) -> jinja::Value {
    if (args.empty() || !args[0].is_string()) throw Error("chat template: strftime_now(format) needs a format string");
    return jinja::Value(strftime_at(args[0].str(), o));
  });
  std::string rendered = template_->render(jinja::Value::dict(std::move(vars)), functions);
  if (o.continue_final_message) rendered = cut_after_final_message(std::move(rendered), messages);
  return rendered;
}

}  // namespace kvgate
