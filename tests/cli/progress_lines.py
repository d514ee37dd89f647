#!/usr/bin/env python3
"""Lines as they happen (docs/cli.md, "Progress"): `learn` prints each stage's
line when the stage ends, to a terminal, a file and a pipe alike — counted here
while the run goes on: each stage line's arrival is timed, and most of them
must arrive well before the run ends (they used to come all at once, with the
table at the end). And with stderr a pipe, a command running past the interval
(10 s; MHALEARN_TEST_PROGRESS_INTERVAL=1 here, to keep the test short) prints a
progress line with an estimate of what remains; `--quiet` turns it off.

  tests/cli/progress_lines.py --tool build/release/mhalearn
"""
import argparse
import os
import pty
import re
import subprocess
import sys
import tempfile
import threading
import time

from cli_fixtures import generate, report

TINY = ["--stage1-samples", "20000", "--crude-sculpt-samples", "40000", "--sculpt-samples", "100000",
        "--final-sculpt-samples", "100000", "--margin-samples", "200000", "--rounds", "2", "--net-tuples", "500",
        "--test-samples", "500", "--threads", "2"]
# A line of the learner's table: stage, round (or -), samples, seconds, what it did.
STAGE_LINE = re.compile(r"^(1|2|3|4|5|6|polish|fit)\s+(\d+|-)\s+\d+\s+[\d.]+\s\s")


def timed_lines_pipe(argv, cwd):
    start = time.time()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = [(time.time() - start, line) for line in proc.stdout]
    proc.wait()
    return lines, time.time() - start


def timed_lines_file(argv, cwd):
    path = os.path.join(cwd, "stdout.txt")
    start = time.time()
    with open(path, "w") as out:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
    seen, lines = 0, []
    while True:
        running = proc.poll() is None
        with open(path) as f:
            text = f.read()
        now = time.time() - start
        complete = text.split("\n")[:-1]
        lines += [(now, line) for line in complete[seen:]]
        seen = len(complete)
        if not running:
            return lines, time.time() - start
        time.sleep(0.05)


def timed_lines_terminal(argv, cwd):
    master, slave = pty.openpty()
    start = time.time()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    lines, buffer = [], b""

    def read():
        nonlocal buffer
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal closed with the process
                return
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                lines.append((time.time() - start, line.decode(errors="replace").rstrip("\r")))

    t = threading.Thread(target=read)
    t.start()
    proc.wait()
    t.join(5)
    os.close(master)
    return lines, time.time() - start


def stage_lines_mid_run(failures, name, lines, end):
    """Stage lines that arrived at least 0.5 s before the end: most of them must."""
    stages = [t for t, line in lines if STAGE_LINE.match(line)]
    early = [t for t in stages if t < end - 0.5]
    print(f"learn | {name}: {len(stages)} stage lines, {len(early)} of them more than 0.5 s before the end "
          f"({end:.2f} s); arrivals {[round(t, 2) for t in stages]}")
    if len(stages) < 4 or len(early) < len(stages) - 1:
        failures.append(f"{name}: {len(early)} of {len(stages)} stage lines arrived before the run's last 0.5 s")


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
        learn = [tool, "learn", "inst.json"] + TINY
        for name, timed in (("pipe", timed_lines_pipe), ("file", timed_lines_file), ("terminal", timed_lines_terminal)):
            lines, end = timed(learn, d)
            stage_lines_mid_run(failures, name, lines, end)
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
