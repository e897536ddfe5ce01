// Standard normal helpers (Boost.Math): critical values and tails used by every interval.
#pragma once

namespace kvgate::stats {

// z with P(Z > z) = tail: z_upper(0.05) = 1.6448536..., z_upper(0.025) = 1.9599640...
// For a one-sided (1 - alpha) bound pass alpha; for a two-sided (1 - alpha) interval pass alpha / 2.
double z_upper(double tail);
double normal_cdf(double z);  // P(Z <= z)
double normal_sf(double z);   // P(Z > z), accurate in the far tail

}  // namespace kvgate::stats
