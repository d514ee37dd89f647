#!/usr/bin/env python3
"""scripts/remake_pages.py --plan: which committed runs another learner made, and their time.

On a made-up runs folder (one run of the tool's fingerprint, one of another, one that records
none): the plan counts the two that are not the tool's and sums their wall times from the log's
last line and a GNU time file. Its tester: a plan that does not read the reports' fingerprints
(every run another learner's) is rejected. Exit 0 when all hold.
"""
import json
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import remake_pages  # noqa: E402

TOOLS = "0123456789abcdef"
OTHER = "fedcba9876543210"


def write(folder, name, text):
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)


def made_up_runs(folder):
    report = lambda fp: json.dumps({"seconds": 1.0, "provenance": {"build": {"fingerprint": fp}}})
    write(folder, "a.log", "$ mhalearn learn a\n...\nexit status 0 after 10.0 s\n")
    write(folder, "a.report.json", report(TOOLS))
    write(folder, "b.log", "$ mhalearn learn b\n...\nexit status 0 after 20.0 s\n")
    write(folder, "b.report.json", report(OTHER))
    write(folder, "c.log", "a log without its end line\n")
    write(folder, "c.time", "5.5 1.0 0.5 1000\n")


def check(plan, folder):
    runs = remake_pages.committed_runs(folder)
    failures = []
    if [(n, w) for n, w, _ in runs] != [("a", 10.0), ("b", 20.0), ("c", 5.5)]:
        failures.append(f"runs and wall times: {runs}")
    line = plan("made-up", "page.md", [folder], ["cmd"], TOOLS)
    if "2 of 3 committed runs by another learner, 26 s" not in line:
        failures.append(f"plan: {line.splitlines()[0]}")
    return failures


def main():
    with tempfile.TemporaryDirectory() as folder:
        made_up_runs(folder)
        failures = check(remake_pages.plan_line, folder)
        # The tester: a plan blind to the reports' fingerprints must fail the check.
        real = remake_pages.report_fingerprint
        remake_pages.report_fingerprint = lambda report: None
        try:
            caught = bool(check(remake_pages.plan_line, folder))
        finally:
            remake_pages.report_fingerprint = real
        if not caught:
            failures.append("tester: a plan that ignores fingerprints passed")
    for f in failures:
        print("FAIL", f)
    print("remake_pages plan:", "ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
