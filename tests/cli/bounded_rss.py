#!/usr/bin/env python3
"""Datasets larger than memory: peak RSS stays under the stated bound, whatever N.

Writes a dataset of N samples at (d, k, m) = (8, 2, 2) whose files are several
times larger than every bound below, then runs, each as its own child process
whose peak RSS is read with wait4 (ru_maxrss):

  * `sample --n N`               (writes the files block by block),
  * `stage1 --samples N`         (reads every sample),
  * `forward --x`                (reads every input, writes every output),
  * `learn --stage1-samples ...` (the paper's stages and polishing; reads most of the files),

and requires each peak to be at most R0 + H (tests/cli/rss_bound.py, the
formula docs/bench/streaming.md states). R0 is measured here:
`stage1 --samples 1` on a one-sample dataset, plus the executable's size (code
a longer run may page in).

Test of the tester: the same check must reject `mhalearn_faulty` with
MHALEARN_WHOLE_DATASET=1, which reads the files whole as before they were
streamed (src/commands/fault_switch.hpp), on the same `stage1` run.

  bounded_rss.py --tool build/release/mhalearn --faulty build/release/mhalearn_faulty
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rss_bound  # noqa: E402

D, K, M = 8, 2, 2
N = 2_000_000          # 32 MB of inputs and 256 MB of labels: 4.6x the largest bound (learn's, ~62 MB)
THREADS = 2
FILES_OVER_BOUND = 4   # the files must be at least this many times the largest bound
TIME = "/usr/bin/time"  # GNU time (Debian package "time", scripts/install-deps.sh)

failures = []


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message, flush=True)
    if not ok:
        failures.append(message)


def run(args, env=None):
    """Runs a child under GNU time; returns (exit status, peak RSS in bytes, stderr).

    GNU time (its %M: the child's ru_maxrss from wait4) rather than wait4 from
    here: ru_maxrss keeps the high-water mark of the image a process had before
    exec, which for a child of this interpreter is a copy of the interpreter
    (10-20 MB, more after reading a file). GNU time is a 1 MB process."""
    full_env = dict(os.environ)
    full_env.pop("MHALEARN_WHOLE_DATASET", None)
    full_env.update(env or {})
    with tempfile.NamedTemporaryFile(mode="r") as peak:
        r = subprocess.run([TIME, "-f", "%M", "-o", peak.name] + args, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, env=full_env)
        text = peak.read().strip().splitlines()
        # time prefixes "Command exited with non-zero status N" when the child fails.
        return r.returncode, int(text[-1]) * 1024, r.stderr.decode(errors="replace")


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def mb(x):
    return "%.1f MB" % (x / 1e6)


def within(name, rss, r0, heap):
    bound = r0 + heap
    return rss <= bound, "%s: peak RSS %s <= bound %s (R0 %s + H %s)" % (name, mb(rss), mb(bound), mb(r0), mb(heap))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--faulty", required=True)
    a = ap.parse_args()
    tool = a.tool
    if not os.access(TIME, os.X_OK):
        sys.exit("bounded_rss.py needs GNU time at %s (Debian package 'time')" % TIME)
    with tempfile.TemporaryDirectory(prefix="mhalearn_rss_") as tmp:
        path = lambda name: os.path.join(tmp, name)
        inst = path("inst.json")
        status, _, err = run([tool, "generate", "--d", str(D), "--k", str(K), "--m", str(M), "--scale", "6",
                              "--seed", "2", "-o", inst])
        if status != 0:
            sys.exit("generate failed: " + err)

        # R0: the process without data.
        status, _, err = run([tool, "sample", inst, "--n", "1", "--x", path("x1.npy"), "--y", path("y1.npy")])
        status, r0_run, err = run([tool, "stage1", "--x", path("x1.npy"), "--y", path("y1.npy"), "--samples", "1",
                                   "--threads", str(THREADS)])
        if status != 0:
            sys.exit("stage1 --samples 1 failed: " + err)
        r0 = r0_run + os.path.getsize(tool)
        print("R0 = %s (stage1 --samples 1: %s, executable %s)" % (mb(r0), mb(r0_run), mb(os.path.getsize(tool))))

        x, y = path("x.npy"), path("y.npy")
        status, rss, err = run([tool, "sample", inst, "--n", str(N), "--threads", str(THREADS), "--x", x, "--y", y])
        check(status == 0, "sample --n %d exits 0 %s" % (N, err.strip()))
        files = os.path.getsize(x) + os.path.getsize(y)
        ok, text = within("sample --n %d" % N, rss, r0, rss_bound.sample_heap(N, K, D, M, False, THREADS))
        check(ok, text)

        stage1_heap = rss_bound.stage1_heap(N, K, D, False, N, THREADS)
        stage1 = ["stage1", "--x", x, "--y", y, "--samples", str(N), "--threads", str(THREADS)]
        status, rss, err = run([tool] + stage1)
        check(status == 0, "stage1 over all %d samples exits 0 %s" % (N, err.strip()))
        ok, text = within("stage1 --samples %d" % N, rss, r0, stage1_heap)
        check(ok, text)

        status, rss, err = run([tool, "forward", inst, "--x", x, "-o", path("f.npy"), "--threads", str(THREADS)])
        check(status == 0, "forward over all %d samples exits 0 %s" % (N, err.strip()))
        ok, text = within("forward --x (N = %d)" % N, rss, r0, rss_bound.forward_heap(N, K, D, M, False, THREADS))
        check(ok, text)
        check(same_file(path("f.npy"), y), "forward's outputs are the labels sample wrote")
        os.remove(path("f.npy"))

        report = path("report.json")
        stage1_samples = 1_500_000
        status, rss, err = run([tool, "learn", "--x", x, "--y", y, "--m", str(M), "--threads", str(THREADS),
                                "--no-reference", "--stage1-samples", str(stage1_samples), "--report", report])
        check(status in (0, 1), "learn from the files runs (exit %d) %s" % (status, err.strip()[-200:]))
        rep = json.load(open(report))
        constraints = [s["constraints"] for s in rep["stages"] if s["stage"] in ("2", "4") and "constraints" in s]
        events = [s["events"] for s in rep["stages"] if s["stage"] == "3" and "events" in s]
        read = rep["samples_total"]
        check(read >= N // 2, "learn read %d of the %d samples" % (read, N))
        learn_heap, _ = rss_bound.learn_heap(N, K, D, M, False, THREADS, constraints, events,
                                             stage1_samples=stage1_samples)
        ok, text = within("learn (C = %s, E = %s)" % (constraints, events), rss, r0, learn_heap)
        check(ok, text)

        largest = r0 + max(learn_heap, stage1_heap)
        check(files >= FILES_OVER_BOUND * largest,
              "the files (%s) are %.1fx the largest bound (%s)" % (mb(files), files / largest, mb(largest)))

        # Test of the tester: the whole-file reader of mhalearn_faulty must fail the same check.
        status, rss, err = run([a.faulty] + stage1, env={"MHALEARN_WHOLE_DATASET": "1"})
        check(status == 0, "mhalearn_faulty stage1 reading the files whole exits 0 %s" % err.strip())
        ok, text = within("whole-file stage1", rss, r0, stage1_heap)
        check(not ok, "the check rejects a run that reads the files whole: " + text.replace("<=", "is not <="))

    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
