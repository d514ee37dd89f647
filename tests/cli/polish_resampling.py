#!/usr/bin/env python3
"""Polishing where the softmax saturates (docs/bench/polish.md, "Where the softmax
saturates"): at (12,2,2), logit scale 24, seed 1, the default 256 training samples
leave polishing's fit under-determined in Θ (the held-out residual far above what the
training residual allows, tolerance::heldout_residual_limit). The learner sees it and
polishes again on 4× the samples: two polish records, Θ and W within 1e−12 (issue 50's
target). Its tester: the same run with `--polish-resamplings 0` (one polish, as before
the rule) stays above 1e−12, so the check rejects a learner without the rule.

  tests/cli/polish_resampling.py --tool build/release/mhalearn
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from cli_fixtures import report

TARGET = 1e-12


def learn(tool, folder, name, extra):
    out = os.path.join(folder, name + ".json")
    subprocess.run([tool, "learn", "inst.json", "--seed", "1", "--threads", "2", "--no-reference", "--report", out]
                   + extra, cwd=folder, check=True, capture_output=True)
    with open(out) as f:
        r = json.load(f)
    polish = [s for s in r["stages"] if s["stage"] == "polish"]
    return max(r["errors"]["theta_max_rel"], r["errors"]["w_max_rel"]), polish


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True)
    tool = os.path.abspath(ap.parse_args().tool)
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([tool, "generate", "--d", "12", "--k", "2", "--m", "2", "--scale", "24", "--seed", "1",
                        "-o", "inst.json"], cwd=folder, check=True, capture_output=True)
        error, polish = learn(tool, folder, "rule", [])
        if len(polish) != 2 or "heldout_limit" not in polish[0] or "heldout_limit" in polish[1]:
            failures.append(f"expected an under-determined first polish and a second one that generalises: "
                            f"{[p['summary'] for p in polish]}")
        if not error <= TARGET:
            failures.append(f"with the rule: max(Θ, W) error {error:.3g} above {TARGET:g}")
        once, once_polish = learn(tool, folder, "once", ["--polish-resamplings", "0"])
        if len(once_polish) != 1 or once <= TARGET:  # the tester: without the rule the check must fail
            failures.append(f"tester: one polish gave {len(once_polish)} records and error {once:.3g}; "
                            f"the check would not reject a learner without the rule")
        summary = f"polish resampling: with the rule {error:.3g}, without {once:.3g} (target {TARGET:g})"
    return report(failures, summary)


if __name__ == "__main__":
    sys.exit(main())
