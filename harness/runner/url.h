// Endpoint URLs: validation, joining the API paths onto an OpenAI-style base URL, and the redacted
// form that may be written to run.json, results and logs (no credentials, no query values).
#pragma once
#include <string>

namespace kvgate::runner {

struct EndpointUrl {
  std::string base;      // as given, trailing slashes removed: "http://host:8000/v1"
  std::string scheme;    // "http" or "https"
  std::string host;      // "host" (brackets removed for IPv6)
  std::string redacted;  // base without user:password@ and with query values replaced by "***"
  bool loopback = false; // 127.0.0.0/8, ::1, localhost
};

// Parses and checks an --endpoint value (libcurl's URL parser); an Error names the flag and the fix.
EndpointUrl parse_endpoint(const std::string& url);

// base + "/chat/completions", "/completions", "/models" ...
std::string join_path(const std::string& base, const std::string& path);
// The server root: the base with a trailing "/v1" removed ("http://h:8000/v1" -> "http://h:8000"),
// where engines serve /version, /props, /server_info and /metrics.
std::string server_root(const std::string& base);
// Removes user:password@ and query values from any URL (best effort for messages).
std::string redact_url(const std::string& url);

}  // namespace kvgate::runner
