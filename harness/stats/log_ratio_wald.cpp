#include "harness/stats/log_ratio_wald.h"

#include <cmath>
#include <stdexcept>

namespace kvgate::stats {

namespace {
LogRatioWald make(double ratio, double se_log, double z) {
  if (!(z > 0.0)) throw std::invalid_argument("log_ratio_wald: z must be > 0");
  return {ratio, se_log, {ratio * std::exp(-z * se_log), ratio * std::exp(z * se_log)}};
}
}  // namespace

LogRatioWald log_ratio_wald(const PairedCounts& t, double z) {
  check_counts(t, "log_ratio_wald");
  const double pc = static_cast<double>(t.candidate_passes()), pb = static_cast<double>(t.reference_passes());
  if (pc <= 0 || pb <= 0) throw std::invalid_argument("log_ratio_wald: both arms must pass at least once");
  return make(pc / pb, std::sqrt(static_cast<double>(t.n_b + t.n_c) / (pc * pb)), z);
}

LogRatioWald log_ratio_wald(const RatioMoments& m, double z) {
  if (!(m.mean_c > 0.0 && m.mean_b > 0.0)) throw std::invalid_argument("log_ratio_wald: both means must be > 0");
  const double v = m.var_c / (m.mean_c * m.mean_c) + m.var_b / (m.mean_b * m.mean_b) - 2 * m.cov / (m.mean_c * m.mean_b);
  return make(m.mean_c / m.mean_b, std::sqrt(std::max(0.0, v)), z);
}

}  // namespace kvgate::stats
