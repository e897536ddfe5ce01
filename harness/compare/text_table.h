// The readable summary `kvgate compare` prints on stdout: one table per pair (buckets, then the
// gated row per task), the verdict with its reasons, and every warning.
#pragma once
#include <string>

#include "harness/compare/comparison.h"

namespace kvgate::compare {

std::string format_text(const Comparison& c);

}  // namespace kvgate::compare
