#!/usr/bin/env bash
# A poor man's profiler for runs of hours: the main thread's innermost 12 frames,
# by gdb, once a minute while the process lives (docs/bench/memory.md reads where
# a (128,2,2) round spends its time from these samples).
#
# Usage: scripts/sample-stacks.sh PID OUT   (appends to OUT; needs gdb)
set -uo pipefail
pid=${1:?usage: scripts/sample-stacks.sh PID OUT}
out=${2:?usage: scripts/sample-stacks.sh PID OUT}
while kill -0 "$pid" 2>/dev/null; do
  echo "=== $(date -u +%H:%M:%S)" >> "$out"
  timeout 60 gdb -batch -p "$pid" -ex "thread 1" -ex "bt 12" 2>/dev/null | grep -E "^#" | sed -E 's/ \(.*//' |
    cut -c1-200 >> "$out"
  sleep 60
done
