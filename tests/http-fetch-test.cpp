#include <atomic>
#include <filesystem>

#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/core/http_fetch.h"
#include "harness/core/sha256.h"
#include "tests/local_server.h"
#include "tests/test_util.h"

using kvtest::contains;

namespace {
struct Server : kvtest::LocalServer {
  std::atomic<int> flaky_calls{0};
  Server() {
    server.Get("/data.jsonl", [](const httplib::Request&, httplib::Response& res) { res.set_content("{\"a\":1}\n", "application/json"); });
    server.Get("/flaky", [this](const httplib::Request&, httplib::Response& res) {
      if (++flaky_calls < 3) res.status = 503;
      else res.set_content("ok", "text/plain");
    });
    start();
  }
};
}  // namespace

TEST_CASE("http fetch: GET returns status and body; retries 5xx", "[http]") {
  Server s;
  auto r = kvgate::http_get(s.url("/data.jsonl"));
  CHECK(r.status == 200);
  CHECK(r.body == "{\"a\":1}\n");
  CHECK(r.headers["content-type"] == "application/json");
  CHECK(kvgate::http_get(s.url("/missing")).status == 404);
  kvgate::HttpFetchOptions o;
  o.max_retries = 3;
  CHECK(kvgate::http_get(s.url("/flaky"), o).body == "ok");
  CHECK(s.flaky_calls == 3);
}

TEST_CASE("http fetch: downloads are verified and atomic", "[http]") {
  Server s;
  kvtest::TempDir dir;
  const std::string good = kvgate::sha256_hex("{\"a\":1}\n");
  CHECK(kvgate::download_file(s.url("/data.jsonl"), dir.file("d.jsonl"), good) == good);
  CHECK(kvtest::read_text(dir.file("d.jsonl")) == "{\"a\":1}\n");
  REQUIRE_THROWS_WITH(kvgate::download_file(s.url("/data.jsonl"), dir.file("bad.jsonl"), std::string(64, '0')),
                      contains("does not match"));
  CHECK_FALSE(std::filesystem::exists(dir.file("bad.jsonl")));
  REQUIRE_THROWS_WITH(kvgate::download_file(s.url("/missing"), dir.file("m"), std::nullopt), contains("HTTP 404"));
}

TEST_CASE("http fetch: an unreachable host names the URL and the way out", "[http]") {
  kvgate::HttpFetchOptions o;
  o.max_retries = 0;
  o.timeout_s = 2;
  REQUIRE_THROWS_WITH(kvgate::http_get("http://127.0.0.1:1/x", o), contains("http://127.0.0.1:1/x: download failed") && contains("local copy"));
}
