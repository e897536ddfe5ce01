// runner/url.h: --endpoint validation, API paths, redaction.
#include "tests/catch_compat.hpp"
#include "harness/core/error.h"
#include "harness/runner/url.h"

using namespace kvgate::runner;
using kvtest::contains;

TEST_CASE("url: a base URL is parsed, its host classified", "[url]") {
  auto e = parse_endpoint("http://localhost:8000/v1/");
  CHECK(e.base == "http://localhost:8000/v1");
  CHECK(e.scheme == "http");
  CHECK(e.loopback);
  CHECK_FALSE(parse_endpoint("https://api.example.com/v1").loopback);
  CHECK(parse_endpoint("http://127.0.0.2:1/v1").loopback);
  CHECK(parse_endpoint("http://[::1]:8000/v1").loopback);
  CHECK_FALSE(parse_endpoint("http://127.example.com/v1").loopback);
}

TEST_CASE("url: bad endpoints are refused with the fix", "[url]") {
  auto message = [](const std::string& url) {
    try {
      parse_endpoint(url);
    } catch (const kvgate::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message("localhost:8000/v1"), contains("--endpoint"));
  CHECK_THAT(message("ftp://host/v1"), contains("not http or https"));
  CHECK_THAT(message("http://host:8000/v1/chat/completions"), contains("pass the base URL, e.g. http://host:8000/v1"));
  CHECK_THAT(message("http://host:8000/v1/completions"), contains("appends the API path"));
  CHECK_THAT(message("http://"), contains("--endpoint"));
}

TEST_CASE("url: paths join onto the base; the server root drops /v1", "[url]") {
  CHECK(join_path("http://h:1/v1", "/chat/completions") == "http://h:1/v1/chat/completions");
  CHECK(join_path("http://h:1/v1/", "/models") == "http://h:1/v1/models");
  CHECK(join_path("https://h/openai/v1?api-version=2", "/completions") == "https://h/openai/v1/completions?api-version=2");
  CHECK(server_root("http://h:1/v1") == "http://h:1");
  CHECK(server_root("http://h:1/v1/") == "http://h:1");
  CHECK(server_root("http://h:1/proxy") == "http://h:1/proxy");
}

TEST_CASE("url: credentials and query values never reach a record", "[url]") {
  CHECK(redact_url("https://user:pa55@h:1/v1") == "https://***@h:1/v1");
  CHECK(redact_url("https://h/v1?key=sk-123&x=1") == "https://h/v1?key=***&x=***");
  auto e = parse_endpoint("https://bob:secret@h/v1?token=abc");
  CHECK(e.redacted.find("secret") == std::string::npos);
  CHECK(e.redacted.find("abc") == std::string::npos);
  CHECK(e.base.find("secret") != std::string::npos);  // the request itself still carries them
}
