#!/usr/bin/env python3
"""Progress you can follow in a log (docs/cli.md, "Progress"): with stdout a pipe,
`learn` prints its stage lines as they happen — the first arrives well before
the run ends; with stderr a pipe, a command running past the interval (10 s;
MHALEARN_TEST_PROGRESS_INTERVAL=1 here, to keep the test short) prints a
progress line with an estimate of what remains, and `--quiet` turns it off.

  tests/cli/progress_lines.py --tool build/release/mhalearn
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

from cli_fixtures import generate, report

TINY = ["--stage1-samples", "20000", "--crude-sculpt-samples", "40000", "--sculpt-samples", "100000",
        "--final-sculpt-samples", "100000", "--margin-samples", "200000", "--rounds", "2", "--net-tuples", "500",
        "--test-samples", "500", "--threads", "2"]


def first_line_and_end(argv, cwd):
    start = time.time()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    proc.stdout.readline()
    first = time.time() - start
    proc.stdout.read()
    proc.wait()
    return first, time.time() - start, proc.returncode


def progress_lines(argv, cwd):
    env = dict(os.environ, MHALEARN_TEST_PROGRESS_INTERVAL="1")
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    return [x for x in r.stderr.splitlines() if "left" in x or "so far" in x], r.returncode


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True)
    args = p.parse_args()
    tool = os.path.abspath(args.tool)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        generate(tool, d, "inst.json")
        first, end, status = first_line_and_end([tool, "learn", "inst.json"] + TINY, d)
        print(f"learn | pipe: first line after {first:.2f} s, end after {end:.2f} s, exit {status}")
        if not first < end - 1.0:
            failures.append(f"the first stdout line came {first:.2f} s into a {end:.2f} s run: not streamed")
        sample = [tool, "sample", "inst.json", "--n", "6000000", "--threads", "2", "--x", "X.npy", "--y", "Y.npy"]
        lines, status = progress_lines(sample, d)
        print(f"sample 2>pipe: {len(lines)} progress lines, exit {status}: {lines[:2]}")
        if not any("left" in x for x in lines):
            failures.append("a sample run past the interval printed no progress line with an estimate to a piped stderr")
        lines, status = progress_lines(sample + ["--quiet"], d)
        print(f"sample --quiet 2>pipe: {len(lines)} progress lines, exit {status}")
        if lines:
            failures.append(f"--quiet still printed progress: {lines[:2]}")
    return report(failures, f"progress lines: {len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
