#!/usr/bin/env python3
"""docs/bench/centre.md from BM_CentreCompare's JSON (scripts/bench-centre.sh).

Usage: centre_table.py compare.json "LOAD BEFORE" "LOAD AFTER" "COMMAND"
"""
import json
import sys

METHODS = {0: "automatic", 1: "dense", 2: "streamed", 3: "iterative"}


def main():
    path, before, after, command = sys.argv[1:5]
    data = json.load(open(path))
    ctx = data["context"]
    rows = [b for b in data["benchmarks"] if b["name"].startswith("BM_CentreCompare/")]
    print("# The least-squares centre: today's method against the iterative one\n")
    print("One centre (m = 2: one free direction) of a body of N = min(8·d², 2¹⁴) token slabs around a known hull "
          "(tests/support/centre_bodies.hpp `token_hull_body`), n = d² unknowns, 2 threads, each method in its own "
          "forked child (bench/centre_scale.cpp, `BM_CentreCompare`). *Old*: what `automatic` took before the "
          "iterative method (dense at d ≤ 32, streamed beyond); *new*: `CentreMethod::iterative` "
          "(proofs/iterative_centre.md). Wall and CPU time (user + system) of the call alone; peak growth of the "
          "resident set during it (the slabs are held before it and not counted).\n")
    print(f"Command: `{command}` (by `scripts/bench-centre.sh`). Machine: {ctx.get('host_name', '?')}, "
          f"{ctx.get('num_cpus', '?')} CPUs; run {ctx.get('date', '?')}; load average (1, 5, 15 min) before "
          f"{before}, after {after}. The machine was shared with other work: wall times are upper bounds, "
          "CPU times are the cost.\n")
    print("| d | n = d² | slabs | old method | old wall (s) | old CPU (s) | old peak growth (MB) | new wall (s) | "
          "new CPU (s) | new peak growth (MB) | speed-up (wall) | gap s₁/s₀ | sin θ free | ‖Δx0‖/‖x0‖ | "
          "max rel. Δ of 5 smallest s |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for b in rows:
        d = int(b["name"].split("d:")[1])
        old, new = METHODS.get(int(b["old_method"]), "?"), METHODS.get(int(b["new_method"]), "?")
        if new != "iterative":
            new += " (fell back)"
        print(f"| {d} | {d * d} | {int(b['slabs'])} | {old} | {b['old_seconds']:.3g} | {b['old_cpu_seconds']:.3g} | "
              f"{b['old_peak_growth_bytes'] / 1e6:.0f} | {b['new_seconds']:.3g} | {b['new_cpu_seconds']:.3g} | "
              f"{b['new_peak_growth_bytes'] / 1e6:.0f} | {b['old_seconds'] / b['new_seconds']:.1f}× | "
              f"{b.get('gap', float('nan')):.3g} | {b.get('sin_free', float('nan')):.2e} | "
              f"{b.get('x0_relative', float('nan')):.2e} | {b.get('values_relative', float('nan')):.2e} |")
    print("\nThe last three columns compare the two computations of the same centre: the new one's error is "
          "bounded a posteriori by its residuals (MATH.md Lemma 3.2.9), checked against the MPFR reference by "
          "`property_tests/span_fast_vs_reference.cpp` at d ≤ 12; here the old method stands in for the "
          "reference.")


if __name__ == "__main__":
    main()
