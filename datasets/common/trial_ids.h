// Stable trial ids for length-bucketed tasks: "<task>/<bucket>/<index>", the index zero-padded to
// four digits ("niah/32768/0007"), so ids sort and read the same in every run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvgate {

std::string bucket_trial_id(const std::string& task, std::int64_t bucket, std::size_t index);

// Checks a task's --lengths and --per-bucket: at least one length, no repeats (ids would clash),
// per-bucket at least 1. Errors name the flag.
void check_buckets(const std::vector<std::int64_t>& lengths, int per_bucket);

// Rounds to `decimals` places, for depths written to meta.
double round_to(double v, int decimals);

}  // namespace kvgate
