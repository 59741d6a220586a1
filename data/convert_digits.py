#!/usr/bin/python3
"""Writes a digits.csv (default /tmp/bbvfl-digits.csv) from the UCI optical handwritten digits table
that Debian's python3-sklearn ships (sklearn/datasets/data/digits.csv.gz: 1,797 rows of 64 pixel
counts 0..16 of an 8x8 image, then the digit 0..9, no header). Adds a header (p00..p77, `digit`);
the numbers are copied unchanged. Used by the VFL-AFE ablation (`bbvfl bench afe --data ...`).
Usage: data/convert_digits.py [OUT]."""
import gzip
import os
import sys

SRC = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/bbvfl-digits.csv"
    with gzip.open(SRC, "rt") as f:
        body = [l for l in f.read().splitlines() if l.strip()]
    assert len(body) == 1797 and all(len(l.split(",")) == 65 for l in body), "unexpected layout of " + SRC
    header = ["p%d%d" % (i // 8, i % 8) for i in range(64)] + ["digit"]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(",".join(header) + "\n")
        f.write("\n".join(body) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
