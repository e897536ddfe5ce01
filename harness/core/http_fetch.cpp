#include "harness/core/http_fetch.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"
#include "harness/core/log.h"
#include "harness/core/sha256.h"

namespace kvgate {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_body(char* p, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(p, size * n);
  return size * n;
}

size_t on_header(char* p, size_t size, size_t n, void* user) {
  std::string line(p, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(user))[name] = value;
  }
  return size * n;
}

}  // namespace

HttpFetchResult http_get(const std::string& url, const HttpFetchOptions& o) {
  global_init();
  if (o.insecure) log_warn(url + ": TLS verification is off (--insecure)");
  std::string last_error;
  for (int attempt = 0; attempt <= o.max_retries; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(250 << std::min(attempt, 6)));
    CURL* curl = curl_easy_init();
    if (!curl) throw Error("libcurl: cannot create a handle", kExitInternal);
    HttpFetchResult r;
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist* hdrs = nullptr;
    for (const auto& [k, v] : o.headers) hdrs = curl_slist_append(hdrs, (k + ": " + v).c_str());
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r.headers);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "kvgate");
    if (hdrs) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
    if (o.insecure) {
      curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(curl);
    if (rc != CURLE_OK) {
      last_error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
      continue;
    }
    if (r.status == 429 || r.status >= 500) {
      last_error = "HTTP " + std::to_string(r.status);
      continue;
    }
    return r;
  }
  throw Error(url + ": download failed (" + last_error + ") after " + std::to_string(o.max_retries + 1) +
              " attempts: check the network, or pass a local copy of the file instead");
}

std::string download_file(const std::string& url, const std::string& path,
                          const std::optional<std::string>& expected_sha256, const HttpFetchOptions& o) {
  HttpFetchResult r = http_get(url, o);
  if (r.status != 200) throw Error(url + ": HTTP " + std::to_string(r.status) + " (expected 200)");
  const std::string got = sha256_hex(r.body);
  if (expected_sha256 && got != *expected_sha256)
    throw Error(url + ": sha256 " + got + " does not match the expected " + *expected_sha256 +
                ": the download is corrupt or the file changed upstream; nothing was written to " + path);
  write_file_atomic(path, r.body);
  return got;
}

std::string cache_dir() {
  std::string dir;
  if (const char* k = std::getenv("KVGATE_CACHE"); k && *k) dir = k;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/kvgate";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/kvgate";
  else dir = ".kvgate-cache";
  make_directories(dir);
  return dir;
}

}  // namespace kvgate
