#!/usr/bin/env bash
# Regenerates docs/results.md and every table and figure in it from scratch:
# the paper's learner against the Adam baseline side by side, where each fails
# (phase diagram and other regimes), scaling in d and m, and throughput (fast
# vs reference paths, forward pass vs the machine's peak). Records machine,
# commit and seeds on the page. Runs, reports and logs: docs/results/.
#
# Usage: scripts/results.sh            every configuration (about 3.4 h on 2 cores: results.py)
#        scripts/results.sh --quick    a few configurations per section (29 min at a load of 7–15: results.py)
#        scripts/results.sh --check [all | RUN ...]
#                                      re-run committed runs and compare their report
#                                      bytes, timings excluded (scripts/check_runs.py)
# Run it on an otherwise idle machine: the page reports wall times.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build-cli.sh
if [[ "${1:-}" == "--check" ]]; then
  exec python3 scripts/check_runs.py "${@:2}"
fi
cmake --build --preset release --target mhalearn_bench >/dev/null
if [[ "${1:-}" != "--quick" ]]; then
  reuse=(); [[ " $* " == *" --reuse "* ]] && reuse=(--reuse)
  python3 scripts/wsum.py --tool build/release/mhalearn "${reuse[@]}" >/dev/null   # the stage-1 figure the page embeds
fi
[[ " $* " == *" --reuse "* ]] || rm -rf docs/results
python3 scripts/results.py "$@" --command "scripts/results.sh${*:+ $*}"
