// harness/tokenizer/remote_token_counter.cpp: the /tokenize client, against local servers that
// speak vLLM's and SGLang's request and response formats, and llama.cpp's (/tokenize {"content"},
// /apply-template).
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "tests/fake_token_counter.h"
#include "tests/local_server.h"
#include "harness/tokenizer/token_counter.h"

using kvtest::contains;
using nlohmann::json;

namespace {

// vLLM-like: {"count", "tokens", "max_model_len"}; counts words; chat rendered as ChatML.
struct TokenizeServer : kvtest::LocalServer {
  std::mutex m;
  std::vector<json> requests;
  std::vector<std::string> auth;
  std::atomic<int> fail_first{0};  // answer 503 this many times first
  bool tokens_only = false;        // answer without "count" (len(tokens) must be used)
  kvtest::WordTokenCounter words;

  explicit TokenizeServer(const std::string& path = "/tokenize") {
    server.set_keep_alive_max_count(1);  // the client keeps connections alive: do not wait on them at shutdown
    server.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
      if (fail_first > 0) {
        --fail_first;
        res.status = 503;
        return;
      }
      const json body = json::parse(req.body);
      {
        std::lock_guard<std::mutex> lock(m);
        requests.push_back(body);
        auth.push_back(req.get_header_value("Authorization"));
      }
      std::size_t n = 0;
      if (body.contains("messages")) {
        if (!body.value("add_generation_prompt", false)) {
          res.status = 400;
          return;
        }
        n = words.count_chat(body["messages"]);
      } else if (body.contains("prompt")) {
        n = words.count_text(body["prompt"].get<std::string>()) + (body.value("add_special_tokens", true) ? 1 : 0);
      } else {
        res.status = 422;
        res.set_content(R"({"detail":"prompt or messages required"})", "application/json");
        return;
      }
      json out = {{"tokens", json::array()}, {"max_model_len", 131072}};
      for (std::size_t i = 0; i < n; ++i) out["tokens"].push_back(static_cast<int>(i));
      if (!tokens_only) out["count"] = n;
      res.set_content(out.dump(), "application/json");
    });
    start();
  }
};

}  // namespace

TEST_CASE("tokenize-url: text and chat counts with vLLM's request fields", "[tokenize]") {
  TokenizeServer s;
  auto c = kvgate::make_remote_token_counter(s.url(), "qwen3");
  kvtest::WordTokenCounter local;
  const std::string text = "The access code for Juniper-24 is 951936. Nothing else.";
  CHECK(c->count_text(text) == local.count_text(text));
  const json messages = json::array({{{"role", "user"}, {"content", text}}});
  CHECK(c->count_chat(messages) == local.count_chat(messages));
  CHECK(c->exact());
  CHECK(c->source() == "tokenize-url:" + s.url("/tokenize") + " model:qwen3");
  std::lock_guard<std::mutex> lock(s.m);
  REQUIRE(s.requests.size() == 4);  // two probes at construction (short and long text), then the two counts
  CHECK(s.requests[2] == json({{"prompt", text}, {"add_special_tokens", false}, {"model", "qwen3"}}));
  CHECK(s.requests[3] == json({{"messages", messages}, {"add_generation_prompt", true}, {"model", "qwen3"}}));
}

TEST_CASE("tokenize-url: base URLs with /v1 or /tokenize, a count from len(tokens), retries on 503", "[tokenize]") {
  TokenizeServer s;
  s.tokens_only = true;
  CHECK(kvgate::make_remote_token_counter(s.url("/v1/"), "")->count_text("one two three") == 3);
  CHECK(kvgate::make_remote_token_counter(s.url("/tokenize"), "")->count_text("one two") == 2);
  s.fail_first = 2;
  auto c = kvgate::make_remote_token_counter(s.url(), "");
  CHECK(c->count_text("a b c d") == 4);
  std::lock_guard<std::mutex> lock(s.m);
  CHECK_FALSE(s.requests.back().contains("model"));  // no --tokenize-model: no model field
}

TEST_CASE("tokenize-url: the API key from the environment goes in the header, never in the source", "[tokenize]") {
  TokenizeServer s;
  ::setenv("KVGATE_API_KEY", "sk-test-secret", 1);
  auto c = kvgate::make_remote_token_counter(s.url(), "m");
  ::unsetenv("KVGATE_API_KEY");
  c->count_text("x");
  {
    std::lock_guard<std::mutex> lock(s.m);
    CHECK(s.auth.back() == "Bearer sk-test-secret");
  }
  CHECK(c->source().find("sk-test") == std::string::npos);
  auto creds = kvgate::make_remote_token_counter("http://user:pw@127.0.0.1:" + std::to_string(s.port), "");
  CHECK(creds->source() == "tokenize-url:" + s.url("/tokenize"));
}

TEST_CASE("tokenize-url: errors name the URL and the way out", "[tokenize]") {
  REQUIRE_THROWS_WITH(kvgate::make_remote_token_counter("localhost:8000", ""), contains("not an http(s) URL"));
  REQUIRE_THROWS_WITH(kvgate::make_remote_token_counter("http://127.0.0.1:1", ""),
                      contains("--tokenize-url http://127.0.0.1:1/tokenize: no answer") && contains("start the server"));
  TokenizeServer other("/elsewhere");
  REQUIRE_THROWS_WITH(kvgate::make_remote_token_counter(other.url(), ""), contains("HTTP 404") && contains("--tokenizer"));

  kvtest::LocalServer junk;
  junk.server.set_keep_alive_max_count(1);
  junk.server.Post("/tokenize", [](const httplib::Request&, httplib::Response& res) { res.set_content("<html>hi</html>", "text/html"); });
  junk.start();
  REQUIRE_THROWS_WITH(kvgate::make_remote_token_counter(junk.url(), ""), contains("unexpected answer") && contains("\"count\""));

  kvtest::LocalServer text_only;  // an older server: prompts only, 422 for messages
  text_only.server.set_keep_alive_max_count(1);
  text_only.server.Post("/tokenize", [](const httplib::Request& req, httplib::Response& res) {
    const json body = json::parse(req.body);
    if (body.contains("messages")) {
      res.status = 422;
      res.set_content(R"({"detail":"field required: prompt"})", "application/json");
    } else {
      const std::size_t n = kvtest::WordTokenCounter().count_text(body["prompt"].get<std::string>());
      res.set_content(json{{"count", n}, {"tokens", json::array()}, {"max_model_len", 4096}}.dump(), "application/json");
    }
  });
  text_only.start();
  auto c = kvgate::make_remote_token_counter(text_only.url(), "");
  REQUIRE_THROWS_WITH(c->count_chat(json::array({{{"role", "user"}, {"content", "hi"}}})),
                      contains("HTTP 422 for a chat request") && contains("field required") && contains("--api completions"));
}

namespace {

// llama-server-like: {"content", "add_special", "parse_special"} -> {"tokens"}; a body without
// "content" gets HTTP 200 {"tokens": []}, as llama-server answers vLLM's {"prompt"}; /apply-template
// renders ChatML.
struct LlamaCppServer : kvtest::LocalServer {
  std::mutex m;
  std::vector<std::pair<std::string, json>> requests;
  kvtest::WordTokenCounter words;
  bool constant_count = false;  // a broken server: one token whatever the text

  LlamaCppServer() {
    server.set_keep_alive_max_count(1);
    server.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
      const json body = json::parse(req.body);
      record("/tokenize", body);
      json tokens = json::array();
      if (body.contains("content")) {
        std::size_t n = words.count_text(body["content"].get<std::string>()) + (body.value("add_special", false) ? 1 : 0);
        if (constant_count) n = 1;
        for (std::size_t i = 0; i < n; ++i) tokens.push_back(static_cast<int>(i));
      }
      res.set_content(json{{"tokens", tokens}}.dump(), "application/json");
    });
    server.Post("/apply-template", [this](const httplib::Request& req, httplib::Response& res) {
      const json body = json::parse(req.body);
      record("/apply-template", body);
      res.set_content(json{{"prompt", kvgate::render_chatml(body["messages"], true)}}.dump(), "application/json");
    });
    start();
  }
  void record(const std::string& path, const json& body) {
    std::lock_guard<std::mutex> lock(m);
    requests.emplace_back(path, body);
  }
};

}  // namespace

TEST_CASE("tokenize-url: llama.cpp's /tokenize detected on the first probe; chat through /apply-template", "[tokenize]") {
  LlamaCppServer s;
  auto c = kvgate::make_remote_token_counter(s.url(), "demo");
  kvtest::WordTokenCounter local;
  const std::string text = "The access code for Juniper-24 is 951936. Nothing else.";
  CHECK(c->count_text(text) == local.count_text(text));
  const json messages = json::array({{{"role", "user"}, {"content", text}}});
  CHECK(c->count_chat(messages) == local.count_text(kvgate::render_chatml(messages, true)) + 1);  // + add_special
  std::lock_guard<std::mutex> lock(s.m);
  REQUIRE(s.requests.size() == 6);  // vLLM's shape (no tokens), llama.cpp's, the long probe, text, template, chat
  CHECK(s.requests[0].second.contains("prompt"));
  CHECK(s.requests[3].second == json({{"content", text}, {"add_special", false}, {"parse_special", true}}));
  CHECK(s.requests[4].first == "/apply-template");
  CHECK(s.requests[4].second == json({{"messages", messages}}));
  CHECK(s.requests[5].second.at("add_special") == true);  // as llama-server tokenizes a chat completion's prompt
}

TEST_CASE("tokenize-url: --tokenize-api names the shape; a count that does not grow is refused at the probe", "[tokenize]") {
  LlamaCppServer s;
  auto c = kvgate::make_remote_token_counter(s.url(), "", "llamacpp");
  CHECK(c->count_text("one two three") == 3);
  {
    std::lock_guard<std::mutex> lock(s.m);
    CHECK_FALSE(s.requests.front().second.contains("prompt"));  // no detection when the shape is named
  }
  // vLLM's shape named against llama.cpp: HTTP 200 with no tokens must not become a count of 0.
  REQUIRE_THROWS_WITH(kvgate::make_remote_token_counter(s.url(), "", "vllm"),
                      contains("do not measure text") && contains("0 tokens for 6 bytes") && contains("{\"tokens\":[]}") &&
                          contains("--tokenize-api"));
  s.constant_count = true;
  REQUIRE_THROWS_WITH(kvgate::make_remote_token_counter(s.url(), ""), contains("1 tokens for 6 bytes, 1 for"));
  REQUIRE_THROWS_WITH(kvgate::make_remote_token_counter(s.url(), "", "tgi"), contains("--tokenize-api tgi") && contains("llamacpp"));

  kvtest::LocalServer empty;  // answers every shape with no tokens: both answers named
  empty.server.set_keep_alive_max_count(1);
  empty.server.Post("/tokenize", [](const httplib::Request&, httplib::Response& res) { res.set_content(R"({"tokens":[]})", "application/json"); });
  empty.start();
  REQUIRE_THROWS_WITH(kvgate::make_remote_token_counter(empty.url(), ""),
                      contains("no token count") && contains("{\"prompt\"} request got HTTP 200") &&
                          contains("{\"content\"} request got HTTP 200"));
}

TEST_CASE("tokenize-url: open_token_counter picks it, and refuses two counters", "[tokenize]") {
  TokenizeServer s;
  auto c = kvgate::open_token_counter({.tokenize_url = s.url(), .model = "m"});
  CHECK(c->exact());
  LlamaCppServer llama;
  CHECK(kvgate::open_token_counter({.tokenizer_path = "", .tokenize_url = llama.url(), .model = "", .tokenize_api = "llamacpp"})->count_text("a b") == 2);
  CHECK_THROWS_AS(kvgate::open_token_counter({.tokenizer_path = "t.json", .tokenize_url = s.url()}), kvgate::Error);
}
