#include "harness/stats/mcnemar.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>

namespace kvgate::stats {

McNemarResult mcnemar(std::int64_t b, std::int64_t c) {
  if (b < 0 || c < 0) throw std::invalid_argument("mcnemar: counts must be >= 0");
  McNemarResult r;
  r.b = b;
  r.c = c;
  const std::int64_t nd = b + c;
  if (nd == 0) return r;  // no discordant pairs: every p is 1

  namespace bm = boost::math;
  using Policy = bm::policies::policy<bm::policies::promote_double<false>>;  // double is accurate enough, and faster
  const bm::binomial_distribution<double, Policy> x(static_cast<double>(nd), 0.5);
  const double k = static_cast<double>(std::min(b, c));
  // 2 P(X <= k) <= 1 automatically when b != c; the cap only matters for b == c.
  r.exact = std::min(1.0, 2.0 * bm::cdf(x, k));
  const double pb = bm::pdf(x, static_cast<double>(b));
  r.midp = b == c ? 1.0 - 0.5 * pb : r.exact - pb;
  r.one_sided_exact = b == 0 ? 1.0 : bm::cdf(bm::complement(x, static_cast<double>(b - 1)));

  const bm::chi_squared_distribution<double, Policy> chi1(1.0);
  const double diff = static_cast<double>(b - c);
  r.chi2 = diff * diff / static_cast<double>(nd);
  r.chi2_p = bm::cdf(bm::complement(chi1, r.chi2));
  const double cc = b == c ? 0.0 : std::abs(diff) - 1.0;
  r.chi2_cc = cc * cc / static_cast<double>(nd);
  r.chi2_cc_p = bm::cdf(bm::complement(chi1, r.chi2_cc));
  return r;
}

}  // namespace kvgate::stats
