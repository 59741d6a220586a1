#!/usr/bin/python3
"""Writes data/letter.csv (20,000 rows: 16 integer features, 0..15, named as R names them with
dots written as underscores (x_box ... yegvx), and the label `lettr`, 26 capital letters) from the UCI Letter Recognition table as Debian's r-cran-mlbench package ships it
(mlbench/data/LetterRecognition.rda, R's serialization format, xz-compressed). A minimal reader
of that format (version 2, XDR) is below: enough for a data.frame of integer columns and one
factor. The package need not be installed: without it the .deb is fetched with `apt-get download`
into a temporary folder and unpacked there. The values are copied unchanged; the factor's codes
become its level names. Usage: data/convert_letter.py [OUT] [RDA]."""
import lzma
import os
import struct
import subprocess
import sys
import tempfile
import glob

RDA = "/usr/lib/R/site-library/mlbench/data/LetterRecognition.rda"


class Reader:
    def __init__(self, b):
        self.b, self.i, self.refs = b, 0, []

    def int(self):
        v = struct.unpack(">i", self.b[self.i:self.i + 4])[0]
        self.i += 4
        return v

    def item(self):
        flags = self.int()
        t, has_attr, has_tag = flags & 0xFF, flags & 0x200, flags & 0x400
        if t == 254 or t == 253 or t == 242:  # NULL, global env, empty env
            return None
        if t == 255:  # reference to a symbol seen before
            return self.refs[(flags >> 8) - 1]
        if t == 1:  # symbol: its name (a CHARSXP)
            name = self.item()
            self.refs.append(name)
            return name
        if t == 9:  # CHARSXP
            n = self.int()
            if n == -1:
                return None
            s = self.b[self.i:self.i + n].decode("utf-8")
            self.i += n
            return s
        if t == 2:  # pairlist: [(tag, value), ...]
            out = []
            while True:
                attr = self.item() if has_attr else None
                tag = self.item() if has_tag else None
                out.append((tag, self.item()))
                del attr
                flags = self.int()
                t, has_attr, has_tag = flags & 0xFF, flags & 0x200, flags & 0x400
                if t == 254:
                    return out
                assert t == 2, "unexpected pairlist element type %d" % t
        if t in (10, 13):  # logical, integer
            n = self.int()
            v = list(struct.unpack(">%di" % n, self.b[self.i:self.i + 4 * n]))
            self.i += 4 * n
        elif t == 14:  # double
            n = self.int()
            v = list(struct.unpack(">%dd" % n, self.b[self.i:self.i + 8 * n]))
            self.i += 8 * n
        elif t in (16, 19):  # character vector, list
            v = [self.item() for _ in range(self.int())]
        else:
            raise ValueError("R type %d is not handled" % t)
        attrs = dict(self.item()) if has_attr else {}
        return {"type": t, "v": v, "attrs": attrs}


def frame(path):
    b = lzma.decompress(open(path, "rb").read())
    assert b[:5] == b"RDX2\n" and b[5:7] == b"X\n", "not an XDR R data file version 2: " + path
    r = Reader(b)
    r.i = 7
    assert r.int() == 2, "serialization version"
    r.int()
    r.int()
    objs = r.item()
    return dict(objs)["LetterRecognition"]


def source():
    if len(sys.argv) > 2:
        return sys.argv[2], None
    if os.path.exists(RDA):
        return RDA, None
    tmp = tempfile.TemporaryDirectory()
    subprocess.run(["apt-get", "download", "r-cran-mlbench"], cwd=tmp.name, check=True, capture_output=True)
    deb = glob.glob(os.path.join(tmp.name, "r-cran-mlbench_*.deb"))[0]
    subprocess.run(["dpkg-deb", "-x", deb, os.path.join(tmp.name, "x")], check=True)
    return os.path.join(tmp.name, "x" + RDA), tmp


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "letter.csv")
    path, keep = source()
    df = frame(path)
    names = df["attrs"]["names"]["v"]
    cols = df["v"]
    assert names[0] == "lettr" and len(names) == 17, "unexpected columns %r" % names
    levels = cols[0]["attrs"]["levels"]["v"]
    n = len(cols[0]["v"])
    assert n == 20000 and all(len(c["v"]) == n for c in cols), "unexpected row count"
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(",".join([v.replace(".", "_") for v in names[1:]] + ["lettr"]) + "\n")
        for i in range(n):
            vals = [c["v"][i] for c in cols[1:]]
            assert all(v == int(v) for v in vals), "row %d: a non-integer value" % (i + 1)
            f.write(",".join(str(int(v)) for v in vals) + "," + levels[cols[0]["v"][i] - 1] + "\n")
    os.replace(tmp, out)
    del keep


if __name__ == "__main__":
    main()
