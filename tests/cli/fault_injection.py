#!/usr/bin/env python3
"""End-to-end fault injection through the command line.

The test build `mhalearn_faulty` honours MHALEARN_INJECT_FAULT=<stage>: that
stage's fast path is swapped for its deliberately wrong copy
(src/verify/faults.hpp, the copies tests/verify/test_verify.cpp uses). For every
stage this runs `mhalearn_faulty verify <stage> --json` on a small instance and
requires:

  * exit status 4 (a disagreement after escalation);
  * the stage's row to say DISAGREE, at the reference precision the escalation
    ends on: MPFR 256 (forward, 1, 2, 4, 5, polish) or exact rationals (3, 6, the
    least-squares rows);
  * with no fault set, the same run exits 0 and every row agrees at MPFR 128:
    the first rung, so the faulty rows did escalate.

`learn` runs every stage's check on its own inputs (learn/reference_checks.hpp):
with any stage's fault it must exit 4 with one line naming that stage (2 and 4
share the certification fast path: either may be named), and without a fault
exit 0.

Finally the release `mhalearn` must ignore the switch: the same faulty verify run
exits 0, and the binary does not contain the variable's name.
"""
import argparse
import json
import re
import os
import subprocess
import sys
import tempfile

STAGES = ["forward", "1", "2", "3", "4", "5", "6", "polish"]
ESCALATED_TO = {"forward": "MPFR 256", "1": "MPFR 256", "2": "MPFR 256", "3": "exact rationals",
                "4": "MPFR 256", "5": "MPFR 256", "6": "exact rationals", "polish": "MPFR 256"}
FIRST_RUNG = {s: "MPFR 128" for s in STAGES}
# The stages a learn with a stage's fault may name first (2 and 4 share one fast path).
NAMED = {s: [s] for s in STAGES}
NAMED["2"] = NAMED["4"] = ["2", "4"]
SWITCH = "MHALEARN_INJECT_FAULT"

failures = []


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message)
    if not ok:
        failures.append(message)


def run(tool, args, fault=None):
    env = dict(os.environ)
    env.pop(SWITCH, None)
    if fault is not None:
        env[SWITCH] = fault
    return subprocess.run([tool] + args, env=env, capture_output=True, text=True, timeout=600)


def verify_rows(result):
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError:
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--faulty", required=True, help="mhalearn_faulty")
    parser.add_argument("--release", required=True, help="mhalearn")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        instance = os.path.join(tmp, "inst.json")
        # (10,2,2), logit scale 3, seed 12: every stage compares on it (stage 3's
        # events reach rank d, stage 5's body is thin), as in test_verify.cpp.
        g = run(args.release, ["generate", "--d", "10", "--k", "2", "--m", "2", "--scale", "3", "--seed", "12",
                               "-o", instance])
        if g.returncode != 0:
            print(g.stderr)
            sys.exit(1)

        clean = run(args.faulty, ["verify", "all", "--json", "--instance", instance])
        rows = verify_rows(clean)
        check(clean.returncode == 0, f"no fault: verify all exits 0 (got {clean.returncode}; {clean.stderr.strip()})")
        check(rows is not None and [r["stage"] for r in rows] == STAGES, "no fault: one row per stage")
        for r in rows or []:
            check(r["verdict"] == "agree" and r["precision"] == FIRST_RUNG[r["stage"]],
                  f"no fault: stage {r['stage']} agrees at {FIRST_RUNG[r['stage']]} "
                  f"(got {r['verdict']} at {r['precision']}: {r['detail']})")

        for stage in STAGES:
            faulty = run(args.faulty, ["verify", stage, "--json", "--instance", instance], fault=stage)
            rows = verify_rows(faulty)
            check(faulty.returncode == 4, f"fault in {stage}: verify exits 4 (got {faulty.returncode})")
            check(f"fault injected into stage {stage}" in faulty.stderr, f"fault in {stage}: the switch says so on stderr")
            if not rows or len(rows) != 1:
                check(False, f"fault in {stage}: one JSON row (stdout: {faulty.stdout[:200]!r})")
                continue
            row = rows[0]
            check(row["stage"] == stage and row["verdict"] == "DISAGREE" and row["compared"] > 0,
                  f"fault in {stage}: the row disagrees (got {row['verdict']}, compared {row['compared']})")
            check(row["precision"] == ESCALATED_TO[stage],
                  f"fault in {stage}: confirmed at {ESCALATED_TO[stage]} (got {row['precision']})")
            slack = max([row["slack"]] + [p["slack"] for p in row["parts"] if p["slack"] is not None])
            check(slack > 1, f"fault in {stage}: slack {slack:.3g} > 1 (the row's or a part's)")

        # learn: every stage's fault is caught by the learner's reference step, on its own inputs.
        learn = ["learn", instance, "--stage1-samples", "100000", "--crude-sculpt-samples", "200000",
                 "--sculpt-samples", "400000", "--final-sculpt-samples", "400000", "--margin-samples", "1000000",
                 "--rounds", "2", "--net-tuples", "2000", "--threads", "1", "--test-samples", "1000"]
        clean_learn = run(args.faulty, learn)
        check(clean_learn.returncode == 0,
              f"no fault: learn exits 0 (got {clean_learn.returncode}; {clean_learn.stderr.strip()})")
        for stage in STAGES:
            report = os.path.join(tmp, f"learn_fault_{stage}.json")
            faulty_learn = run(args.faulty, learn + ["--report", report], fault=stage)
            named = [re.search(rf"first: stage {s}[ :]", faulty_learn.stderr) for s in NAMED[stage]]
            check(faulty_learn.returncode == 4 and any(named),
                  f"fault in {stage}: learn exits 4 naming stage {' or '.join(NAMED[stage])} "
                  f"(got {faulty_learn.returncode}; {faulty_learn.stderr.strip()[-300:]})")
            if os.path.exists(report):
                with open(report) as f:
                    rows = json.load(f).get("reference", [])
                check(any(r["stage"] in NAMED[stage] and r["verdict"] == "DISAGREE" for r in rows),
                      f"fault in {stage}: the report's reference rows show the disagreement")
        unknown = run(args.faulty, ["verify", "6", "--instance", instance], fault="7")
        check(unknown.returncode == 2, f"an unknown stage in the switch is bad input (got {unknown.returncode})")

        # The release binary ignores the switch.
        for stage in ["forward", "5"]:
            release = run(args.release, ["verify", stage, "--json", "--instance", instance], fault=stage)
            rows = verify_rows(release)
            check(release.returncode == 0 and rows and rows[0]["verdict"] == "agree" and "fault injected" not in release.stderr,
                  f"release mhalearn ignores {SWITCH}={stage} (exit {release.returncode})")
        with open(args.release, "rb") as f:
            check(SWITCH.encode() not in f.read(), f"the release binary does not contain {SWITCH}")
        with open(args.faulty, "rb") as f:
            check(SWITCH.encode() in f.read(), f"the faulty binary contains {SWITCH} (the check above can fail)")

    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
