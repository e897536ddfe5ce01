// When and how long to wait before retrying a failed attempt: exponential backoff with jitter
// (kvgate::Rng), never shorter than the server's Retry-After.
#pragma once
#include <optional>
#include <string_view>

#include "harness/core/rng.h"

namespace kvgate::runner {

struct RetryPolicy {
  int max_retries = 5;           // retries after the first attempt
  double base_delay_s = 0.5;     // first backoff; doubles each retry
  double max_delay_s = 60.0;     // backoff cap
  double max_retry_after_s = 600.0;  // a longer Retry-After is capped (and the cap is logged)
};

// Seconds to wait before retry number `retry` (1 for the first retry): a delay d = min(max, base *
// 2^(retry-1)) drawn uniformly from [d/2, d] ("equal jitter": replicas do not retry in lockstep,
// and no retry comes sooner than half the backoff), and at least the Retry-After.
double backoff_delay_s(const RetryPolicy& policy, int retry, std::optional<double> retry_after_s, Rng& rng);

// A Retry-After header value: delay-seconds ("120", leniently "0.5") or an HTTP-date (relative to
// now_unix_s). Negative dates give 0; garbage gives nullopt.
std::optional<double> parse_retry_after(std::string_view value, double now_unix_s);

}  // namespace kvgate::runner
