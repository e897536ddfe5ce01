// runner/http_backend.h against a fake OpenAI-compatible server on 127.0.0.1: answers, streams,
// every failure class, auth, metadata, replicas.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "tests/fake_openai_server.h"
#include "harness/runner/http_backend.h"

using namespace kvgate::runner;
using kvgate::Request;
using kvgate::Response;
using kvgate::Trial;
using kvtest::contains;
using kvtest::FakeOpenAIServer;
using nlohmann::json;

namespace {
Trial say(const std::string& word, bool chat = true) {
  Trial t;
  t.id = "say/" + word;
  t.task = "say";
  t.input = chat ? json{{"messages", {{{"role", "user"}, {"content", "Say " + word}}}}} : json{{"prompt", "Say " + word}};
  t.target = word;
  t.grader = {{"name", "exact"}};
  return t;
}
HttpBackendOptions options(const FakeOpenAIServer& s) {
  HttpBackendOptions o;
  o.endpoints = {s.base_url()};
  o.model = "fake-model";
  o.timeout_s = 2;
  return o;
}
Response ask(HttpBackend& b, const Trial& t, std::uint64_t seed = 1) {
  Request r{.trial = &t, .repeat = 0, .sampling = {}};
  r.sampling.seed = seed;
  return b.complete(r);
}
// A port nothing listens on: bound, then closed without listen(2).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}
}  // namespace

TEST_CASE("http: a chat answer with reasoning, usage and latency", "[http]") {
  FakeOpenAIServer s;
  s.start();
  HttpBackend b(options(s));
  const Trial t = say("apple");
  Response r = ask(b, t);
  REQUIRE_FALSE(r.error);
  CHECK(r.text == kvtest::fake_model_answer("Say apple", 1));
  CHECK(r.reasoning == "thinking about Say apple");
  CHECK(r.finish_reason == "stop");
  CHECK(r.completion_tokens.value() == 3);
  CHECK(r.http_status == 200);
  CHECK(r.latency_ms > 0);
  CHECK_FALSE(r.ttft_ms);
  const json body = s.bodies().back();
  CHECK(body["model"] == "fake-model");
  CHECK(body["seed"] == 1);
  CHECK(body["messages"][0]["content"] == "Say apple");
}

TEST_CASE("http: completions API, and tool calls in chat", "[http]") {
  FakeOpenAIServer s;
  s.start();
  HttpBackendOptions o = options(s);
  o.api = Api::completions;
  HttpBackend b(o);
  const Trial t = say("pear", false);
  Response r = ask(b, t, 3);
  REQUIRE_FALSE(r.error);
  CHECK(r.text == kvtest::fake_model_answer("Say pear", 3));

  HttpBackend chat(options(s));
  Trial tool = say("plum");
  tool.input["tools"] = json::array({{{"type", "function"}, {"function", {{"name", "say"}}}}});
  Response tr = ask(chat, tool);
  REQUIRE_FALSE(tr.error);
  CHECK(tr.finish_reason == "tool_calls");
  CHECK(tr.tool_calls[0]["function"]["name"] == "say");
}

TEST_CASE("http: streaming records time to first token and the gaps between chunks", "[http]") {
  FakeOpenAIServer s;
  s.chunk_delay_ms = 20;
  s.start();
  HttpBackendOptions o = options(s);
  o.stream = true;
  HttpBackend b(o);
  const Trial t = say("banana");
  Response r = ask(b, t, 7);
  REQUIRE_FALSE(r.error);
  CHECK(r.text == kvtest::fake_model_answer("Say banana", 7));
  CHECK(r.reasoning == "thinking");
  CHECK(r.completion_tokens.value() == 3);
  REQUIRE(r.ttft_ms);
  CHECK(*r.ttft_ms >= 15);                 // the reasoning chunk comes after the role chunk
  CHECK(r.inter_token_ms.size() >= 2);     // answer pieces after the first token
  for (double g : r.inter_token_ms) CHECK(g >= 15);
  CHECK(r.latency_ms >= *r.ttft_ms);
  CHECK(s.bodies().back()["stream_options"]["include_usage"] == true);
}

TEST_CASE("http: 429 with Retry-After, 500 and 503 are retryable", "[http]") {
  FakeOpenAIServer s;
  s.faults.r429 = 1.0;
  s.faults.retry_after = "7";
  s.start();
  HttpBackend b(options(s));
  const Trial t = say("x");
  Response r = ask(b, t);
  CHECK(r.error_kind == "http_429");
  CHECK(r.retryable);
  CHECK(r.http_status == 429);
  CHECK(r.retry_after_s.value() == 7);
  CHECK_THAT(*r.error, contains("rate limited"));
  s.faults.r429 = 0;
  s.faults.r500 = 1.0;
  r = ask(b, t);
  CHECK(r.error_kind == "http_5xx");
  CHECK(r.retryable);
  CHECK_THAT(*r.error, contains("HTTP 500: internal error"));
}

TEST_CASE("http: other 4xx are not retried and carry the server's message", "[http]") {
  FakeOpenAIServer s;
  s.start();
  HttpBackend b(options(s));
  const Trial t = say("x");
  Trial rejected = t;
  rejected.input["messages"][0]["content"] = "REJECT me";
  Response r = ask(b, rejected);
  CHECK(r.error_kind == "http_4xx");
  CHECK_FALSE(r.retryable);
  CHECK_THAT(*r.error, contains("HTTP 400: this prompt is rejected on purpose"));
  HttpBackendOptions o = options(s);
  o.endpoints = {s.base_url() + "/wrong"};
  HttpBackend wrong(o);
  r = ask(wrong, t);
  CHECK(r.http_status == 404);
  CHECK_THAT(*r.error, contains("is --endpoint the base URL"));
}

TEST_CASE("http: timeouts, dropped connections, truncated bodies and refused connections are retryable", "[http]") {
  FakeOpenAIServer s;
  s.faults.slow = 1.0;
  s.faults.slow_ms = 600;
  s.start();
  HttpBackendOptions o = options(s);
  o.timeout_s = 0.2;
  HttpBackend b(o);
  const Trial t = say("x");
  Response r = ask(b, t);
  CHECK(r.error_kind == "timeout");
  CHECK(r.retryable);
  CHECK(r.latency_ms < 550);

  s.faults.slow = 0;
  s.faults.drop = 1.0;
  r = ask(b, t);
  CHECK(r.error_kind == "connection");
  CHECK(r.retryable);

  s.faults.drop = 0;
  s.faults.truncated = 1.0;
  r = ask(b, t);
  CHECK(r.error_kind == "bad_json");
  CHECK(r.retryable);

  HttpBackendOptions dead;
  dead.endpoints = {"http://127.0.0.1:" + std::to_string(closed_port()) + "/v1"};
  dead.model = "m";
  dead.timeout_s = 2;
  HttpBackend d(dead);
  r = ask(d, t);
  CHECK(r.error_kind == "connection");
  CHECK(r.retryable);
}

TEST_CASE("http: broken SSE streams are retryable", "[http]") {
  FakeOpenAIServer s;
  s.faults.broken_sse = 1.0;
  s.start();
  HttpBackendOptions o = options(s);
  o.stream = true;
  HttpBackend b(o);
  const Trial t = say("stream");
  for (int i = 0; i < 3; ++i) {
    Response r = ask(b, t);
    REQUIRE(r.error);
    CHECK(r.retryable);
    CHECK((r.error_kind == "truncated" || r.error_kind == "bad_json" || r.error_kind == "connection"));
  }
  s.faults.broken_sse = 0;
  s.faults.drop = 1.0;  // the connection dies mid-stream
  Response r = ask(b, t);
  CHECK(r.error_kind == "connection");
  CHECK(r.retryable);
}

TEST_CASE("http: the API key goes in the Authorization header and nowhere else", "[http][security]") {
  const std::string key = "sk-kvgate-test-0123456789abcdef";
  FakeOpenAIServer s;
  s.required_key = key;
  s.start();
  HttpBackendOptions o = options(s);
  o.api_key = key;
  o.api_key_env = "MY_KEY";
  HttpBackend b(o);
  const Trial t = say("x");
  Response r = ask(b, t);
  REQUIRE_FALSE(r.error);
  CHECK(s.auth_headers().back() == "Bearer " + key);
  const std::string described = b.describe().dump();
  CHECK(described.find(key) == std::string::npos);
  CHECK_THAT(described, contains("MY_KEY"));

  HttpBackendOptions bad = options(s);
  bad.api_key = "sk-wrong-key-9999";
  HttpBackend w(bad);
  r = ask(w, t);
  CHECK(r.http_status == 401);
  CHECK_THAT(*r.error, contains("check the API key"));
}

TEST_CASE("http: describe() reads the engine's metadata", "[http]") {
  FakeOpenAIServer s;
  s.start();
  HttpBackend b(options(s));
  const json d = b.describe();
  CHECK(d["backend"] == "openai");
  CHECK(d["tls_verify"] == true);
  const json& e = d["engine"]["endpoints"][0];
  CHECK(e["reachable"] == true);
  CHECK(e["models"]["data"][0]["id"] == "fake-model");
  CHECK(e["version"]["version"] == "0.0.fake");
  CHECK(e["cache_config"]["cache_dtype"] == "fp8_e4m3");
  CHECK(d["engine"]["summary"]["kv_cache_dtype"] == "fp8_e4m3");
  CHECK(d["engine"]["summary"]["max_model_len"] == 4096);

  HttpBackendOptions dead;
  dead.endpoints = {"http://127.0.0.1:" + std::to_string(closed_port()) + "/v1"};
  dead.model = "m";
  dead.probe_timeout_s = 2;
  HttpBackend db(dead);
  CHECK(db.describe()["engine"]["endpoints"][0]["reachable"] == false);
}

TEST_CASE("http: several endpoints share the load", "[http]") {
  FakeOpenAIServer a, c;
  a.answer_delay_ms = c.answer_delay_ms = 20;
  a.start();
  c.start();
  HttpBackendOptions o = options(a);
  o.endpoints = {a.base_url(), c.base_url()};
  HttpBackend b(o);
  const Trial t = say("x");
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 5; ++k) CHECK_FALSE(ask(b, t).error);
    });
  for (auto& th : threads) th.join();
  CHECK(a.requests + c.requests == 40);
  CHECK(a.requests >= 10);
  CHECK(c.requests >= 10);
}

TEST_CASE("http: malformed answers never crash the backend", "[http]") {
  FakeOpenAIServer s;
  s.start();
  HttpBackend b(options(s));
  HttpBackendOptions so = options(s);
  so.stream = true;
  HttpBackend sb(so);
  const Trial t = say("x");
  for (const std::string& g : {std::string("{}"), std::string("null"), std::string("\"text\""), std::string("{\"choices\":[null]}"),
                               std::string("{\"choices\":[{\"message\":[]}]}"), std::string(10000, '['), std::string("\xff\xfe\x00", 3),
                               std::string("data: {\"choices\":[{\"delta\":{\"content\":7}}]}\n\n")}) {
    s.garbage = g;
    Response r = ask(b, t);
    CHECK(r.error);
    Response rs = ask(sb, t);
    CHECK(rs.error);
  }
}

// ---- TLS: verification on by default, a private CA with --ca-bundle, --insecure off switch ----
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tests/test_util.h"

namespace {
// A self-signed certificate for 127.0.0.1 / localhost (its own CA), written as PEM files.
void write_self_signed(const std::string& cert_path, const std::string& key_path) {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  REQUIRE(key);
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("kvgate test"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{{NID_basic_constraints, "critical,CA:TRUE"},
                                                                          {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    REQUIRE(ext);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  REQUIRE(X509_sign(x, key, EVP_sha256()) > 0);
  FILE* f = std::fopen(cert_path.c_str(), "wb");
  PEM_write_X509(f, x);
  std::fclose(f);
  f = std::fopen(key_path.c_str(), "wb");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  X509_free(x);
  EVP_PKEY_free(key);
}
}  // namespace

TEST_CASE("http: TLS is verified by default; --ca-bundle trusts a private CA; --insecure turns it off", "[http][security]") {
  kvtest::TempDir dir;
  write_self_signed(dir.file("cert.pem"), dir.file("key.pem"));
  httplib::SSLServer server(dir.file("cert.pem").c_str(), dir.file("key.pem").c_str());
  REQUIRE(server.is_valid());
  server.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& rs) {
    rs.set_content(R"({"choices":[{"message":{"content":"secure"},"finish_reason":"stop"}]})", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  const Trial trial = say("x");
  {
    HttpBackendOptions o;
    o.endpoints = {"https://127.0.0.1:" + std::to_string(port) + "/v1"};
    o.model = "m";
    o.timeout_s = 5;
    HttpBackend strict(o);
    Response r = ask(strict, trial);
    CHECK(r.error_kind == "tls");
    CHECK_FALSE(r.retryable);
    CHECK_THAT(*r.error, contains("--ca-bundle"));

    o.ca_bundle = dir.file("cert.pem");
    HttpBackend trusted(o);
    r = ask(trusted, trial);
    INFO(r.error.value_or(""));
    CHECK(r.text == "secure");

    o.ca_bundle.clear();
    o.insecure = true;
    HttpBackend insecure(o);
    r = ask(insecure, trial);
    CHECK(r.text == "secure");
    CHECK(insecure.describe()["tls_verify"] == false);
  }
  server.stop();
  t.join();
}
