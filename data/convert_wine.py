#!/usr/bin/python3
"""Writes data/wine.csv from the copy of the UCI Wine table that Debian's python3-sklearn ships
(sklearn/datasets/data/wine_data.csv): its first line, a summary (178,13,class_0,...), becomes a
header naming the 13 measurements (spaces and slashes as underscores) and `cultivar` for the
label (0, 1, 2). The numbers are copied unchanged. Usage: data/convert_wine.py [OUT]."""
import os
import sys

SRC = "/usr/lib/python3/dist-packages/sklearn/datasets/data/wine_data.csv"
HEADER = ["alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
          "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280_od315_of_diluted_wines",
          "proline", "cultivar"]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "wine.csv")
    with open(SRC) as f:
        lines = f.read().splitlines()
    n, d = (int(v) for v in lines[0].split(",")[:2])
    body = [l for l in lines[1:] if l.strip()]
    assert len(body) == n and all(len(l.split(",")) == d + 1 for l in body), "unexpected layout of " + SRC
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(",".join(HEADER) + "\n")
        f.write("\n".join(body) + "\n")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
