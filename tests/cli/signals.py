#!/usr/bin/env python3
"""SIGINT and SIGTERM while a command writes its output (README, exit status
"128 + n"): every writer is signalled with its temporary file complete but not
yet renamed (MHALEARN_TEST_HOLD_BEFORE_RENAME holds each writer there), then
the folder is listed: no temporary file is left, the previous output is byte for
byte what it was, and the process ended by the signal.

  tests/cli/signals.py --tool build/release/mhalearn
"""
import argparse
import glob
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time

from cli_fixtures import generate, report

TINY = ["--stage1-samples", "20000", "--crude-sculpt-samples", "40000", "--sculpt-samples", "60000",
        "--final-sculpt-samples", "60000", "--margin-samples", "100000", "--rounds", "1", "--net-tuples", "200",
        "--test-samples", "200", "--no-reference", "--threads", "2"]

# (name, arguments, the outputs that exist beforehand)
WRITERS = [
    ("generate", ["generate", "--d", "8", "-o", "out.json"], ["out.json"]),
    ("sample", ["sample", "inst.json", "--n", "1000", "--x", "X.npy", "--y", "Y.npy"], ["X.npy", "Y.npy"]),
    ("forward", ["forward", "inst.json", "--x", "in.npy", "-o", "F.npy"], ["F.npy"]),
    ("stage1", ["stage1", "inst.json", "--samples", "20000", "-o", "w.json", "--report", "r.json"], ["w.json", "r.json"]),
    ("verify", ["verify", "forward", "--instance", "inst.json", "--report", "v.json"], ["v.json"]),
    ("hard", ["hard", "--d", "4", "--m", "1", "-o", "h.json"], ["h.json"]),
    ("learn", ["learn", "inst.json", "--report", "lr.json", "-o", "l.json"] + TINY, ["lr.json", "l.json"]),
]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True)
    args = p.parse_args()
    tool = os.path.abspath(args.tool)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        generate(tool, d, "inst.json")
        subprocess.run([tool, "sample", "inst.json", "--n", "500", "--x", "in.npy", "--y", "in_y.npy"], cwd=d,
                       check=True, capture_output=True)
        for i, (name, argv, previous) in enumerate(WRITERS):
            for sig in (signal.SIGTERM, signal.SIGINT):
                for path in previous:
                    with open(os.path.join(d, path), "w") as f:
                        f.write(f"previous {path}\n")
                before = {path: digest(os.path.join(d, path)) for path in previous}
                env = dict(os.environ, MHALEARN_TEST_HOLD_BEFORE_RENAME="30")
                proc = subprocess.Popen([tool] + argv, cwd=d, env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
                deadline = time.time() + 300
                while not glob.glob(os.path.join(d, "*.tmp.*")) and proc.poll() is None and time.time() < deadline:
                    time.sleep(0.05)
                seen = glob.glob(os.path.join(d, "*.tmp.*"))
                proc.send_signal(sig)
                try:
                    _, err = proc.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    failures.append(f"{name}, {sig.name}: still running 60 s after the signal")
                    continue
                left = glob.glob(os.path.join(d, "*.tmp.*"))
                changed = [path for path in previous if digest(os.path.join(d, path)) != before[path]]
                where = f"{name}, {sig.name}"
                print(f"{where}: temporary files while held {len(seen)}, exit {proc.returncode}, left {len(left)}, "
                      f"previous outputs changed {len(changed)}")
                if not seen:
                    failures.append(f"{where}: no temporary file appeared (exit {proc.returncode}: {err.strip()[:200]})")
                if proc.returncode != -sig:
                    failures.append(f"{where}: exit {proc.returncode}, expected the signal {-sig}")
                if left:
                    failures.append(f"{where}: temporary files left: {left}")
                    for path in left:
                        os.unlink(path)
                if changed:
                    failures.append(f"{where}: previous outputs changed: {changed}")
    return report(failures, f"signals: {len(WRITERS)} writers × 2 signals, {len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
