#!/usr/bin/env python3
"""No file of client/ over 700 lines and no function over 150 (issue 25's limits): run by ctest
`sizes`. A function is counted from the line that opens it (a definition ending in `{` at column 0's
indentation, or a lone `{` in column 0) to its closing `}` in column 0, both included.
Usage: check_sizes.py CLIENT_DIR [MAX_FILE_LINES [MAX_FUNCTION_LINES]]"""
import os
import re
import sys

DEF = re.compile(r"^[A-Za-z_][^;=]*\)\s*\{\s*$")


def functions(lines):
    start = name = None
    for i, line in enumerate(lines):
        if start is None and (DEF.match(line) or line.startswith("{")) and not line.startswith(("typedef", "struct", "enum", "union")):
            head = line if "(" in line else (lines[i - 1] if i else "")
            m = re.search(r"(\w+)\s*\(", head)
            if line.startswith("{") and i:
                j = i - 1
                while j >= 0 and "(" not in lines[j]:
                    j -= 1
                m = re.search(r"(\w+)\s*\(", lines[j]) if j >= 0 else None
            name, start = (m.group(1) if m else "?"), i
        elif start is not None and line.startswith("}"):
            yield name, start + 1, i - start + 1
            start = None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "client"
    max_file = int(sys.argv[2]) if len(sys.argv) > 2 else 700
    max_fn = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    bad = []
    nfiles = nfns = 0
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            p = os.path.join(d, f)
            with open(p, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
            n = len(lines) - (1 if lines and lines[-1] == "" else 0)
            nfiles += 1
            if n > max_file:
                bad.append(f"{p}: {n} lines (at most {max_file})")
            if f.endswith(".c"):
                for name, line, length in functions(lines):
                    nfns += 1
                    if length > max_fn:
                        bad.append(f"{p}:{line}: {name} is {length} lines (at most {max_fn})")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"sizes: {nfiles} files, {nfns} functions, none over {max_file} / {max_fn} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
