"""The shell tests' one reading of a `bbvfl audit --json` document (docs/AUDIT.md describes it).

    a = load(path)
    check(a, "sums")        # that check's object (name, status, checked, first_failure, note)
    failed(a)               # the names of the checks whose status is FAIL, in the audit's order
    all_pass(a)             # asserts the verdict PASS (a finished session, a["ok"]) and that every
                            # check is PASS (naming those that are not)
    only_fails(a, "sums")   # asserts that exactly that check fails; returns its first_failure
    a, r = clean_run(audit_path, report_path)  # both documents, after all_pass(a) (r: a run's report.json)"""
import json


def load(path):
    with open(path) as f:
        return json.load(f)


def check(a, name):
    for c in a["checks"]:
        if c["name"] == name:
            return c
    raise AssertionError("no check named %s" % name)


def failed(a):
    return [c["name"] for c in a["checks"] if c["status"] == "FAIL"]


def all_pass(a):
    bad = {c["name"]: c["first_failure"] or c["note"] for c in a["checks"] if c["status"] != "PASS"}
    assert a["ok"] is True and a["verdict"] == "PASS" and not bad, (a["verdict"], a["missing"], bad)


def only_fails(a, name):
    f = failed(a)
    assert f == [name], (f, {n: check(a, n)["first_failure"] for n in f})
    return check(a, name)["first_failure"]


def clean_run(audit_path, report_path):
    a = load(audit_path)
    all_pass(a)
    return a, load(report_path)
