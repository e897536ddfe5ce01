// Plain HTTP(S) GETs and verified downloads over libcurl, for datasets and metadata (not the
// high-throughput driver, which has its own pool). TLS is verified; errors name the URL and say
// what to do when offline.
#pragma once
#include <map>
#include <optional>
#include <string>

namespace kvgate {

struct HttpFetchOptions {
  double timeout_s = 60.0;
  int max_retries = 3;  // for 429, 5xx and network errors, with backoff
  std::map<std::string, std::string> headers;
  bool insecure = false;  // skip TLS verification (warned)
};

struct HttpFetchResult {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
};

// GET url. Network failures after retries throw Error; any HTTP status is returned.
HttpFetchResult http_get(const std::string& url, const HttpFetchOptions& options = {});

// Downloads url to path atomically; with expected_sha256 set, a mismatch deletes nothing at path
// and throws. Returns the sha256 of what was written.
std::string download_file(const std::string& url, const std::string& path,
                          const std::optional<std::string>& expected_sha256, const HttpFetchOptions& options = {});

// $KVGATE_CACHE, else $XDG_CACHE_HOME/kvgate, else ~/.cache/kvgate (created on demand).
std::string cache_dir();

}  // namespace kvgate
