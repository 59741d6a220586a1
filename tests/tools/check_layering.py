#!/usr/bin/env python3
"""The folder layering of client/ (docs/ARCHITECTURE.md "Layering") and no include circle between
modules: run by ctest `layering`. Prints every violation and exits 1 on any.

A module is a .c/.h pair (x.c, x.h). An edge x -> y means x.c or x.h includes y.h. A folder's
private shared header (name ending in _int.h, e.g. onchain/onchain_int.h) is the folder's own
plumbing and is left out of the circle check; its includes count for the folder check.
Usage: check_layering.py CLIENT_DIR"""
import os
import re
import sys

# What each folder may include besides itself (the layering, lowest last).
ALLOWED = {
    "common": set(),
    "eth": {"common"},
    "dp": {"common", "eth"},
    "ml": {"common", "dp"},
    "core": {"common", "eth", "dp", "ml"},
    "binding": {"common", "eth", "dp", "ml", "core"},
    "offchain": {"common", "eth", "dp", "ml", "core"},
    "onchain": {"common", "eth", "dp", "ml", "core", "binding"},
    "devnet": {"common", "eth"},
    "run": {"common", "eth", "dp", "ml", "core", "binding", "offchain", "onchain", "devnet"},
    "audit": {"common", "eth", "dp", "ml", "core", "binding", "offchain"},
    "bench": {"common", "eth", "dp", "ml", "core", "binding", "offchain", "onchain", "devnet", "run"},
    "api": {"common", "eth", "dp", "ml", "core", "binding", "offchain", "devnet", "run", "audit", "bbvfl"},
    "cli": None,  # the command: anything below it
}
INC = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([a-z_0-9]+)\.h"', re.M)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "client"
    bad = []
    graph = {}
    for folder in sorted(os.listdir(root)):
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            continue
        if folder not in ALLOWED:
            bad.append(f"client/{folder}/: a folder the layering does not know (add it to tests/tools/check_layering.py and docs/ARCHITECTURE.md)")
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".c", ".h")):
                continue
            mod = f"{folder}/{name.rsplit('.', 1)[0]}"
            with open(os.path.join(path, name), encoding="utf-8") as f:
                text = f.read()
            for inc_folder, inc_name in INC.findall(text):
                dep = f"{inc_folder}/{inc_name}"
                allowed = ALLOWED[folder]
                if inc_folder != folder and allowed is not None and inc_folder not in allowed:
                    bad.append(f"client/{folder}/{name} includes {dep}.h: {folder}/ may not include {inc_folder}/")
                if dep != mod and not inc_name.endswith("_int") and not mod.endswith("_int"):
                    graph.setdefault(mod, set()).add(dep)
    # circles: strongly connected components of more than one module
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    for comp in comps:
        bad.append("include circle: " + " <-> ".join(comp))
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"layering: {len(graph)} modules, no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
