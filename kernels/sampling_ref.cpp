// kvgate's sampler (documented in ops_ref.h): greedy, or temperature with top-k and top-p, drawn
// with one uniform number per token so a seeded run repeats exactly on any machine.
#include <algorithm>
#include <cmath>

#include "kernels/ops_ref.h"

namespace kvgate::kernels {

int sample_ref(const float* logits, int n, const SamplerParams& p, double u, SamplerWorkspace& ws) {
  if (p.temperature <= 0.0) {
    int best = 0;
    for (int i = 1; i < n; ++i)
      if (logits[i] > logits[best]) best = i;  // ties keep the lower id
    return best;
  }
  // Candidates by logit, descending, ties by lower id, NaN after every number (a strict weak order,
  // which std::sort needs: NaN comparing false both ways was undefined behaviour); only the first
  // top_k need ordering.
  ws.order.resize(n);
  for (int i = 0; i < n; ++i) ws.order[i] = i;
  const auto before = [logits](int a, int b) {
    const bool na = std::isnan(logits[a]), nb = std::isnan(logits[b]);
    if (na || nb) return na == nb ? a < b : nb;
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  int kept = n;
  if (p.top_k > 0 && p.top_k < n) {
    kept = p.top_k;
    std::partial_sort(ws.order.begin(), ws.order.begin() + kept, ws.order.end(), before);
  } else {
    std::sort(ws.order.begin(), ws.order.end(), before);
  }
  ws.prob.resize(kept);
  const double top = logits[ws.order[0]];
  double sum = 0.0;
  for (int i = 0; i < kept; ++i) {
    const float l = logits[ws.order[i]];
    ws.prob[i] = std::isnan(l) ? 0.0 : std::exp((static_cast<double>(l) - top) / p.temperature);
    sum += ws.prob[i];
  }
  if (p.top_p < 1.0) {  // the shortest prefix whose probability reaches top_p
    double cum = 0.0;
    int i = 0;
    while (i < kept) {
      cum += ws.prob[i] / sum;
      ++i;
      if (cum >= p.top_p) break;
    }
    kept = i;
  }
  double kept_sum = 0.0;
  for (int i = 0; i < kept; ++i) kept_sum += ws.prob[i];
  const double target = u * kept_sum;
  double cum = 0.0;
  for (int i = 0; i < kept; ++i) {
    cum += ws.prob[i];
    if (cum > target) return ws.order[i];
  }
  return ws.order[kept - 1];  // rounding left the target at the very end
}

}  // namespace kvgate::kernels
