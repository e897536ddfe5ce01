// harness/stats: McNemar, single-proportion intervals, multiple-testing adjustments, normal quantiles
// (stats.md §1, §2, §5, §6).
#include <cmath>
#include <stdexcept>
#include <vector>

#include "harness/stats/mcnemar.h"
#include "harness/stats/multiplicity.h"
#include "harness/stats/normal.h"
#include "harness/stats/proportion_ci.h"
#include "tests/stats_vectors.h"

using namespace kvgate::stats;

TEST_CASE("normal quantiles match stats.md", "[stats]") {
  CHECK_VEC(z_upper(0.025), 1.959963984540054);
  CHECK_VEC(z_upper(0.05), 1.644853626951473);
  CHECK_VEC(z_upper(0.2), 0.8416212335729142);
  CHECK_VEC(normal_sf(1.959963984540054), 0.025);
  CHECK(normal_sf(INFINITY) == 0.0);
  CHECK(normal_cdf(-INFINITY) == 0.0);
  CHECK_THROWS_AS(z_upper(0.0), std::invalid_argument);
}

TEST_CASE("mcnemar: every row of the stats.md table", "[stats][mcnemar]") {
  struct Row {
    long b, c;
    double exact, midp, x2, p, x2cc, pcc, one_sided;
  };
  const Row rows[] = {
      // exact 0.01171875 (=24/2048), mid-p 0.00634765625, X2 7.363636, p 0.00665561, CC 5.818182 / 0.01586133, one 0.005859375
      {10, 1, 0.01171875, 0.00634765625, 7.3636363636363636, 0.0066556054829493843, 5.8181818181818182, 0.01586133273977302, 0.005859375},
      // 0.25, 0.125, 3, 0.08326452, 1.333333, 0.24821308, 0.125
      {3, 0, 0.25, 0.125, 3.0, 0.083264516663550402, 1.3333333333333333, 0.24821307898992358, 0.125},
      // 0.009853448, 0.007148734, 7.229508, 0.007171485, 6.557377, 0.01044502, 0.004926724
      {41, 20, 0.0098534481952592652, 0.0071487338331630667, 7.2295081967213115, 0.0071714850758018369, 6.5573770491803279,
       0.010445021384964229, 0.0049267240976296326},
      // 0.005228243, 0.003836236, 8.333333, 0.003892417, 7.68, 0.005583617, 0.002614122
      {50, 25, 0.0052282430040142826, 0.0038362357516146245, 8.3333333333333333, 0.0038924171227786295, 7.68,
       0.0055836168063787643, 0.0026141215020071413},
      // 0.01348929, 0.009853448, 6.666667, 0.009823275, 6.016667, 0.01417139, 0.006744647
      {40, 20, 0.01348929373119186, 0.0098534481952592652, 6.6666666666666667, 0.009823274507519248, 6.0166666666666667,
       0.01417138825401233, 0.00674464686559593},
      // Cavo et al. (contingencytables): 0.05247879, 0.03468966, 4.545455, 0.03300626, 3.681818, 0.05500883 (one-sided: —)
      {6, 16, 0.052478790283203125, 0.034689664840698242, 4.5454545454545455, 0.033006257661232528, 3.6818181818181818,
       0.055008833629265745, 0.99154973030090332},
      // 1, 0.876953125, 0, 1, CC 0 / p 1 (R's convention: no correction when b == c), 0.623046875
      {5, 5, 1.0, 0.876953125, 0.0, 1.0, 0.0, 1.0, 0.623046875},
      // 1, 0.5, 1, 0.3173105, 0, 1, 0.5
      {1, 0, 1.0, 0.5, 1.0, 0.3173105078629141, 0.0, 1.0, 0.5},
  };
  for (const Row& row : rows) {
    INFO("b=" << row.b << " c=" << row.c);
    const McNemarResult r = mcnemar(row.b, row.c);
    CHECK(r.b == row.b);
    CHECK(r.c == row.c);
    CHECK_VEC(r.exact, row.exact);
    CHECK_VEC(r.midp, row.midp);
    CHECK_VEC(r.chi2, row.x2);
    CHECK_VEC(r.chi2_p, row.p);
    CHECK_VEC(r.chi2_cc, row.x2cc);
    CHECK_VEC(r.chi2_cc_p, row.pcc);
    CHECK_VEC(r.one_sided_exact, row.one_sided);
  }
}

TEST_CASE("mcnemar: no discordant pairs means no information", "[stats][mcnemar]") {
  const McNemarResult r = mcnemar(0, 0);
  CHECK(r.exact == 1.0);
  CHECK(r.midp == 1.0);
  CHECK(r.chi2 == 0.0);
  CHECK(r.chi2_p == 1.0);
  CHECK(r.chi2_cc_p == 1.0);
  CHECK(r.one_sided_exact == 1.0);
  CHECK_THROWS_AS(mcnemar(-1, 3), std::invalid_argument);
}

TEST_CASE("mcnemar: exact p stays within [0, 1] and is symmetric in b, c", "[stats][mcnemar]") {
  for (long b = 0; b < 40; b += 3)
    for (long c = 0; c < 40; c += 5) {
      const McNemarResult r = mcnemar(b, c), s = mcnemar(c, b);
      CHECK(r.exact == s.exact);
      CHECK(r.exact <= 1.0);
      CHECK(r.midp <= r.exact);
      CHECK(r.midp > 0.0);
    }
}

TEST_CASE("single-proportion intervals: every row of the stats.md table (95%)", "[stats][proportion]") {
  struct Row {
    long k, n;
    double cp_lo, cp_hi, w_lo, w_hi, wcc_lo, wcc_hi, j_lo, j_hi;
  };
  const Row rows[] = {
      // CP 0.0581917003, 0.2673960025 (SciPy doc); Wilson 0.0695083, 0.2618619; CC 0.0627701, 0.2735638; Jeffreys 0.0648717, 0.2553250
      {7, 50, 0.058191700340372085, 0.26739600249700844, 0.069508334270162895, 0.26186193710585539, 0.06277008952621034,
       0.27356376220752481, 0.064871701150518495, 0.25532502815639167},
      // CP 0.5435435, 0.9595263; Wilson 0.5699112, 0.9340840; CC 0.5369234, 0.9502687; Jeffreys 0.5792148, 0.9441870
      {13, 16, 0.54354345376838824, 0.95952626609405412, 0.56991119038025857, 0.9340840092857186, 0.53692343968903246,
       0.95026874389199376, 0.57921482776429268, 0.94418701610999124},
      // 0, 0.1157033; 0, 0.1135134; 0, 0.1413205; 0, 0.0796782
      {0, 30, 0.0, 0.11570330822202781, 0.0, 0.11351339317396877, 0.0, 0.14132047968245161, 0.0, 0.079678173817259996},
      // 0.7530202, 0.8053200; 0.7532805, 0.8045765; 0.7527616, 0.8050538; 0.7535396, 0.8048423
      {780, 1000, 0.75302020763043951, 0.80531996066112494, 0.75328050863712572, 0.80457650661096341, 0.7527616405289874,
       0.80505375770412703, 0.75353962425611974, 0.80484232025731411},
      // 0.8871651, 0.9835681; 0.8882495, 0.9784563; 0.8817005, 0.9814474; 0.8938999, 0.9806682
      {95, 100, 0.88716508889453723, 0.98356812081794784, 0.88824953076808085, 0.97845632084563203, 0.8817005361309921,
       0.98144743627828234, 0.89389992611689701, 0.98066818801413326},
  };
  for (const Row& row : rows) {
    INFO(row.k << "/" << row.n);
    const Interval cp = clopper_pearson(row.k, row.n, 0.05), w = wilson(row.k, row.n, 0.05),
                   wcc = wilson_cc(row.k, row.n, 0.05), j = jeffreys(row.k, row.n, 0.05);
    CHECK_VEC(cp.lo, row.cp_lo);
    CHECK_VEC(cp.hi, row.cp_hi);
    CHECK_VEC(w.lo, row.w_lo);
    CHECK_VEC(w.hi, row.w_hi);
    CHECK_VEC(wcc.lo, row.wcc_lo);
    CHECK_VEC(wcc.hi, row.wcc_hi);
    CHECK_VEC(j.lo, row.j_lo);
    CHECK_VEC(j.hi, row.j_hi);
  }
}

TEST_CASE("single-proportion intervals: one-sided bounds and edges", "[stats][proportion]") {
  // SciPy doc: binomtest(3, 15, 0.1, 'greater').proportion_ci() -> 0.05684686759024681
  CHECK_VEC(clopper_pearson_lower(3, 15, 0.05), 0.0568468675902468);
  // 0/30: one-sided 95% upper bound 1 - 0.05^(1/30) = 0.0950339 ("rule of three")
  CHECK_VEC(clopper_pearson_upper(0, 30, 0.05), 1 - std::pow(0.05, 1.0 / 30));
  CHECK(wilson(30, 30, 0.05).hi == 1.0);
  CHECK(clopper_pearson(30, 30, 0.05).hi == 1.0);
  CHECK_THROWS_AS(wilson(3, 0, 0.05), std::invalid_argument);
  CHECK_THROWS_AS(clopper_pearson(5, 4, 0.05), std::invalid_argument);
  CHECK_THROWS_AS(wilson(1, 4, 1.5), std::invalid_argument);
}

TEST_CASE("multiple testing: Holm, Benjamini-Hochberg, Bonferroni (stats.md §5)", "[stats][multiplicity]") {
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  const auto h = holm(p), bh = benjamini_hochberg(p), bf = bonferroni(p);
  const double eh[] = {0.03, 0.06, 0.06, 0.02}, ebh[] = {0.02, 0.04, 0.04, 0.02}, ebf[] = {0.04, 0.16, 0.12, 0.02};
  for (int i = 0; i < 4; ++i) {
    CHECK_VEC(h[i], eh[i]);
    CHECK_VEC(bh[i], ebh[i]);
    CHECK_VEC(bf[i], ebf[i]);
  }
  // Holm rejects #1 and #4 at 0.05; BH rejects all.
  CHECK(h[0] <= 0.05);
  CHECK(h[3] <= 0.05);
  CHECK(h[1] > 0.05);
  CHECK(h[2] > 0.05);
  for (double v : bh) CHECK(v <= 0.05);
  CHECK(holm(std::vector<double>{}).empty());
  CHECK(holm(std::vector<double>{0.9, 0.9, 0.9})[0] == 1.0);  // capped at 1
  CHECK_THROWS_AS(holm(std::vector<double>{0.5, NAN}), std::invalid_argument);
}
