#include "harness/stats/stratified_score.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "harness/stats/normal.h"
#include "harness/stats/score_interval.h"

namespace kvgate::stats {

std::vector<double> tilted_distribution(const std::vector<double>& counts, const std::vector<double>& a, double beta) {
  if (counts.size() != a.size() || counts.empty()) throw std::invalid_argument("tilted_distribution: one count per outcome, and an outcome");
  // In x = mu + B+ (B+ the smallest beta a_j of an observed outcome) the observed masses are
  // count_j / (x + d_j), d_j = beta a_j - B+ >= 0, and f(x) = their sum must be 1 (or less, when
  // an unobserved outcome takes the rest). f is convex and falls in x, so Newton's steps from a
  // point where f >= 1 rise monotonically to the root.
  double b_obs = std::numeric_limits<double>::infinity(), b_zero = b_obs;
  std::size_t zero = counts.size();
  for (std::size_t j = 0; j < counts.size(); ++j) {
    const double b = beta * a[j];
    if (counts[j] > 0.0) b_obs = std::min(b_obs, b);
    else if (b < b_zero) b_zero = b, zero = j;
  }
  if (!std::isfinite(b_obs)) throw std::invalid_argument("tilted_distribution: no outcome was observed");
  const auto f = [&](double x, double* slope) {
    double sum = 0.0, d = 0.0;
    for (std::size_t j = 0; j < counts.size(); ++j)
      if (counts[j] > 0.0) {
        const double r = 1.0 / (x + (beta * a[j] - b_obs));
        sum += counts[j] * r;
        d -= counts[j] * r * r;
      }
    if (slope) *slope = d;
    return sum;
  };
  std::vector<double> p(counts.size(), 0.0);
  double x = 0.0;
  if (zero < counts.size() && b_zero < b_obs) {
    x = b_obs - b_zero;  // mu >= -b_zero: the unobserved outcome's own condition
    const double mass = f(x, nullptr);
    if (mass <= 1.0) {
      for (std::size_t j = 0; j < counts.size(); ++j)
        if (counts[j] > 0.0) p[j] = counts[j] / (x + (beta * a[j] - b_obs));
      p[zero] = 1.0 - mass;
      return p;
    }
  } else {
    for (std::size_t j = 0; j < counts.size(); ++j)
      if (counts[j] > 0.0 && beta * a[j] == b_obs) x += counts[j];  // f(x) >= 1 here
  }
  for (int it = 0; it < 200; ++it) {
    double slope = 0.0;
    const double excess = f(x, &slope) - 1.0;
    if (!(excess > 0.0) || !(slope < 0.0)) break;
    const double next = x - excess / slope;
    if (!(next > x)) break;
    x = next;
  }
  double total = 0.0;
  for (std::size_t j = 0; j < counts.size(); ++j)
    if (counts[j] > 0.0) total += p[j] = counts[j] / (x + (beta * a[j] - b_obs));
  for (double& v : p) v /= total;
  return p;
}

StratifiedScore::StratifiedScore(const std::vector<PairedUnits>& strata) {
  if (strata.empty()) throw std::invalid_argument("stratified_score: no strata");
  for (std::size_t k = 0; k < strata.size(); ++k) {
    const PairedUnits& s = strata[k];
    const std::string where = "stratified_score: stratum " + std::to_string(k);
    if (s.cand.empty() || s.cand.size() != s.ref.size() || s.cand.size() != s.trials.size())
      throw std::invalid_argument(where + " needs one candidate total, reference total and trial count per unit, and a unit");
    if (!(s.weight > 0.0) || !std::isfinite(s.weight)) throw std::invalid_argument(where + ": the weight must be > 0");
    double trials = 0.0, largest = 0.0;
    for (std::size_t g = 0; g < s.trials.size(); ++g) {
      const double m = s.trials[g], slack = 1e-9 * m;
      if (!(m > 0.0) || !std::isfinite(m)) throw std::invalid_argument(where + ": a unit's trial count must be > 0");
      if (!(s.cand[g] >= -slack && s.cand[g] <= m + slack) || !(s.ref[g] >= -slack && s.ref[g] <= m + slack))
        throw std::invalid_argument(where + ": a unit's total lies outside [0, its trials]");
      trials += m;
      largest = std::max(largest, m);
    }
    const double units = static_cast<double>(s.trials.size()), scale = units / trials, hi = scale * largest;
    std::map<std::pair<double, double>, double> seen;
    for (std::size_t g = 0; g < s.cand.size(); ++g)
      seen[{std::clamp(scale * s.cand[g], 0.0, hi), std::clamp(scale * s.ref[g], 0.0, hi)}] += 1.0;
    for (const std::pair<double, double>& corner : {std::pair{0.0, 0.0}, {0.0, hi}, {hi, 0.0}, {hi, hi}}) seen.try_emplace(corner, 0.0);
    Stratum st{.weight = s.weight, .units = units, .outcomes = {}};
    for (const auto& [cb, count] : seen) {
      st.outcomes.push_back({cb.first, cb.second, count});
      mean_c_ += s.weight * cb.first * count / units;
      mean_b_ += s.weight * cb.second * count / units;
    }
    units_ += units;
    strata_.push_back(std::move(st));
  }
  if (!(mean_b_ > 0.0)) throw std::invalid_argument("stratified_score: the reference never scores, so the ratio is undefined");
}

double StratifiedScore::contrast(double t) const {
  double s = 0.0;
  for (const Stratum& st : strata_)
    for (const Outcome& o : st.outcomes) s += st.weight * o.count / st.units * (o.c - t * o.b);
  return s;
}

double StratifiedScore::variance(double t, const std::vector<std::vector<double>>& p) const {
  double v = 0.0;
  for (std::size_t k = 0; k < strata_.size(); ++k) {
    const Stratum& st = strata_[k];
    double m1 = 0.0, m2 = 0.0;
    for (std::size_t j = 0; j < st.outcomes.size(); ++j) {
      const double a = st.outcomes[j].c - t * st.outcomes[j].b;
      m1 += p[k][j] * a;
      m2 += p[k][j] * a * a;
    }
    v += st.weight * st.weight * std::max(0.0, m2 - m1 * m1) / st.units;
  }
  return v;
}

std::vector<std::vector<double>> StratifiedScore::restricted(double t) const {
  std::vector<std::vector<double>> counts(strata_.size()), a(strata_.size()), p(strata_.size());
  double a_max = 0.0, w_max = 0.0, n = 0.0;
  for (std::size_t k = 0; k < strata_.size(); ++k) {
    for (const Outcome& o : strata_[k].outcomes) {
      counts[k].push_back(o.count);
      a[k].push_back(o.c - t * o.b);
      a_max = std::max(a_max, std::abs(a[k].back()));
    }
    w_max = std::max(w_max, strata_[k].weight);
    n += strata_[k].units;
  }
  // H0's constraint as a function of the multiplier: sum_k w_k E_k[a] under each stratum tilted by
  // beta_k = lambda w_k. It falls in lambda, from the observed S(t) at 0 towards the weighted sum
  // of the smallest (largest) outcome as lambda -> +inf (-inf), which the extreme outcomes keep
  // below (above) 0.
  const auto constraint = [&](double lambda) {
    double g = 0.0;
    for (std::size_t k = 0; k < strata_.size(); ++k) {
      p[k] = tilted_distribution(counts[k], a[k], lambda * strata_[k].weight);
      for (std::size_t j = 0; j < p[k].size(); ++j) g += strata_[k].weight * p[k][j] * a[k][j];
    }
    return g;
  };
  // S(t) at rounding level (t at the estimate): no tilt. A root finder would see G flat there.
  const double s = constraint(0.0);
  if (std::abs(s) <= 1e-13 * a_max || !(a_max > 0.0)) return p;
  const double step = s > 0 ? n / (a_max * w_max) : -n / (a_max * w_max);
  double inner = 0.0, outer = step;
  for (int i = 0; i < 200 && (constraint(outer) > 0.0) == (s > 0.0); ++i) inner = outer, outer *= 4;
  const double lambda = s > 0 ? solve_decreasing(constraint, inner, outer) : solve_decreasing(constraint, outer, inner);
  constraint(lambda);
  return p;
}

double StratifiedScore::null_variance(double t) const { return variance(t, restricted(t)); }

double StratifiedScore::observed_variance(double t) const {
  std::vector<std::vector<double>> p(strata_.size());
  for (std::size_t k = 0; k < strata_.size(); ++k)
    for (const Outcome& o : strata_[k].outcomes) p[k].push_back(o.count / strata_[k].units);
  return variance(t, p);
}

double StratifiedScore::z(double t) const {
  if (!(t > 0.0)) throw std::invalid_argument("stratified_score: the ratio tested must be > 0");
  const double s = contrast(t);
  if (s == 0.0) return 0.0;
  const double v = null_variance(t);
  if (!(v > 0.0)) return s > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  return s / std::sqrt(v);
}

StratifiedScoreTest stratified_score_test(const StratifiedScore& s, double margin, double alpha) {
  StratifiedScoreTest r;
  r.ratio = s.ratio();
  r.z_margin = s.z(margin);
  r.p_value = normal_sf(r.z_margin);
  r.bounds = invert_score([&](double t) { return s.z(t); }, r.ratio, z_upper(alpha));
  r.null_variance = s.null_variance(margin);
  r.observed_variance = s.observed_variance(margin);
  return r;
}

}  // namespace kvgate::stats
