#!/usr/bin/python3
"""The step limit of sqn's per-block inverse Hessian on a two-class table (docs/LR.md "Why the
default step needs more than 45 rounds on Breast Cancer").

sqn with `--sqn-pairs local` (the default) steps w -= lr P g with P block-diagonal: each client's H
approximates the inverse of its own diagonal block A_bb of the objective's Hessian A, the head's
bias the same. Near the optimum that is a damped block-Jacobi iteration: an error along an
eigenvector of P A with eigenvalue lam shrinks by |1 - lr lam| per round, so the run is stable for
lr < 2 / lam_max and its slowest part shrinks by 1 - lr lam_min. trace(P A) / n = 1 and
lam_max <= number of blocks (M + 1) whatever the data: the data-free stable step is 2 / (M + 1),
bbvfl's default. This script computes lam_max and lam_min of P A (P = blockdiag(A_bb)^-1, the
limit of each block's H) at the optimum of the l2-regularised logistic loss of a CSV table
(label last, 0/1; columns standardised on all rows, the even contiguous split of bbvfl's
`--partition` default, the biases a block of their own) by Newton's method and power iteration,
and prints the stable steps and the per-round contraction at a few steps. It uses all rows (bbvfl
trains on 80%): its figures are the table's, not one seed's split.

Usage: tools/sqn_block_bound.py [--data data/breast_cancer.csv] [--clients 5] [--l2 1/455]
       [--steps 0.3333,0.4,0.5]"""
import argparse
import csv
import math
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def solve(a, b):
    """x with a x = b (Gauss-Jordan, partial pivoting; a small and positive definite here)"""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def load(path):
    with open(path) as f:
        rows = list(csv.reader(f))[1:]
    x = [[float(v) for v in r[:-1]] for r in rows]
    y = [float(r[-1]) for r in rows]
    if sorted(set(y)) != [0.0, 1.0]:
        raise SystemExit("%s: the label (last column) must be 0/1 (two classes)" % path)
    n, d = len(x), len(x[0])
    for j in range(d):
        mu = sum(r[j] for r in x) / n
        sd = math.sqrt(sum((r[j] - mu) ** 2 for r in x) / n) or 1.0
        for r in x:
            r[j] = (r[j] - mu) / sd
    for r in x:
        r.append(1.0)  # the bias
    return x, y, d


def grad_hess(x, y, w, l2, d):
    n, dim = len(x), len(w)
    g = [0.0] * dim
    h = [[0.0] * dim for _ in range(dim)]
    for xi, yi in zip(x, y):
        z = sum(a * b for a, b in zip(xi, w))
        p = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
        c = p * (1 - p) / n
        for i in range(dim):
            g[i] += (p - yi) * xi[i] / n
            ci = c * xi[i]
            hi = h[i]
            for j in range(dim):
                hi[j] += ci * xi[j]
    for i in range(d):  # no l2 on the bias
        g[i] += l2 * w[i]
        h[i][i] += l2
    return g, h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "breast_cancer.csv"))
    ap.add_argument("--clients", type=int, default=5)
    ap.add_argument("--l2", default="1/455")
    ap.add_argument("--steps", default="0.3333,0.4,0.45,0.5")
    a = ap.parse_args()
    num, _, den = a.l2.partition("/")
    l2 = float(num) / float(den) if den else float(num)
    x, y, d = load(a.data)
    M = a.clients
    if not 1 <= M <= d:
        raise SystemExit("--clients must be in 1..%d (one column each at least), got %d" % (d, M))
    w = [0.0] * (d + 1)
    for _ in range(30):  # Newton
        g, h = grad_hess(x, y, w, l2, d)
        step = solve(h, g)
        w = [a_ - b_ for a_, b_ in zip(w, step)]
        if math.sqrt(sum(v * v for v in step)) < 1e-10:
            break
    g, h = grad_hess(x, y, w, l2, d)
    base, extra = d // M, d % M
    blocks, c = [], 0
    for m in range(M):
        k = base + (m < extra)
        blocks.append(list(range(c, c + k)))
        c += k
    blocks.append([d])  # the head's bias

    def pa(v):  # P A v, P = blockdiag(A_bb)^-1
        av = [sum(hij * vj for hij, vj in zip(row, v)) for row in h]
        out = [0.0] * len(v)
        for b in blocks:
            r = solve([[h[i][j] for j in b] for i in b], [av[i] for i in b])
            for k, i in enumerate(b):
                out[i] = r[k]
        return out

    def power(f, v, iters):
        lam = 0.0
        for _ in range(iters):
            u = f(v)
            lam = math.sqrt(sum(t * t for t in u))
            v = [t / lam for t in u]
        return lam

    dim = d + 1
    lmax = power(pa, [1.0] * dim, 500)
    shift = lmax * 1.0001  # the top of (shift I - P A) is shift - lam_min
    lmin = shift - power(lambda v: [shift * vi - ui for vi, ui in zip(v, pa(v))],
                         [float((i * 7) % 5 - 2) for i in range(dim)], 5000)
    print("%s: %d rows, %d columns in %d blocks + the bias, l2 %g" % (os.path.basename(a.data), len(x), d, M, l2))
    print("eigenvalues of P A at the optimum: lam_max %.3f, lam_min %.4f (the data-free bound on lam_max: %d)" %
          (lmax, lmin, M + 1))
    print("stable step: lr < 2/lam_max = %.3f (data-free: 2/(M+1) = %.3f); best fixed step 2/(lam_min+lam_max) = %.3f" %
          (2 / lmax, 2 / (M + 1), 2 / (lmin + lmax)))
    print("| lr | contraction per round max|1 - lr lam| | rounds per e-fold of the error |")
    print("|---|---|---|")
    for s in a.steps.split(","):
        lr = float(s)
        q = max(abs(1 - lr * lmin), abs(1 - lr * lmax))
        print("| %g | %.4f | %s |" % (lr, q, "%.1f" % (-1 / math.log(q)) if q < 1 else "diverges"))


if __name__ == "__main__":
    main()
