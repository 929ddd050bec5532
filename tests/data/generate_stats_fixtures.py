#!/usr/bin/python3
"""The statistics of the book's experiments (attn::stats) as SciPy computes them, and exactly.

Two references for every number. SciPy (Debian 13's python3-scipy, 1.15) is the tool a reader
would check with: stats.t.ppf, ttest_rel, ttest_ind and the noncentral t. But SciPy is not
exact everywhere: its t.ppf at 0.8 and 51 degrees of freedom is 1.3e-11 off, its noncentral t
about 1e-10 (the power of a test of no difference at level 0.05 comes out 0.04999999999543), and
Debian 12's SciPy 1.10 computes t.ppf to about 1e-9 only. So every quantile, interval, power and
smallest detectable effect is also computed exactly, with mpmath at 40 digits (Debian's
python3-mpmath): the tests hold the library to the exact numbers within 1e-12, and to SciPy's
within the accuracy this script measures for SciPy (it asserts 1e-9 and prints the largest gap).

tests/data/scipy_stats.txt holds, in the hexadecimal blocks of fixture_files.py:

- "runs x", "runs y", "runs z": three groups of numbers shaped like chapter 12's bits per byte
  (numpy's default_rng(45), means near 1.9, spreads near 0.014); x and y have six runs each
  (paired), z ten;
- "summary x": n, the mean, the sample spread (numpy's std with ddof=1);
- "pooled x y z": the pooled spread and its degrees of freedom;
- "t_quantile": rows of (p, df, scipy.stats.t.ppf(p, df), the exact quantile);
- "paired x y 0.95", "unpaired x z 0.95", "welch x z 0.99", "pooled x z 0.99375": a difference
  of means as estimate, standard error, degrees of freedom, confidence, low, high, t, p, and
  SciPy's low and high. The t and p of the first three are scipy.stats.ttest_rel's and
  ttest_ind's (equal_var True, then False), which equal the exact ones within 1e-12 (asserted);
  the interval is estimate -/+ q * se with q the exact quantile at 1/2 + confidence/2 (SciPy's
  ends: with stats.t.ppf). The last uses the spread pooled over x, y and z, with its degrees of
  freedom, as chapter 12 does over its nine groups;
- "contrast x y z (2 -1 -1) 0.95": the contrast 2 mean(x) - mean(y) - mean(z), its standard
  error sd_pooled sqrt(4/6 + 1/6 + 1/10), the spread pooled over x, y and z, as a difference;
- "against z: x y 0.95": x and y each against the baseline z, the spread pooled over the three,
  Bonferroni's confidence 1 - 0.05/2 for each: a row per change, as a difference;
- "power": rows of (effect, se, df, alpha, SciPy's power, the exact power): the two-sided t
  test's power from the noncentral t, P(T' > c) + P(T' < -c), c the quantile at 1 - alpha/2;
- "minimum detectable effect": rows of (se, df, alpha, target power, SciPy's effect, the exact
  effect): the effect whose power is the target (brentq on SciPy's power; findroot on the
  exact one);
- "design": rows of (changes, seeds per change, baseline seeds, family confidence, power, sd,
  SciPy's effect, the exact effect): the smallest effect of a design that compares k changes
  with one baseline, Bonferroni's alpha = (1 - family confidence)/k per comparison,
  se = sd sqrt(1/n_c + 1/n_b), df = k (n_c - 1) + (n_b - 1).

Run with Debian 13's python3-scipy and python3-mpmath:

    /usr/bin/python3 tests/data/generate_stats_fixtures.py          # verify
    /usr/bin/python3 tests/data/generate_stats_fixtures.py --write  # write after a change

Verifying compares every number with the committed file within 1e-13 (SciPy versions differ in
the last bits) and never writes.
"""
import pathlib
import sys

import numpy as np
import scipy
from scipy import optimize, stats

try:
    import mpmath
except ImportError:  # Debian's python3-mpmath; main() says so
    mpmath = None

from fixture_files import hex_block, parse_hex_blocks, read_hex_blocks, writing

HERE = pathlib.Path(__file__).resolve().parent
FIXTURE = HERE / "scipy_stats.txt"
TOLERANCE = 1e-13
SCIPY_ACCURACY = 1e-9  # relative: what SciPy is asserted to reach here
scipy_gap = [0.0]  # the largest relative gap seen between SciPy and the exact numbers

rng = np.random.default_rng(45)
x = rng.normal(1.90, 0.014, 6)
y = x - 0.01 + rng.normal(0.0, 0.01, 6)  # partners of x: a shared part and a part of their own
z = rng.normal(1.92, 0.014, 10)


def near_scipy(exact, scipy_value):
    """SciPy's number, after checking it against the exact one."""
    gap = abs(scipy_value - exact) / max(abs(exact), 1e-300)
    if abs(exact) < 1e-15:
        gap = abs(scipy_value - exact)
    assert gap <= SCIPY_ACCURACY, (exact, scipy_value)
    scipy_gap[0] = max(scipy_gap[0], gap)
    return scipy_value


# Student's t, exactly: T(x) = 1 - I(nu / (nu + x^2); nu/2, 1/2) / 2 for x > 0.
def t_cdf(x_, nu):
    x_, nu = mpmath.mpf(x_), mpmath.mpf(nu)
    tail = mpmath.betainc(nu / 2, mpmath.mpf(1) / 2, 0, nu / (nu + x_ * x_), regularized=True) / 2
    return 1 - tail if x_ > 0 else tail


def t_ppf(p, nu):
    if p == 0.5:
        return mpmath.mpf(0)
    return mpmath.findroot(lambda q: t_cdf(q, nu) - mpmath.mpf(p), mpmath.mpf(stats.t.ppf(p, nu)))


# The noncentral t, exactly: T' = (Z + delta) / sqrt(V / nu), V chi-squared with nu degrees of
# freedom, so P(T' <= t) is the chi-squared average of Phi(t sqrt(v / nu) - delta).
def nct_cdf(t, nu, delta):
    t, nu, delta = mpmath.mpf(t), mpmath.mpf(nu), mpmath.mpf(delta)
    density = lambda v: (v ** (nu / 2 - 1) * mpmath.exp(-v / 2) /
                         (2 ** (nu / 2) * mpmath.gamma(nu / 2)))
    return mpmath.quad(lambda v: mpmath.ncdf(t * mpmath.sqrt(v / nu) - delta) * density(v),
                       [0, nu / 4, nu / 2, nu, 2 * nu, 4 * nu, mpmath.inf])


def exact_power(effect, se, df, alpha):
    c = t_ppf(1 - alpha / 2, df)
    delta = mpmath.mpf(effect) / mpmath.mpf(se)
    return (1 - nct_cdf(c, df, delta)) + nct_cdf(-c, df, delta)


def difference(estimate, se, df, confidence):
    exact_reach = t_ppf(0.5 + confidence / 2.0, df) * mpmath.mpf(se)
    scipy_reach = stats.t.ppf(0.5 + confidence / 2.0, df) * se
    t = estimate / se
    p = 2.0 * stats.t.sf(abs(t), df)
    exact_p = 2 * (1 - t_cdf(abs(t), df))
    assert abs(p - exact_p) <= 1e-12 * exact_p, (p, exact_p)
    low, high = mpmath.mpf(estimate) - exact_reach, mpmath.mpf(estimate) + exact_reach
    return [estimate, se, df, confidence, float(low), float(high), t, p,
            near_scipy(float(low), estimate - scipy_reach),
            near_scipy(float(high), estimate + scipy_reach)]


def agrees(mine, scipy_result):
    assert abs(mine[6] - scipy_result.statistic) <= 1e-12 * abs(mine[6]), (mine, scipy_result)
    assert abs(mine[7] - scipy_result.pvalue) <= 1e-12 * mine[7], (mine, scipy_result)
    return mine


def paired(a, b, confidence):
    d = a - b
    n = len(d)
    mine = difference(d.mean(), d.std(ddof=1) / np.sqrt(n), n - 1, confidence)
    return agrees(mine, stats.ttest_rel(a, b))


def pooled(*groups):
    squares = sum((len(g) - 1) * g.var(ddof=1) for g in groups)
    df = sum(len(g) - 1 for g in groups)
    return np.sqrt(squares / df), df


def unpaired(a, b, confidence):
    sd, df = pooled(a, b)
    se = sd * np.sqrt(1 / len(a) + 1 / len(b))
    return agrees(difference(a.mean() - b.mean(), se, df, confidence), stats.ttest_ind(a, b))


def welch(a, b, confidence):
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    mine = difference(a.mean() - b.mean(), np.sqrt(va + vb), df, confidence)
    return agrees(mine, stats.ttest_ind(a, b, equal_var=False))


def power(effect, se, df, alpha):
    # The lower tail P(T' < -c) is read as the upper tail of the mirrored distribution,
    # P(-T' > c) with noncentrality -effect/se: SciPy 1.15's nct.cdf returns NaN far out in the
    # lower tail (at df 5, x -4, noncentrality 7, say), where nct.sf of the mirror is finite.
    c = stats.t.ppf(1 - alpha / 2, df)
    return stats.nct.sf(c, df, effect / se) + stats.nct.sf(c, df, -effect / se)


def minimum_detectable_effect(se, df, alpha, target):
    upper = 8 * se
    while power(upper, se, df, alpha) < target:
        upper *= 2
    found = optimize.brentq(lambda e: power(e, se, df, alpha) - target, 0.0, upper,
                            xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    exact = mpmath.findroot(lambda e: exact_power(e, se, df, alpha) - mpmath.mpf(target),
                            mpmath.mpf(found))
    return [near_scipy(float(exact), found), float(exact)]


def design_effect(changes, change_seeds, baseline_seeds, family, target, sd):
    se = sd * np.sqrt(1 / change_seeds + 1 / baseline_seeds)
    df = changes * (change_seeds - 1) + (baseline_seeds - 1)
    return minimum_detectable_effect(se, df, (1 - family) / changes, target)


def fixture():
    lines = []
    for name, runs in (("x", x), ("y", y), ("z", z)):
        lines += hex_block(f"runs {name}", runs)
    lines += hex_block("summary x", [len(x), x.mean(), x.std(ddof=1)])
    lines += hex_block("pooled x y z", list(pooled(x, y, z)))
    quantiles = [(0.975, 5), (0.975, 51), (1 - 0.05 / 16, 51), (1 - 0.05 / 16, 8.3), (0.8, 51),
                 (0.5, 3), (0.01, 2.5), (0.999999, 1)]
    lines += hex_block("t_quantile", [[p, df, near_scipy(float(t_ppf(p, df)), stats.t.ppf(p, df)),
                                       float(t_ppf(p, df))] for p, df in quantiles])
    lines += hex_block("paired x y 0.95", paired(x, y, 0.95))
    lines += hex_block("unpaired x z 0.95", unpaired(x, z, 0.95))
    lines += hex_block("welch x z 0.99", welch(x, z, 0.99))
    sd, df = pooled(x, y, z)
    se = sd * np.sqrt(1 / len(x) + 1 / len(z))
    lines += hex_block("pooled x z 0.99375", difference(x.mean() - z.mean(), se, df, 0.99375))
    weights = [2.0, -1.0, -1.0]
    estimate = sum(w * g.mean() for w, g in zip(weights, (x, y, z)))
    se = sd * np.sqrt(sum(w * w / len(g) for w, g in zip(weights, (x, y, z))))
    lines += hex_block("contrast x y z (2 -1 -1) 0.95", difference(estimate, se, df, 0.95))
    each = 1 - 0.05 / 2
    rows = [difference(g.mean() - z.mean(), sd * np.sqrt(1 / len(g) + 1 / len(z)), df, each)
            for g in (x, y)]
    lines += hex_block("against z: x y 0.95", rows)
    cases = [(0.02, 0.007, 51, 0.05 / 8), (0.03, 0.007, 51, 0.05 / 8), (-0.02, 0.01, 9, 0.05),
             (0.0, 0.01, 9, 0.05), (0.04, 0.01, 4, 0.01)]
    lines += hex_block("power", [[e, s, d, a, near_scipy(float(exact_power(e, s, d, a)),
                                                         power(e, s, d, a)),
                                  float(exact_power(e, s, d, a))] for e, s, d, a in cases])
    targets = [(0.007, 51, 0.05 / 8, 0.8), (0.01, 9, 0.05, 0.8), (0.0099, 5, 0.01, 0.9),
               (1.0, 200, 0.05, 0.5)]
    lines += hex_block("minimum detectable effect",
                       [[s, d, a, t, *minimum_detectable_effect(s, d, a, t)]
                        for s, d, a, t in targets])
    designs = [(8, 6, 12, 0.95, 0.8, 0.014), (8, 2, 2, 0.95, 0.8, 0.014),
               (4, 4, 8, 0.95, 0.8, 0.02), (1, 3, 3, 0.9, 0.5, 1.0)]
    lines += hex_block("design", [[k, nc, nb, c, p, s, *design_effect(k, nc, nb, c, p, s)]
                                  for k, nc, nb, c, p, s in designs])
    return "\n".join(lines) + "\n"


def main():
    major, minor = (int(part) for part in scipy.__version__.split(".")[:2])
    if (major, minor) < (1, 15) or mpmath is None:
        print(f"SciPy {scipy.__version__} (1.15 and later compute t.ppf to the last bits) "
              f"{'with' if mpmath else 'without'} mpmath: nothing checked; run this script with "
              "Debian 13's python3-scipy and python3-mpmath")
        return 0
    mpmath.mp.dps = 40
    text = fixture()
    print(f"SciPy's largest relative gap from the exact numbers: {scipy_gap[0]:.1e}")
    if writing():
        FIXTURE.write_text(text, encoding="utf-8", newline="\n")
        print(f"{FIXTURE.name}: written")
        return 0
    if not FIXTURE.exists():
        print(f"{FIXTURE.name} is missing; rerun with --write to make it")
        return 1
    old, new = read_hex_blocks(FIXTURE), parse_hex_blocks(text)
    same = old.keys() == new.keys() and all(
        old[k].shape == new[k].shape and np.allclose(old[k], new[k], rtol=TOLERANCE, atol=0)
        for k in old)
    if same:
        print(f"{FIXTURE.name}: SciPy agrees with the committed file within {TOLERANCE:g}")
        return 0
    for k in sorted(set(old) | set(new)):
        if k not in old or k not in new or not np.allclose(old[k], new[k], rtol=TOLERANCE, atol=0):
            print(f"{FIXTURE.name}: case {k} differs from what SciPy computes")
    print("rerun with --write to replace it")
    return 1


if __name__ == "__main__":
    sys.exit(main())
