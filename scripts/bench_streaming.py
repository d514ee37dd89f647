#!/usr/bin/env python3
"""Datasets bigger than memory (docs/bench/streaming.md): peak RSS and throughput of

  sample   --n N                      writing N samples block by block,
  stage1   --samples N                reading every sample of the files,
  learn    --stage1-samples 0.9·N     the paper's stages and polishing, reading most of them,

at (d, k, m) = (16, 2, 2), each next to its bound R0 + H (tests/cli/rss_bound.py).
Every command runs under GNU time (%M: the child's ru_maxrss). The files are
deleted at the end. Writes the figures as JSON (--out) and prints a Markdown table.

  scripts/bench_streaming.py --tool build/release/mhalearn --n 100000000 --dir /var/tmp/stream --out docs/bench/streaming.json
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
sys.path.insert(0, HERE)
import rss_bound  # noqa: E402
from experiments import cpu_model, table  # noqa: E402

D, K, M, THREADS = 16, 2, 2, 2


def timed(tool, args, log):
    """(exit status, peak RSS bytes, wall s, user s, sys s) of one run under GNU time."""
    stats = log + ".time"
    with open(log, "w") as out:
        r = subprocess.run(["/usr/bin/time", "-f", "%M %e %U %S", "-o", stats, tool] + args, stdout=out,
                           stderr=subprocess.STDOUT)
    kb, wall, user, system = open(stats).read().split()[-4:]
    return r.returncode, int(kb) * 1024, float(wall), float(user), float(system)


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--n", type=int, default=100_000_000)
    ap.add_argument("--dir", required=True, help="where the dataset files go (deleted at the end)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    p = lambda name: os.path.join(a.dir, name)
    n = a.n
    subprocess.run([a.tool, "generate", "--d", str(D), "--k", str(K), "--m", str(M), "--scale", "6", "--seed", "1",
                    "-o", p("inst.json")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([a.tool, "sample", p("inst.json"), "--n", "1", "--x", p("x1.npy"), "--y", p("y1.npy")], check=True,
                   stdout=subprocess.DEVNULL)
    _, r0_run, *_ = timed(a.tool, ["stage1", "--x", p("x1.npy"), "--y", p("y1.npy"), "--samples", "1",
                                   "--threads", str(THREADS)], p("r0.log"))
    r0 = r0_run + os.path.getsize(a.tool)
    results = {"d": D, "k": K, "m": M, "n": n, "threads": THREADS, "r0_bytes": r0, "r0_run_bytes": r0_run,
               "executable_bytes": os.path.getsize(a.tool), "cpu": cpu_model("unknown"), "commit": commit(), "runs": []}
    x, y = p("x.npy"), p("y.npy")
    stage1_samples = n * 9 // 10
    runs = [
        ("sample", ["sample", p("inst.json"), "--n", str(n), "--threads", str(THREADS), "--x", x, "--y", y],
         lambda rep: rss_bound.sample_heap(n, K, D, M, False, THREADS)),
        ("stage1", ["stage1", "--x", x, "--y", y, "--samples", str(n), "--threads", str(THREADS)],
         lambda rep: rss_bound.stage1_heap(n, K, D, False, n, THREADS)),
        ("learn", ["learn", "--x", x, "--y", y, "--m", str(M), "--threads", str(THREADS), "--no-reference",
                   "--stage1-samples", str(stage1_samples), "--report", p("learn.json")],
         lambda rep: learn_heap(n, rep, stage1_samples)),
    ]
    try:
        for name, args, heap in runs:
            before = load()
            t0 = time.time()
            status, rss, wall, user, system = timed(a.tool, args, p(name + ".log"))
            rep = json.load(open(p("learn.json"))) if name == "learn" and os.path.exists(p("learn.json")) else None
            read = rep["samples_total"] if rep else n
            files = os.path.getsize(x) + os.path.getsize(y)
            h = heap(rep)
            row = {"command": "mhalearn " + " ".join(arg.replace(a.dir + "/", "") for arg in args), "exit": status,
                   "peak_rss_bytes": rss, "bound_bytes": r0 + h, "heap_bound_bytes": h, "wall_seconds": wall,
                   "user_seconds": user, "system_seconds": system, "samples": read,
                   "samples_per_second": read / wall, "file_bytes": files,
                   "bytes_per_second": files * read / n / wall, "load_before": before, "load_after": load(),
                   "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t0))}
            if rep:
                row["report"] = {"samples_total": rep["samples_total"], "ok": rep["ok"], "message": rep["message"],
                                 "stages": [[s["stage"], s.get("round", -1), s["samples"], s["seconds"]]
                                            for s in rep["stages"]]}
            results["runs"].append(row)
            print(json.dumps(row), flush=True)
            if status != 0:
                break
    finally:
        for f in os.listdir(a.dir):
            if f.endswith(".npy"):
                os.remove(p(f))
    with open(a.out, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    print("\n" + "\n".join(markdown(results)))


def markdown(results):
    """The runs' figures as a Markdown table."""
    return table(["command", "exit", "samples", "wall s", "CPU s (user + sys)", "samples/s", "MB/s", "peak RSS",
                  "bound R0 + H"],
                 [[f"`{r['command']}`", "%d" % r["exit"], "%d" % r["samples"], "%.0f" % r["wall_seconds"],
                   "%.0f + %.0f" % (r["user_seconds"], r["system_seconds"]), "%.3g" % r["samples_per_second"],
                   "%.0f" % (r["bytes_per_second"] / 1e6), "%.1f MB" % (r["peak_rss_bytes"] / 1e6),
                   "%.1f MB" % (r["bound_bytes"] / 1e6)] for r in results["runs"]])


def learn_heap(n, rep, stage1_samples):
    constraints = [s["constraints"] for s in rep["stages"] if s["stage"] in ("2", "4") and "constraints" in s]
    events = [s["events"] for s in rep["stages"] if s["stage"] == "3" and "events" in s]
    return rss_bound.learn_heap(n, K, D, M, False, THREADS, constraints, events, stage1_samples=stage1_samples)[0]


def commit():
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=HERE).stdout.strip()


if __name__ == "__main__":
    main()
