#!/usr/bin/env python3
"""SIGINT and SIGTERM while a command writes its output (README, exit status
"128 + n"): no temporary file is left, the previous output is byte for byte
what it was, and the process ended by the signal. Each writer is signalled at
two moments, held there by a test hook:

- MHALEARN_TEST_HOLD_BEFORE_RENAME: its temporary file complete, not yet renamed;
- MHALEARN_TEST_HOLD_WHILE_CREATING (SIGTERM only): its file just made by mkstemp,
  not yet listed for the handler. The writing thread blocks the signals there, so in a
  process with other threads (OpenMP and BLAS workers) the signal is handled by one of
  those, which must wait for the file to be listed before sweeping, while the writer
  must stop once listed rather than go on to rename: MHALEARN_TEST_HOLD_SWEEP holds
  the sweep, as a preempted handler thread would be held.

The tests of the tester, MHALEARN_TEST_DROP_GUARD: without the sweep's wait
("creation") every multi-threaded writer signalled while creating leaves its
file behind; with a writer that goes on during the sweep ("publication") two
of them replace their previous output. If no writer is multi-threaded, the
second moment tests nothing, and that is a failure too.

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

BEFORE_RENAME = {"MHALEARN_TEST_HOLD_BEFORE_RENAME": "30"}
# Long enough that the signal lands inside the window on a loaded machine (the
# test polls every 0.05 s); a writer holds there once per output it creates.
WHILE_CREATING = {"MHALEARN_TEST_HOLD_WHILE_CREATING": "2", "MHALEARN_TEST_HOLD_SWEEP": "1"}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def threads_of(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def signal_while_writing(tool, d, argv, previous, sig, hooks):
    """Runs the writer with the hooks, signals it once a temporary file appears.
    Returns (files seen, threads then, exit status, files left, previous outputs changed, stderr)."""
    for path in previous:
        with open(os.path.join(d, path), "w") as f:
            f.write(f"previous {path}\n")
    before = {path: digest(os.path.join(d, path)) for path in previous}
    # SIGINT back to its default in the child: a shell without job control starts background
    # commands with SIGINT ignored, and the CLI leaves ignored signals ignored ("nohup stays nohup").
    proc = subprocess.Popen([tool] + argv, cwd=d, env=dict(os.environ, **hooks), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 300
    while not glob.glob(os.path.join(d, "*.tmp.*")) and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    seen = glob.glob(os.path.join(d, "*.tmp.*"))
    threads = threads_of(proc.pid)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        err = "still running 60 s after the signal"
    left = glob.glob(os.path.join(d, "*.tmp.*"))
    for path in left:
        os.unlink(path)
    changed = [path for path in previous if digest(os.path.join(d, path)) != before[path]]
    return seen, threads, proc.returncode, left, changed, err


def check_writers(tool, d, hooks, moment, signals, failures):
    """Every writer × the signals at one moment; the multi-threaded writers."""
    multi_threaded = []
    for name, argv, previous in WRITERS:
        for sig in signals:
            seen, threads, status, left, changed, err = signal_while_writing(tool, d, argv, previous, sig, hooks)
            where = f"{name}, {sig.name}, {moment}"
            print(f"{where}: temporary files while held {len(seen)}, threads {threads}, exit {status}, "
                  f"left {len(left)}, previous outputs changed {len(changed)}")
            if threads > 1 and sig == signal.SIGTERM:
                multi_threaded.append((name, argv, previous))
            if not seen:
                failures.append(f"{where}: no temporary file appeared (exit {status}: {err.strip()[:200]})")
            if status != -sig:
                failures.append(f"{where}: exit {status}, expected the signal {-sig}")
            if left:
                failures.append(f"{where}: temporary files left: {left}")
            if changed:
                failures.append(f"{where}: previous outputs changed: {changed}")
    return multi_threaded


def check_the_testers(tool, d, multi_threaded, failures):
    """Without the sweep's wait each multi-threaded writer leaves its file; without the
    writer's stop, generate and sample (one output and two) replace their previous output."""
    if not multi_threaded:
        failures.append("while creating: no writer had a second thread, so the guards were not tested")
    # (guard dropped, hooks, the writers, what the test must then see)
    testers = [("creation", {"MHALEARN_TEST_HOLD_WHILE_CREATING": "2"}, multi_threaded, "a file left"),
               ("publication", {"MHALEARN_TEST_HOLD_WHILE_CREATING": "2"},
                [w for w in multi_threaded if w[0] in ("generate", "sample")], "a previous output replaced")]
    # The sweep is held until the writer, going on without the guard, reaches its first rename:
    # generate creates one file; sample four (X, Y, then their sidecars), 2 s each, before any rename.
    sweep = {"generate": "5", "sample": "12"}
    for guard, hooks, writers, must_see in testers:
        if guard == "publication" and len(writers) < 2:
            failures.append("generate and sample were not both multi-threaded: the publication guard was not tested")
        for name, argv, previous in writers:
            if guard == "publication":
                hooks = dict(hooks, MHALEARN_TEST_HOLD_SWEEP=sweep[name])
            for attempt in range(3):  # a signal that came after the window (a stalled poll) is sent again
                _, threads, status, left, changed, _ = signal_while_writing(
                    tool, d, argv, previous, signal.SIGTERM, dict(hooks, MHALEARN_TEST_DROP_GUARD=guard))
                print(f"{name}, SIGTERM, while creating, without the {guard} guard (a tester), attempt {attempt + 1}: "
                      f"threads {threads}, exit {status}, left {len(left)}, previous outputs changed {len(changed)}")
                seen = left if guard == "creation" else changed
                if seen:
                    break
            if not seen:
                failures.append(f"{name}: without the {guard} guard the test saw no {must_see}, so it cannot see that race")


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
        check_writers(tool, d, BEFORE_RENAME, "before rename", (signal.SIGTERM, signal.SIGINT), failures)
        # Both signals reach the same handler once a writer creates its file; one is enough here.
        multi_threaded = check_writers(tool, d, WHILE_CREATING, "while creating", (signal.SIGTERM,), failures)
        check_the_testers(tool, d, multi_threaded, failures)
    return report(failures, f"signals: {len(WRITERS)} writers, 2 signals before rename and 1 while creating, "
                          f"{len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
