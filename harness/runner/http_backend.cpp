#include "harness/runner/http_backend.h"

#include <curl/curl.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>

#include "harness/core/error.h"
#include "harness/core/version.h"
#include "harness/runner/engine_metadata.h"
#include "harness/runner/retry_policy.h"
#include "harness/runner/sse_parser.h"
#include "harness/runner/url.h"

namespace kvgate::runner {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct HttpBackend::Handle {
  CURL* curl = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {0};
  ~Handle() {
    if (curl) curl_easy_cleanup(curl);
  }
};

struct HttpBackend::Endpoint {
  EndpointUrl url;
  std::string request_url;  // base + /chat/completions or /completions
  std::mutex mu;
  std::vector<std::unique_ptr<Handle>> idle;
  std::atomic<int> in_flight{0};
};

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i]))) return false;
  return true;
}

std::string header_value(std::string_view line, std::size_t name_len) {
  std::string_view v = line.substr(name_len);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  return std::string(v);
}

// The state of one attempt, shared with libcurl's callbacks.
struct Transfer {
  CURL* curl = nullptr;
  Api api = Api::chat;
  bool want_stream = false;
  std::size_t limit = 0;
  Clock::time_point t0;
  const std::atomic<bool>* cancel = nullptr;

  bool mode_known = false;
  bool sse = false;
  long status = 0;
  std::string body;
  bool too_large = false;
  SseParser parser;
  StreamAccumulator acc;
  std::optional<std::string> retry_after;
  std::string content_type;

  explicit Transfer(Api a) : acc(a) {}
};

size_t on_header(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(p, size * n);
  if (starts_with_ci(line, "HTTP/")) {  // a new response (after 100 Continue or a redirect)
    t->retry_after.reset();
    t->content_type.clear();
  } else if (starts_with_ci(line, "retry-after:")) {
    t->retry_after = header_value(line, 12);
  } else if (starts_with_ci(line, "content-type:")) {
    t->content_type = header_value(line, 13);
  }
  return size * n;
}

size_t on_body(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t len = size * n;
  if (!t->mode_known) {
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->status);
    // Some servers answer stream:true with one JSON body; parse that as a plain response.
    t->sse = t->want_stream && t->status == 200 && !starts_with_ci(t->content_type, "application/json");
    t->mode_known = true;
  }
  if (t->sse) {
    const double now = ms_since(t->t0);
    if (!t->parser.feed(std::string_view(p, len), [&](const SseEvent& ev) { t->acc.on_event(ev, now); })) {
      t->too_large = true;
      return 0;  // aborts the transfer: CURLE_WRITE_ERROR
    }
    return len;
  }
  if (t->body.size() + len > t->limit) {
    t->too_large = true;
    return 0;
  }
  t->body.append(p, len);
  return len;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return t->cancel && t->cancel->load(std::memory_order_relaxed) ? 1 : 0;
}

size_t discard_body(char* p, size_t size, size_t n, void* user) {
  auto* s = static_cast<std::string*>(user);
  if (s->size() + size * n > (std::size_t{4} << 20)) return 0;  // metadata bodies are small
  s->append(p, size * n);
  return size * n;
}

const char* hint_for_status(long status) {
  switch (status) {
    case 401:
    case 403: return " (check the API key: OPENAI_API_KEY or the variable named by --api-key-env)";
    case 404: return " (is --endpoint the base URL, e.g. http://host:8000/v1, and --model a model it serves?)";
    case 413: return " (the prompt is larger than the server accepts)";
    default: return "";
  }
}

}  // namespace

HttpBackend::HttpBackend(HttpBackendOptions options) : o_(std::move(options)) {
  global_init();
  if (o_.endpoints.empty()) throw Error("--endpoint: missing: pass the server's base URL, e.g. --endpoint http://localhost:8000/v1");
  if (o_.model.empty()) throw Error("--model: missing: pass the model name the server serves (see GET /v1/models)");
  for (const std::string& u : o_.endpoints) {
    auto e = std::make_unique<Endpoint>();
    e->url = parse_endpoint(u);
    e->request_url = join_path(e->url.base, api_path(o_.api));
    redacted_.push_back(e->url.redacted);
    endpoints_.push_back(std::move(e));
  }
  headers_ = curl_slist_append(headers_, "Content-Type: application/json");
  headers_ = curl_slist_append(headers_, o_.stream ? "Accept: text/event-stream" : "Accept: application/json");
  headers_ = curl_slist_append(headers_, "Expect:");  // no 100-continue round trip for long prompts
  if (!o_.api_key.empty()) headers_ = curl_slist_append(headers_, ("Authorization: Bearer " + o_.api_key).c_str());
}

HttpBackend::~HttpBackend() {
  endpoints_.clear();  // handles first: they point at the header list
  curl_slist_free_all(headers_);
}

std::size_t HttpBackend::endpoint_count() const { return endpoints_.size(); }

void HttpBackend::configure(Handle& h, double timeout_s) const {
  CURL* c = h.curl;
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h.errbuf);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers_);
  curl_easy_setopt(c, CURLOPT_USERAGENT, (std::string("kvgate/") + version()).c_str());
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);  // long generations through NATs and load balancers
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000.0));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(o_.connect_timeout_s, timeout_s) * 1000.0));
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!o_.ca_bundle.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, o_.ca_bundle.c_str());
  if (o_.insecure) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

std::unique_ptr<HttpBackend::Handle> HttpBackend::acquire(Endpoint& e) {
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (!e.idle.empty()) {
      std::unique_ptr<Handle> h = std::move(e.idle.back());
      e.idle.pop_back();
      return h;
    }
  }
  auto h = std::make_unique<Handle>();
  h->curl = curl_easy_init();
  if (!h->curl) throw Error("libcurl: cannot create a handle (out of memory?)", kExitInternal);
  configure(*h, o_.timeout_s);
  curl_easy_setopt(h->curl, CURLOPT_URL, e.request_url.c_str());
  curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h->curl, CURLOPT_NOPROGRESS, o_.cancel ? 0L : 1L);
  return h;
}

void HttpBackend::release(Endpoint& e, std::unique_ptr<Handle> h) {
  std::lock_guard<std::mutex> lock(e.mu);
  e.idle.push_back(std::move(h));
}

std::string HttpBackend::scrub(std::string s) const {
  if (o_.api_key.size() < 4) return s;  // a 1-3 character "key" would redact ordinary text
  for (std::size_t pos = s.find(o_.api_key); pos != std::string::npos; pos = s.find(o_.api_key, pos))
    s.replace(pos, o_.api_key.size(), "***");
  return s;
}

Response HttpBackend::complete(const Request& request) {
  Response out;
  if (!request.trial) throw Error("HttpBackend::complete: request without a trial", kExitInternal);
  const std::string body = build_request_body(*request.trial, request.sampling,
                                              BodyOptions{.api = o_.api, .model = o_.model, .stream = o_.stream});

  // The replica with the fewest requests in flight; ties rotate.
  const std::size_t n = endpoints_.size();
  const std::size_t start = rotate_.fetch_add(1, std::memory_order_relaxed);
  std::size_t pick = start % n;
  for (std::size_t k = 1; k < n; ++k) {
    const std::size_t i = (start + k) % n;
    if (endpoints_[i]->in_flight.load() < endpoints_[pick]->in_flight.load()) pick = i;
  }
  Endpoint& e = *endpoints_[pick];
  if (n > 1) out.details["endpoint"] = pick;

  std::unique_ptr<Handle> h = acquire(e);
  Transfer t(o_.api);
  t.curl = h->curl;
  t.api = o_.api;
  t.want_stream = o_.stream;
  t.limit = o_.max_response_bytes;
  t.cancel = o_.cancel;
  h->errbuf[0] = '\0';
  curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h->curl, CURLOPT_XFERINFODATA, &t);

  e.in_flight.fetch_add(1);
  t.t0 = Clock::now();
  const CURLcode rc = curl_easy_perform(h->curl);
  out.latency_ms = ms_since(t.t0);
  e.in_flight.fetch_sub(1);
  long status = 0;
  curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
  long http_version = 0;
  curl_easy_getinfo(h->curl, CURLINFO_HTTP_VERSION, &http_version);
  const std::string curl_message = h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc);
  // Detach the per-attempt pointers before the handle goes back to the pool.
  curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, static_cast<const char*>(nullptr));
  release(e, std::move(h));

  out.http_status = static_cast<int>(status);
  if (http_version == CURL_HTTP_VERSION_2_0) out.details["http_version"] = "2";
  auto fail = [&](const char* kind, const std::string& message, bool retryable) {
    out.error = scrub(message);
    out.error_kind = kind;
    out.retryable = retryable;
    return out;
  };
  auto retry_after = [&]() -> std::optional<double> {
    if (!t.retry_after) return std::nullopt;
    return parse_retry_after(*t.retry_after, static_cast<double>(std::time(nullptr)));
  };

  if (rc != CURLE_OK) {
    if (rc == CURLE_ABORTED_BY_CALLBACK) return fail("cancelled", "cancelled (kvgate is stopping)", false);
    if (rc == CURLE_WRITE_ERROR && t.too_large)
      return fail("too_large", "response larger than " + std::to_string(o_.max_response_bytes >> 20) + " MiB", false);
    if (rc == CURLE_OPERATION_TIMEDOUT)
      return fail("timeout", "no complete answer within --timeout " + std::to_string(static_cast<int>(o_.timeout_s)) + " s (" +
                                 curl_message + ")",
                  true);
    if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM)
      return fail("tls", "TLS verification failed: " + curl_message +
                             " (give the server a trusted certificate, pass its CA with --ca-bundle FILE, or --insecure)",
                  false);
    if (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_URL_MALFORMAT)
      return fail("connection", "bad endpoint URL: " + curl_message, false);
    // Connection refused or reset, a cut transfer (truncated body or stream), DNS: worth retrying.
    if (status == 429 || status >= 500) out.retry_after_s = retry_after();
    return fail("connection", "connection error: " + curl_message, true);
  }
  if (status == 200) {
    if (t.sse) {
      t.acc.finish(out);
      if (t.parser.has_partial_event() && !out.error && !t.acc.saw_done())
        out.details["stream_tail_bytes"] = true;  // ended mid-event after the finish_reason: harmless, noted
    } else {
      parse_response_body(t.body, o_.api, out);
    }
    if (out.error) {
      out.error = scrub(*out.error);
      return out;
    }
    out.text = scrub(std::move(out.text));
    return out;
  }
  const std::string message = "HTTP " + std::to_string(status) + ": " +
                              (t.sse ? std::string("(stream)") : server_error_message(t.body));
  if (status == 429) {
    out.retry_after_s = retry_after();
    return fail("http_429", message, true);
  }
  if (status >= 500) {
    out.retry_after_s = retry_after();
    return fail("http_5xx", message, true);
  }
  if (status == 408) return fail("timeout", message, true);
  return fail("http_4xx", message + hint_for_status(status), false);
}

HttpBackend::GetResult HttpBackend::get(const std::string& url, double timeout_s) {
  GetResult r;
  Handle h;
  h.curl = curl_easy_init();
  if (!h.curl) throw Error("libcurl: cannot create a handle (out of memory?)", kExitInternal);
  configure(h, timeout_s);
  curl_easy_setopt(h.curl, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h.curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h.curl, CURLOPT_WRITEFUNCTION, discard_body);
  curl_easy_setopt(h.curl, CURLOPT_WRITEDATA, &r.body);
  const CURLcode rc = curl_easy_perform(h.curl);
  curl_easy_getinfo(h.curl, CURLINFO_RESPONSE_CODE, &r.status);
  if (rc != CURLE_OK) r.error = scrub(h.errbuf[0] ? h.errbuf : curl_easy_strerror(rc));
  return r;
}

json HttpBackend::describe() {
  json d = {{"backend", "openai"},
            {"api", to_string(o_.api)},
            {"model", o_.model},
            {"endpoints", redacted_},
            {"stream", o_.stream},
            {"tls_verify", !o_.insecure},
            {"ca_bundle", o_.ca_bundle.empty() ? json(nullptr) : json(o_.ca_bundle)},
            {"api_key_env", o_.api_key.empty() ? json(nullptr) : json(o_.api_key_env)}};
  if (o_.probe_metadata) {
    std::vector<EndpointProbe> probes;
    for (const auto& e : endpoints_)
      probes.push_back(EndpointProbe{.base = e->url.base, .redacted = e->url.redacted});
    d["engine"] = probe_engines(
        probes, o_.model, [this](const std::string& url) {
          GetResult g = get(url, o_.probe_timeout_s);
          return ProbeAnswer{.status = g.status, .body = std::move(g.body), .error = std::move(g.error)};
        });
  }
  return d;
}

}  // namespace kvgate::runner
