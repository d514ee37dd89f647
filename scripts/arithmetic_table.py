#!/usr/bin/env python3
"""Times the reproducible and the native build side by side (scripts/bench-arithmetic.sh).

For each round, in alternation: the fast forward-pass benchmarks (Google
Benchmark, 1 thread, examples/s) and `mhalearn learn` on the default instance
(wall seconds, 2 threads). Reports medians over the rounds and the ratio
native / reproducible, and whether the two builds' learned layers have the
same bytes.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import cpu_model, table  # noqa: E402

BUILDS = {"reproducible": "build/release", "native": "build/native"}
FILTER = "FastForward/.*threads:1"


def forward_rates(build):
    out = subprocess.run([os.path.join(build, "mhalearn_bench"), f"--benchmark_filter={FILTER}",
                          "--benchmark_min_time=0.5", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"]: b["items_per_second"] for b in json.loads(out)["benchmarks"]}


def learn_seconds(build, instance, folder):
    learned = os.path.join(folder, os.path.basename(build) + ".learned.json")
    t0 = time.time()
    subprocess.run([os.path.join(build, "mhalearn"), "learn", instance, "--seed", "1", "--threads", "2",
                    "-o", learned], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.time() - t0, learned


def heads_bytes(path):
    return json.dumps(json.load(open(path))["heads"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--instance", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    fwd = {k: [] for k in BUILDS}
    secs = {k: [] for k in BUILDS}
    learned = {}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(a.rounds):
            for name, build in BUILDS.items():
                fwd[name].append(forward_rates(build))
                s, learned[name] = learn_seconds(build, a.instance, folder)
                secs[name].append(s)
        same = heads_bytes(learned["reproducible"]) == heads_bytes(learned["native"])
    cpu = cpu_model("?")
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"Produced by `{a.command}` on {cpu} ({os.cpu_count()} cores), "
             f"{datetime.date.today()}, commit {commit}; {a.rounds} interleaved rounds, medians.", ""]
    cells = []
    for bench in sorted(fwd["reproducible"][0]):
        r = statistics.median(x[bench] for x in fwd["reproducible"])
        n = statistics.median(x[bench] for x in fwd["native"])
        cells.append([f"forward {bench}, examples/s", f"{r:.3g}", f"{n:.3g}", f"{n / r:.2f}×"])
    r, n = statistics.median(secs["reproducible"]), statistics.median(secs["native"])
    cells.append(["`mhalearn learn` default instance (16,2,2) scale 6, 2 threads, wall s", f"{r:.1f}", f"{n:.1f}",
                  f"{r / n:.2f}×"])
    lines += table(["what", "reproducible (x86-64-v3, no contraction, fixed Eigen blocking)", "native (-march=native)",
                    "speed, native ÷ reproducible"], cells, "lrrr")
    lines += ["", f"The two builds' learned layers have {'the same' if same else 'different'} bytes."]
    open(a.out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
