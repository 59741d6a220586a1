"""The stress runner behind tests/stress.sh (see there for the usage)."""
import json, os, re, signal, subprocess, sys, tempfile, time

def usage(msg):
    print("stress.sh: " + msg + "\nusage: tests/stress.sh N [REGEX] [--build DIR] [--keep DIR]", file=sys.stderr)
    sys.exit(2)

def parse(argv):
    root, args = argv[0], argv[1:]
    build, keep, pos = os.path.join(root, "build"), None, []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--build", "--keep"):
            if i + 1 >= len(args): usage(a + " needs a folder")
            if a == "--build": build = os.path.abspath(args[i + 1])
            else: keep = os.path.abspath(args[i + 1])
            i += 2
        elif a.startswith("--"):
            usage("unknown option " + a)
        else:
            pos.append(a); i += 1
    if not pos or not pos[0].isdigit() or int(pos[0]) < 1: usage("N must be a whole number >= 1")
    if len(pos) > 2: usage("too many arguments")
    regex = re.compile(pos[1]) if len(pos) == 2 else None
    return root, int(pos[0]), regex, build, keep

def multi_process_tests(build, regex):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True)
    if out.returncode != 0: usage("cannot list the tests of %s: %s" % (build, out.stderr.strip()))
    tests = []
    for t in json.loads(out.stdout)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels = props.get("LABELS", [])
        name = t["name"]
        # a REGEX picks among every test (a CLI test that spawns processes too); without one, the
        # multi-process tests
        if (regex and not regex.search(name)) or (not regex and "multiprocess" not in labels): continue
        env = dict(os.environ)
        for kv in props.get("ENVIRONMENT", []):
            k, _, v = kv.partition("=")
            env[k] = v
        tests.append((name, t["command"], props.get("WORKING_DIRECTORY", build), env,
                      float(props.get("TIMEOUT", 900)), int(props.get("SKIP_RETURN_CODE", 77))))
    return tests

def burner():
    # one busy process per core: the tests run on a machine with no idle core
    n = os.cpu_count() or 2
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(n)]

RUNNING = []  # process groups of the tests running now (stopped with the runner)

def run_pair(test, r, keep, copies=2):
    name, cmd, cwd, env, timeout, skip_code = test
    procs = []
    for copy in range(1, copies + 1):
        tmp = tempfile.mkdtemp(prefix="bbvfl-stress-%s-%d-%d." % (name, r, copy))
        e = dict(env, TMPDIR=tmp)
        log = open(os.path.join(tmp, "output.log"), "w")
        p = subprocess.Popen(cmd, cwd=cwd, env=e, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        RUNNING.append(p)
        procs.append((p, tmp, log, time.time()))
    results = []
    for p, tmp, log, t0 in procs:
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rc = p.wait()
            log.write("\n[stress] killed after the test's timeout of %.0f s\n" % timeout)
        log.close()
        RUNNING.remove(p)
        dt = time.time() - t0
        # a devnet the test could not stop (killed by the timeout): stop it by its recorded pid
        for dirpath, _, files in os.walk(tmp):
            if "devnet.json" in files:
                try:
                    pid = json.load(open(os.path.join(dirpath, "devnet.json")))["pid"]
                    os.kill(pid, signal.SIGKILL)
                except (OSError, ValueError, KeyError):
                    pass
        status = "pass" if rc == 0 else ("skip" if rc == skip_code else "FAIL")
        if status == "FAIL":
            dest = os.path.join(keep, "%s.%d.%d.log" % (name, r, len(results) + 1))
            with open(os.path.join(tmp, "output.log")) as src, open(dest, "w") as d:
                d.write(src.read())
        subprocess.run(["rm", "-rf", tmp])
        results.append((status, dt))
    return results

def main():
    root, n, regex, build, keep = parse(sys.argv[1:])
    tests = multi_process_tests(build, regex)
    if not tests: usage("no multi-process test matches")
    keep = keep or tempfile.mkdtemp(prefix="bbvfl-stress-failures.")
    os.makedirs(keep, exist_ok=True)
    burners = burner()
    def stop(*_):
        for p in RUNNING:
            try: os.killpg(p.pid, signal.SIGTERM)
            except OSError: pass
        for b in burners:
            try: os.killpg(b.pid, signal.SIGKILL)
            except OSError: pass
        sys.exit(130)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    table = []
    t_all = time.time()
    try:
        for test in tests:
            res = []
            rounds = (n + 1) // 2
            for r in range(1, rounds + 1):
                copies = min(2, n - len(res))
                res += run_pair(test, r, keep, copies)
                print("[stress] %s round %d/%d: %s" % (test[0], r, rounds, " ".join(s for s, _ in res[-copies:])),
                      flush=True)
            times = sorted(dt for _, dt in res)
            table.append((test[0], sum(s == "pass" for s, _ in res), sum(s == "skip" for s, _ in res), len(res),
                          times[len(times) // 2]))
    finally:
        for b in burners:
            try: os.killpg(b.pid, signal.SIGKILL)
            except OSError: pass
    print("\nstress: %d run(s) per test, two copies side by side, %d CPU burner(s), build %s, %.0f s"
          % (n, len(burners), build, time.time() - t_all))
    print("%-44s %7s %7s %9s" % ("test", "passed", "skipped", "median s"))
    for name, ok, sk, tot, med in table:
        print("%-44s %3d/%-3d %7d %9.1f" % (name, ok, tot, sk, med))
    bad = [t for t in table if t[1] + t[2] < t[3]]
    if bad: print("failure logs: %s" % keep)
    else: os.rmdir(keep) if not os.listdir(keep) else None
    sys.exit(1 if bad else 0)

main()
