// runner/retry_policy.h: exponential backoff with jitter, Retry-After parsing.
#include "tests/catch_compat.hpp"
#include "harness/runner/retry_policy.h"

using namespace kvgate::runner;

TEST_CASE("retry: backoff doubles per retry within [d/2, d] and stops at the cap", "[retry]") {
  RetryPolicy p{.max_retries = 10, .base_delay_s = 0.5, .max_delay_s = 4.0};
  kvgate::Rng rng(7);
  for (int retry = 1; retry <= 8; ++retry) {
    const double d = std::min(4.0, 0.5 * (1 << (retry - 1)));
    for (int k = 0; k < 200; ++k) {
      const double delay = backoff_delay_s(p, retry, std::nullopt, rng);
      CHECK(delay >= d / 2);
      CHECK(delay <= d);
    }
  }
}

TEST_CASE("retry: jitter spreads the delays (replicas do not retry in lockstep)", "[retry]") {
  RetryPolicy p{.base_delay_s = 1.0, .max_delay_s = 60};
  kvgate::Rng rng(1);
  double lo = 1e9, hi = 0;
  for (int k = 0; k < 500; ++k) {
    const double d = backoff_delay_s(p, 3, std::nullopt, rng);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  CHECK(hi - lo > 1.0);  // [2, 4] s, well spread
}

TEST_CASE("retry: Retry-After is a floor, capped by max_retry_after_s", "[retry]") {
  RetryPolicy p{.base_delay_s = 0.01, .max_delay_s = 0.02, .max_retry_after_s = 30};
  kvgate::Rng rng(3);
  CHECK(backoff_delay_s(p, 1, 2.5, rng) == kvtest::Approx(2.5));
  CHECK(backoff_delay_s(p, 1, 3600.0, rng) == kvtest::Approx(30));
  CHECK(backoff_delay_s(p, 1, 0.0, rng) <= 0.01);
}

TEST_CASE("retry: Retry-After as seconds, decimals, an HTTP-date, or garbage", "[retry]") {
  CHECK(parse_retry_after("120", 0).value() == 120);
  CHECK(parse_retry_after(" 0 ", 0).value() == 0);
  CHECK(parse_retry_after("0.25", 0).value() == kvtest::Approx(0.25));
  // Sun, 06 Nov 1994 08:49:37 GMT = 784111777
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777.0 - 10).value() == kvtest::Approx(10));
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777.0 + 10).value() == 0);  // in the past
  CHECK_FALSE(parse_retry_after("soon", 0));
  CHECK_FALSE(parse_retry_after("", 0));
  CHECK_FALSE(parse_retry_after("1.2.3", 0));
  CHECK_FALSE(parse_retry_after(std::string(100, '9'), 0));
}
