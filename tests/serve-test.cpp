// kvgate serve's server in process: the OpenAI routes answer what the engine generates (streamed or
// not), /tokenize matches the tokenizer, concurrent requests all get their own answers, and bad
// requests get 4xx OpenAI error objects while the server keeps serving.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/decoder/engine.h"
#include "harness/decoder/model_text.h"
#include "tests/decoder_fixtures.h"
#include "harness/serve/server.h"

using namespace kvgate;
using nlohmann::json;

namespace {

decoder::MakeModelOptions tiny() { return {.seed = 5, .merges = 200, .max_position = 512}; }

struct Fixture {
  kvtest::TempDir tmp;
  std::string dir = tmp.file("m");
  std::shared_ptr<const decoder::Model> model;
  std::unique_ptr<decoder::ModelText> text;
  std::unique_ptr<decoder::Engine> engine;
  std::unique_ptr<serve::Server> server;
  std::thread thread;
  int port = 0;

  explicit Fixture(std::size_t max_body = 1 << 16) {
    decoder::make_model(tiny(), dir);
    model = decoder::Model::load(dir);
    text = std::make_unique<decoder::ModelText>(decoder::ModelText::load(dir, model->config()));
    engine = decoder::make_engine(model, {.device = "cpu", .kv = {.format = "fp8_e4m3"}, .max_batch = 4});
    server = std::make_unique<serve::Server>(*engine, *text, model->config(),
                                             serve::ServeOptions{.model_name = "tiny", .max_body_bytes = max_body, .workers = 8});
    port = server->bind("127.0.0.1", 0);
    thread = std::thread([this] { server->listen(); });
  }
  ~Fixture() {
    server->stop();
    thread.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    return c;
  }
  json post(const std::string& path, const std::string& body, int expect_status) const {
    auto c = client();
    auto res = c.Post(path.c_str(), body, "application/json");
    REQUIRE(res);
    INFO(path << " " << body.substr(0, 200) << " -> " << res->body);
    CHECK(res->status == expect_status);
    return json::parse(res->body);
  }
  // What the engine itself generates for a chat, greedy.
  std::string direct_chat(const std::string& user, int max_tokens) const {
    const auto msgs = nlohmann::ordered_json::array({{{"role", "user"}, {"content", user}}});
    const auto ids = text->encode_chat(msgs, kvtest::with_generation_prompt());
    auto g = text->generate_options({.sampler = {.temperature = 0.0}, .max_tokens = max_tokens});
    return decoder::ModelText::text_of(engine->generate(ids, g));
  }
  bool healthy() const {
    auto c = client();
    auto res = c.Get("/health");
    return res && res->status == 200;
  }
};

// The data lines of an SSE body, "[DONE]" included.
std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const std::size_t end = body.find("\n\n", pos);
    out.push_back(body.substr(pos + 6, end - pos - 6));
    pos = end;
  }
  return out;
}

}  // namespace

TEST_CASE("serve: models, health, version, server_info", "[serve]") {
  Fixture f;
  auto c = f.client();
  auto models = c.Get("/v1/models");
  REQUIRE(models);
  CHECK(models->status == 200);
  const json m = json::parse(models->body);
  CHECK(m["object"] == "list");
  CHECK(m["data"][0]["id"] == "tiny");
  CHECK(m["data"][0]["max_model_len"] == 512);
  CHECK(f.healthy());
  const json v = json::parse(c.Get("/version")->body);
  CHECK(v["version"].is_string());
  const json info = json::parse(c.Get("/server_info")->body);
  CHECK(info["engine"] == "kvgate-reference");
  CHECK(info["kv_cache_dtype"] == "fp8_e4m3");
  CHECK(info["kv"]["k_scale"] == 1.0);
  CHECK(info["context_length"] == 512);
}

TEST_CASE("serve: chat and completions answer what the engine generates, streamed or not", "[serve]") {
  Fixture f;
  const std::string expected = f.direct_chat("Tell me a story", 24);
  const json r = f.post("/v1/chat/completions",
                        R"({"model":"tiny","messages":[{"role":"user","content":"Tell me a story"}],"max_tokens":24,"temperature":0})", 200);
  CHECK(r["object"] == "chat.completion");
  CHECK(r["choices"][0]["message"]["role"] == "assistant");
  CHECK(r["choices"][0]["message"]["content"] == expected);
  const std::string finish = r["choices"][0]["finish_reason"];
  CHECK((finish == "stop" || finish == "length"));
  CHECK(r["usage"]["total_tokens"] == r["usage"]["prompt_tokens"].get<int>() + r["usage"]["completion_tokens"].get<int>());

  // Streamed: a role chunk, content deltas that add up to the same text, a finish chunk, usage, [DONE].
  auto c = f.client();
  auto res = c.Post("/v1/chat/completions",
                    R"({"messages":[{"role":"user","content":"Tell me a story"}],"max_tokens":24,"temperature":0,"stream":true,
                        "stream_options":{"include_usage":true}})",
                    "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK_THAT(res->get_header_value("Content-Type"), kvtest::contains("text/event-stream"));
  const std::vector<std::string> events = sse_data(res->body);
  REQUIRE(events.size() >= 4);
  CHECK(events.back() == "[DONE]");
  std::string streamed;
  json finish_chunk, usage_chunk;
  for (std::size_t i = 0; i + 1 < events.size(); ++i) {
    const json e = json::parse(events[i]);
    CHECK(e["object"] == "chat.completion.chunk");
    if (e["choices"].empty()) {
      usage_chunk = e;
      continue;
    }
    const json& ch = e["choices"][0];
    if (i == 0) CHECK(ch["delta"]["role"] == "assistant");
    if (ch["delta"].contains("content")) streamed += ch["delta"]["content"].get<std::string>();
    if (!ch["finish_reason"].is_null()) finish_chunk = e;
  }
  CHECK(streamed == expected);
  CHECK(finish_chunk["choices"][0]["finish_reason"] == finish);
  CHECK(usage_chunk["usage"] == r["usage"]);

  // Completions: several prompts are several choices, each what one prompt alone gives.
  const json one = f.post("/v1/completions", R"({"model":"tiny","prompt":"Once upon","max_tokens":10,"temperature":0})", 200);
  const json two = f.post("/v1/completions", R"({"model":"tiny","prompt":["The cat","Once upon"],"max_tokens":10,"temperature":0})", 200);
  CHECK(one["object"] == "text_completion");
  REQUIRE(two["choices"].size() == 2);
  CHECK(two["choices"][1]["index"] == 1);
  CHECK(two["choices"][1]["text"] == one["choices"][0]["text"]);
  auto sres = c.Post("/v1/completions", R"({"prompt":"Once upon","max_tokens":10,"temperature":0,"stream":true})", "application/json");
  REQUIRE(sres);
  std::string stext;
  for (const std::string& e : sse_data(sres->body))
    if (e != "[DONE]") stext += json::parse(e)["choices"][0]["text"].get<std::string>();
  CHECK(stext == one["choices"][0]["text"]);

  // Sampling with a seed is reproducible; stop strings cut the text.
  const std::string sampled = R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":16,"temperature":1.0,"seed":42})";
  CHECK(f.post("/v1/chat/completions", sampled, 200)["choices"][0]["message"]["content"] ==
        f.post("/v1/chat/completions", sampled, 200)["choices"][0]["message"]["content"]);
  {
    // An ASCII character of an answer as the stop string: the random model's text is mostly
    // U+FFFD (invalid bytes), which no stop string can match, so look for a prompt whose greedy
    // answer has one (deterministic: the same prompt every run).
    std::string prompt, answer, stop;
    for (const char* p : {"Tell me a story", "Hello", "Once upon a time", "abc def", "The sea", "Why?", "1 2 3", "Good morning"}) {
      answer = f.direct_chat(p, 24);
      for (std::size_t at = 1; at < answer.size() && stop.empty(); ++at)
        if (static_cast<unsigned char>(answer[at]) < 0x80 && answer[at] > ' ') stop = std::string(1, answer[at]);
      if (!stop.empty()) {
        prompt = p;
        break;
      }
    }
    REQUIRE(!stop.empty());
    const json cut = f.post("/v1/chat/completions",
                            json{{"messages", {{{"role", "user"}, {"content", prompt}}}}, {"max_tokens", 24},
                                 {"temperature", 0}, {"stop", stop}}.dump(), 200);
    CHECK(cut["choices"][0]["finish_reason"] == "stop");
    CHECK(cut["choices"][0]["message"]["content"] == answer.substr(0, answer.find(stop)));
  }
}

TEST_CASE("serve: concurrent requests each get their own answer", "[serve]") {
  Fixture f;
  const std::vector<std::string> prompts = {"alpha", "beta gamma", "delta", "epsilon zeta eta", "theta", "iota kappa"};
  std::vector<std::string> expected;
  for (const auto& p : prompts) expected.push_back(f.direct_chat(p, 12));
  std::vector<std::future<std::string>> answers;
  for (const auto& p : prompts)
    answers.push_back(std::async(std::launch::async, [&f, p] {
      auto c = f.client();
      auto res = c.Post("/v1/chat/completions",
                        json{{"messages", {{{"role", "user"}, {"content", p}}}}, {"max_tokens", 12}, {"temperature", 0}}.dump(),
                        "application/json");
      if (!res || res->status != 200) return std::string("<failed>");
      return json::parse(res->body)["choices"][0]["message"]["content"].get<std::string>();
    }));
  for (std::size_t i = 0; i < prompts.size(); ++i) CHECK(answers[i].get() == expected[i]);
}

TEST_CASE("serve: /tokenize and /detokenize in vLLM's shape", "[serve]") {
  Fixture f;
  const json t = f.post("/tokenize", R"({"model":"tiny","prompt":"Hello world"})", 200);
  const auto ids = f.text->tokenizer().encode("Hello world", true);
  CHECK(t["tokens"] == json(ids));
  CHECK(t["count"] == ids.size());
  CHECK(t["max_model_len"] == 512);
  const json chat = f.post("/tokenize", R"({"messages":[{"role":"user","content":"Hi"}],"return_token_strs":true})", 200);
  const auto msgs = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hi"}}});
  CHECK(chat["tokens"] == json(f.text->encode_chat(msgs, kvtest::with_generation_prompt())));
  CHECK(chat["token_strs"].size() == chat["tokens"].size());
  const json d = f.post("/detokenize", json{{"tokens", ids}}.dump(), 200);
  CHECK(d["prompt"] == "Hello world");
}

TEST_CASE("serve: malformed and unsupported requests get 4xx OpenAI errors; the server keeps serving", "[serve]") {
  Fixture f(4096);
  struct Case {
    const char* path;
    std::string body;
    int status;
    const char* param;  // "" when none
  };
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  const std::vector<Case> cases = {
      {"/v1/chat/completions", "{not json", 400, ""},
      {"/v1/chat/completions", "[1,2,3]", 400, ""},
      {"/v1/chat/completions", "", 400, ""},
      {"/v1/chat/completions", "{\"messages\": " + deep + "}", 400, ""},
      {"/v1/chat/completions", R"({"model":"gpt-9","messages":[{"role":"user","content":"x"}]})", 404, "model"},
      {"/v1/chat/completions", R"({"model":7,"messages":[{"role":"user","content":"x"}]})", 400, "model"},
      {"/v1/chat/completions", R"({"messages":[]})", 400, "messages"},
      {"/v1/chat/completions", R"({"messages":[{"content":"x"}]})", 400, "messages[0].role"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", 400, "messages[0].content"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})", 400, "temperature"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"temperature":7})", 400, "temperature"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"top_p":0})", 400, "top_p"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})", 400, "max_tokens"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"max_tokens":100000})", 400, "max_tokens"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"n":2})", 400, "n"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"presence_penalty":0.5})", 400, "presence_penalty"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"logprobs":true})", 400, "logprobs"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"stop":[""]})", 400, "stop"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}})", 400, "response_format"},
      {"/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"seed":1.5})", 400, "seed"},
      {"/v1/completions", R"({"max_tokens":4})", 400, "prompt"},
      {"/v1/completions", R"({"prompt":[1,2,99999999]})", 400, "prompt"},
      {"/v1/completions", R"({"prompt":"x","echo":true})", 400, "echo"},
      {"/v1/completions", R"({"prompt":["a","b"],"stream":true})", 400, "prompt"},
      {"/tokenize", R"({"prompt":5})", 400, "prompt"},
      {"/detokenize", R"({"tokens":[-1]})", 400, "tokens"},
      {"/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"" + std::string(8000, 'x') + "\"}]}", 413, ""},
  };
  for (const Case& k : cases) {
    const json e = f.post(k.path, k.body, k.status);
    REQUIRE(e.contains("error"));
    CHECK(e["error"]["message"].is_string());
    CHECK(!e["error"]["message"].get<std::string>().empty());
    CHECK(e["error"]["type"].is_string());
    if (*k.param) CHECK(e["error"]["param"] == k.param);
    CHECK(f.healthy());
  }
  // Unknown routes and methods: 404 with an error object that lists the routes.
  auto c = f.client();
  auto r = c.Get("/v1/embeddings");
  REQUIRE(r);
  CHECK(r->status == 404);
  CHECK_THAT(json::parse(r->body)["error"]["message"].get<std::string>(), kvtest::contains("/v1/chat/completions"));
  // A client that hangs up mid-stream does not take the server down.
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(f.port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    const std::string body = R"({"prompt":"Once","max_tokens":300,"temperature":1,"stream":true})";
    const std::string req = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
    REQUIRE(::send(fd, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size()));
    char buf[256];
    CHECK(::recv(fd, buf, sizeof buf, 0) > 0);  // the stream has started
    ::close(fd);
  }
  CHECK(f.healthy());
}
