#!/usr/bin/python3
"""Rounds to a 0.1% objective gap for LR with sqn, sgd and adam (docs/LR.md "Rounds to a gap").

Drives `bbvfl train --offchain --model lr --batch 0 --json` (NPQ unless --mechanism pbm) and reads
its `objective_per_round` (entry k: the regularised training objective after k training, curvature
and dot-product rounds). For each table and seed the optimum f* is the smallest objective any run
of that table and seed reached, a long run included (sqn local at lr 0.25 and sgd at lr 4, --long
rounds each); a run's figure is the first k with (f_k - f*) / f* <= 0.001 (None: not within its
rounds). Each method's step is tuned on a small grid: the step with the smallest median over the
seeds (a run that misses counts as infinite). Prints one table per data set and writes all runs
to --out/rounds.json.

Usage: tools/sqn_rounds.py [--bbvfl build/bbvfl] [--seeds 1,2,3,4,5] [--rounds 150] [--long 600]
       [--tables bc,wine,digits] [--methods sqn,sgd,adam,sqn-global] [--mechanism npq|pbm]
       [--out runs/sqn_rounds] [--fstar OLD/rounds.json]"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GRID = {
    "sgd": [1, 2, 4, 8, 16, 32],
    "adam": [0.01, 0.03, 0.1, 0.3, 1],
    "sqn": [0.25, 0.33, 0.5, 0.7, 1],
    "sqn-global": [0.25, 0.33, 0.5, 1],
}
GAP = 1e-3


def tables(out):
    digits = os.path.join(out, "digits.csv")
    if not os.path.exists(digits):
        subprocess.run([sys.executable, os.path.join(ROOT, "data", "convert_digits.py"), digits], check=True)
    # l2 = 1 / n_train (sklearn's LogisticRegression() objective); n_train = 80% of the rows
    return {
        "bc": (os.path.join(ROOT, "data", "breast_cancer.csv"), 1 / 455),
        "wine": (os.path.join(ROOT, "data", "wine.csv"), 1 / 142),
        "digits": (digits, 1 / 1437),
    }


def run(a, data, l2, method, lr, seed, rounds):
    opt = "sqn" if method.startswith("sqn") else method
    cmd = [a.bbvfl, "train", "--offchain", "--model", "lr", "--batch", "0", "--epochs", str(rounds), "--l2",
           repr(l2), "--mechanism", a.mechanism, "--seed", str(seed), "--data", data, "--optimizer", opt, "--lr",
           repr(lr), "--json", "--out", os.path.join(a.out, "run")]
    if method == "sqn-global":
        cmd += ["--sqn-pairs", "global"]
    p = subprocess.run(["nice", "-n", "10"] + cmd, capture_output=True, text=True)
    line = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not line:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    o = json.loads(line[-1])
    ob = [v if v is not None and math.isfinite(v) else float("inf") for v in o["objective_per_round"]]
    return {"cmd": " ".join(cmd), "objective": ob, "curvature_rounds": o.get("curvature_rounds", 0),
            "scalar_rounds": o.get("scalar_rounds", 0), "auroc": o["auroc"]}


def to_gap(ob, fstar):
    for k, v in enumerate(ob):
        if (v - fstar) / abs(fstar) <= GAP:
            return k
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bbvfl", default=os.path.join(ROOT, "build", "bbvfl"))
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--rounds", type=int, default=150)
    ap.add_argument("--long", type=int, default=600)
    ap.add_argument("--tables", default="bc,wine,digits")
    ap.add_argument("--methods", default="sqn,sgd,adam,sqn-global")
    ap.add_argument("--mechanism", default="npq")
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "sqn_rounds"))
    ap.add_argument("--grid", action="append", default=[],
                    help="METHOD=LR,LR,...: that method's step grid instead of the default")
    ap.add_argument("--fstar", help="rounds.json of an earlier run: its optima, lowered by this run's")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for g in a.grid:
        m, lrs = g.split("=", 1)
        GRID[m] = [float(v) for v in lrs.split(",")]
    seeds = [int(s) for s in a.seeds.split(",")]
    tabs = tables(a.out)
    allres = {}
    for tname in a.tables.split(","):
        data, l2 = tabs[tname]
        res = {}
        fstar = {}
        prev = json.load(open(a.fstar))[tname]["fstar"] if a.fstar else {}
        for s in seeds:
            if str(s) in prev:
                fstar[s] = prev[str(s)]
                continue
            longs = [run(a, data, l2, "sqn", 0.25, s, a.long), run(a, data, l2, "sgd", 4, s, a.long)]
            fstar[s] = min(min(r["objective"]) for r in longs)
        for m in a.methods.split(","):
            for lr in GRID[m]:
                for s in seeds:
                    r = run(a, data, l2, m, lr, s, a.rounds)
                    fstar[s] = min(fstar[s], min(r["objective"]))
                    res[(m, lr, s)] = r
        print("\n%s (l2 = 1/%d, %s, full batch, M = 5, rounds to a %.1f%% objective gap; median over seeds %s)" %
              (tname, round(1 / l2), a.mechanism, GAP * 100, a.seeds))
        print("| method | step grid: median rounds | best step | rounds per seed at the best | median |")
        print("|---|---|---|---|---|")
        summary = {}
        for m in a.methods.split(","):
            med = {}
            for lr in GRID[m]:
                ks = [to_gap(res[(m, lr, s)]["objective"], fstar[s]) for s in seeds]
                med[lr] = statistics.median([k if k is not None else math.inf for k in ks])
            best = min(GRID[m], key=lambda lr: (med[lr], -lr))
            ks = [to_gap(res[(m, best, s)]["objective"], fstar[s]) for s in seeds]
            fmt = lambda v: ">%d" % a.rounds if v is None or v == math.inf else "%g" % v
            print("| %s | %s | %g | %s | %s |" % (m, ", ".join("%g: %s" % (lr, fmt(med[lr])) for lr in GRID[m]), best,
                                                 " ".join(fmt(k) for k in ks), fmt(med[best])))
            summary[m] = {"best_lr": best, "median": None if med[best] == math.inf else med[best],
                          "per_seed": ks, "median_per_lr": {str(k): (None if v == math.inf else v) for k, v in med.items()}}
        allres[tname] = {"fstar": fstar, "summary": summary,
                         "runs": {"%s lr %g seed %d" % k: {"cmd": v["cmd"], "rounds_to_gap": to_gap(v["objective"], fstar[k[2]]),
                                                            "curvature_rounds": v["curvature_rounds"],
                                                            "scalar_rounds": v["scalar_rounds"]} for k, v in res.items()}}
        sys.stdout.flush()
    with open(os.path.join(a.out, "rounds.json"), "w") as f:
        json.dump(allres, f, indent=1)


if __name__ == "__main__":
    main()
