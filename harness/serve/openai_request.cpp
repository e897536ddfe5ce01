#include "harness/serve/openai_request.h"

#include <cmath>
#include <limits>
#include <optional>

#include "harness/core/error.h"
#include "harness/serve/api_error.h"

namespace kvgate::serve {

namespace {

constexpr int kMaxDepth = 64;

std::string type_name(const ojson& v) { return v.type_name(); }

// Present and not null.
const ojson* field(const ojson& body, const char* key) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> number(const ojson& body, const char* key, double lo, double hi) {
  const ojson* v = field(body, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw bad_param(key, "must be a number, got " + type_name(*v));
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi)
    throw bad_param(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + v->dump());
  return d;
}

std::optional<long long> integer(const ojson& body, const char* key, long long lo, long long hi) {
  const ojson* v = field(body, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) throw bad_param(key, "must be an integer, got " + v->dump());
  const bool huge = v->is_number_unsigned() &&
                    v->get<unsigned long long>() > static_cast<unsigned long long>(std::numeric_limits<long long>::max());
  const long long i = huge ? 0 : v->get<long long>();
  if (huge || i < lo || i > hi)
    throw bad_param(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + v->dump());
  return i;
}

std::optional<bool> boolean(const ojson& body, const char* key) {
  const ojson* v = field(body, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) throw bad_param(key, "must be true or false, got " + v->dump());
  return v->get<bool>();
}

void check_model(const ojson& body, const ServedModelInfo& m) {
  const ojson* v = field(body, "model");
  if (!v) return;  // vLLM serves its only model when none is named
  if (!v->is_string()) throw bad_param("model", "must be a string, got " + type_name(*v));
  if (v->get_ref<const std::string&>() != m.name)
    throw ApiError(404, "The model `" + v->get<std::string>() + "` does not exist; this server serves `" + m.name + "`",
                   "model", "model_not_found");
}

// A parameter the decoder cannot honour: accepted only with its neutral value.
void require_neutral(const ojson& body, const char* key, const ojson& neutral, const std::string& why) {
  const ojson* v = field(body, key);
  if (!v || *v == neutral) return;
  if (v->is_number() && neutral.is_number() && v->get<double>() == neutral.get<double>()) return;
  throw bad_param(key, "= " + v->dump() + " is not supported by kvgate serve (" + why + "); omit it or send " + neutral.dump());
}

void common_neutral(const ojson& body) {
  require_neutral(body, "presence_penalty", 0, "no penalties: the reference decoder samples the model's own distribution");
  require_neutral(body, "frequency_penalty", 0, "no penalties: the reference decoder samples the model's own distribution");
  require_neutral(body, "repetition_penalty", 1, "no penalties: the reference decoder samples the model's own distribution");
  require_neutral(body, "min_tokens", 0, "generations end at an eos token, a stop string or max_tokens");
  require_neutral(body, "ignore_eos", false, "generations end at an eos token, a stop string or max_tokens");
  require_neutral(body, "include_stop_str_in_output", false, "stop strings are cut, as OpenAI does");
  require_neutral(body, "best_of", 1, "one sample per request");
  require_neutral(body, "n", 1, "one choice per request: send several requests with different seeds");
  if (const ojson* lb = field(body, "logit_bias"); lb && !(lb->is_object() && lb->empty()))
    throw bad_param("logit_bias", "is not supported by kvgate serve (the reference decoder samples the model's own distribution)");
  if (const ojson* rf = field(body, "response_format");
      rf && !(rf->is_object() && rf->contains("type") && (*rf)["type"] == "text"))
    throw bad_param("response_format", "= " + rf->dump() + " asks for guided decoding, which kvgate serve does not do; omit it");
  for (const char* k : {"guided_json", "guided_regex", "guided_choice", "guided_grammar", "structured_outputs"})
    if (field(body, k)) throw bad_param(k, "asks for guided decoding, which kvgate serve does not do");
}

decoder::TextSampling sampling(const ojson& body) {
  decoder::TextSampling s;
  s.sampler.temperature = number(body, "temperature", 0.0, 2.0).value_or(1.0);  // OpenAI's default
  s.sampler.top_p = number(body, "top_p", 0.0, 1.0).value_or(1.0);
  if (s.sampler.top_p <= 0.0) throw bad_param("top_p", "must be greater than 0");
  const long long top_k = integer(body, "top_k", -1, std::numeric_limits<int>::max()).value_or(0);
  s.sampler.top_k = top_k < 0 ? 0 : static_cast<int>(top_k);
  if (const ojson* seed = field(body, "seed")) {
    if (!seed->is_number_integer()) throw bad_param("seed", "must be an integer, got " + seed->dump());
    s.seed = seed->is_number_unsigned() ? seed->get<std::uint64_t>() : static_cast<std::uint64_t>(seed->get<std::int64_t>());
  }
  if (const ojson* stop = field(body, "stop")) {
    const auto add = [&](const ojson& x) {
      if (!x.is_string()) throw bad_param("stop", "must be a string or an array of strings, got " + x.dump());
      if (x.get_ref<const std::string&>().empty()) throw bad_param("stop", "must not contain an empty string");
      s.stop.push_back(x.get<std::string>());
    };
    if (stop->is_array()) {
      for (const ojson& x : *stop) add(x);
    } else {
      add(*stop);
    }
  }
  s.skip_special_tokens = boolean(body, "skip_special_tokens").value_or(true);
  return s;
}

// max_tokens per prompt, checked against the context as vLLM does.
int max_tokens_for(const ojson& body, std::size_t prompt_len, const ServedModelInfo& m) {
  std::optional<long long> asked = integer(body, "max_completion_tokens", 1, std::numeric_limits<int>::max());
  const char* param = "max_completion_tokens";
  if (!asked) {
    asked = integer(body, "max_tokens", 1, std::numeric_limits<int>::max());
    param = "max_tokens";
  }
  const long long len = static_cast<long long>(prompt_len);
  if (len >= m.max_model_len)
    throw ApiError(400, "This model's maximum context length is " + std::to_string(m.max_model_len) +
                            " tokens. However, your prompt has " + std::to_string(len) + " tokens",
                   "messages");
  long long n = asked ? *asked : (m.default_max_tokens > 0 ? m.default_max_tokens : m.max_model_len - len);
  if (!asked && n > m.max_model_len - len) n = m.max_model_len - len;
  if (len + n > m.max_model_len)
    throw ApiError(400, "This model's maximum context length is " + std::to_string(m.max_model_len) +
                            " tokens. However, you requested " + std::to_string(len + n) + " tokens (" +
                            std::to_string(len) + " in the prompt, " + std::to_string(n) + " for the completion)",
                   param);
  return static_cast<int>(n);
}

void check_ids(const std::vector<int>& ids, const ServedModelInfo& m, const char* param) {
  if (ids.empty()) throw bad_param(param, "gives an empty prompt (no tokens)");
  for (int id : ids)
    if (id < 0 || id >= m.vocab_size)
      throw bad_param(param, "holds token id " + std::to_string(id) + ", outside the model's vocabulary of " +
                                 std::to_string(m.vocab_size));
}

void stream_flags(const ojson& body, GenerationRequest& g) {
  g.stream = boolean(body, "stream").value_or(false);
  if (const ojson* so = field(body, "stream_options")) {
    if (!so->is_object()) throw bad_param("stream_options", "must be an object");
    g.include_usage = boolean(*so, "include_usage").value_or(false);
  }
}

// A message's content: a string, null, or text parts joined with newlines (vLLM's string format).
ojson message_content(const ojson& content, std::size_t index) {
  const std::string param = "messages[" + std::to_string(index) + "].content";
  if (content.is_string() || content.is_null()) return content;
  if (!content.is_array()) throw bad_param(param, "must be a string, null or an array of text parts");
  std::string text;
  bool first = true;
  for (const ojson& part : content) {
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") ||
        !part["text"].is_string())
      throw bad_param(param, "holds a part that is not {\"type\": \"text\", \"text\": \"...\"}: kvgate serve takes text only");
    if (!first) text += "\n";
    text += part["text"].get_ref<const std::string&>();
    first = false;
  }
  return text;
}

ojson parse_messages(const ojson& body) {
  const ojson* m = field(body, "messages");
  if (!m) throw bad_param("messages", "is missing");
  if (!m->is_array() || m->empty()) throw bad_param("messages", "must be a non-empty array of messages");
  ojson out = ojson::array();
  for (std::size_t i = 0; i < m->size(); ++i) {
    const ojson& msg = (*m)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) throw bad_param(at, "must be an object with \"role\" and \"content\"");
    if (!msg.contains("role") || !msg["role"].is_string()) throw bad_param(at + ".role", "must be a string");
    ojson copy = msg;
    if (msg.contains("content")) copy["content"] = message_content(msg["content"], i);
    out.push_back(std::move(copy));
  }
  return out;
}

ChatOptions chat_options(const ojson& body, bool default_generation_prompt) {
  ChatOptions o;
  o.add_generation_prompt = boolean(body, "add_generation_prompt").value_or(default_generation_prompt);
  o.continue_final_message = boolean(body, "continue_final_message").value_or(false);
  if (o.add_generation_prompt && o.continue_final_message)
    throw bad_param("continue_final_message", "and add_generation_prompt cannot both be true");
  if (const ojson* kw = field(body, "chat_template_kwargs")) {
    if (!kw->is_object()) throw bad_param("chat_template_kwargs", "must be an object");
    o.variables = *kw;
  }
  if (const ojson* tools = field(body, "tools")) {
    if (!tools->is_array()) throw bad_param("tools", "must be an array");
    o.tools = *tools;
  }
  if (field(body, "chat_template")) throw bad_param("chat_template", "is not supported: kvgate serve uses the checkpoint's own template");
  return o;
}

// The rendered chat as text (the checkpoint's template, or ChatML).
std::string render_chat(const ojson& body, const ServedModelInfo& m, bool default_generation_prompt) {
  const ojson messages = parse_messages(body);
  const ChatOptions o = chat_options(body, default_generation_prompt);
  try {
    return m.text->tokenizer().apply_chat_template(messages, o);
  } catch (const Error& e) {  // the template refused the conversation (raise_exception, bad roles, ...)
    throw ApiError(400, std::string("the chat template could not render these messages: ") + e.what(), "messages");
  }
}

std::vector<int> encode_text(const std::string& text, const ServedModelInfo& m, bool add_special, const char* param) {
  try {
    const std::vector<std::int32_t> ids = m.text->tokenizer().encode(text, add_special);
    return {ids.begin(), ids.end()};
  } catch (const Error& e) {
    throw bad_param(param, std::string("could not be tokenized: ") + e.what());
  }
}

}  // namespace

ojson parse_body(std::string_view body) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        throw ApiError(400, "the request body nests deeper than " + std::to_string(kMaxDepth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  ojson j;
  try {
    j = ojson::parse(body);
  } catch (const ojson::exception& e) {
    throw ApiError(400, std::string("the request body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ApiError(400, "the request body must be a JSON object, got " + type_name(j));
  return j;
}

GenerationRequest parse_chat_request(const ojson& body, const ServedModelInfo& m) {
  check_model(body, m);
  common_neutral(body);
  if (const ojson* lp = field(body, "logprobs"); lp && *lp != false)
    throw bad_param("logprobs", "is not supported by kvgate serve (use `kvgate kld` for distributions)");
  require_neutral(body, "top_logprobs", 0, "no logprobs");
  if (const ojson* tc = field(body, "tool_choice"); tc && !(tc->is_string() && (*tc == "auto" || *tc == "none")))
    throw bad_param("tool_choice", "must be \"auto\" or \"none\": kvgate serve does not force tool calls");
  GenerationRequest g;
  g.chat = true;
  g.sampling = sampling(body);
  stream_flags(body, g);
  g.prompts.push_back(encode_text(render_chat(body, m, true), m, false, "messages"));
  check_ids(g.prompts.back(), m, "messages");
  g.max_tokens.push_back(max_tokens_for(body, g.prompts.back().size(), m));
  return g;
}

GenerationRequest parse_completion_request(const ojson& body, const ServedModelInfo& m) {
  check_model(body, m);
  common_neutral(body);
  if (const ojson* lp = field(body, "logprobs"))
    throw bad_param("logprobs", "= " + lp->dump() + " is not supported by kvgate serve (use `kvgate kld` for distributions)");
  require_neutral(body, "echo", false, "the answer is the completion only");
  if (const ojson* sfx = field(body, "suffix"); sfx && !(sfx->is_string() && sfx->get_ref<const std::string&>().empty()))
    throw bad_param("suffix", "is not supported by kvgate serve");
  GenerationRequest g;
  g.chat = false;
  g.sampling = sampling(body);
  stream_flags(body, g);
  const ojson* p = field(body, "prompt");
  if (!p) throw bad_param("prompt", "is missing");
  const bool add_special = boolean(body, "add_special_tokens").value_or(true);
  const auto token_list = [&](const ojson& a) {
    std::vector<int> ids;
    for (const ojson& x : a) {
      if (!x.is_number_integer()) throw bad_param("prompt", "must be a string, an array of strings, or token ids");
      const long long id = x.get<long long>();
      ids.push_back(id < 0 || id >= m.vocab_size ? -1 : static_cast<int>(id));
      if (ids.back() < 0)
        throw bad_param("prompt", "holds token id " + x.dump() + ", outside the model's vocabulary of " + std::to_string(m.vocab_size));
    }
    return ids;
  };
  if (p->is_string()) {
    g.prompts.push_back(encode_text(p->get<std::string>(), m, add_special, "prompt"));
  } else if (p->is_array() && !p->empty()) {
    if ((*p)[0].is_number_integer()) {
      g.prompts.push_back(token_list(*p));
    } else {
      for (const ojson& x : *p) {
        if (x.is_string()) g.prompts.push_back(encode_text(x.get<std::string>(), m, add_special, "prompt"));
        else if (x.is_array()) g.prompts.push_back(token_list(x));
        else throw bad_param("prompt", "must be a string, an array of strings, or token ids");
      }
    }
  } else {
    throw bad_param("prompt", "must be a non-empty string, array of strings, or array of token ids");
  }
  if (g.prompts.size() > 64) throw bad_param("prompt", "holds more than 64 prompts: send several requests");
  if (g.stream && g.prompts.size() > 1) throw bad_param("prompt", "holds several prompts; streaming takes one");
  for (const auto& ids : g.prompts) {
    check_ids(ids, m, "prompt");
    g.max_tokens.push_back(max_tokens_for(body, ids.size(), m));
  }
  return g;
}

nlohmann::json tokenize(const ojson& body, const ServedModelInfo& m) {
  check_model(body, m);
  std::vector<int> ids;
  if (field(body, "messages")) {
    // vLLM: the rendered template, encoded without the post-processor's special tokens unless asked.
    const bool add_special = boolean(body, "add_special_tokens").value_or(false);
    ids = encode_text(render_chat(body, m, true), m, add_special, "messages");
  } else if (const ojson* p = field(body, "prompt")) {
    if (!p->is_string()) throw bad_param("prompt", "must be a string");
    ids = encode_text(p->get<std::string>(), m, boolean(body, "add_special_tokens").value_or(true), "prompt");
  } else {
    throw ApiError(400, "give \"prompt\" (text) or \"messages\" (a chat) to tokenize", "prompt");
  }
  nlohmann::json out = {{"count", ids.size()}, {"max_model_len", m.max_model_len}, {"tokens", ids}, {"token_strs", nullptr}};
  if (boolean(body, "return_token_strs").value_or(false)) {
    nlohmann::json strs = nlohmann::json::array();
    for (int id : ids) strs.push_back(m.text->tokenizer().id_to_token(id).value_or(""));
    out["token_strs"] = std::move(strs);
  }
  return out;
}

nlohmann::json detokenize(const ojson& body, const ServedModelInfo& m) {
  check_model(body, m);
  const ojson* t = field(body, "tokens");
  if (!t || !t->is_array()) throw bad_param("tokens", "must be an array of token ids");
  std::vector<std::int32_t> ids;
  for (const ojson& x : *t) {
    if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() >= m.vocab_size)
      throw bad_param("tokens", "holds " + x.dump() + ", not a token id of this model (0.." + std::to_string(m.vocab_size - 1) + ")");
    ids.push_back(static_cast<std::int32_t>(x.get<long long>()));
  }
  return {{"prompt", m.text->tokenizer().decode(ids)}};
}

}  // namespace kvgate::serve
