#include "harness/compare/number_format.h"

#include <cmath>
#include <cstdio>

namespace kvgate::compare {

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(double v, int decimals) { return fixed(100 * v, decimals) + "%"; }

std::string p_value(double p) {
  if (p < 1e-16) return "<1e-16";
  char buf[64];
  std::snprintf(buf, sizeof buf, p >= 0.001 ? "%.3f" : "%.2g", p);
  return buf;
}

}  // namespace kvgate::compare
