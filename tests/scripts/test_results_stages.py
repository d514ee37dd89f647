#!/usr/bin/env python3
"""scripts/results_stages.py: the per-stage tables read the record in the chain that made the layer.

A made-up extended report with three rounds whose best round is 1 (round 2 was worse and not
kept): stages 4, 5 and 6 must come from round 1, stage 3 from round 0 (the W_Σ round 1's body
was cut from), and a stage's cost is its sum over every round. Its tester: a reader that takes
a stage's last record whatever the round (round 2's, which made no layer) is rejected.
Exit 0 when all hold.
"""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import results_stages  # noqa: E402


def record(stage, round_, value, samples=10, seconds=1.0):
    return {"stage": stage, "round": round_, "samples": samples, "seconds": seconds,
            "w_sum_rel_error": value, "hull_error": value, "theta_max_rel": value, "w_max_rel": value / 2}


REPORT = {"best_round": 1, "stages": [
    {"stage": "1", "samples": 5, "seconds": 0.5, "w_sum_rel_error": 0.1},
    record("2", 0, 0.9), record("3", 0, 3e-3), record("4", 1, 1e-4), record("5", 1, 0.0),
    record("6", 1, 2e-4), record("3", 1, 5e-6), record("4", 2, 7e-2), record("5", 2, 0.0),
    record("6", 2, 9e-2), dict(record("4", 1, 1.0), reference="mpfr")]}


def check(chain_record):
    """The failures of a chain reader on REPORT (empty when it reads the layer's chain)."""
    want = {"1": 0.1, "2": 0.9, "3": 3e-3, "4": 1e-4, "6": 2e-4}
    failures = []
    for stage, value in want.items():
        got = chain_record(REPORT, stage)
        key = "w_sum_rel_error" if stage in ("1", "3") else "hull_error" if stage in ("2", "4") else "theta_max_rel"
        if got is None or got.get(key) != value:
            failures.append(f"stage {stage}: read {got and got.get(key)}, want {value}")
    return failures


def last_record_whatever_round(report, stage):  # the tester's wrong reader
    rows = [s for s in report["stages"] if s["stage"] == stage and "reference" not in s]
    return rows[-1] if rows else None


def main():
    failures = check(results_stages.chain_record)
    samples, seconds = results_stages.stage_cost(REPORT, "4")
    if (samples, seconds) != (20, 2.0):
        failures.append(f"stage 4's cost over rounds 1 and 2 (not its reference row): {samples}, {seconds}; want 20, 2.0")
    if not check(last_record_whatever_round):
        failures.append("tester: a reader of each stage's last record, whatever the round, was not rejected")
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
