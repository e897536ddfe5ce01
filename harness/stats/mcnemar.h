// McNemar's tests on the discordant pairs of a paired binary outcome (stats.md §1).
// b = regressions (reference pass, candidate fail), c = improvements (reference fail, candidate pass).
#pragma once
#include <cstdint>

namespace kvgate::stats {

struct McNemarResult {
  std::int64_t b = 0;
  std::int64_t c = 0;
  double exact = 1.0;        // two-sided exact conditional, min(1, 2 P(X <= min(b,c))) (statsmodels' default)
  double midp = 1.0;         // mid-p (Fagerland et al. 2013): better size than exact
  double chi2 = 0.0;         // (b-c)^2/(b+c), no continuity correction
  double chi2_p = 1.0;
  double chi2_cc = 0.0;      // Edwards: (|b-c|-1)^2/(b+c), applied only when b != c (R's convention)
  double chi2_cc_p = 1.0;
  double one_sided_exact = 1.0;  // P(X >= b), H1: more regressions than improvements
};

// b + c = 0 gives every p = 1 (no information: no flips). Throws std::invalid_argument on negatives.
McNemarResult mcnemar(std::int64_t b, std::int64_t c);

}  // namespace kvgate::stats
