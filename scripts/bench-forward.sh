#!/usr/bin/env bash
# Forward-pass throughput: builds mhalearn_bench and the Python module
# (release preset), runs the benchmark, then mhalearn's fast path and PyTorch
# side by side, interleaved, on 1 thread (scripts/forward_vs_torch.py), stores
# the raw results in docs/bench/forward.json and docs/bench/forward_vs_torch.json
# (with what made them in docs/bench/forward.provenance.json) and writes
# docs/benchmarks.md (scripts/forward_table.py).
#
# Usage: scripts/bench-forward.sh [Google Benchmark flags, replacing the defaults]
#   default: --benchmark_min_time=0.5 --benchmark_repetitions=3 (the table
#   uses the median of the repetitions; about 1.5 minutes on 2 cores), e.g.
#   scripts/bench-forward.sh --benchmark_min_time=2 --benchmark_repetitions=5
#   for steadier numbers. TORCH_ROUNDS (default 3) sets the side-by-side
#   rounds. Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
cmake --preset release >/dev/null
cmake --build build/release --target mhalearn mhalearn_bench mhalearn_python -j "$jobs"

mkdir -p docs/bench
# What made the runs (the checkout's commit, the machine's CPU, the build's version and fingerprint, which
# `mhalearn --version` of the same build prints): the page's machine, commit and learner lines come from it,
# not from the host that writes the page.
provenance=$(python3 scripts/experiments.py provenance build/release/mhalearn build/release/mhalearn_bench)
printf '{"forward.json": %s,\n "forward_vs_torch.json": %s}\n' "$provenance" "$provenance" \
  > docs/bench/forward.provenance.json
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--benchmark_min_time=0.5 --benchmark_repetitions=3)
# The forward pass and the GEMM peak only (mhalearn_bench also holds the
# polishing benchmarks of docs/bench/polish.md, which take minutes).
args=(--benchmark_filter='^BM_(FastForward|ReferenceForward|GemmPeak)' "${args[@]}")
command=(build/release/mhalearn_bench --benchmark_format=console
         --benchmark_out=docs/bench/forward.json --benchmark_out_format=json
         --benchmark_display_aggregates_only=true "${args[@]}")

echo "== ${command[*]}"
"${command[@]}"

# PyTorch from Debian (python3-torch, for /usr/bin/python3) over OpenBLAS
# (libopenblas0-pthread; the reference BLAS is ~10x slower), one thread each.
torch_command=(/usr/bin/python3 scripts/forward_vs_torch.py --bench build/release/mhalearn_bench
               --rounds "${TORCH_ROUNDS:-3}" --out docs/bench/forward_vs_torch.json)
echo "== ${torch_command[*]}"
PYTHONPATH="$PWD/build/release/python" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "${torch_command[@]}"

python3 scripts/forward_table.py docs/bench/forward.json --torch docs/bench/forward_vs_torch.json \
  --command "scripts/bench-forward.sh${*:+ $*}" --bench-command "${command[*]}" \
  --out docs/benchmarks.md
echo "== wrote docs/benchmarks.md"
