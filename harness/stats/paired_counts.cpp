#include "harness/stats/paired_counts.h"

#include <stdexcept>
#include <string>

namespace kvgate::stats {

void check_counts(const PairedCounts& t, const char* who) {
  if (t.n11 < 0 || t.n_c < 0 || t.n_b < 0 || t.n00 < 0)
    throw std::invalid_argument(std::string(who) + ": counts must be >= 0");
  if (t.n() == 0) throw std::invalid_argument(std::string(who) + ": no pairs");
}

}  // namespace kvgate::stats
