// The OpenAI-compatible HTTP backend (libcurl): one attempt per complete() call, from many runner
// workers at once. Each endpoint (replica) keeps a pool of easy handles, so connections stay alive
// between requests; HTTP/2 is used where a TLS server offers it (ALPN), HTTP/1.1 otherwise.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/backend.h"
#include "harness/runner/openai_protocol.h"

struct curl_slist;  // libcurl

namespace kvgate::runner {

struct HttpBackendOptions {
  std::vector<std::string> endpoints;  // base URLs as the OpenAI SDKs take them: http://host:8000/v1
  std::string model;
  Api api = Api::chat;
  bool stream = false;                 // SSE: records time to first token and inter-token gaps
  std::string api_key;                 // sent as a Bearer token; never logged, recorded or reported
  std::string api_key_env;             // the variable it came from (recorded), "" for none
  bool insecure = false;               // skip TLS verification
  std::string ca_bundle;               // PEM file of the CA certificates to trust ("" = the system's)
  double timeout_s = 600.0;            // per attempt, from when the request is sent
  double connect_timeout_s = 30.0;
  std::size_t max_response_bytes = std::size_t{256} << 20;
  const std::atomic<bool>* cancel = nullptr;  // set: in-flight transfers abort ("cancelled")
  bool probe_metadata = true;          // describe() reads /v1/models, /version, ... from each endpoint
  double probe_timeout_s = 5.0;
};

class HttpBackend final : public Backend {
 public:
  explicit HttpBackend(HttpBackendOptions options);  // Error on a bad endpoint URL
  ~HttpBackend() override;
  HttpBackend(const HttpBackend&) = delete;
  HttpBackend& operator=(const HttpBackend&) = delete;

  Response complete(const Request& request) override;
  // {"backend":"openai","api","model","endpoints":[redacted],"stream","tls_verify","api_key_env",
  //  "engine":{...metadata per endpoint...}}
  nlohmann::json describe() override;

  struct GetResult {
    long status = 0;
    std::string body;
    std::string error;  // transport failure ("" when an HTTP answer came)
  };
  // A GET with the backend's TLS and auth settings (engine metadata).
  GetResult get(const std::string& url, double timeout_s);

  std::size_t endpoint_count() const;
  const std::vector<std::string>& redacted_endpoints() const { return redacted_; }

 private:
  struct Endpoint;
  struct Handle;
  std::unique_ptr<Handle> acquire(Endpoint& e);
  void release(Endpoint& e, std::unique_ptr<Handle> h);
  void configure(Handle& h, double timeout_s) const;
  std::string scrub(std::string s) const;

  HttpBackendOptions o_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::vector<std::string> redacted_;
  ::curl_slist* headers_ = nullptr;
  std::atomic<std::size_t> rotate_{0};
};

}  // namespace kvgate::runner
