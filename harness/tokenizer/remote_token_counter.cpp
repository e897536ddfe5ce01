// Token counts from a server's /tokenize endpoint (libcurl), as vLLM and SGLang expose it:
//   POST /tokenize {"model"?, "prompt": "...", "add_special_tokens": false}
//   POST /tokenize {"model"?, "messages": [...], "add_generation_prompt": true}   (chat template applied)
//   -> {"count": N, "tokens": [...], "max_model_len": M}   (count read; len(tokens) when absent)
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

class RemoteTokenCounter final : public TokenCounter {
 public:
  RemoteTokenCounter(const std::string& url, std::string model)
      : endpoint_(endpoint_of(url)), shown_(without_credentials(endpoint_)), model_(std::move(model)) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
      throw Error("--tokenize-url " + without_credentials(url) +
                  ": not an http(s) URL: pass the server's base URL, e.g. http://localhost:8000");
    if (const char* k = std::getenv("KVGATE_API_KEY"); k && *k) api_key_ = k;
    else if (const char* o = std::getenv("OPENAI_API_KEY"); o && *o) api_key_ = o;
    global_init();
    count_text("kvgate");  // fail now, with the URL, rather than in the middle of generation
  }

  std::size_t count_text(std::string_view text) const override {
    json body = {{"prompt", text}, {"add_special_tokens", false}};
    return post(body, "text");
  }

  std::size_t count_chat(const json& messages) const override {
    json body = {{"messages", messages}, {"add_generation_prompt", true}};
    return post(body, "chat");
  }

  bool exact() const override { return true; }
  std::string source() const override { return "tokenize-url:" + shown_ + (model_.empty() ? "" : " model:" + model_); }

 private:
  std::size_t post(json& body, const char* kind) const {
    if (!model_.empty()) body["model"] = model_;
    const std::string payload = body.dump(-1, ' ', false, json::error_handler_t::replace);
    static thread_local ThreadHandle handle;
    std::string last_error;
    for (int attempt = 0; attempt <= kMaxRetries; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(250 << attempt));
      CURL* curl = handle.get();
      std::string response;
      char errbuf[CURL_ERROR_SIZE] = {0};
      curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
      headers = curl_slist_append(headers, "Accept: application/json");
      if (!api_key_.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + api_key_).c_str());
      curl_easy_setopt(curl, CURLOPT_URL, endpoint_.c_str());
      curl_easy_setopt(curl, CURLOPT_POST, 1L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload.data());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
      curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
      curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
      curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
      curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
      curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 300000L);  // a 128K-token input on a busy server
      curl_easy_setopt(curl, CURLOPT_USERAGENT, "kvgate");
      const CURLcode rc = curl_easy_perform(curl);
      long status = 0;
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
      curl_slist_free_all(headers);
      if (rc != CURLE_OK) {
        last_error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
        if (rc == CURLE_OPERATION_TIMEDOUT) break;  // a server that did not answer in 5 minutes will not now
        continue;
      }
      if (status == 429 || status >= 500) {
        last_error = "HTTP " + std::to_string(status) + ": " + excerpt(response);
        continue;
      }
      if (status == 404)
        throw Error("--tokenize-url " + shown_ + ": the server has no tokenize endpoint (HTTP 404): vLLM and SGLang serve "
                    "/tokenize; for other servers pass --tokenizer tokenizer.json");
      if (status != 200) {
        std::string hint = std::string(kind) == "chat"
                               ? ": the server may not tokenize chat messages (older SGLang): pass --tokenizer, or use --api completions"
                               : ": check --tokenize-model (the served model's name)";
        throw Error("--tokenize-url " + shown_ + ": HTTP " + std::to_string(status) + " for a " + kind + " request (" +
                    excerpt(response) + ")" + hint);
      }
      return parse_count(response);
    }
    throw Error("--tokenize-url " + shown_ + ": no answer (" + last_error +
                "): start the server or check the URL, e.g. http://localhost:8000");
  }

  std::size_t parse_count(const std::string& response) const {
    const json j = json::parse(response, nullptr, false);
    if (j.is_object()) {
      if (j.contains("count") && j["count"].is_number_unsigned()) return j["count"].get<std::size_t>();
      if (j.contains("tokens") && j["tokens"].is_array()) return j["tokens"].size();
    }
    throw Error("--tokenize-url " + shown_ + ": unexpected answer \"" + excerpt(response) +
                "\" (expected {\"count\": N, \"tokens\": [...]} as vLLM and SGLang send)");
  }

  std::string endpoint_, shown_, model_, api_key_;
};

}  // namespace

std::unique_ptr<TokenCounter> make_remote_token_counter(const std::string& url, const std::string& model) {
  return std::make_unique<RemoteTokenCounter>(url, model);
}

}  // namespace kvgate
