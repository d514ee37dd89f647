#!/usr/bin/env bash
# Regenerates docs/results.md and every table and figure in it: the paper's
# learner against the Adam baseline side by side, where each fails (phase
# diagram and other regimes), scaling in d and m, and throughput (fast vs
# reference paths, forward pass vs the machine's peak). Records machine,
# commit and seeds on the page. Runs, reports and logs: docs/results/.
#
# Usage: scripts/results.sh            every configuration (about 3.4 h on 2 cores: results.py), each run
#                                      made again in place (no run is deleted first)
#        scripts/results.sh --reuse    the page from the committed runs (a run is made only when none fits)
#        scripts/results.sh --quick    a few configurations per section (29 min at a load of 7–15: results.py)
#        scripts/results.sh --table NAME [--into DIR] [--rows PREFIX ...]
#                                      one table or figure alone: its expected time first, its runs into DIR
#                                      (a new or empty folder outside docs/; default a temporary one), then
#                                      the comparison with the page's (scripts/results_tables.py);
#                                      --table list: every table with its expected time (docs/cite.md)
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
if [[ "${1:-}" == "--table" ]]; then
  case "${2:-}" in
    wsum-figure) exec python3 scripts/wsum.py --tool build/release/mhalearn "${@:3}" ;;
    glance|throughput-ratio|forward) cmake --build --preset release --target mhalearn_bench >/dev/null ;;
  esac
  exec python3 scripts/results.py "$@"
fi
cmake --build --preset release --target mhalearn_bench >/dev/null
if [[ "${1:-}" != "--quick" ]]; then
  reuse=(); [[ " $* " == *" --reuse "* ]] && reuse=(--reuse)
  python3 scripts/wsum.py --tool build/release/mhalearn "${reuse[@]}" >/dev/null   # the stage-1 figure the page embeds
fi
python3 scripts/results.py "$@" --command "scripts/results.sh${*:+ $*}"
