#!/usr/bin/env python3
"""Independent reference for the PBM accountant (client/dp/accountant.c).

Computes the Renyi divergence by direct summation over the binomial outcomes with exact
rational probabilities (fractions) and 60-digit arithmetic (mpmath), composes it, and converts
it to (epsilon, delta) over the same alpha grid. Masked mode: exact convolution of the
Poisson-binomial sums, worst case over the other clients' inputs on {-C, -C/2, 0, C/2, C}.
--pld adds the exact privacy-loss-distribution epsilon (hockey-stick divergence of the composed
binomials, 60-digit sums). The numbers pinned in tests/unit/test_dp_accountant.c were printed by:
    python3 tests/reference/pbm_rdp.py --b 16 --beta 0.2 --P 16 --M 5 --epochs 30 --delta 1e-5 [--pld]
"""
import argparse
import itertools
from fractions import Fraction

import mpmath as mp

mp.mp.dps = 60


def grid():
    g = [Fraction(i, 100) for i in range(101, 110)] + [Fraction(i, 10) for i in range(11, 110)] + [Fraction(i) for i in range(11, 64)]
    return g + [Fraction(128), Fraction(256), Fraction(512), Fraction(1024)]


def binom_pmf(n, p):
    from math import comb
    return [comb(n, k) * p**k * (1 - p)**(n - k) for k in range(n + 1)]


def conv(a, b):
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def renyi(P, Q, alpha):
    a = mp.mpf(alpha.numerator) / alpha.denominator
    s = mp.fsum(mp.mpf(p.numerator) / p.denominator * (mp.mpf(p.numerator) / p.denominator) ** (a - 1)
                * (mp.mpf(q.numerator) / q.denominator) ** (1 - a) for p, q in zip(P, Q))
    return mp.log(s) / (a - 1)


def to_eps(alphas, rdp, delta, tight):
    best = None
    for al, r in zip(alphas, rdp):
        a = mp.mpf(al.numerator) / al.denominator
        if tight:
            e = r + mp.log(1 - 1 / a) - (mp.log(delta) + mp.log(a)) / (a - 1)
        else:
            e = r + mp.log(1 / delta) / (a - 1)
        if best is None or e < best[0]:
            best = (e, a)
    return best


def pld_eps(N, p, q, delta):
    """Exact epsilon of N Bernoulli(p) trials against Bernoulli(q): the hockey-stick divergence
    delta(eps) = sum_K max(0, P(K) - e^eps Q(K)), K ~ Binomial(N, .), with 60-digit suffix sums
    of P and Q (no cancellation at that precision), solved for eps by bisection."""
    pm, qm = mp.mpf(p.numerator) / p.denominator, mp.mpf(q.numerator) / q.denominator
    lpm, lqm, lgn = mp.log(pm), mp.log(qm), mp.loggamma(N + 1)
    lc = [lgn - mp.loggamma(k + 1) - mp.loggamma(N - k + 1) for k in range(N + 1)]
    P = [mp.exp(lc[k] + k * lpm + (N - k) * lqm) for k in range(N + 1)]
    Q = [mp.exp(lc[k] + k * lqm + (N - k) * lpm) for k in range(N + 1)]
    SP, SQ = [mp.mpf(0)] * (N + 2), [mp.mpf(0)] * (N + 2)
    for k in range(N, -1, -1):
        SP[k], SQ[k] = SP[k + 1] + P[k], SQ[k + 1] + Q[k]
    lam = mp.log(pm / qm)

    def dlt(eps):
        kstar = int(mp.floor((eps / lam + N) / 2)) + 1  # smallest K whose loss (2K-N) lam exceeds eps
        kstar = max(0, kstar)
        return SP[kstar] - mp.exp(eps) * SQ[kstar] if kstar <= N else mp.mpf(0)

    return smallest_eps(dlt, N * lam, delta, 120)


def smallest_eps(dlt, hi, delta, steps):
    """The smallest eps in [0, hi] with dlt(eps) <= delta, for dlt non-increasing in eps (a
    hockey-stick divergence): 0 when dlt(0) <= delta, else the upper end of the bracket after
    `steps` bisections (so never below the true value). Shared with encoder_pld.py."""
    lo, hi = mp.mpf(0), mp.mpf(hi)
    if dlt(lo) <= delta:
        return lo
    for _ in range(steps):
        mid = (lo + hi) / 2
        if dlt(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def print_eps(name, alphas, curve, delta):
    """One line: the composed RDP curve's tight and standard epsilons and the tight one's order."""
    e, a = to_eps(alphas, curve, delta, True)
    s, _ = to_eps(alphas, curve, delta, False)
    print(f"{name}: eps_tight={mp.nstr(e, 17)} alpha={mp.nstr(a, 6)} eps_std={mp.nstr(s, 17)}")


def print_coord(name, alphas, rdp):
    """The per-coordinate RDP at the orders the C tests pin (2, 16, 1024)."""
    for a_show in (Fraction(2), Fraction(16), Fraction(1024)):
        print(f"{name} rdp alpha={a_show}: {mp.nstr(rdp[alphas.index(a_show)], 17)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--b", type=int, default=16)
    ap.add_argument("--beta", default="0.2")
    ap.add_argument("--P", type=int, default=16)
    ap.add_argument("--M", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--delta", default="1e-5")
    ap.add_argument("--masked", action="store_true")
    ap.add_argument("--pld", action="store_true", help="also the exact privacy-loss-distribution epsilons")
    o = ap.parse_args()
    beta = Fraction(o.beta)
    delta = mp.mpf(o.delta)
    p, q = Fraction(1, 2) + beta, Fraction(1, 2) - beta
    Pd, Qd = binom_pmf(o.b, p), binom_pmf(o.b, q)
    al = grid()
    coord = [renyi(Pd, Qd, a) for a in al]
    feat = [o.epochs * o.P * c for c in coord]
    samp = [o.epochs * o.M * o.P * c for c in coord]
    for name, curve in (("feature", feat), ("sample", samp)):
        print_eps(name, al, curve, delta)
    print_coord("coord", al, coord)
    if o.pld:
        for name, n in (("feature", o.epochs * o.P), ("sample", o.epochs * o.M * o.P)):
            print(f"pld {name}: eps={mp.nstr(pld_eps(n * o.b, p, q, delta), 17)}")
    if o.masked:
        levels = [Fraction(-1), Fraction(-1, 2), Fraction(0), Fraction(1, 2), Fraction(1)]
        worst = [mp.mpf(0)] * len(al)
        for conf in itertools.combinations_with_replacement(levels, o.M - 1):
            y = [Fraction(1)]
            for x in conf:
                y = conv(y, binom_pmf(o.b, Fraction(1, 2) + beta * x))
            sp, sq = conv(Pd, y), conv(Qd, y)
            for i, a in enumerate(al):
                worst[i] = max(worst[i], renyi(sp, sq, a))
        print_eps("masked feature", al, [o.epochs * o.P * w for w in worst], delta)
        print_coord("masked coord", al, worst)


if __name__ == "__main__":
    main()
