#include "harness/runner/url.h"

#include <curl/curl.h>

#include <memory>

#include "harness/core/error.h"

namespace kvgate::runner {

namespace {

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

std::string get_part(CURLU* u, CURLUPart part) {
  char* value = nullptr;
  if (curl_url_get(u, part, &value, 0) != CURLUE_OK || !value) return "";
  std::string s(value);
  curl_free(value);
  return s;
}

std::string strip_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string redact_query(const std::string& query) {
  // "a=1&key=secret" -> "a=***&key=***": names stay (they help), values may be credentials.
  std::string out;
  std::size_t pos = 0;
  while (pos <= query.size()) {
    std::size_t amp = query.find('&', pos);
    std::string item = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    std::size_t eq = item.find('=');
    out += (out.empty() ? "" : "&") + (eq == std::string::npos ? item : item.substr(0, eq) + "=***");
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return out;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  return host.rfind("127.", 0) == 0 && host.find_first_not_of("0123456789.") == std::string::npos;
}

}  // namespace

EndpointUrl parse_endpoint(const std::string& url) {
  const std::string hint = "pass the OpenAI-style base URL, e.g. --endpoint http://localhost:8000/v1";
  UrlHandle u(curl_url());
  if (!u) throw Error("libcurl: cannot allocate a URL handle", kExitInternal);
  if (url.find("://") == std::string::npos)
    throw Error("--endpoint " + redact_url(url) + ": no scheme: " + hint);
  if (curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
    throw Error("--endpoint " + redact_url(url) + ": not a valid URL: " + hint);
  EndpointUrl e;
  e.scheme = get_part(u.get(), CURLUPART_SCHEME);
  if (e.scheme != "http" && e.scheme != "https")
    throw Error("--endpoint " + redact_url(url) + ": scheme \"" + e.scheme + "\" is not http or https: " + hint);
  e.host = get_part(u.get(), CURLUPART_HOST);
  if (e.host.empty()) throw Error("--endpoint " + redact_url(url) + ": no host: " + hint);
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') e.host = e.host.substr(1, e.host.size() - 2);
  const std::string path = strip_trailing_slashes(get_part(u.get(), CURLUPART_PATH));
  for (const char* api_path : {"/chat/completions", "/completions"})
    if (ends_with(path, api_path))
      throw Error("--endpoint " + redact_url(url) + ": ends with " + api_path +
                  "; kvgate appends the API path itself: pass the base URL, e.g. " +
                  redact_url(url.substr(0, url.rfind(api_path))));
  if (!get_part(u.get(), CURLUPART_FRAGMENT).empty())
    throw Error("--endpoint " + redact_url(url) + ": has a #fragment: " + hint);
  e.base = strip_trailing_slashes(url);
  e.redacted = redact_url(e.base);
  e.loopback = is_loopback(e.host);
  return e;
}

std::string join_path(const std::string& base, const std::string& path) {
  // A query string (rare, e.g. ?api-version=) stays at the end.
  const std::size_t q = base.find('?');
  const std::string head = strip_trailing_slashes(base.substr(0, q));
  const std::string tail = q == std::string::npos ? "" : base.substr(q);
  return head + path + tail;
}

std::string server_root(const std::string& base) {
  std::string head = strip_trailing_slashes(base.substr(0, base.find('?')));
  if (ends_with(head, "/v1")) head.resize(head.size() - 3);
  return head;
}

std::string redact_url(const std::string& url) {
  std::string s = url;
  const std::size_t scheme_end = s.find("://");
  const std::size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const std::size_t path_start = s.find_first_of("/?#", host_start);
  const std::size_t at = s.rfind('@', path_start == std::string::npos ? std::string::npos : path_start);
  if (at != std::string::npos && at >= host_start) s = s.substr(0, host_start) + "***@" + s.substr(at + 1);
  const std::size_t q = s.find('?');
  if (q != std::string::npos) {
    const std::size_t hash = s.find('#', q);
    s = s.substr(0, q + 1) + redact_query(s.substr(q + 1, hash == std::string::npos ? std::string::npos : hash - q - 1)) +
        (hash == std::string::npos ? "" : s.substr(hash));
  }
  return s;
}

}  // namespace kvgate::runner
