#!/usr/bin/env bash
# The correctly rounded hypot and cbrt against glibc's, per learner run
# (docs/bench/arithmetic.md): two mhalearn builds, one before the pinning and
# one after, each running the two committed paper-variant learner runs, rounds
# interleaved; prints wall, user and system seconds per run and the load
# average at the start and the end.
#
#   scripts/bench-pinned-libm.sh GLIBC_TOOL PINNED_TOOL [ROUNDS]   (default 3 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
glibc=$1 pinned=$2 rounds=${3:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for instance in phase_scale12_coh0.5 d16_k2_m2_scale6_seed1; do
    for build in glibc pinned; do
      tool=$glibc; [[ $build == pinned ]] && tool=$pinned
      /usr/bin/time -o "$scratch/time" -f "%e s wall, %U s user, %S s sys" nice -n 10 "$tool" learn \
        "docs/results/runs/$instance.instance.json" --seed 1 --threads 2 --variant paper --no-reference \
        --report "$scratch/$build.json" > /dev/null
      echo "round $round $instance $build: $(cat "$scratch/time")"
    done
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
