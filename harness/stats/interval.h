// An interval [lo, hi]; for one-sided bounds the other side is the parameter's natural limit.
#pragma once

namespace kvgate::stats {

struct Interval {
  double lo = 0.0;
  double hi = 0.0;
};

}  // namespace kvgate::stats
