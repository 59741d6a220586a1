"""The mutation check behind tests/mutation/run.sh (see there)."""
import os, re, subprocess, sys, tempfile, time

def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(s[i + 1], "\\" + s[i + 1])); i += 2
        else:
            out.append(s[i]); i += 1
    return "".join(out)

def load(path):
    muts = []
    for n, line in enumerate(open(path), 1):
        if not line.strip() or line.startswith("#"): continue
        f = line.rstrip("\n").split("\t")
        if len(f) != 5: sys.exit("mutations.tsv line %d: expected 5 tab-separated fields, found %d" % (n, len(f)))
        muts.append((f[0], f[1], unescape(f[2]), unescape(f[3]), f[4]))
    return muts

def sh(cmd, cwd, log, env=None):
    with open(log, "a") as out:
        return subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env).returncode

def try_one(name, tests, build, src, log, scratch, env, t0):
    """Builds the mutated copy and runs the named tests: (name, verdict, detail, seconds)."""
    if sh(["cmake", "--build", build, "-j2"], src, log):
        return (name, "invalid", "does not build", time.time() - t0)
    listed = subprocess.run(["ctest", "--test-dir", build, "-N", "-R", tests], capture_output=True, text=True).stdout
    if "Total Tests: 0" in listed:
        return (name, "invalid", "no test matches %s" % tests, time.time() - t0)
    tmp = tempfile.mkdtemp(prefix="t.", dir=scratch)
    rc = sh(["ctest", "--test-dir", build, "-R", tests, "--output-on-failure", "--timeout", "900"], src, log,
            dict(env, TMPDIR=tmp))
    subprocess.run(["rm", "-rf", tmp])
    return (name, "caught" if rc else "MISSED", tests, time.time() - t0)

def main():
    root = sys.argv[1]
    pick = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
    muts = [m for m in load(os.path.join(root, "tests/mutation/mutations.tsv")) if not pick or pick.search(m[0])]
    if not muts: sys.exit("mutation: no mutation matches")
    scratch = tempfile.mkdtemp(prefix="bbvfl-mutation.")
    src = os.path.join(scratch, "main")
    log = os.path.join(scratch, "mutation.log")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout.split(b"\0")
    os.makedirs(src)
    subprocess.run(["tar", "-C", root, "--null", "-T", "-", "-cf", os.path.join(scratch, "tree.tar")],
                   input=b"\0".join(f for f in files if f), check=True)
    subprocess.run(["tar", "-C", src, "-xf", os.path.join(scratch, "tree.tar")], check=True)
    os.symlink(os.path.join(root, "devnet", "node_modules"), os.path.join(src, "devnet", "node_modules"))
    os.symlink(os.path.abspath(os.path.join(root, "..", "shared")), os.path.join(scratch, "shared"))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    build = os.path.join(src, "build")
    print("mutation: scratch copy %s; building it once" % src, flush=True)
    if sh(["cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], src, log) or \
       sh(["cmake", "--build", build, "-j2"], src, log):
        sys.exit("mutation: the unmutated copy does not build: see %s" % log)
    results = []
    for name, rel, find, repl, tests in muts:
        path = os.path.join(src, rel)
        orig = open(path).read()
        t0 = time.time()
        if orig.count(find) != 1:
            results.append((name, "invalid", "the text occurs %d times in %s" % (orig.count(find), rel), 0))
        else:
            open(path, "w").write(orig.replace(find, repl, 1))
            try:
                results.append(try_one(name, tests, build, src, log, scratch, env, t0))
            finally:
                open(path, "w").write(orig)
        print("mutation %-26s %-8s (%s, %.0f s)" % results[-1], flush=True)
    # leave the scratch build as it was (unmutated), then report
    sh(["cmake", "--build", build, "-j2"], src, log)
    caught = sum(r[1] == "caught" for r in results)
    print("\nmutation check: %d of %d caught (log: %s)" % (caught, len(results), log))
    for r in results:
        if r[1] != "caught": print("  %s: %s (%s)" % (r[0], r[1], r[2]))
    sys.exit(0 if caught == len(results) else 1)

main()
