#include "datasets/common/trial_ids.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "harness/core/error.h"

namespace kvgate {

std::string bucket_trial_id(const std::string& task, std::int64_t bucket, std::size_t index) {
  char idx[32];
  std::snprintf(idx, sizeof idx, "%04zu", index);
  return task + "/" + std::to_string(bucket) + "/" + idx;
}

void check_buckets(const std::vector<std::int64_t>& lengths, int per_bucket) {
  if (lengths.empty()) throw Error("--lengths: give at least one length, e.g. 4096,8192");
  std::set<std::int64_t> seen;
  for (std::int64_t l : lengths)
    if (!seen.insert(l).second)
      throw Error("--lengths: " + std::to_string(l) + " is given twice: each length is one bucket of trials");
  if (per_bucket < 1) throw Error("--per-bucket " + std::to_string(per_bucket) + ": must be at least 1");
}

double round_to(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::nearbyint(v * scale) / scale;
}

}  // namespace kvgate
