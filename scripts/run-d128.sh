#!/usr/bin/env bash
# The default learner end to end at (128,2,2) (scale 6, seed 1), in segments: a
# run of several hours on 2 cores, checkpointed at every safe point, so that it
# can stop (SIGTERM: at the next safe point) and go on later with --resume. Each
# segment runs under /usr/bin/time (wall, user, system, peak resident set) with
# its resident set sampled every 10 s and, when gdb is installed, its main
# thread's stack every minute (scripts/sample-stacks.sh); docs/bench/memory.md
# sums the segments.
#
# Usage: scripts/run-d128.sh DIR
#   DIR holds the binary (DIR/mhalearn: a copy, since --resume refuses any other
#   build), the instance (generated here on the first call), the checkpoint
#   (DIR/checkpoint, about 2·N·d² doubles of slabs: 8.6 GB at N = 2·128²) and the
#   segments' files; the report is DIR/report.json once the run has finished.
set -euo pipefail
dir=${1:?usage: scripts/run-d128.sh DIR}
tool=$dir/mhalearn
instance=$dir/d128_k2_m2_scale6_seed1.instance.json
[[ -x "$tool" ]] || { echo "no $tool: copy the build's mhalearn there first" >&2; exit 2; }
[[ -f "$instance" ]] || "$tool" generate --d 128 --k 2 --m 2 --scale 6 --seed 1 -o "$instance"

segment=1
while [[ -e "$dir/segment$segment.time" ]]; do segment=$((segment + 1)); done
if [[ -f "$dir/checkpoint/checkpoint.json" ]]; then
  where=(--resume "$dir/checkpoint")
else
  where=(--checkpoint "$dir/checkpoint")
fi
command=(/usr/bin/time -f "%e %U %S %M" -o "$dir/segment$segment.time" "$tool" learn "$instance" --seed 1 --threads 2
         --no-reference "${where[@]}" --report "$dir/report.json")
echo "${command[*]}" > "$dir/segment$segment.command"
"${command[@]}" > "$dir/segment$segment.log" 2>&1 &
sleep 1
pid=$(pgrep -n -f "mhalearn learn $instance")
# Where the time goes: the main thread's stack once a minute, when gdb is there.
if command -v gdb >/dev/null; then "$(dirname "$0")/sample-stacks.sh" "$pid" "$dir/segment$segment.stacks" & fi
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do  # seconds since the segment's start, resident set (kB)
  rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [[ -n "$rss" ]] && echo "$(( $(date +%s) - start )) $rss" >> "$dir/segment$segment.rss"
  sleep 10
done
wait || true
echo "segment $segment ended: $(cat "$dir/segment$segment.time")"
