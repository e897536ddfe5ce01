// runner/openai_protocol.h: request bodies, response bodies, stream chunks, error bodies.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/runner/openai_protocol.h"

using namespace kvgate::runner;
using kvgate::Response;
using kvgate::SamplingParams;
using kvgate::Trial;
using kvtest::contains;
using nlohmann::json;

namespace {
Trial chat_trial() {
  Trial t;
  t.id = "x/1";
  t.task = "x";
  t.input = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  t.grader = {{"name", "exact"}};
  return t;
}
void feed(StreamAccumulator& acc, const std::vector<std::string>& datas) {
  double t = 10;
  for (const auto& d : datas) acc.on_event(SseEvent{"", d}, t += 5);
}
}  // namespace

TEST_CASE("protocol: a chat body carries the messages, sampling, trial hints and extra_body", "[protocol]") {
  Trial t = chat_trial();
  t.input["tools"] = json::array({{{"type", "function"}}});
  t.input["stop"] = {"ignored-here"};
  SamplingParams s;
  s.temperature = 0.7;
  s.top_p = 0.9;
  s.seed = 12;
  s.max_tokens = 64;
  s.stop = {"END"};
  s.extra_body = {{"chat_template_kwargs", {{"enable_thinking", false}}}, {"temperature", 0.0}};
  json b = json::parse(build_request_body(t, s, BodyOptions{.api = Api::chat, .model = "m", .stream = true}));
  CHECK(b["model"] == "m");
  CHECK(b["messages"] == t.input["messages"]);
  CHECK(b["max_tokens"] == 64);
  CHECK(b["top_p"] == 0.9);
  CHECK(b["seed"] == 12);
  CHECK(b["stop"] == json({"END"}));  // the resolved sampling's list, not the raw input's
  CHECK(b["tools"].size() == 1);
  CHECK(b["stream"] == true);
  CHECK(b["stream_options"]["include_usage"] == true);
  CHECK(b["chat_template_kwargs"]["enable_thinking"] == false);
  CHECK(b["temperature"] == 0.0);  // extra_body wins
  CHECK_FALSE(b.contains("top_k"));
}

TEST_CASE("protocol: completions bodies carry the prompt; a mismatched input is refused", "[protocol]") {
  Trial t = chat_trial();
  SamplingParams s;
  CHECK_THROWS_AS(build_request_body(t, s, BodyOptions{.api = Api::completions, .model = "m"}), kvgate::Error);
  t.input = {{"prompt", "Q: 1+1\nA:"}};
  s.top_k = 5;
  json b = json::parse(build_request_body(t, s, BodyOptions{.api = Api::completions, .model = "m"}));
  CHECK(b["prompt"] == "Q: 1+1\nA:");
  CHECK(b["top_k"] == 5);
  CHECK_FALSE(b.contains("stream"));
  CHECK_FALSE(b.contains("seed"));
  CHECK_FALSE(b.contains("stop"));
}

TEST_CASE("protocol: a chat answer: content, reasoning kept apart, usage, finish_reason", "[protocol]") {
  Response r;
  parse_response_body(R"({"choices":[{"index":0,"message":{"role":"assistant","content":"42","reasoning_content":"6*7"},
    "finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":2}}})",
                      Api::chat, r);
  REQUIRE_FALSE(r.error);
  CHECK(r.text == "42");
  CHECK(r.reasoning == "6*7");
  CHECK(r.finish_reason == "stop");
  CHECK(r.prompt_tokens.value() == 10);
  CHECK(r.completion_tokens.value() == 3);
  CHECK(r.details["usage"]["completion_tokens_details"]["reasoning_tokens"] == 2);
  CHECK(r.tool_calls.is_null());
}

TEST_CASE("protocol: vLLM's newer \"reasoning\" field, null content, content parts, tool calls", "[protocol]") {
  Response r;
  parse_response_body(R"({"choices":[{"message":{"content":null,"reasoning":"long thought",
    "tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]})",
                      Api::chat, r);
  REQUIRE_FALSE(r.error);
  CHECK(r.text.empty());
  CHECK(r.reasoning == "long thought");
  CHECK(r.tool_calls[0]["function"]["name"] == "f");
  CHECK(r.finish_reason == "tool_calls");
  Response p;
  parse_response_body(R"({"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]})", Api::chat, p);
  CHECK(p.text == "ab");
  CHECK_FALSE(p.prompt_tokens);
}

TEST_CASE("protocol: a completions answer", "[protocol]") {
  Response r;
  parse_response_body(R"({"choices":[{"text":" 7","finish_reason":"length"}]})", Api::completions, r);
  REQUIRE_FALSE(r.error);
  CHECK(r.text == " 7");
  CHECK(r.finish_reason == "length");
}

TEST_CASE("protocol: cut-short bodies are retryable, wrong shapes are not, errors inside a 200 are read", "[protocol]") {
  struct Case {
    std::string body;
    std::string kind;
    bool retryable;
  };
  const std::vector<Case> cases = {
      {R"({"choices":[{"message":{"content":"4)", "bad_json", true},
      {"", "bad_json", true},
      {"<html>502 Bad Gateway</html>", "bad_json", true},
      {"[1,2]", "malformed", false},
      {R"({"choices":[]})", "malformed", false},
      {R"({"choices":[{"message":{"content":5}}]})", "malformed", false},
      {R"({"choices":[{"text":"x"}]})", "malformed", false},  // a completions answer to a chat request
      {R"({"error":{"message":"CUDA out of memory","code":500}})", "server_error", true},
      {R"({"object":"error","message":"bad stop","code":400})", "server_error", false},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    Response r;
    parse_response_body(c.body, Api::chat, r);
    REQUIRE(r.error);
    CHECK(r.error_kind == c.kind);
    CHECK(r.retryable == c.retryable);
  }
}

TEST_CASE("protocol: the server's message is found in the usual error shapes", "[protocol]") {
  CHECK(server_error_message(R"({"error":{"message":"model not found","type":"NotFound"}})") == "model not found");
  CHECK(server_error_message(R"({"object":"error","message":"too long","code":400})") == "too long");
  CHECK(server_error_message(R"({"detail":"Not Found"})") == "Not Found");
  CHECK_THAT(server_error_message(R"({"detail":[{"loc":["body","messages"],"msg":"field required"}]})"), contains("field required"));
  CHECK(server_error_message("<html>\n  <body>502   Bad Gateway</body></html>") == "<html> <body>502 Bad Gateway</body></html>");
  CHECK(server_error_message("") == "(empty body)");
  CHECK(server_error_message(std::string(5000, 'x')).size() < 600);
}

TEST_CASE("protocol: a streamed chat answer: pieces, reasoning, usage chunk, TTFT and gaps", "[protocol]") {
  StreamAccumulator acc(Api::chat);
  feed(acc, {R"({"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]})",
             R"({"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]})",
             R"({"choices":[{"index":0,"delta":{"content":"Par"}}]})",
             R"({"choices":[{"index":0,"delta":{"content":"is"}}]})",
             R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
             R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3}})", "[DONE]"});
  CHECK(acc.saw_done());
  Response r;
  acc.finish(r);
  REQUIRE_FALSE(r.error);
  CHECK(r.text == "Paris");
  CHECK(r.reasoning == "hmm");
  CHECK(r.finish_reason == "stop");
  CHECK(r.completion_tokens.value() == 3);
  CHECK(r.ttft_ms.value() == kvtest::Approx(20));  // the reasoning chunk, at t = 20
  CHECK(r.inter_token_ms == std::vector<double>{5, 5});
}

TEST_CASE("protocol: streamed tool calls are assembled by index", "[protocol]") {
  StreamAccumulator acc(Api::chat);
  feed(acc, {R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_","arguments":""}}]}}]})",
             R"({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"weather","arguments":"{\"city\":"}}]}}]})",
             R"({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}}]})",
             R"({"choices":[{"delta":{},"finish_reason":"tool_calls"}]})"});
  Response r;
  acc.finish(r);
  REQUIRE_FALSE(r.error);
  REQUIRE(r.tool_calls.size() == 1);
  CHECK(r.tool_calls[0]["id"] == "c1");
  CHECK(r.tool_calls[0]["function"]["name"] == "get_weather");
  CHECK(json::parse(r.tool_calls[0]["function"]["arguments"].get<std::string>())["city"] == "Oslo");
}

TEST_CASE("protocol: broken streams: no finish_reason, bad JSON, error events", "[protocol]") {
  {
    StreamAccumulator acc(Api::completions);
    feed(acc, {R"({"choices":[{"text":"4"}]})"});
    Response r;
    acc.finish(r);
    CHECK(r.error_kind == "truncated");
    CHECK(r.retryable);
  }
  {
    StreamAccumulator acc(Api::completions);
    feed(acc, {R"({"choices":[{"text":"4"}]})", R"({"choices":[{"te)", R"({"choices":[{"text":"","finish_reason":"stop"}]})"});
    Response r;
    acc.finish(r);
    CHECK(r.error_kind == "bad_json");
    CHECK(r.retryable);
    CHECK_THAT(*r.error, contains("not valid JSON"));
  }
  {
    StreamAccumulator acc(Api::chat);
    feed(acc, {R"({"error":{"message":"engine died","code":500}})"});
    Response r;
    acc.finish(r);
    CHECK(r.error_kind == "server_error");
    CHECK_THAT(*r.error, contains("engine died"));
  }
  {
    StreamAccumulator acc(Api::chat);
    feed(acc, {R"({"choices":"nope"})"});
    Response r;
    acc.finish(r);
    CHECK(r.error_kind == "malformed");
    CHECK_FALSE(r.retryable);
  }
}

TEST_CASE("protocol: JSON nested too deep is rejected", "[protocol]") {
  std::string deep = R"({"choices":[{"message":{"content":"a","tool_calls":)" + std::string(100, '[') + std::string(100, ']') + "}}]}";
  Response r;
  parse_response_body(deep, Api::chat, r);
  CHECK(r.error_kind == "malformed");
  CHECK(within_depth(json::parse("[[[1]]]"), 3));
  CHECK_FALSE(within_depth(json::parse("[[[1]]]"), 2));
}
