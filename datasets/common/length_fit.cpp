#include "datasets/common/length_fit.h"

#include <algorithm>
#include <cmath>

#include "harness/core/error.h"

namespace kvgate {

LengthFitSearch::LengthFitSearch(const LengthFitSpec& spec) : spec_(spec) {
  if (spec.target <= 0) throw Error("length fitting: target " + std::to_string(spec.target) + " must be positive");
  if (!(spec.tolerance >= 0 && spec.tolerance < 0.5))
    throw Error("length fitting: tolerance " + std::to_string(spec.tolerance) + " must be in [0, 0.5)");
  if (!(spec.bytes_per_token > 0)) throw Error("length fitting: bytes per token must be positive");
  if (spec.reserve < 0) throw Error("length fitting: reserve must not be negative");
  hi_ = spec.target - spec.reserve;
  lo_ = spec.target - static_cast<std::int64_t>(std::floor(static_cast<double>(spec.target) * spec.tolerance));
  if (hi_ < 1) throw Error("length fitting: target " + std::to_string(spec.target) + " leaves no tokens after a reserve of " + std::to_string(spec.reserve));
  lo_ = std::min(lo_, hi_);  // a tiny target with a reserve: the window is the one count left
  aim_ = lo_ + (hi_ - lo_ + 1) / 2;  // the middle of the window: room for surprises either way
  next_ = 0;                         // first: the fixed part alone
}

void LengthFitSearch::observe(const LengthProbe& p) {
  if (done_) return;
  probes_.push_back(p);
  const int idx = static_cast<int>(probes_.size()) - 1;
  if (p.tokens >= lo_ && p.tokens <= hi_) {
    done_ = found_ = true;
    return;
  }
  if (idx == 0 && p.tokens > hi_) {
    done_ = true;
    failure_ = "the input without any filler already has " + std::to_string(p.tokens) + " tokens, more than the target " +
               std::to_string(hi_);
    return;
  }
  const int side = p.tokens > hi_ ? 1 : -1;
  same_side_ = side == last_side_ ? same_side_ + 1 : 1;
  last_side_ = side;
  if (side < 0) {
    if (below_ < 0 || p.budget > probes_[below_].budget) below_ = idx;
    if (above_ >= 0 && probes_[above_].budget <= p.budget) above_ = -1;  // counts not monotone: re-bracket
  } else {
    if (above_ < 0 || p.budget < probes_[above_].budget) above_ = idx;
    if (below_ >= 0 && probes_[below_].budget >= p.budget) below_ = -1;
  }
  if (static_cast<int>(probes_.size()) >= spec_.max_counts) {
    done_ = true;
    failure_ = "no filler size gave a count in [" + std::to_string(lo_) + ", " + std::to_string(hi_) + "] after " +
               std::to_string(probes_.size()) + " counts";
    return;
  }
  plan_next();
}

void LengthFitSearch::plan_next() {
  // Body density (bytes per token) from the latest probe that has a body, else the guess.
  double density = spec_.bytes_per_token;
  const LengthProbe& empty = probes_.front();
  for (auto it = probes_.rbegin(); it != probes_.rend(); ++it) {
    if (it->body_bytes > empty.body_bytes && it->tokens > empty.tokens) {
      density = static_cast<double>(it->body_bytes - empty.body_bytes) / static_cast<double>(it->tokens - empty.tokens);
      break;
    }
  }
  if (below_ >= 0 && above_ >= 0) {
    const LengthProbe &b = probes_[below_], &a = probes_[above_];
    if (a.budget - b.budget <= 1) {
      done_ = true;
      failure_ = "the count jumps from " + std::to_string(b.tokens) + " to " + std::to_string(a.tokens) +
                 " tokens with one more byte of filler, past the window [" + std::to_string(lo_) + ", " +
                 std::to_string(hi_) + "]";
      return;
    }
    double x;
    if (same_side_ >= 3) {
      x = 0.5 * static_cast<double>(a.budget + b.budget);  // secant stalled: bisect
    } else {
      x = static_cast<double>(b.budget) + static_cast<double>(aim_ - b.tokens) * static_cast<double>(a.budget - b.budget) /
                                              static_cast<double>(a.tokens - b.tokens);
    }
    next_ = std::clamp(static_cast<std::int64_t>(std::llround(x)), b.budget + 1, a.budget - 1);
  } else if (below_ >= 0) {
    const LengthProbe& b = probes_[below_];
    double step = static_cast<double>(aim_ - b.tokens) * density;
    if (same_side_ >= 3) step *= std::ldexp(1.0, same_side_ - 2);  // still short: widen
    next_ = b.budget + std::max<std::int64_t>(1, std::llround(step));
  } else {
    const LengthProbe& a = probes_[above_];
    double step = static_cast<double>(a.tokens - aim_) * density;
    if (same_side_ >= 3) step *= std::ldexp(1.0, same_side_ - 2);
    next_ = std::max<std::int64_t>(0, a.budget - std::max<std::int64_t>(1, std::llround(step)));
  }
}

}  // namespace kvgate
