#!/usr/bin/env python3
"""End-to-end fault injection through the command line.

The test build `mhalearn_faulty` honours MHALEARN_INJECT_FAULT=<stage>: that
stage's fast path is swapped for its deliberately wrong copy
(src/verify/faults.hpp, the copies tests/verify/test_verify.cpp uses). For every
stage this runs `mhalearn_faulty verify <stage> --json` on a small instance and
requires:

  * exit status 4 (a disagreement after escalation);
  * the stage's row to say DISAGREE, at the reference precision the escalation
    ends on: MPFR 256 (forward, 1, 2, 4, polish), exact rationals (3, 6, the
    least-squares rows), or "double, certified" for stage 5 (LP widths certified
    a posteriori: there is no more precise rung, so it does not escalate);
  * with no fault set, the same run exits 0 and every row agrees at MPFR 128
    (or certified double for 5): the first rung, so the faulty rows did escalate.

`learn` runs a reference path against stage 5 alone (LP widths on the selected
round, learn/learner.hpp reference_disagreement): with stage 5's fault it must
exit 4, and the switch refuses the other stages (exit 2) rather than run a fault
nothing checks.

Finally the release `mhalearn` must ignore the switch: the same faulty verify run
exits 0, and the binary does not contain the variable's name.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

STAGES = ["forward", "1", "2", "3", "4", "5", "6", "polish"]
ESCALATED_TO = {"forward": "MPFR 256", "1": "MPFR 256", "2": "MPFR 256", "3": "exact rationals",
                "4": "MPFR 256", "5": "double, certified", "6": "exact rationals", "polish": "MPFR 256"}
FIRST_RUNG = {s: ("double, certified" if s == "5" else "MPFR 128") for s in STAGES}
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
            check(row["slack"] > 1, f"fault in {stage}: slack {row['slack']:.3g} > 1")

        # learn: stage 5's fault is caught by the learner's reference check.
        # Budgets at which the clean run's body is thin across the hull, so that its
        # own stage-5 reference agrees (with --rounds 2 it finds 3 wide directions).
        learn = ["learn", instance, "--stage1-samples", "100000", "--crude-sculpt-samples", "200000",
                 "--sculpt-samples", "800000", "--final-sculpt-samples", "800000", "--margin-samples", "2000000", "--rounds", "3", "--net-tuples", "2000",
                 "--no-polish", "--threads", "1", "--test-samples", "1000"]
        clean_learn = run(args.faulty, learn)
        check(clean_learn.returncode == 0,
              f"no fault: learn exits 0 (got {clean_learn.returncode}; {clean_learn.stderr.strip()})")
        report = os.path.join(tmp, "learn_fault.json")
        faulty_learn = run(args.faulty, learn + ["--report", report], fault="5")
        check(faulty_learn.returncode == 4 and "stage 5's reference path disagrees" in faulty_learn.stderr,
              f"fault in 5: learn exits 4 naming stage 5 (got {faulty_learn.returncode}; {faulty_learn.stderr.strip()})")
        # The reference sees the turned direction itself: the angle between the fast
        # and the LP-width hull directions exceeds SpanOptions::max_angle = 0.05 rad
        # (the fault turns by 0.2 rad).
        with open(report) as f:
            checked = [s for s in json.load(f)["stages"] if s["stage"] == "5" and "subspace_angle" in s]
        check(len(checked) == 1 and checked[0]["subspace_angle"] > 0.05 and checked[0]["agree"] is False,
              f"fault in 5: learn's reference measures the turn (angle {checked[0]['subspace_angle'] if checked else None})")
        refused = run(args.faulty, learn, fault="2")
        check(refused.returncode == 2 and "learn checks only stage 5" in refused.stderr,
              f"fault in 2: learn refuses it (exit 2; got {refused.returncode})")
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
