#!/usr/bin/env python3
"""Independent high-precision recomputation (mpmath, 40 digits) of the test vectors in
the project's statistics reference (stats.md), for the constants in tests/stats*-test.cpp.

stats.md prints most values to 6 decimals; this script gives the digits beyond them so the tests can
hold kvgate's Boost.Math implementation to 1e-9 relative and, separately, check every printed value
to its last printed digit. Not run by CI (needs mpmath: `pip install mpmath`)."""
from mpmath import mp, mpf, sqrt, erfc, erfinv, exp, log, binomial, betainc, findroot, ncdf

mp.dps = 40


def z_upper(tail):
    return sqrt(2) * erfinv(1 - 2 * mpf(tail))


def sf(z):
    return erfc(z / sqrt(2)) / 2


def show(name, *vals):
    print(name, " ".join(mp.nstr(v, 17) for v in vals))


# ---- McNemar (§1)
def binom_cdf(k, n):
    return sum(binomial(n, i) for i in range(0, k + 1)) / mpf(2) ** n


def mcnemar(b, c):
    n = b + c
    k = min(b, c)
    exact = min(mpf(1), 2 * binom_cdf(k, n))
    pb = binomial(n, b) / mpf(2) ** n
    midp = 1 - pb / 2 if b == c else exact - pb
    x2 = mpf(b - c) ** 2 / n
    cc = 0 if b == c else abs(b - c) - 1
    x2cc = mpf(cc) ** 2 / n
    one = 1 - binom_cdf(b - 1, n) if b > 0 else mpf(1)
    return exact, midp, x2, erfc(sqrt(x2 / 2)), x2cc, erfc(sqrt(x2cc / 2)), one


for b, c in [(10, 1), (3, 0), (41, 20), (50, 25), (40, 20), (6, 16), (5, 5), (1, 0)]:
    show(f"mcnemar {b} {c}: exact midp x2 p x2cc pcc one", *mcnemar(b, c))


# ---- single proportions (§6)
def wilson(k, n, z):
    k, n = mpf(k), mpf(n)
    c = (k + z * z / 2) / (n + z * z)
    h = z / (n + z * z) * sqrt(k * (n - k) / n + z * z / 4)
    return (0 if k == 0 else c - h), (1 if k == n else c + h)


def wilson_cc(k, n, z):
    kk, nn = mpf(k), mpf(n)
    p, q = kk / nn, 1 - kk / nn
    c = (kk + z * z / 2) / (nn + z * z)
    d = 2 * (nn + z * z)
    lo = 0 if k == 0 else c - (1 + z * sqrt(z * z - 2 - 1 / nn + 4 * p * (nn * q + 1))) / d
    hi = 1 if k == n else c + (1 + z * sqrt(z * z + 2 - 1 / nn + 4 * p * (nn * q - 1))) / d
    return lo, hi


def beta_inv(a, b, prob):
    f = lambda x: betainc(a, b, 0, x, regularized=True) - prob
    lo, hi = mpf(0), mpf(1)
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def cp(k, n, a):
    lo = 0 if k == 0 else beta_inv(k, n - k + 1, a / 2)
    hi = 1 if k == n else beta_inv(k + 1, n - k, 1 - a / 2)
    return lo, hi


def jeffreys(k, n, a):
    lo = 0 if k == 0 else beta_inv(k + mpf(0.5), n - k + mpf(0.5), a / 2)
    hi = 1 if k == n else beta_inv(k + mpf(0.5), n - k + mpf(0.5), 1 - a / 2)
    return lo, hi


z975 = z_upper(mpf("0.025"))
z95 = z_upper(mpf("0.05"))
for k, n in [(7, 50), (13, 16), (0, 30), (780, 1000), (95, 100)]:
    show(f"prop {k}/{n}: cp wilson wilson_cc jeffreys", *cp(k, n, mpf("0.05")), *wilson(k, n, z975),
         *wilson_cc(k, n, z975), *jeffreys(k, n, mpf("0.05")))
show("cp one-sided lower 3/15", beta_inv(3, 13, mpf("0.05")))


# ---- Tang (§3.1): counts (n11, n_c, n_b, n00)
def tang_z(t, n11, nc, nb, n00):
    n = mpf(n11 + nc + nb + n00)
    s = (n11 + nc) - t * (n11 + nb)
    A = n * (1 + t)
    B = (n11 + nb) * t * t - (n11 + nc + 2 * nb)
    C = nb * (1 - t) * (n11 + nc + nb) / n
    q = (-B + sqrt(B * B - 4 * A * C)) / (2 * A)
    V = n * (1 + t) * q + (n11 + nc + nb) * (t - 1)
    return s / sqrt(V)


def tang_bounds(cnt, z):
    r = mpf(cnt[0] + cnt[1]) / (cnt[0] + cnt[2])
    lo = findroot(lambda t: tang_z(t, *cnt) - z, (r * mpf("0.5"), r * mpf("0.999999")), solver="anderson")
    hi = findroot(lambda t: tang_z(t, *cnt) + z, (r * mpf("1.000001"), r * 2), solver="anderson")
    return lo, hi


for cnt in [(90, 0, 0, 10), (90, 5, 0, 5), (90, 0, 5, 5), (760, 20, 40, 180), (150, 4, 8, 38)]:
    zm = tang_z(mpf("0.95"), *cnt)
    show(f"tang {cnt}: Z(0.95) p lcb95 ucb95(one-sided) lo95 hi95(two-sided)", zm, sf(zm), *tang_bounds(cnt, z95),
         *tang_bounds(cnt, z975))
cavo = (59, 6, 16, 80)
show("tang cavo two-sided 95", *tang_bounds(cavo, z975))


# ---- Wald log ratio, Bonett-Price (§3.2)
def wald_log(cnt, z):
    n11, nc, nb, n00 = cnt
    r = mpf(n11 + nc) / (n11 + nb)
    se = sqrt(mpf(nb + nc) / ((n11 + nc) * (n11 + nb)))
    return r * exp(-z * se), r * exp(z * se), se


def bonett_price(cnt, z):
    n11, nc, nb, n00 = cnt
    n1, n2, ns = mpf(n11 + nc), mpf(n11 + nb), mpf(n11 + nb + nc)
    A = sqrt((nb + nc + 2) / ((n1 + 1) * (n2 + 1)))
    B = sqrt((1 - (n1 + 1) / (ns + 2)) / (n1 + 1))
    C = sqrt((1 - (n2 + 1) / (ns + 2)) / (n2 + 1))
    zp = A / (B + C) * z
    l1, u1 = wilson(n1, ns, zp)
    l2, u2 = wilson(n2, ns, zp)
    return l1 / u2, u1 / l2


llm = (760, 20, 40, 180)
show("wald-log cavo two-sided", *wald_log(cavo, z975))
show("wald-log llm one-sided lcb, two-sided lo hi, se", wald_log(llm, z95)[0], *wald_log(llm, z975))
show("bonett-price cavo, llm", *bonett_price(cavo, z975), *bonett_price(llm, z975))


# ---- Fieller with population variances (§3.2), LLM example
def fieller(cnt, theta, z):
    n11, nc, nb, n00 = cnt
    n = mpf(sum(cnt))
    pc, pb, p11 = (n11 + nc) / n, (n11 + nb) / n, n11 / n
    vcc, vbb, vcb = pc * (1 - pc) / n, pb * (1 - pb) / n, (p11 - pc * pb) / n
    d = pc - theta * pb
    se = sqrt(vcc + theta ** 2 * vbb - 2 * theta * vcb)
    a, b, c = pb * pb - z * z * vbb, pc * pb - z * z * vcb, pc * pc - z * z * vcc
    lo = (b - sqrt(b * b - a * c)) / a
    return d, se, d / se, sf(d / se), lo


show("fieller llm: D se z p lcb", *fieller(llm, mpf("0.95"), z95))


# ---- differences (§3.3)
def newcombe(cnt, z):
    A, B, C, D = [mpf(v) for v in cnt]  # rows: arm1 (candidate) pass/fail; cols: arm2 pass/fail
    n = A + B + C + D
    p1, p2 = (A + B) / n, (A + C) / n
    l1, u1 = wilson(A + B, n, z)
    l2, u2 = wilson(A + C, n, z)
    det = A * D - B * C
    cadj = det - n / 2 if det > n / 2 else (det if det < 0 else 0)
    phi = cadj / sqrt((A + B) * (C + D) * (A + C) * (B + D))
    d = p1 - p2
    lo = d - sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    hi = d + sqrt((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    return d, lo, hi


def tango(cnt, z):
    n11, b, c, n00 = [mpf(v) for v in cnt]  # b: arm1-only passes, c: arm2-only passes
    n = n11 + b + c + n00

    def zf(d):
        w = -b - c + (2 * n - b + c) * d
        q = (sqrt(w * w + 8 * n * c * d * (1 - d)) - w) / (4 * n)
        return (b - c - n * d) / sqrt(n * (2 * q + d * (1 - d)))

    d = (b - c) / n
    lo = findroot(lambda x: zf(x) - z, (d - mpf("0.2"), d - mpf("1e-6")), solver="anderson")
    hi = findroot(lambda x: zf(x) + z, (d + mpf("1e-6"), d + mpf("0.2")), solver="anderson")
    return lo, hi


def wald_diff(cnt, z):
    n11, b, c, n00 = cnt
    n = mpf(sum(cnt))
    se = sqrt((b + c) - mpf(b - c) ** 2 / n) / n
    d = (b - c) / n
    return d - z * se, d + z * se


show("newcombe cavo (d lo hi)", *newcombe(cavo, z975))
show("newcombe altman (d lo hi)", *newcombe((14, 5, 0, 22), z975))
show("newcombe llm (d lo hi)", *newcombe(llm, z975))
show("tango cavo, llm", *tango(cavo, z975), *tango(llm, z975))
show("wald diff cavo", *wald_diff(cavo, z975))


# ---- sample size (§3.4) and Miller Eq.9/10 (§2)
def ni_n(pb, pc, p11, theta, alpha, power):
    e = pc - theta * pb
    v = pc * (1 - pc) + theta ** 2 * pb * (1 - pb) - 2 * theta * (p11 - pc * pb)
    return (z_upper(alpha) + z_upper(1 - power)) ** 2 * v / e ** 2


show("ni n alpha .05 .025", ni_n(mpf("0.8"), mpf("0.8"), mpf("0.77"), mpf("0.95"), mpf("0.05"), mpf("0.8")),
     ni_n(mpf("0.8"), mpf("0.8"), mpf("0.77"), mpf("0.95"), mpf("0.025"), mpf("0.8")))
zz = z_upper(mpf("0.025")) + z_upper(mpf("0.2"))
show("miller eq9 n", zz ** 2 * (mpf(1) / 9) / mpf("0.03") ** 2)
show("miller eq10 K=1 K=10", zz * sqrt((mpf(1) / 9 + mpf(1) / 3) / 198), zz * sqrt((mpf(1) / 9 + mpf(1) / 30) / 198))

# ---- Miller clustered toy, paired toy (§2)
s = [mpf(v) for v in [1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0]]
cl = [0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3]
n = len(s)
m = sum(s) / n
var = sum((v - m) ** 2 for v in s) / (n - 1)
se_clt = sqrt(var / n)
U = [sum(s[i] - m for i in range(n) if cl[i] == g) for g in range(4)]
diag = sum((v - m) ** 2 for v in s)
show("clustered: clt eq4 sandwich cr1", se_clt, sqrt(se_clt ** 2 + (sum(u * u for u in U) - diag) / n ** 2),
     sqrt(sum(u * u for u in U)) / n, sqrt(sum(u * u for u in U) * 4 / 3) / n)
A = [mpf(v) for v in [1, 1, 0, 1, 0, 1, 1, 0, 1, 1]]
B = [mpf(v) for v in [1, 0, 0, 1, 0, 1, 0, 0, 1, 1]]
d = [a - b for a, b in zip(A, B)]


def se(x):
    mm = sum(x) / len(x)
    return sqrt(sum((v - mm) ** 2 for v in x) / (len(x) - 1) / len(x))


ma, mb = sum(A) / 10, sum(B) / 10
corr = sum((a - ma) * (b - mb) for a, b in zip(A, B)) / sqrt(sum((a - ma) ** 2 for a in A) * sum((b - mb) ** 2 for b in B))
show("paired toy: se_paired se_unpaired corr", se(d), sqrt(se(A) ** 2 + se(B) ** 2), corr)


# ---- AUC (§4)
def auc(x, y, log2=False):
    import mpmath
    t = [mpmath.log(v, 2) if log2 else mpf(v) for v in x]
    return sum((t[k + 1] - t[k]) * (y[k] + y[k + 1]) / 2 for k in range(len(x) - 1)) / (t[-1] - t[0])


x8 = [8192 * 2 ** k for k in range(8)]
gem = [mpf(v) for v in ["98.7", "94.3", "89.0", "88.9", "84.1", "81.1", "72.7", "60.1"]]
gpt = [mpf(v) for v in ["87.6", "68.0", "70.4", "57.5", "55.5", "57.1", "55.6", "42.1"]]
show("context arena gemini @128k @1M, gpt-4.1 @128k @1M", auc(x8[:5], gem[:5]), auc(x8, gem), auc(x8[:5], gpt[:5]), auc(x8, gpt))
base = [mpf(v) for v in ["0.90", "0.85", "0.80", "0.70", "0.60"]]
cand = [mpf(v) for v in ["0.90", "0.84", "0.78", "0.66", "0.52"]]
show("toy linear b c ratio", auc(x8[:5], base), auc(x8[:5], cand), auc(x8[:5], cand) / auc(x8[:5], base))
show("toy log2 b c ratio", auc(x8[:5], base, True), auc(x8[:5], cand, True), auc(x8[:5], cand, True) / auc(x8[:5], base, True))


# ---- Tang score-test sample size [derived]: n = (z_a sigma0 + z_b sigma1)^2 / E[D]^2, sigma0^2 = V(theta0)/n
def tang_n(p11, pc_only, pb_only, theta, alpha, power):
    pb, pc = p11 + pb_only, p11 + pc_only
    e = pc - theta * pb
    var1 = pc * (1 - pc) + theta ** 2 * pb * (1 - pb) - 2 * theta * (p11 - pc * pb)
    A = 1 + theta
    B = pb * theta ** 2 - (p11 + pc_only + 2 * pb_only)
    C = pb_only * (1 - theta) * (p11 + pc_only + pb_only)
    q = (-B + sqrt(B * B - 4 * A * C)) / (2 * A)
    var0 = (1 + theta) * q + (p11 + pc_only + pb_only) * (theta - 1)
    return (z_upper(alpha) * sqrt(var0) + z_upper(1 - power) * sqrt(var1)) ** 2 / e ** 2, var0


show("tang n (0.77, 0.03, 0.03): n var0", *tang_n(mpf("0.77"), mpf("0.03"), mpf("0.03"), mpf("0.95"), mpf("0.05"), mpf("0.8")))


# ---- Fieller's variance floor (kvgate's own, harness/stats/variance_floor.h) [derived]
# Recomputed from the scores: CR1 clustered moments of the two means, the hidden-loss floor's
# moments (q from the z^2 - k pseudo-events left), the two Fieller sets and their union; beside it Tang's score bound (solved here from
# Tang's Z with findroot) and the exact zero-event bound alpha^(1/n) for comparison.
def moments_cr1(c, b, cl):
    n = len(c)
    mc, mb = sum(c) / n, sum(b) / n
    g = sorted(set(cl))
    uc = {k: mpf(0) for k in g}
    ub = {k: mpf(0) for k in g}
    tot = {k: mpf(0) for k in g}
    for ci, bi, k in zip(c, b, cl):
        uc[k] += ci - mc
        ub[k] += bi - mb
        tot[k] += bi
    dd = {k: mpf(0) for k in g}
    for ci, bi, k in zip(c, b, cl):
        dd[k] += ci - bi
    d2 = sum((dd[k] / n) ** 2 for k in g)
    d4 = sum((dd[k] / n) ** 4 for k in g)
    f = mpf(len(g)) / (len(g) - 1) if len(g) > 1 else mpf(1)
    vc = f * sum(uc[k] ** 2 for k in g) / n ** 2
    vb = f * sum(ub[k] ** 2 for k in g) / n ** 2
    cv = f * sum(uc[k] * ub[k] for k in g) / n ** 2
    return mc, mb, vc, vb, cv, sum(tot[k] ** 2 for k in g) / mpf(n) ** 2, d2, d4


def fieller_roots(mc, mb, vc, vb, cv, z):
    a, b, c = mb * mb - z * z * vb, mc * mb - z * z * cv, mc * mc - z * z * vc
    r = sqrt(max(0, b * b - a * c))
    return max(0, (b - r) / a), (b + r) / a


def floored(buckets, weights, alpha=mpf("0.05")):
    """buckets: (cand, ref, cluster) score lists; weights: AUC weights. Returns lcb, ucb, units, observed lcb."""
    z = z_upper(alpha)
    M = [moments_cr1(*bk) for bk in buckets]
    mc = sum(w * m[0] for w, m in zip(weights, M))
    mb = sum(w * m[1] for w, m in zip(weights, M))
    vc, vb, cv, U, d2 = (sum(w * w * m[i] for w, m in zip(weights, M)) for i in (2, 3, 4, 5, 6))
    d4 = sum(w ** 4 * m[7] for w, m in zip(weights, M))
    k = d2 * d2 / d4 if d4 > 0 else 0
    units = mb * mb / U
    q = max(0, z * z - k) / (units + z * z)
    obs = fieller_roots(mc, mb, vc, vb, cv, z)
    if q == 0:
        return obs[0], obs[1], units, obs[0]
    flo = fieller_roots(mc, mb, (1 - q) ** 2 * vb + q * (1 - q) * U, vb, (1 - q) * vb, z)
    return min(obs[0], flo[0]), max(obs[1], flo[1]), units, obs[0]


def tang_lcb_table(n11, nc, nb, n00, alpha=mpf("0.05")):
    n = n11 + nc + nb + n00

    def Z(t):
        A = n * (1 + t)
        B = (n11 + nb) * t * t - (n11 + nc + 2 * nb)
        C = nb * (1 - t) * (n11 + nc + nb) / mpf(n)
        q = (-B + sqrt(B * B - 4 * A * C)) / (2 * A)
        return ((n11 + nc) - t * (n11 + nb)) / sqrt(n * (1 + t) * q + (n11 + nc + nb) * (t - 1))

    r = mpf(n11 + nc) / (n11 + nb)
    return findroot(lambda t: Z(t) - z_upper(alpha), (r * mpf("0.5"), r * mpf("0.9999")), solver="anderson")


def binary(n11, nc, nb, n00, per_cluster=1):
    pat = [(1, 1)] * n11 + [(1, 0)] * nc + [(0, 1)] * nb + [(0, 0)] * n00
    return [mpf(c) for c, b in pat], [mpf(b) for c, b in pat], [i // per_cluster for i in range(len(pat))]


for n in (5, 30, 300):
    lo, hi, units, obs = floored([binary(n, 0, 0, 0)], [1])
    show(f"floor all-pass n={n}: lcb ucb units observed_lcb tang exact", lo, hi, units, obs, tang_lcb_table(n, 0, 0, 0),
         mpf("0.05") ** (mpf(1) / n))
for tab in ((90, 0, 0, 10), (30, 0, 0, 70), (29, 0, 1, 0), (29, 1, 0, 0), (28, 0, 2, 0), (28, 1, 1, 0), (27, 0, 3, 0), (760, 20, 40, 180)):
    lo, hi, units, obs = floored([binary(*tab)], [1])
    show(f"floor table {tab}: lcb ucb units observed_lcb tang", lo, hi, units, obs, tang_lcb_table(*tab))
for n1, n2 in ((20, 4), (20, 10), (12, 12), (150, 150)):
    lo, hi, units, obs = floored([binary(n1, 0, 0, 0), binary(n2, 0, 0, 0)], [mpf(1) / 2, mpf(1) / 2])
    show(f"floor AUC 4K/8K all-pass {n1}+{n2}: lcb ucb units", lo, hi, units)
lo, hi, units, obs = floored([binary(30, 0, 0, 0, per_cluster=5)], [1])
show("floor 30 all-pass in 6 clusters of 5: lcb units", lo, units)
half = [mpf("0.5")] * 30
lo, hi, units, obs = floored([(half, half, list(range(30)))], [1])
show("floor 30 identical fractional scores 0.5: lcb units", lo, units)


# ---- the stratified score bound (docs/gate-bound.md) where every trial passes on both sides:
# bucket k's restricted MLE loses q_k = max(0, 1 - n_k / (lam w_k)) of its units, with lam set by
# H0: sum_k w_k q_k = (1 - t) sum_k w_k; V(t) = sum_k w_k^2 q_k (1 - q_k) / n_k, S(t) = (1 - t) sum_k w_k.
def all_pass_score_z(t, strata):
    total = sum(w for w, n in strata)

    def excess(lam):
        return sum(w * max(0, 1 - n / (lam * w)) for w, n in strata) - (1 - t) * total

    lo, hi = mpf("1e-9"), mpf(1)
    while excess(hi) < 0:
        hi *= 2
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) < 0 else (lo, mid)
    lam = (lo + hi) / 2
    v = sum(w * w * q * (1 - q) / n for w, n in strata for q in [max(0, 1 - n / (lam * w))])
    return (1 - t) * total / sqrt(v)


def all_pass_score_lcb(strata, alpha="0.05"):
    lo, hi = mpf("0.3"), 1 - mpf("1e-12")
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if all_pass_score_z(mid, strata) > z_upper(alpha) else (lo, mid)
    return (lo + hi) / 2


for n1, n2 in ((20, 4), (150, 150)):
    strata = [(mpf(1) / 2, n1), (mpf(1) / 2, n2)]
    zm = all_pass_score_z(mpf("0.95"), strata)
    show(f"stratified score AUC 4K/8K all-pass {n1}+{n2}: lcb Z(0.95) trials_needed", all_pass_score_lcb(strata), zm,
         (n1 + n2) * (z_upper("0.05") / zm) ** 2)
