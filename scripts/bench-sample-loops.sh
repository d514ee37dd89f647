#!/usr/bin/env bash
# The sample loop of stages 2 and 4 against its floor, the fast forward pass:
# builds mhalearn and mhalearn_bench (release preset), runs BM_FastForward,
# BM_OracleDraw and BM_SculptLoop at (2,16,2), (2,32,2), (2,64,2) in one run,
# profiles stages 1–4 of a default learn with perf (when perf is installed),
# and writes docs/bench/sample_loops.md (scripts/sample_loops_table.py).
#
# Usage: scripts/bench-sample-loops.sh [Google Benchmark flags, replacing the defaults]
#   default: --benchmark_min_time=0.5 --benchmark_repetitions=3 (the table uses
#   the medians; about 3 minutes on 2 cores, plus about 2 for the profile).
#   BUILD_DIR (default build/release) is the build directory. Run it on an
#   otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build/release}
cmake --preset release -B "$build" >/dev/null
cmake --build "$build" --target mhalearn mhalearn_bench -j "$(nproc)"

out=docs/bench/sample_loops
mkdir -p "$out"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--benchmark_min_time=0.5 --benchmark_repetitions=3)
filter='^BM_(FastForward/\(2,(16|32|64),2\)|OracleDraw|SculptLoop)/'
command=("$build/mhalearn_bench" "--benchmark_filter=$filter" --benchmark_out="$out/bench.json"
         --benchmark_out_format=json --benchmark_display_aggregates_only=true "${args[@]}")
echo "== ${command[*]}"
"${command[@]}"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The default instance's learner on one thread (self times then add up to the
# run), without polishing; stages 5–6 are short at (16,2,2), and --no-reference
# drops the reference paths, whose MPFR arithmetic would dominate the profile.
profile_command=()
if command -v perf >/dev/null; then
  "$build/mhalearn" generate -o "$out/d16_k2_m2.instance.json" --quiet
  profile_command=(perf record -o "$out/perf.data" -- "$build/mhalearn" learn "$out/d16_k2_m2.instance.json"
                   --no-polish --no-reference --threads 1 --quiet -o "$out/d16_k2_m2.learned.json")
  echo "== ${profile_command[*]}"
  "${profile_command[@]}"
  perf report -i "$out/perf.data" --no-children --percent-limit 1 --stdio -g none > "$out/profile.txt" 2>/dev/null
  rm -f "$out/perf.data" "$out/perf.data.old"
fi
dirty=$(git diff --quiet HEAD -- src bench 2>/dev/null || echo " with uncommitted changes to src/ or bench/")
python3 - "$out/run.json" <<PY
import json, sys
json.dump({"command": "scripts/bench-sample-loops.sh${*:+ $*}", "profile_command": """${profile_command[*]}""",
           "machine": """$(lscpu | sed -n 's/^Model name: *//p' | head -1)""", "cpus": $(nproc),
           "commit": "$(git rev-parse --short=12 HEAD)$dirty", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
           "load_before": "$load_before", "load_after": "$load_after"}, open(sys.argv[1], "w"), indent=1)
PY
python3 scripts/sample_loops_table.py "$out"
echo "wrote docs/bench/sample_loops.md"
