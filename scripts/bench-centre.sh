#!/usr/bin/env bash
# Today's least-squares centre against the iterative one (bench/centre_scale.cpp,
# BM_CentreCompare: d = 32, 48, 64, each method in its own forked child on 2
# threads: wall, CPU, peak resident growth, and how far the two centres are
# apart), then docs/bench/centre.md (scripts/centre_table.py).
#
# Usage: scripts/bench-centre.sh   (a few minutes on 2 cores; run under nice on a
#   shared machine: the page states the load before and after)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build/release}
out=docs/bench/centre
mkdir -p "$out"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
command=("$build/mhalearn_bench" '--benchmark_filter=^BM_CentreCompare/' --benchmark_out="$out/compare.json"
         --benchmark_out_format=json)
echo "== ${command[*]}"
/usr/bin/time -f "%e %U %S %M" -o "$out/compare.time" "${command[@]}"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 scripts/centre_table.py "$out/compare.json" "$load_before" "$load_after" "${command[*]}" > docs/bench/centre.md
echo "wrote docs/bench/centre.md"
