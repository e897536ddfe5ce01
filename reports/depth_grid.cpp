#include "reports/depth_grid.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "reports/markup.h"

namespace kvgate::reports {

std::optional<double> result_depth(const ResultRecord& r) {
  if (!r.grade.is_object()) return std::nullopt;
  const auto d = r.grade.find("details");
  if (d == r.grade.end() || !d->is_object()) return std::nullopt;
  const auto v = d->find("depth");
  if (v == d->end() || !v->is_number()) return std::nullopt;
  const double x = v->get<double>();
  return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}

DepthGrid depth_grid(const std::vector<const RunDir*>& runs, const std::string& task) {
  DepthGrid g;
  std::vector<double> depths;
  std::vector<std::int64_t> buckets;
  for (const RunDir* run : runs)
    for (const ResultRecord& r : run->results.records) {
      if (r.task != task) continue;
      if (const auto d = result_depth(r)) depths.push_back(std::round(*d * 1000) / 1000);
      buckets.push_back(r.bucket);
    }
  if (depths.empty()) return g;
  std::sort(depths.begin(), depths.end());
  depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  g.buckets = buckets;

  const bool exact = depths.size() <= 12;
  std::map<double, std::size_t> exact_row;
  if (exact) {
    for (double d : depths) {
      exact_row[d] = g.row_labels.size();
      g.row_labels.push_back(num(d, 1) + "%");
    }
  } else {
    for (int i = 0; i < 10; ++i) g.row_labels.push_back(std::to_string(10 * i) + "\u2013" + std::to_string(10 * i + 10) + "%");
  }
  const auto row_of = [&](double d) -> std::size_t {
    if (exact) return exact_row.at(std::round(d * 1000) / 1000);
    return static_cast<std::size_t>(std::clamp(static_cast<int>(std::floor(d / 10.0)), 0, 9));
  };
  const std::size_t cols = buckets.size(), cells = g.row_labels.size() * cols;
  for (const RunDir* run : runs) {
    std::vector<double> sum(cells, 0.0);
    DepthGrid::Cells c{.mean = std::vector<std::optional<double>>(cells), .results = std::vector<std::size_t>(cells, 0)};
    for (const ResultRecord& r : run->results.records) {
      if (r.task != task) continue;
      const auto d = result_depth(r);
      if (!d) continue;
      const std::size_t col = static_cast<std::size_t>(std::lower_bound(buckets.begin(), buckets.end(), r.bucket) - buckets.begin());
      const std::size_t i = row_of(*d) * cols + col;
      sum[i] += r.error ? 0.0 : r.score;
      ++c.results[i];
    }
    for (std::size_t i = 0; i < cells; ++i)
      if (c.results[i] > 0) c.mean[i] = sum[i] / static_cast<double>(c.results[i]);
    g.runs.push_back(std::move(c));
  }
  return g;
}

}  // namespace kvgate::reports
