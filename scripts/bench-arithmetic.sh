#!/usr/bin/env bash
# The speed cost of the reproducible build and of its portable variant: the forward-pass benchmark and the
# default learn, each run on the reproducible build (preset release) and on the
# native build (preset native, -march=native), interleaved in one run on this
# machine. Writes docs/bench/arithmetic.md, which docs/benchmarks.md includes.
#
# Usage: scripts/bench-arithmetic.sh [rounds]   (default 3; about 4 min on 2 cores)
# Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
./scripts/install-deps.sh >/dev/null
for preset in release portable native; do
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" --target mhalearn mhalearn_bench -j "$(nproc)" >/dev/null
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build/release/mhalearn generate --d 16 --k 2 --m 2 --scale 6 --seed 1 -o "$work/inst.json" >/dev/null
mkdir -p docs/bench
python3 scripts/arithmetic_table.py --rounds "$rounds" --instance "$work/inst.json" \
  --command "scripts/bench-arithmetic.sh${*:+ $*}" --out docs/bench/arithmetic.md
echo "== wrote docs/bench/arithmetic.md"
