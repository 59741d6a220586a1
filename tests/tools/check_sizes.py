#!/usr/bin/env python3
"""No file of client/ over 700 lines and no function over 150 (issue 25's limits): run by ctest
`sizes`. A function is counted from the line of its opening `{` to the line of its closing `}`, both
included (comments and strings are ignored when matching braces).
Usage: check_sizes.py CLIENT_DIR [MAX_FILE_LINES [MAX_FUNCTION_LINES]]"""
import os
import re
import sys

def strip(text):
    """The C text with comments, strings and character constants blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j, n - 1) - i + 1))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, lines) of every function body at file scope: a `{` at depth 0 whose
    declaration (the text since the previous `;`, `}` or preprocessor line) has a parameter list and
    is not a struct, union, enum or an initializer."""
    code = strip(text)
    depth, decl_start, start, name = 0, 0, None, None
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            if depth == 0:
                decl = code[decl_start:i]
                decl = "\n".join(l for l in decl.split("\n") if not l.lstrip().startswith("#"))
                m = re.search(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", decl)
                if m and "=" not in decl and not re.search(r"\b(struct|union|enum)\s*\w*\s*$", decl):
                    start, name = line, m.group(1)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if start is not None:
                    yield name, start, line - start + 1
                start = None
                decl_start = i + 1
        elif c == ";" and depth == 0:
            decl_start = i + 1


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
                for name, line, length in functions("\n".join(lines)):
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
