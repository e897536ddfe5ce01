// How many trials a comparison needs, and what it can detect (stats.md §2 Eq.9/10, §3.4).
#pragma once

namespace kvgate::stats {

// Non-inferiority on R = p_c/p_b with margin theta0, one-sided alpha, for paired binary trials
// (stats.md §3.4 [derived]): n = (z_{1-alpha} + z_{power})^2 Var(D) / E[D]^2, D = Y_c - theta0 Y_b,
// Var(D) = p_c(1-p_c) + theta0^2 p_b(1-p_b) - 2 theta0 (p11 - p_c p_b). Returns the real n (round up);
// +infinity when E[D] <= 0 (NI cannot be shown at this truth).
struct NiPlan {
  double p_ref = 0.0;   // p_b
  double p_cand = 0.0;  // p_c
  double p11 = 0.0;     // P(both pass)
  double margin = 0.95;
  double alpha = 0.05;
  double power = 0.8;
};
double ni_sample_size(const NiPlan& plan);

// The same for the Tang score test the gate uses on binary single-sample trials. A score test
// standardizes with the variance under H0 (the restricted MLE at the margin), which is larger than
// Var(D) at the truth, so the formula above under-powers it (at its n = 222 the gate PASSes about
// 74% of the time, not 80%). This is n = (z_{1-alpha} sigma_0 + z_{power} sigma_1)^2 / E[D]^2 with
// sigma_0^2 = Tang's V(margin)/n evaluated at the true cell probabilities, sigma_1^2 = Var(D).
double tang_sample_size(const NiPlan& plan);

// The same from the contrast's moments: n = (z_{1-alpha} + z_{power})^2 var_per_unit / contrast^2,
// where var_per_unit is n * Var(contrast mean). +infinity when contrast == 0.
double sample_size_for_contrast(double contrast, double var_per_unit, double alpha, double power);

// Miller Eq.9: n = (z_{alpha/2} + z_{power})^2 (omega^2 + sigma_a^2/K_a + sigma_b^2/K_b) / delta^2
// (two-sided alpha on a paired difference delta; K = resamples per question).
struct MillerPower {
  double omega2 = 0.0;   // Var(x_A) + Var(x_B) - 2 Cov(x_A, x_B) of the question means
  double sigma2_a = 0.0; // E[within-question variance], model A
  double sigma2_b = 0.0;
  double k_a = 1.0;
  double k_b = 1.0;
  double alpha = 0.05;
  double power = 0.8;
};
double miller_sample_size(const MillerPower& p, double delta);
// Miller Eq.10: the minimum detectable effect delta at n questions.
double miller_mde(const MillerPower& p, double n);

}  // namespace kvgate::stats
