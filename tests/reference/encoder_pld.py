#!/usr/bin/env python3
"""Independent reference for the accountant of row mode's encoder (client/dp/privacy.c, encoder
mode): the pure DP scaling (scale_eps), one Gaussian release (the DP covariance, noise multiplier
z: mu = 1/z) and ONE PBM release of P coordinates (b trials, bias beta), for one party's row
(m = 1) or one row of every party (m = M).

RDP: exact PBM orders by direct summation (tests/reference/pbm_rdp.py), plus min(s, alpha s^2/2)
per party for the scaling and alpha m / (2 z^2) for the Gaussian, converted on the same grid.
PLD: the privacy loss of the composition under the first distribution of each dominating pair,
randomized response with s (m of them), the Gaussian N(0,1) against N(mu,1) (mu = sqrt(m)/z) and
Binomial(N = m P b, 1/2+beta) against Binomial(N, 1/2-beta); delta(eps) = E[(1 - e^(eps - L))_+]
with the Gaussian part integrated NUMERICALLY (mpmath.quad over its density, not the closed form
the C code uses), solved for eps by bisection. The values pinned in tests/unit/test_row_privacy.c
were printed by:
    python3 tests/reference/encoder_pld.py --b 2 --beta 0.42727 --P 1 --M 5 --scale-eps 2 --z 4
"""
import argparse
import os
import sys
from fractions import Fraction

import mpmath as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbm_rdp  # noqa: E402

mp.mp.dps = 30


def pld_eps(m, P, b, beta, s, z, delta):
    N = m * P * b
    p = mp.mpf(1) / 2 + beta
    q = 1 - p
    lam = mp.log(p / q)
    mu = mp.sqrt(m) / z
    pr = 1 / (1 + mp.exp(-s))
    terms = []
    for J in range(m + 1):
        pj = mp.binomial(m, J) * pr**J * (1 - pr) ** (m - J)
        for K in range(N + 1):
            pk = mp.binomial(N, K) * p**K * q ** (N - K)
            terms.append((pj * pk, (2 * J - m) * s + (2 * K - N) * lam))
    sd = mu

    def gexp(x):  # E[(1 - e^(x - G))_+], G ~ N(mu^2/2, mu^2), by quadrature
        g0 = x  # the integrand is 0 for G <= x
        f = lambda g: (1 - mp.exp(x - g)) * mp.npdf(g, mu * mu / 2, sd)
        return mp.quad(f, [g0, g0 + sd, g0 + 4 * sd, g0 + 12 * sd, mp.inf])

    def dlt(eps):
        return mp.fsum(w * gexp(eps - l) for w, l in terms)

    return pbm_rdp.smallest_eps(dlt, m * s + N * lam + 20 * mu + 10, delta, 45)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--b", type=int, default=2)
    ap.add_argument("--beta", default="0.42727")
    ap.add_argument("--P", type=int, default=1)
    ap.add_argument("--M", type=int, default=5)
    ap.add_argument("--scale-eps", default="2")
    ap.add_argument("--z", default="4")
    ap.add_argument("--delta", default="1e-5")
    o = ap.parse_args()
    beta = Fraction(o.beta)
    s, z, delta = mp.mpf(o.scale_eps), mp.mpf(o.z), mp.mpf(o.delta)
    p, q = Fraction(1, 2) + beta, Fraction(1, 2) - beta
    Pd, Qd = pbm_rdp.binom_pmf(o.b, p), pbm_rdp.binom_pmf(o.b, q)
    al = pbm_rdp.grid()
    coord = [pbm_rdp.renyi(Pd, Qd, a) for a in al]
    for name, m in (("row", 1), ("sample", o.M)):
        curve = []
        for a, c in zip(al, coord):
            am = mp.mpf(a.numerator) / a.denominator
            curve.append(m * (o.P * c + min(s, am * s * s / 2) + am / (2 * z * z)))
        e, a = pbm_rdp.to_eps(al, curve, delta, True)
        print(f"{name}: rdp eps={mp.nstr(e, 12)} alpha={mp.nstr(a, 6)}")
        print(f"{name}: pld eps={mp.nstr(pld_eps(m, o.P, o.b, mp.mpf(beta.numerator) / beta.denominator, s, z, delta), 12)}")


if __name__ == "__main__":
    main()
