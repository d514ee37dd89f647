#!/usr/bin/env bash
# The learner's memory at large d: builds mhalearn and mhalearn_bench (release
# preset), times the body's least-squares centre against d for both methods
# (bench/centre_scale.cpp: time and peak resident growth of the call alone),
# runs the default learner end to end on the (64,2,2) instance of
# docs/targets/ (scale 6, seed 1) under /usr/bin/time with its resident set
# sampled every 2 s, and writes docs/bench/memory.md (scripts/memory_table.py).
#
# Usage: scripts/bench-memory.sh [--centre-only]
#   About 12 minutes on 2 cores (the learn about 8, the centres about 4).
#   BUILD_DIR (default build/release) is the build directory. Run it on an
#   otherwise idle machine: the page states the load.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build/release}
cmake --preset release -B "$build" >/dev/null
cmake --build "$build" --target mhalearn mhalearn_bench -j "$(nproc)"

# What the binaries were built from (sources edited during the run do not count).
dirty=$(git diff --quiet HEAD -- src bench 2>/dev/null || echo " with uncommitted changes to src/ or bench/")
out=docs/bench/memory
mkdir -p "$out"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
centre_command=("$build/mhalearn_bench" '--benchmark_filter=^BM_Centre/' --benchmark_out="$out/centre.json"
                --benchmark_out_format=json)
echo "== ${centre_command[*]}"
"${centre_command[@]}"

learn_command=()
if [[ "${1:-}" != --centre-only ]]; then
  instance=docs/targets/d64_k2_m2_scale6_seed1.instance.json
  learn_command=(/usr/bin/time -f "%e %U %S %M" -o "$out/d64_k2_m2_scale6_seed1.time" "$build/mhalearn" learn "$instance"
                 --seed 1 --threads 2 --no-reference --report "$out/d64_k2_m2_scale6_seed1.report.json")
  echo "== ${learn_command[*]}"
  "${learn_command[@]}" > "$out/d64_k2_m2_scale6_seed1.log" 2>&1 &
  sleep 1
  pid=$(pgrep -n -f "mhalearn learn $instance")
  start=$(date +%s.%N)
  : > "$out/d64_k2_m2_scale6_seed1.rss"
  while kill -0 "$pid" 2>/dev/null; do  # seconds since the start, resident set (kB)
    rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n "$rss" ]] && awk -v now="$(date +%s.%N)" -v start="$start" -v rss="$rss" \
      'BEGIN { printf "%.1f %s\n", now - start, rss }' >> "$out/d64_k2_m2_scale6_seed1.rss"
    sleep 2
  done
  wait
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$out/run.json" <<PY
import json, sys
json.dump({"command": "scripts/bench-memory.sh${*:+ $*}", "centre_command": """${centre_command[*]}""",
           "learn_command": """${learn_command[*]}""",
           "machine": """$(lscpu | sed -n 's/^Model name: *//p' | head -1)""", "cpus": $(nproc),
           "commit": "$(git rev-parse --short=12 HEAD)$dirty", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
           "load_before": "$load_before", "load_after": "$load_after"}, open(sys.argv[1], "w"), indent=1)
PY
python3 scripts/memory_table.py "$out"
echo "wrote docs/bench/memory.md"
