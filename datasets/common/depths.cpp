#include "datasets/common/depths.h"

#include <algorithm>
#include <cmath>

#include "harness/core/error.h"

namespace kvgate {

DepthSpacing parse_depth_spacing(const std::string& text, const std::string& flag) {
  if (text == "linear") return DepthSpacing::linear;
  if (text == "sigmoid") return DepthSpacing::sigmoid;
  throw Error(flag + " " + text + ": unknown spacing: use linear or sigmoid");
}

std::vector<double> depth_grid(int n, DepthSpacing spacing, const std::string& flag) {
  if (n < 1) throw Error(flag + " " + std::to_string(n) + ": needs at least one depth");
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const double x = n == 1 ? 0.0 : 100.0 * i / (n - 1);  // numpy linspace(0, 100, n)
    if (spacing == DepthSpacing::linear) {
      out.push_back(std::nearbyint(x));  // numpy rounds half to even, as nearbyint does by default
    } else if (x == 0.0 || x == 100.0) {
      out.push_back(x);
    } else {
      const double v = 100.0 / (1.0 + std::exp(0.1 * (x - 50.0)));
      out.push_back(std::nearbyint(v * 1000.0) / 1000.0);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<double> parse_depths(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t used = 0;
    double v = -1;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || !(v >= 0 && v <= 100))
      throw Error(flag + " " + text + ": \"" + item + "\" is not a depth in percent from 0 to 100 (e.g. 0,25,50,75,100, or random)");
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace kvgate
