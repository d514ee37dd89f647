#!/usr/bin/env bash
# The default learner end to end at (128,2,2) (scale 6, seed 1), in segments: a
# run of several hours on 2 cores, checkpointed at every safe point, so that it
# can stop (SIGTERM: at the next safe point) and go on later with --resume. Each
# segment runs under /usr/bin/time (wall, user, system, peak resident set) with
# its resident set sampled every 10 s and, when gdb is installed, its main
# thread's stack every minute (scripts/sample-stacks.sh); docs/bench/memory.md
# sums the segments.
#
# Usage: scripts/run-d128.sh DIR [CARRY [FLAG...]]
#   DIR holds the binary (DIR/mhalearn: a copy, since --resume refuses any other
#   build), the instance (generated here on the first call), the checkpoint
#   (DIR/checkpoint, with up to 2·N·d² doubles of slabs between a round's stage 4
#   and its stage 5: 8.6 GB at N = 2·128²) and the segments' files; the report is
#   DIR/report.json once the run has finished.
#   CARRY, a folder inside the repository, lets the run outlast the machine it
#   started on: each checkpoint taken before a stage 2 or 4, or before polishing,
#   holds no slabs (1.6 MB at d = 128), and the latest is copied there as it appears; when DIR has no
#   checkpoint and CARRY has one, the run resumes from it. The instance is then
#   kept beside CARRY, and the binary must be rebuilt from the commit the
#   manifest names (provenance.git_commit; docs/bench/memory/NOTES.md has the
#   commands), or the run resumed with the FLAG --resume-other-build (the report
#   then names the build that wrote the checkpoint: docs/formats.md).
#   FLAGs are passed on to `mhalearn learn`.
set -euo pipefail
dir=${1:?usage: scripts/run-d128.sh DIR [CARRY [FLAG...]]}
carry=${2:-}
flags=("${@:3}")
tool=$dir/mhalearn
# With CARRY, the repository folder beside it keeps the instance (--resume checks the
# instance's bytes, and a new machine would generate other bytes: its provenance
# names its CPU) and the segments' committed files.
kept=${carry:+$(dirname "$carry")}
instance=${kept:-$dir}/d128_k2_m2_scale6_seed1.instance.json
[[ -x "$tool" ]] || { echo "no $tool: copy the build's mhalearn there first" >&2; exit 2; }
mkdir -p "$(dirname "$instance")"
[[ -f "$instance" ]] || "$tool" generate --d 128 --k 2 --m 2 --scale 6 --seed 1 -o "$instance"

# Copies DIR/checkpoint to CARRY when it is a new checkpoint taken before a sculpt
# or before polishing (no slabs: --no-reference drops them after each stage 5); a copy made while the run replaced the checkpoint is dropped.
carry_checkpoint() {
  local from=$dir/checkpoint manifest=$dir/checkpoint/checkpoint.json
  [[ -n "$carry" && -f "$manifest" ]] || return 0
  grep -Eq "\"safe_point\": \"(before round [0-9]*'s sculpt|before polishing)" "$manifest" || return 0
  cmp -s "$manifest" "$carry/checkpoint.json" && return 0
  local staging=$carry.staging
  rm -rf "$staging" && mkdir -p "$staging"
  cp "$manifest" "$staging/checkpoint.json"
  local name
  for name in $(grep -o 'array-[0-9a-f]*\.npy' "$staging/checkpoint.json" | sort -u); do
    cp "$from/$name" "$staging/$name" 2>/dev/null || { rm -rf "$staging"; return 0; }
  done
  cmp -s "$manifest" "$staging/checkpoint.json" || { rm -rf "$staging"; return 0; }
  rm -rf "$carry" && mv "$staging" "$carry"
  echo "carried: $(grep -o '"safe_point": "[^"]*"' "$carry/checkpoint.json") ($(du -sh "$carry" | cut -f1))"
}

if [[ ! -f "$dir/checkpoint/checkpoint.json" && -n "$carry" && -f "$carry/checkpoint.json" ]]; then
  mkdir -p "$dir/checkpoint" && cp "$carry"/* "$dir/checkpoint/"
fi
# Segments are numbered on from the highest in DIR and, with CARRY, beside it
# (a segment not worth keeping leaves a gap there).
segment=1
for f in "$dir"/segment*.time ${kept:+"$kept"/segment*.time}; do
  [[ -e "$f" ]] || continue
  k=${f##*/segment}; k=${k%.time}
  if (( k >= segment )); then segment=$((k + 1)); fi
done
if [[ -f "$dir/checkpoint/checkpoint.json" ]]; then
  where=(--resume "$dir/checkpoint")
else
  where=(--checkpoint "$dir/checkpoint")
fi
command=(/usr/bin/time -f "%e %U %S %M" -o "$dir/segment$segment.time" "$tool" learn "$instance" --seed 1 --threads 2
         --no-reference "${where[@]}" --report "$dir/report.json" "${flags[@]}")
echo "${command[*]}" > "$dir/segment$segment.command"
"${command[@]}" > "$dir/segment$segment.log" 2>&1 &
timed=$!
sleep 1
pid=$(pgrep -n -f "mhalearn learn $instance")
# Where the time goes: the main thread's stack once a minute, when gdb is there.
sampler=
if command -v gdb >/dev/null; then "$(dirname "$0")/sample-stacks.sh" "$pid" "$dir/segment$segment.stacks" >/dev/null 2>&1 & sampler=$!; fi
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do  # seconds since the segment's start, resident set (kB)
  rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [[ -n "$rss" ]] && echo "$(( $(date +%s) - start )) $rss" >> "$dir/segment$segment.rss"
  carry_checkpoint
  sleep 10
done
wait "$timed" || true
[[ -z "$sampler" ]] || kill "$sampler" 2>/dev/null || true
carry_checkpoint
echo "segment $segment ended: $(cat "$dir/segment$segment.time")"
