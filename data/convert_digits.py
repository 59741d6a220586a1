#!/usr/bin/python3
"""Writes data/digits.csv from the copy of the UCI optical digits table (8x8 images, 1,797 rows,
10 classes) that Debian's python3-sklearn ships (sklearn/datasets/data/digits.csv.gz: 64 pixel
counts 0..16 and the digit per line, no header). The header names the pixels p0..p63 and the
label `digit`. The numbers are copied unchanged. Usage: data/convert_digits.py [OUT]."""
import gzip
import os
import sys

SRC = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "digits.csv")
    with gzip.open(SRC, "rt") as f:
        body = [l.strip() for l in f.read().splitlines() if l.strip()]
    assert len(body) == 1797 and all(len(l.split(",")) == 65 for l in body), "unexpected layout of " + SRC
    body = [",".join(str(int(float(v))) for v in l.split(",")) for l in body]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(",".join(["p%d" % i for i in range(64)] + ["digit"]) + "\n")
        f.write("\n".join(body) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
