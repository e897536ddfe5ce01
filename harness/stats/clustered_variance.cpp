#include "harness/stats/clustered_variance.h"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace kvgate::stats {

namespace {
void check(std::size_t n, const char* who) {
  if (n == 0) throw std::invalid_argument(std::string(who) + ": no observations");
}
void check_same(std::size_t a, std::size_t b, const char* who) {
  if (a != b) throw std::invalid_argument(std::string(who) + ": spans differ in length");
  check(a, who);
}
double sample_variance(std::span<const double> s) {
  if (s.size() < 2) return 0.0;
  const double m = mean(s);
  double ss = 0.0;
  for (double v : s) ss += (v - m) * (v - m);
  return ss / static_cast<double>(s.size() - 1);
}
}  // namespace

double mean(std::span<const double> s) {
  check(s.size(), "mean");
  double sum = 0.0;
  for (double v : s) sum += v;
  return sum / static_cast<double>(s.size());
}

double se_clt(std::span<const double> s) {
  check(s.size(), "se_clt");
  return std::sqrt(sample_variance(s) / static_cast<double>(s.size()));
}

ClusteredSe se_clustered(std::span<const double> s, std::span<const std::uint32_t> cluster, std::size_t clusters) {
  check_same(s.size(), cluster.size(), "se_clustered");
  const double m = mean(s), n = static_cast<double>(s.size());
  std::vector<double> u(clusters, 0.0);
  std::vector<char> used(clusters, 0);
  double diag = 0.0;  // sum_i (s_i - mean)^2
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (cluster[i] >= clusters) throw std::invalid_argument("se_clustered: cluster id out of range");
    const double d = s[i] - m;
    u[cluster[i]] += d;
    used[cluster[i]] = 1;
    diag += d * d;
  }
  ClusteredSe r;
  double sum_u2 = 0.0;
  for (std::size_t c = 0; c < clusters; ++c) {
    sum_u2 += u[c] * u[c];
    r.clusters += used[c];
  }
  const double se_clt2 = sample_variance(s) / n;
  r.eq4 = std::sqrt(std::max(0.0, se_clt2 + (sum_u2 - diag) / (n * n)));
  r.sandwich = std::sqrt(sum_u2) / n;
  const double g = static_cast<double>(r.clusters);
  r.cr1 = r.clusters > 1 ? r.sandwich * std::sqrt(g / (g - 1)) : r.sandwich;
  return r;
}

MeanCovariance clustered_mean_covariance(std::span<const double> x, std::span<const double> y,
                                         std::span<const std::uint32_t> cluster, std::size_t clusters, bool cr1) {
  check_same(x.size(), y.size(), "clustered_mean_covariance");
  check_same(x.size(), cluster.size(), "clustered_mean_covariance");
  const double mx = mean(x), my = mean(y), n = static_cast<double>(x.size());
  std::vector<double> ux(clusters, 0.0), uy(clusters, 0.0);
  std::vector<char> used(clusters, 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint32_t c = cluster[i];
    if (c >= clusters) throw std::invalid_argument("clustered_mean_covariance: cluster id out of range");
    ux[c] += x[i] - mx;
    uy[c] += y[i] - my;
    used[c] = 1;
  }
  MeanCovariance r;
  for (std::size_t c = 0; c < clusters; ++c) {
    r.xx += ux[c] * ux[c];
    r.yy += uy[c] * uy[c];
    r.xy += ux[c] * uy[c];
    r.clusters += used[c];
  }
  const double g = static_cast<double>(r.clusters);
  const double k = (cr1 && r.clusters > 1 ? g / (g - 1) : 1.0) / (n * n);
  r.xx *= k;
  r.yy *= k;
  r.xy *= k;
  return r;
}

double se_paired(std::span<const double> a, std::span<const double> b) {
  check_same(a.size(), b.size(), "se_paired");
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return se_clt(d);
}

double se_unpaired(std::span<const double> a, std::span<const double> b) {
  const double sa = se_clt(a), sb = se_clt(b);
  return std::sqrt(sa * sa + sb * sb);
}

double correlation(std::span<const double> a, std::span<const double> b) {
  check_same(a.size(), b.size(), "correlation");
  const double ma = mean(a), mb = mean(b);
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa == 0.0 || sbb == 0.0) return 0.0;
  return sab / std::sqrt(saa * sbb);
}

double se_paired_from_parts(double se_a, double se_b, double corr) {
  return std::sqrt(std::max(0.0, se_a * se_a + se_b * se_b - 2 * se_a * se_b * corr));
}

}  // namespace kvgate::stats
