#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) with clang++-14 into build/fuzz and
# runs each for the given seconds (default 10) from its seed corpus, with a
# fixed seed and limits. Prints one line per harness; exits non-zero when any
# harness finds a crash, a sanitizer report, a leak, a timeout or a failed
# invariant (its reproducer is left in build/fuzz/findings/<harness>/).
# Each harness runs in-process, one at a time (no -jobs/-workers).
#   scripts/fuzz.sh [seconds] [harness ...]    (harnesses: npy instance_json import forward_x checkpoint; default all)
# MHALEARN_FUZZ_JOBS sets the build's parallel jobs (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-10}
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -ge 1 ]] || { echo "usage: scripts/fuzz.sh [seconds >= 1] [harness ...]" >&2; exit 2; }
shift $(( $# > 0 ? 1 : 0 ))
only=" $* "
build=build/fuzz
command -v clang++-14 >/dev/null || { echo "scripts/fuzz.sh: clang++-14 not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

cmake -S fuzz -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" >/dev/null
# A failed build must say so in the test log, not end the script silently.
if ! cmake --build "$build" -j "${MHALEARN_FUZZ_JOBS:-2}" > "$build/build.log" 2>&1; then
  echo "scripts/fuzz.sh: the harnesses did not build; the end of $build/build.log:" >&2
  grep -E "error|FAILED" "$build/build.log" | tail -20 >&2
  exit 1
fi

# harness  corpus  dictionary  max_len (bytes)
harnesses=(
  "npy            npy            npy.dict   4096"
  "instance_json  instance_json  json.dict  16384"
  "import         import         npy.dict   8192"
  "forward_x      forward_x      npy.dict   4096"
  "checkpoint     checkpoint     checkpoint.dict  32768"
)

status=0
for row in "${harnesses[@]}"; do
  read -r name corpus dict max_len <<<"$row"
  [[ "$only" == "  " || "$only" == *" $name "* ]] || continue
  # A scratch copy of the seeds: new inputs found by the run stay out of git.
  work="$build/corpus/$name"
  findings="$build/findings/$name"
  rm -rf "$work" "$findings"
  mkdir -p "$work" "$findings"
  cp fuzz/corpus/"$corpus"/* "$work"/
  log="$build/$name.log"
  set +e
  "$build/fuzz_$name" "$work" -dict="fuzz/$dict" -seed=1 -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -artifact_prefix="$findings/" -print_final_stats=1 \
    >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  found=$(find "$findings" -type f | wc -l)
  if [[ $rc -ne 0 || $found -ne 0 ]]; then
    echo "fuzz_$name: FINDING (exit $rc, ${execs:-?} execs, cov ${cov:-?}); reproducer in $findings, log $log"
    status=1
  else
    echo "fuzz_$name: ok, ${execs:-?} execs in ${seconds} s, cov ${cov:-?}, 0 findings"
  fi
done
exit $status
