#!/usr/bin/env python3
"""One table, one command, as a reader runs it: the results page's cheapest table whose bytes do not
depend on wall time, re-made alone, gives the page's bytes, and no committed run is touched.

The cheapest such table is §2's "Other regimes" (10 runs, 2 min on 2 cores: `scripts/results.sh
--table list`); the test command re-makes its rows "small budget: ..." (three Adam runs and the
paper's learner on a small budget: 25 s of the committed runs' wall time), the rest of it (the
m = 4 runs, 72 s, and the SQ member's Adam, 16 s) being left out to keep the test command under its
30 minutes:

  scripts/results.py --tool TOOL --table regimes --rows "small budget:" --into TEMPORARY

The rows' cells must equal the page's (the table has no timing column; the learner column names the
build, which is compared by the golden outputs, not here), and the files under docs/results/ must
have the same bytes before and after.

  python3 tests/scripts/table_command.py --tool build/release/mhalearn
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROWS = ["small budget:"]


def digest(folder):
    """SHA-256 over every file under folder (paths and bytes)."""
    h = hashlib.sha256()
    for base, _, names in sorted(os.walk(folder)):
        for name in sorted(names):
            path = os.path.join(base, name)
            h.update(os.path.relpath(path, folder).encode())
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True)
    args = ap.parse_args()
    committed = os.path.join(ROOT, "docs", "results")
    before = digest(committed)
    into = tempfile.mkdtemp(prefix="mhalearn-table-test-")
    try:
        done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "results.py"), "--tool", args.tool,
                               "--table", "regimes", "--rows", *ROWS, "--into", into],
                              capture_output=True, text=True, cwd=ROOT)
        print(done.stdout + done.stderr)
        problems = []
        if done.returncode != 0 or "the same as the page" not in done.stdout:
            problems.append(f"the table differs from the page's or was not made (exit {done.returncode})")
        if digest(committed) != before:
            problems.append("docs/results/ changed: the table command touched a committed run")
        if not any(name.startswith("regime_adam_budget") for name in os.listdir(os.path.join(into, "runs"))):
            problems.append("the runs were not made into the fresh folder")
    finally:
        shutil.rmtree(into, ignore_errors=True)
    for p in problems:
        print("FAIL  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
