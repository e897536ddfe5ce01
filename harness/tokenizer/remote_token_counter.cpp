// Token counts from a server's /tokenize endpoint (libcurl), in the two request shapes engines use:
//   vLLM, SGLang:  POST /tokenize {"model"?, "prompt": "...", "add_special_tokens": false}
//                  POST /tokenize {"model"?, "messages": [...], "add_generation_prompt": true}
//                  -> {"count": N, "tokens": [...], "max_model_len": M}   (count read; len(tokens) when absent)
//   llama.cpp:     POST /tokenize {"content": "...", "add_special": false}  -> {"tokens": [...]}
//                  chat: POST /apply-template {"messages": [...]} -> {"prompt": "..."}, then that prompt
//                  tokenized with "add_special": true, as llama-server tokenizes a chat completion's prompt.
// The shape is detected on the first probe (--tokenize-api auto) or named (llamacpp, vllm, sglang).
// llama.cpp answers vLLM's shape with HTTP 200 and no tokens, so the probe also checks that a count
// is positive and grows with the text: a server that miscounts is refused at once, never mid-run.
// vLLM serves /tokenize at the root; SGLang at /tokenize and /v1/tokenize. So a base URL with or
// without "/v1" becomes ".../tokenize"; a URL already ending in "/tokenize" is used as given.
// An API key, when the server wants one, comes from $KVGATE_API_KEY or $OPENAI_API_KEY and is
// never written anywhere.
#include <curl/curl.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "harness/core/error.h"
#include "harness/tokenizer/token_counter.h"

namespace kvgate {

using nlohmann::json;

namespace {

constexpr int kMaxRetries = 3;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* p, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(p, size * n);
  return size * n;
}

// One libcurl handle per thread, reused so requests share a kept-alive connection.
struct ThreadHandle {
  CURL* curl = nullptr;
  ~ThreadHandle() {
    if (curl) curl_easy_cleanup(curl);
  }
  CURL* get() {
    if (!curl) curl = curl_easy_init();
    if (!curl) throw Error("libcurl: cannot create a handle", kExitInternal);
    curl_easy_reset(curl);
    return curl;
  }
};

std::string endpoint_of(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  auto ends_with = [&](const std::string& s) { return url.size() >= s.size() && url.compare(url.size() - s.size(), s.size(), s) == 0; };
  if (ends_with("/tokenize")) return url;
  if (ends_with("/v1")) url.resize(url.size() - 3);
  return url + "/tokenize";
}

// The URL without user:password@ (for meta and messages).
std::string without_credentials(const std::string& url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const std::size_t host = scheme + 3, slash = url.find('/', host), at = url.find('@', host);
  if (at == std::string::npos || (slash != std::string::npos && at > slash)) return url;
  return url.substr(0, host) + url.substr(at + 1);
}

std::string excerpt(const std::string& body) {
  std::string s = body.substr(0, 300);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return body.size() > 300 ? s + "..." : s;
}

enum class Api { detect, openai, llamacpp };

Api parse_api(const std::string& name) {
  if (name.empty() || name == "auto") return Api::detect;
  if (name == "vllm" || name == "sglang") return Api::openai;
  if (name == "llamacpp" || name == "llama.cpp") return Api::llamacpp;
  throw Error("--tokenize-api " + name + ": unknown: pass auto, llamacpp, vllm or sglang");
}

struct Answer {
  long status = 0;
  std::string body;
};

// The probe texts: a count must be positive for the short one and larger for the long one.
constexpr std::string_view kProbeShort = "kvgate";
constexpr std::string_view kProbeLong = "kvgate counts tokens: the quick brown fox jumps over the lazy dog, 1234567890.";

class RemoteTokenCounter final : public TokenCounter {
 public:
  RemoteTokenCounter(const std::string& url, std::string model, const std::string& api)
      : endpoint_(endpoint_of(url)), shown_(without_credentials(endpoint_)), model_(std::move(model)), api_(parse_api(api)) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
      throw Error("--tokenize-url " + without_credentials(url) +
                  ": not an http(s) URL: pass the server's base URL, e.g. http://localhost:8000");
    base_ = endpoint_.substr(0, endpoint_.size() - std::string_view("/tokenize").size());
    if (const char* k = std::getenv("KVGATE_API_KEY"); k && *k) api_key_ = k;
    else if (const char* o = std::getenv("OPENAI_API_KEY"); o && *o) api_key_ = o;
    global_init();
    probe();  // fail now, with the URL and the server's answer, rather than in the middle of generation
  }

  std::size_t count_text(std::string_view text) const override {
    if (api_ == Api::llamacpp) return count_of(post(endpoint_, llamacpp_body(text, false)), "text");
    return count_of(post(endpoint_, openai_text_body(text)), "text");
  }

  std::size_t count_chat(const json& messages) const override {
    if (api_ == Api::llamacpp) {
      const Answer a = post(base_ + "/apply-template", json{{"messages", messages}});
      if (a.status != 200) refuse(a, "chat", base_ + "/apply-template");
      const json j = json::parse(a.body, nullptr, false);
      if (!j.is_object() || !j.contains("prompt") || !j["prompt"].is_string())
        throw Error("--tokenize-url " + without_credentials(base_) + "/apply-template: unexpected answer \"" + excerpt(a.body) +
                    "\" (expected {\"prompt\": \"...\"} as llama-server sends)");
      return count_of(post(endpoint_, llamacpp_body(j["prompt"].get<std::string>(), true)), "chat");
    }
    json body = {{"messages", messages}, {"add_generation_prompt", true}};
    if (!model_.empty()) body["model"] = model_;
    return count_of(post(endpoint_, body), "chat");
  }

  bool exact() const override { return true; }
  std::string source() const override { return "tokenize-url:" + shown_ + (model_.empty() ? "" : " model:" + model_); }

 private:
  json openai_text_body(std::string_view text) const {
    json body = {{"prompt", text}, {"add_special_tokens", false}};
    if (!model_.empty()) body["model"] = model_;
    return body;
  }
  static json llamacpp_body(std::string_view text, bool add_special) {
    return {{"content", text}, {"add_special", add_special}, {"parse_special", true}};
  }

  // Settles the request shape and checks that counts are positive and grow with the text.
  void probe() {
    auto text_answer = [&](std::string_view text) {
      return post(endpoint_, api_ == Api::llamacpp ? llamacpp_body(text, false) : openai_text_body(text));
    };
    Answer short_answer;
    if (api_ != Api::detect) {
      short_answer = text_answer(kProbeShort);
    } else {
      const Answer openai = post(endpoint_, openai_text_body(kProbeShort));
      if (openai.status == 404) refuse(openai, "text", endpoint_);
      if (openai.status == 200 && positive(openai)) {
        api_ = Api::openai;
        short_answer = openai;
      } else {
        const Answer llama = post(endpoint_, llamacpp_body(kProbeShort, false));
        if (llama.status == 200 && positive(llama)) {
          api_ = Api::llamacpp;
          short_answer = llama;
        } else {
          if (openai.status == 200 && !json::accept(openai.body)) count_of(openai, "text");  // "unexpected answer"
          throw Error("--tokenize-url " + shown_ + ": no token count for \"" + std::string(kProbeShort) +
                      "\": vLLM/SGLang's {\"prompt\"} request got HTTP " + std::to_string(openai.status) + " " +
                      excerpt(openai.body) + ", llama.cpp's {\"content\"} request got HTTP " + std::to_string(llama.status) +
                      " " + excerpt(llama.body) +
                      ": pass the server's base URL, --tokenize-api llamacpp|vllm|sglang, or --tokenizer tokenizer.json");
        }
      }
    }
    const Answer long_answer = text_answer(kProbeLong);
    const std::size_t short_count = count_of(short_answer, "text"), long_count = count_of(long_answer, "text");
    const std::string which = api_ == Api::llamacpp ? "llama.cpp's {\"content\"}" : "vLLM/SGLang's {\"prompt\"}";
    if (short_count == 0 || long_count <= short_count)
      throw Error("--tokenize-url " + shown_ + ": the server's counts for " + which + " requests do not measure text: " +
                  std::to_string(short_count) + " tokens for " + std::to_string(kProbeShort.size()) + " bytes, " +
                  std::to_string(long_count) + " for " + std::to_string(kProbeLong.size()) + " bytes (last answer: " +
                  excerpt(long_answer.body) + "): pass the right --tokenize-api (llamacpp, vllm, sglang) or --tokenizer tokenizer.json");
  }

  bool positive(const Answer& a) const {
    const json j = json::parse(a.body, nullptr, false);
    if (!j.is_object()) return false;
    if (j.contains("count") && j["count"].is_number_unsigned()) return j["count"].get<std::size_t>() > 0;
    return j.contains("tokens") && j["tokens"].is_array() && !j["tokens"].empty();
  }

  [[noreturn]] void refuse(const Answer& a, const char* kind, const std::string& endpoint) const {
    const std::string shown = without_credentials(endpoint);
    if (a.status == 404)
      throw Error("--tokenize-url " + shown + ": HTTP 404 (" + excerpt(a.body) + "): no such endpoint, or no such model "
                  "(--tokenize-model); vLLM, SGLang and llama.cpp serve /tokenize at the root; for other servers pass "
                  "--tokenizer tokenizer.json");
    const std::string hint = std::string(kind) == "chat"
                                 ? ": the server may not tokenize chat messages (older SGLang): pass --tokenizer, or use --api completions"
                                 : ": check --tokenize-model (the served model's name) and --tokenize-api";
    throw Error("--tokenize-url " + shown + ": HTTP " + std::to_string(a.status) + " for a " + kind + " request (" +
                excerpt(a.body) + ")" + hint);
  }

  std::size_t count_of(const Answer& a, const char* kind) const {
    if (a.status != 200) refuse(a, kind, endpoint_);
    const json j = json::parse(a.body, nullptr, false);
    if (j.is_object()) {
      if (j.contains("count") && j["count"].is_number_unsigned()) return j["count"].get<std::size_t>();
      if (j.contains("tokens") && j["tokens"].is_array()) return j["tokens"].size();
    }
    throw Error("--tokenize-url " + shown_ + ": unexpected answer \"" + excerpt(a.body) +
                "\" (expected {\"count\": N, \"tokens\": [...]} as vLLM and SGLang send, or {\"tokens\": [...]} as llama.cpp does)");
  }

  // One POST, retried on transport errors, 429 and 5xx; any other status is returned to the caller.
  Answer post(const std::string& endpoint, const json& body) const {
    const std::string payload = body.dump(-1, ' ', false, json::error_handler_t::replace);
    static thread_local ThreadHandle handle;
    std::string last_error;
    for (int attempt = 0; attempt <= kMaxRetries; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(250 << attempt));
      CURL* curl = handle.get();
      Answer answer;
      char errbuf[CURL_ERROR_SIZE] = {0};
      curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
      headers = curl_slist_append(headers, "Accept: application/json");
      if (!api_key_.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + api_key_).c_str());
      curl_easy_setopt(curl, CURLOPT_URL, endpoint.c_str());
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
      curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
      curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
      curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
      curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
      curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 300000L);  // a 128K-token input on a busy server
      curl_easy_setopt(curl, CURLOPT_USERAGENT, "kvgate");
      const CURLcode rc = curl_easy_perform(curl);
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
      curl_slist_free_all(headers);
      if (rc != CURLE_OK) {
        last_error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
        if (rc == CURLE_OPERATION_TIMEDOUT) break;  // a server that did not answer in 5 minutes will not now
        continue;
      }
      if (answer.status == 429 || answer.status >= 500) {
        last_error = "HTTP " + std::to_string(answer.status) + ": " + excerpt(answer.body);
        continue;
      }
      return answer;
    }
    throw Error("--tokenize-url " + without_credentials(endpoint) + ": no answer (" + last_error +
                "): start the server or check the URL, e.g. http://localhost:8000");
  }

  std::string endpoint_, shown_, model_, base_, api_key_;
  Api api_;
};

}  // namespace

std::unique_ptr<TokenCounter> make_remote_token_counter(const std::string& url, const std::string& model,
                                                       const std::string& api) {
  return std::make_unique<RemoteTokenCounter>(url, model, api);
}

}  // namespace kvgate
