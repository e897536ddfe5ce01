#include "harness/runner/retry_policy.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace kvgate::runner {

double backoff_delay_s(const RetryPolicy& p, int retry, std::optional<double> retry_after_s, Rng& rng) {
  const int exponent = std::clamp(retry - 1, 0, 62);
  const double d = std::min(p.max_delay_s, p.base_delay_s * std::ldexp(1.0, exponent));
  double delay = d * 0.5 + rng.uniform() * d * 0.5;
  if (retry_after_s) delay = std::max(delay, std::min(*retry_after_s, p.max_retry_after_s));
  return std::max(0.0, delay);
}

std::optional<double> parse_retry_after(std::string_view value, double now_unix_s) {
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.remove_prefix(1);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.remove_suffix(1);
  if (value.empty() || value.size() > 64) return std::nullopt;
  const bool numeric = std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; });
  if (numeric) {
    try {
      std::size_t used = 0;
      const double s = std::stod(std::string(value), &used);
      if (used != value.size() || !std::isfinite(s)) return std::nullopt;
      return s;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  const std::string text(value);
  const time_t t = curl_getdate(text.c_str(), nullptr);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return std::max(0.0, static_cast<double>(t) - now_unix_s);
}

}  // namespace kvgate::runner
