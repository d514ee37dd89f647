#!/usr/bin/env bash
# The learner over MPI ranks on this machine: `mpirun -np 1` and `-np 2` (one
# thread per rank) at (32,2,2) and (16,2,3), scale 6, seed 1, each under
# /usr/bin/time, then docs/bench/scaling.md (scripts/scaling_table.py): wall and
# CPU, each stage's time on 1 and 2 ranks, the bytes the ranks exchanged, and
# a model of strong scaling to 64 ranks.
#
# Usage: scripts/bench-scaling.sh
#   About 16 minutes on 2 cores (the (16,2,3) runs make two final rounds: 517 s
#   and 272 s at 867d262). BUILD_DIR (default build/release) is the build
#   directory; it needs MPI (libopenmpi-dev). Run it on an otherwise idle machine:
#   the page states the load.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build/release}
cmake --preset release -B "$build" >/dev/null
cmake --build "$build" --target mhalearn -j "$(nproc)"
mpirun=$(command -v mpirun || true)
[[ -n "$mpirun" ]] || { echo "bench-scaling: mpirun not found (apt-get install openmpi-bin)" >&2; exit 2; }
# Open MPI on one machine, as root: shared memory between the ranks (tests/cli/mpi_net.py).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
       OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 OMP_WAIT_POLICY=passive

# What the binary was built from (sources edited during the run do not count).
dirty=$(git diff --quiet HEAD -- src 2>/dev/null || echo " with uncommitted changes to src/")
out=docs/bench/scaling
mkdir -p "$out"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for shape in "32 2 2" "16 2 3"; do
  read -r d k m <<< "$shape"
  name=d${d}_k${k}_m${m}_scale6_seed1
  "$build/mhalearn" generate --d "$d" --k "$k" --m "$m" --scale 6 --seed 1 -o "$out/$name.instance.json" --quiet
  for np in 1 2; do
    run=${name}_np$np
    command=(/usr/bin/time -f "%e %U %S %M" -o "$out/$run.time" "$mpirun" -np "$np" "$build/mhalearn" learn
             "$out/$name.instance.json" --seed 1 --threads 1 --no-reference --report "$out/$run.report.json")
    echo "== ${command[*]}"
    { echo "\$ ${command[*]}"; "${command[@]}"; } > "$out/$run.log" 2>&1
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$out/run.json" <<PY
import json, sys
json.dump({"command": "scripts/bench-scaling.sh", "mpirun": "$mpirun", "mpi": """$("$mpirun" --version | head -1)""",
           "machine": """$(lscpu | sed -n 's/^Model name: *//p' | head -1)""", "cpus": $(nproc),
           "commit": "$(git rev-parse --short=12 HEAD)$dirty", "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
           "load_before": "$load_before", "load_after": "$load_after"}, open(sys.argv[1], "w"), indent=1)
PY
python3 scripts/scaling_table.py "$out"
echo "wrote docs/bench/scaling.md"
