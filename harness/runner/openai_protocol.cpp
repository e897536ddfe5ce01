#include "harness/runner/openai_protocol.h"

#include <algorithm>
#include <cctype>

#include "harness/core/error.h"

namespace kvgate::runner {

using nlohmann::json;

namespace {

constexpr int kMaxStoredDepth = 32;   // tool_calls and usage kept in results
constexpr std::size_t kMaxToolCalls = 128;

std::string clip(std::string_view s, std::size_t n = 500) {
  std::string out(s.substr(0, n));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') c = ' ';
  if (s.size() > n) out += "...";
  return out;
}

const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// A string, or null/absent (""), or an array of {"type":"text","text":...} parts (joined).
bool read_text(const json* v, std::string& out) {
  if (!v || v->is_null()) return true;
  if (v->is_string()) {
    out += v->get_ref<const std::string&>();
    return true;
  }
  if (v->is_array()) {
    for (const json& part : *v) {
      const json* t = field(part, "text");
      if (!t || !t->is_string()) return false;
      out += t->get_ref<const std::string&>();
    }
    return true;
  }
  return false;
}

void read_usage(const json& usage, Response& out) {
  if (!usage.is_object() || !within_depth(usage, kMaxStoredDepth)) return;
  out.details["usage"] = usage;
  if (const json* p = field(usage, "prompt_tokens"); p && p->is_number_integer()) out.prompt_tokens = p->get<std::int64_t>();
  if (const json* c = field(usage, "completion_tokens"); c && c->is_number_integer())
    out.completion_tokens = c->get<std::int64_t>();
}

std::optional<int> error_code(const json& err) {
  const json* c = field(err, "code");
  if (!c) c = field(err, "status");
  if (!c) return std::nullopt;
  if (c->is_number_integer()) return c->get<int>();
  if (c->is_string()) {
    const std::string& s = c->get_ref<const std::string&>();
    if (!s.empty() && s.size() < 4 && std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); }))
      return std::stoi(s);
  }
  return std::nullopt;
}

// {"error": ...} or {"object": "error", ...}: the server reported a failure inside a 200.
bool read_embedded_error(const json& j, std::string_view raw, std::string& message, bool& retryable) {
  const json* err = field(j, "error");
  const json* obj = field(j, "object");
  const bool is_error_object = obj && obj->is_string() && obj->get_ref<const std::string&>() == "error";
  if ((!err || err->is_null()) && !is_error_object) return false;
  const json& e = (err && !err->is_null()) ? *err : j;
  message = server_error_message(raw);
  const std::optional<int> code = error_code(e);
  retryable = !code || *code == 429 || *code >= 500;
  return true;
}

}  // namespace

const char* to_string(Api api) { return api == Api::chat ? "chat" : "completions"; }
const char* api_path(Api api) { return api == Api::chat ? "/chat/completions" : "/completions"; }
Api parse_api(const std::string& s) {
  if (s == "chat") return Api::chat;
  if (s == "completions") return Api::completions;
  throw Error("--api " + s + ": must be chat or completions");
}

bool within_depth(const json& v, int max_depth) {
  if (max_depth < 0) return false;
  if (v.is_object()) {
    for (const auto& item : v.items())
      if (!within_depth(item.value(), max_depth - 1)) return false;
  } else if (v.is_array()) {
    for (const json& x : v)
      if (!within_depth(x, max_depth - 1)) return false;
  }
  return true;
}

std::string build_request_body(const Trial& trial, const SamplingParams& s, const BodyOptions& o) {
  json body = json::object();
  body["model"] = o.model;
  if (o.api == Api::chat) {
    if (!trial.input.contains("messages"))
      throw Error("trial " + trial.id + ": has a \"prompt\" (completions input) but --api is chat: pass --api completions");
    body["messages"] = trial.input["messages"];
  } else {
    if (!trial.input.contains("prompt"))
      throw Error("trial " + trial.id + ": has \"messages\" (chat input) but --api is completions: pass --api chat");
    body["prompt"] = trial.input["prompt"];
  }
  body["max_tokens"] = s.max_tokens;
  body["temperature"] = s.temperature;
  body["top_p"] = s.top_p;
  if (s.top_k) body["top_k"] = *s.top_k;
  if (s.seed) body["seed"] = *s.seed;
  if (!s.stop.empty()) body["stop"] = s.stop;
  // The trial's own generation hints (tools, tool_choice, response_format, ...) travel as they are;
  // stop and max_tokens were merged into the resolved sampling already.
  for (const auto& item : trial.input.items()) {
    const std::string& k = item.key();
    if (k == "messages" || k == "prompt" || k == "stop" || k == "max_tokens") continue;
    body[k] = item.value();
  }
  if (o.stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  if (s.extra_body.is_object())
    for (const auto& item : s.extra_body.items()) body[item.key()] = item.value();
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string server_error_message(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    const json* e = field(j, "error");
    if (e && e->is_object()) {
      if (const json* m = field(*e, "message"); m && m->is_string()) return clip(m->get_ref<const std::string&>());
    }
    if (e && e->is_string()) return clip(e->get_ref<const std::string&>());
    if (const json* m = field(j, "message"); m && m->is_string()) return clip(m->get_ref<const std::string&>());
    if (const json* d = field(j, "detail")) {  // FastAPI validation errors
      if (d->is_string()) return clip(d->get_ref<const std::string&>());
      if (within_depth(*d, kMaxStoredDepth)) return clip(d->dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  // Not JSON (a proxy's HTML page, plain text): the start of it, whitespace collapsed.
  std::string text;
  for (char c : body.substr(0, 2000)) {
    const bool space = std::isspace(static_cast<unsigned char>(c));
    if (space && (text.empty() || text.back() == ' ')) continue;
    text += space ? ' ' : c;
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.empty() ? "(empty body)" : clip(text, 300);
}

void parse_response_body(std::string_view body, Api api, Response& out) {
  auto fail = [&](const char* kind, const std::string& msg, bool retryable) {
    out.error = msg;
    out.error_kind = kind;
    out.retryable = retryable;
  };
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded())
    return fail("bad_json", "response body is not complete JSON (" + std::to_string(body.size()) + " bytes): " + clip(body, 120),
                true);
  if (!j.is_object()) return fail("malformed", "response body is not a JSON object: " + clip(body, 120), false);
  std::string message;
  bool retryable = false;
  if (read_embedded_error(j, body, message, retryable)) return fail("server_error", "server error: " + message, retryable);
  const json* choices = field(j, "choices");
  if (!choices || !choices->is_array() || choices->empty())
    return fail("malformed", "response has no \"choices\": " + clip(body, 200), false);
  const json& c0 = (*choices)[0];
  if (!c0.is_object()) return fail("malformed", "choices[0] is not an object", false);
  if (api == Api::chat) {
    const json* msg = field(c0, "message");
    if (!msg || !msg->is_object()) return fail("malformed", "choices[0] has no \"message\" object", false);
    if (!read_text(field(*msg, "content"), out.text))
      return fail("malformed", "choices[0].message.content is neither a string, null nor text parts", false);
    // vLLM < 0.9 and SGLang say reasoning_content, newer vLLM says reasoning.
    const json* r = field(*msg, "reasoning_content");
    if (!r || r->is_null()) r = field(*msg, "reasoning");
    if (!read_text(r, out.reasoning)) return fail("malformed", "choices[0].message.reasoning_content is not a string", false);
    if (const json* tc = field(*msg, "tool_calls"); tc && !tc->is_null()) {
      if (!tc->is_array() || !within_depth(*tc, kMaxStoredDepth))
        return fail("malformed", "choices[0].message.tool_calls is not an array of calls", false);
      if (!tc->empty()) out.tool_calls = *tc;
    }
  } else {
    const json* t = field(c0, "text");
    if (!t || !t->is_string()) return fail("malformed", "choices[0] has no \"text\" string", false);
    out.text = t->get<std::string>();
  }
  if (const json* fr = field(c0, "finish_reason"); fr && fr->is_string()) out.finish_reason = fr->get<std::string>();
  if (const json* u = field(j, "usage")) read_usage(*u, out);
}

void StreamAccumulator::fail(std::string kind, std::string message, bool retryable) {
  if (!error_.empty()) return;  // the first failure explains the rest
  error_kind_ = std::move(kind);
  error_ = std::move(message);
  retryable_ = retryable;
}

void StreamAccumulator::on_event(const SseEvent& ev, double t_ms) {
  if (done_ || failed()) return;
  if (ev.data == "[DONE]") {
    done_ = true;
    return;
  }
  if (ev.event == "error") {
    fail("server_error", "server error in the stream: " + server_error_message(ev.data), true);
    return;
  }
  json chunk = json::parse(ev.data, nullptr, false);
  if (chunk.is_discarded()) {
    fail("bad_json", "stream event is not valid JSON: " + clip(ev.data, 120), true);
    return;
  }
  on_chunk(chunk, ev.data, t_ms);
}

void StreamAccumulator::on_chunk(const json& chunk, std::string_view raw, double t_ms) {
  if (!chunk.is_object()) return fail("malformed", "stream chunk is not a JSON object", false);
  std::string message;
  bool retryable = false;
  if (read_embedded_error(chunk, raw, message, retryable))
    return fail("server_error", "server error in the stream: " + message, retryable);
  ++chunks_;
  if (const json* u = field(chunk, "usage"); u && u->is_object()) usage_ = *u;
  const json* choices = field(chunk, "choices");
  if (!choices || choices->is_null()) return;  // usage-only or unknown chunk kinds
  if (!choices->is_array()) return fail("malformed", "stream chunk \"choices\" is not an array", false);
  for (const json& c : *choices) {
    if (!c.is_object()) return fail("malformed", "stream chunk choice is not an object", false);
    const json* idx = field(c, "index");
    if (idx && idx->is_number_integer() && idx->get<std::int64_t>() != 0) continue;  // n = 1: only choice 0
    bool produced = false;
    if (api_ == Api::chat) {
      const json* delta = field(c, "delta");
      if (delta && delta->is_object()) {
        const std::size_t before = text_.size() + reasoning_.size();
        if (!read_text(field(*delta, "content"), text_)) return fail("malformed", "delta.content is not text", false);
        const json* r = field(*delta, "reasoning_content");
        if (!r || r->is_null()) r = field(*delta, "reasoning");
        if (!read_text(r, reasoning_)) return fail("malformed", "delta.reasoning_content is not text", false);
        produced = text_.size() + reasoning_.size() > before;
        if (const json* tcs = field(*delta, "tool_calls"); tcs && tcs->is_array()) {
          for (const json& tc : *tcs) {
            const json* ti = field(tc, "index");
            const std::int64_t i = ti && ti->is_number_integer() ? ti->get<std::int64_t>() : 0;
            if (i < 0 || static_cast<std::size_t>(i) >= kMaxToolCalls) return fail("malformed", "tool call index out of range", false);
            if (tool_calls_.size() <= static_cast<std::size_t>(i)) tool_calls_.resize(static_cast<std::size_t>(i) + 1);
            json& call = tool_calls_[static_cast<std::size_t>(i)];
            if (call.is_null()) call = {{"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}};
            if (const json* id = field(tc, "id"); id && id->is_string()) call["id"] = *id;
            if (const json* ty = field(tc, "type"); ty && ty->is_string()) call["type"] = *ty;
            if (const json* fn = field(tc, "function"); fn && fn->is_object()) {
              std::string name, args;
              if (!read_text(field(*fn, "name"), name) || !read_text(field(*fn, "arguments"), args))
                return fail("malformed", "tool call function name/arguments are not text", false);
              call["function"]["name"] = call["function"]["name"].get<std::string>() + name;
              call["function"]["arguments"] = call["function"]["arguments"].get<std::string>() + args;
              produced = produced || !args.empty() || !name.empty();
            }
          }
        }
      }
    } else {
      const std::size_t before = text_.size();
      if (!read_text(field(c, "text"), text_)) return fail("malformed", "choice text is not a string", false);
      produced = text_.size() > before;
    }
    if (produced) {
      if (!first_ms_) first_ms_ = t_ms;
      else gaps_ms_.push_back(t_ms - last_ms_);
      last_ms_ = t_ms;
    }
    if (const json* fr = field(c, "finish_reason"); fr && fr->is_string()) finish_reason_ = fr->get<std::string>();
  }
}

void StreamAccumulator::finish(Response& out) {
  if (!failed() && finish_reason_.empty())
    fail("truncated",
         std::string("stream ended before a finish_reason") + (done_ ? " (got [DONE])" : "") + " after " +
             std::to_string(chunks_) + " chunks",
         true);
  if (failed()) {
    out.error = error_;
    out.error_kind = error_kind_;
    out.retryable = retryable_;
    return;
  }
  out.text = std::move(text_);
  out.reasoning = std::move(reasoning_);
  out.finish_reason = std::move(finish_reason_);
  json calls = json::array();
  for (json& c : tool_calls_)
    if (!c.is_null()) calls.push_back(std::move(c));
  if (!calls.empty()) out.tool_calls = std::move(calls);
  if (!usage_.is_null()) read_usage(usage_, out);
  out.ttft_ms = first_ms_;
  out.inter_token_ms = std::move(gaps_ms_);
  out.details["stream_chunks"] = chunks_;
}

}  // namespace kvgate::runner
