#!/usr/bin/python3
"""Centralised logistic regression on the pooled columns: the reference for `--model lr`.

What a single party holding every column would fit: scikit-learn's LogisticRegression on the
whole table, on the train/test split of a bbvfl run (its test_rows.csv: the test rows, 0-based
data rows of the CSV; every other row trains), each column standardised with the training rows'
mean and population standard deviation (as bbvfl does, client/ml/data.c). Binary tables: the
logistic loss; more classes: the multinomial (softmax) model. The L2 strength is sklearn's C
(default 1.0; bbvfl's --l2 1/(C n_train) is the same objective).

Prints one JSON object: auroc (binary; macro one-vs-rest for more classes, as bbvfl's metrics),
loss (mean log loss on the test rows), accuracy, n_train, n_test, C, l2 (the matching --l2).
"""
import argparse
import csv
import json
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score


def load(path, label):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    li = head.index(label) if label else len(head) - 1
    x = np.array([[float(v) for j, v in enumerate(r) if j != li] for r in body], dtype=np.float64)
    ylab = [r[li] for r in body]
    classes = sorted(set(ylab), key=lambda v: float(v))
    y = np.array([classes.index(v) for v in ylab])
    return x, y, len(classes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="the CSV table bbvfl trained on")
    ap.add_argument("--test-rows", required=True, help="test_rows.csv of the bbvfl run")
    ap.add_argument("--label", default=None, help="label column (default: the last)")
    ap.add_argument("--C", type=float, default=1.0, help="inverse L2 strength (sklearn's C, default 1)")
    a = ap.parse_args()
    x, y, k = load(a.data, a.label)
    with open(a.test_rows) as f:
        test = sorted(int(l) for l in list(f)[1:] if l.strip())
    mask = np.zeros(len(y), dtype=bool)
    mask[test] = True
    xtr, ytr, xte, yte = x[~mask], y[~mask], x[mask], y[mask]
    mu, sd = xtr.mean(axis=0), xtr.std(axis=0)
    sd[sd <= 1e-12] = 1.0
    xtr, xte = (xtr - mu) / sd, (xte - mu) / sd
    m = LogisticRegression(C=a.C, max_iter=10000, tol=1e-10).fit(xtr, ytr)
    p = m.predict_proba(xte)
    if k == 2:
        auroc = roc_auc_score(yte, p[:, 1])
    else:
        auroc = float(np.mean([roc_auc_score(yte == c, p[:, c]) for c in range(k)]))
    out = {"auroc": float(auroc), "loss": float(log_loss(yte, p, labels=list(range(k)))),
           "accuracy": float(np.mean(p.argmax(axis=1) == yte)), "n_train": int(len(ytr)),
           "n_test": int(len(yte)), "C": a.C, "l2": 1.0 / (a.C * len(ytr))}
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
