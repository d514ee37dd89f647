#!/usr/bin/env bash
# Forward-pass throughput: builds mhalearn_bench (release preset), runs it,
# stores the raw results in docs/bench/forward.json and writes the summary
# table docs/benchmarks.md (scripts/forward_table.py).
#
# Usage: scripts/bench-forward.sh [Google Benchmark flags, replacing the defaults]
#   default: --benchmark_min_time=0.5 --benchmark_repetitions=3 (the table
#   uses the median of the repetitions; about 1.5 minutes on 2 cores), e.g.
#   scripts/bench-forward.sh --benchmark_min_time=2 --benchmark_repetitions=5
#   for steadier numbers. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
cmake --preset release >/dev/null
cmake --build build/release --target mhalearn_bench -j "$jobs"

mkdir -p docs/bench
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--benchmark_min_time=0.5 --benchmark_repetitions=3)
command=(build/release/mhalearn_bench --benchmark_format=console
         --benchmark_out=docs/bench/forward.json --benchmark_out_format=json
         --benchmark_display_aggregates_only=true "${args[@]}")

echo "== ${command[*]}"
"${command[@]}"

python3 scripts/forward_table.py docs/bench/forward.json \
  --command "scripts/bench-forward.sh${*:+ $*}" --bench-command "${command[*]}" \
  --out docs/benchmarks.md
echo "== wrote docs/benchmarks.md"
