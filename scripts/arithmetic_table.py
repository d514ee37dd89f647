#!/usr/bin/env python3
"""Times the reproducible build, its portable variant and the native build side
by side (scripts/bench-arithmetic.sh).

For each round, in alternation: the fast forward-pass benchmarks (Google
Benchmark, 1 thread, examples/s) and `mhalearn learn` on the default instance
(wall seconds and CPU seconds, 2 threads). Reports medians over the rounds, each
build's speed relative to the reproducible one, and which builds' learned
layers have the same bytes.
"""
import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import cpu_model, table, tool_fingerprint  # noqa: E402

# The reproducible build (preset release: AVX2 packets in Eigen), its portable
# variant (preset portable: Eigen without packets, the bytes of aarch64 too) and
# the native one (preset native: -march=native).
BUILDS = {"reproducible": "build/release", "portable": "build/portable", "native": "build/native"}
LABELS = {"reproducible": "reproducible (x86-64-v3, no contraction, fixed Eigen blocking)",
          "portable": "portable (as reproducible, Eigen without vector packets)",
          "native": "native (-march=native)"}
FILTER = "FastForward/.*threads:1"


def forward_rates(build):
    out = subprocess.run([os.path.join(build, "mhalearn_bench"), f"--benchmark_filter={FILTER}",
                          "--benchmark_min_time=0.5", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"]: b["items_per_second"] for b in json.loads(out)["benchmarks"]}


def learn_seconds(build, instance, folder):
    """(wall seconds, CPU seconds of the child, the learned file)."""
    learned = os.path.join(folder, os.path.basename(build) + ".learned.json")
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([os.path.join(build, "mhalearn"), "learn", instance, "--seed", "1", "--threads", "2",
                    "-o", learned], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.time() - t0, (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime), learned


def learner(build):
    """The build's learner as the pages name it: its fingerprint's first 8 hex digits (`mhalearn --version`)."""
    fingerprint = tool_fingerprint(os.path.join(build, "mhalearn"))
    return f"`{fingerprint[:8]}`" if fingerprint else "not recorded"


def heads_bytes(path):
    return json.dumps(json.load(open(path))["heads"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--instance", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--builds", default=",".join(BUILDS), help="which builds, comma-separated (default: all three)")
    ap.add_argument("--learn-only", action="store_true", help="time the learner only (no forward-pass benchmark)")
    a = ap.parse_args()
    for name in set(BUILDS) - set(a.builds.split(",")):
        del BUILDS[name]
    fwd = {k: [] for k in BUILDS}
    secs = {k: [] for k in BUILDS}
    cpu_secs = {k: [] for k in BUILDS}
    learned = {}
    load0 = open("/proc/loadavg").read().split()[:3]
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(a.rounds):
            for name, build in BUILDS.items():
                fwd[name].append(forward_rates(build) if not a.learn_only else {})
                s, c, learned[name] = learn_seconds(build, a.instance, folder)
                secs[name].append(s)
                cpu_secs[name].append(c)
        layers = {name: heads_bytes(path) for name, path in learned.items()}
    load1 = open("/proc/loadavg").read().split()[:3]
    cpu = cpu_model("?")
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"Produced by `{a.command}` on {cpu} ({os.cpu_count()} cores), "
             f"{datetime.date.today()}, commit {commit}; {a.rounds} interleaved rounds, medians; "
             f"load average {' '.join(load0)} at the start, {' '.join(load1)} at the end.", ""]
    names = list(BUILDS)
    cells = []
    for bench in sorted(fwd["reproducible"][0]):
        rates = {n: statistics.median(x[bench] for x in fwd[n]) for n in names}
        cells.append([f"forward {bench}, examples/s"] + [f"{rates[n]:.3g}" for n in names]
                     + [f"{rates[n] / rates['reproducible']:.2f}×" for n in names if n != "reproducible"] + ["–"])
    wall = {n: statistics.median(secs[n]) for n in names}
    cpu_time = {n: statistics.median(cpu_secs[n]) for n in names}
    cells.append(["`mhalearn learn` default instance (16,2,2) scale 6, 2 threads, wall s (CPU s)"]
                 + [f"{wall[n]:.1f} ({cpu_time[n]:.1f})" for n in names]
                 + [f"{wall['reproducible'] / wall[n]:.2f}×" for n in names if n != "reproducible"]
                 + ["; ".join(f"{n}: {learner(b)}" for n, b in BUILDS.items())])
    others = [n for n in names if n != "reproducible"]
    lines += table(["what"] + [LABELS[n] for n in names] + [f"speed, {n} ÷ reproducible" for n in others]
                   + ["learner"], cells, "l" + "r" * (len(names) + len(others)) + "l")
    same = [n for n in others if layers[n] == layers["reproducible"]]
    differ = [n for n in others if layers[n] != layers["reproducible"]]
    lines += ["", "Learned layers with the reproducible build's bytes: " + (", ".join(same) or "none")
              + "; with other bytes: " + (", ".join(differ) or "none") + "."]
    open(a.out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
