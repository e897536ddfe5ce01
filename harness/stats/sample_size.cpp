#include "harness/stats/sample_size.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "harness/stats/normal.h"
#include "harness/stats/tang.h"

namespace kvgate::stats {

namespace {
void check_levels(double alpha, double power) {
  if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument("sample size: alpha must be in (0, 1)");
  if (!(power > 0.0 && power < 1.0)) throw std::invalid_argument("sample size: power must be in (0, 1)");
}
double miller_variance(const MillerPower& p) {
  if (!(p.k_a >= 1.0 && p.k_b >= 1.0)) throw std::invalid_argument("miller: K must be >= 1");
  return p.omega2 + p.sigma2_a / p.k_a + p.sigma2_b / p.k_b;
}
}  // namespace

double sample_size_for_contrast(double contrast, double var_per_unit, double alpha, double power) {
  check_levels(alpha, power);
  if (!(var_per_unit >= 0.0)) throw std::invalid_argument("sample size: variance must be >= 0");
  if (contrast == 0.0) return std::numeric_limits<double>::infinity();
  const double z = z_upper(alpha) + z_upper(1 - power);
  return z * z * var_per_unit / (contrast * contrast);
}

double ni_sample_size(const NiPlan& plan) {
  const double pb = plan.p_ref, pc = plan.p_cand, t = plan.margin;
  if (!(pb > 0 && pb <= 1 && pc >= 0 && pc <= 1 && plan.p11 >= 0 && plan.p11 <= std::min(pb, pc)))
    throw std::invalid_argument("ni_sample_size: need 0 < p_ref <= 1, 0 <= p_cand <= 1, 0 <= p11 <= min(p_ref, p_cand)");
  const double e = pc - t * pb;
  if (e <= 0.0) return std::numeric_limits<double>::infinity();
  const double var = pc * (1 - pc) + t * t * pb * (1 - pb) - 2 * t * (plan.p11 - pc * pb);
  return sample_size_for_contrast(e, var, plan.alpha, plan.power);
}

double tang_sample_size(const NiPlan& plan) {
  const double pb = plan.p_ref, pc = plan.p_cand, t = plan.margin, p11 = plan.p11;
  if (!(pb > 0 && pb <= 1 && pc >= 0 && pc <= 1 && p11 >= 0 && p11 <= std::min(pb, pc)))
    throw std::invalid_argument("tang_sample_size: need 0 < p_ref <= 1, 0 <= p_cand <= 1, 0 <= p11 <= min(p_ref, p_cand)");
  check_levels(plan.alpha, plan.power);
  const double e = pc - t * pb;
  if (e <= 0.0) return std::numeric_limits<double>::infinity();
  const double var1 = pc * (1 - pc) + t * t * pb * (1 - pb) - 2 * t * (p11 - pc * pb);
  const double var0 = std::max(0.0, tang_null_variance(p11, pc - p11, pb - p11, t));
  const double z = z_upper(plan.alpha) * std::sqrt(var0) + z_upper(1 - plan.power) * std::sqrt(std::max(0.0, var1));
  return z * z / (e * e);
}

double miller_sample_size(const MillerPower& p, double delta) {
  check_levels(p.alpha, p.power);
  if (delta == 0.0) return std::numeric_limits<double>::infinity();
  const double z = z_upper(p.alpha / 2) + z_upper(1 - p.power);
  return z * z * miller_variance(p) / (delta * delta);
}

double miller_mde(const MillerPower& p, double n) {
  check_levels(p.alpha, p.power);
  if (!(n > 0.0)) throw std::invalid_argument("miller_mde: n must be > 0");
  return (z_upper(p.alpha / 2) + z_upper(1 - p.power)) * std::sqrt(miller_variance(p) / n);
}

}  // namespace kvgate::stats
