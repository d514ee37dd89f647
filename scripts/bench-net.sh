#!/usr/bin/env bash
# Stage 6 for more heads (docs/bench/net.md): `mhalearn learn` with default
# options and --no-reference on (16,2,m), logit scale 3, instance seed 1, for
# m = 3, 4, 5, on 2 threads under `nice -n 10`, one run at a time; with
# `--mpi`, the m = 4 run again as `mpirun -np 2` with 1 thread per rank. Each
# run's instance, log, report, learned layer and /usr/bin/time figures (wall,
# user, system seconds and the load average before and after) go to
# docs/bench/net/; scripts/net_table.py writes docs/bench/net.md from them.
# The (16,2,3) comparison with the previous stage 6 and the --oracle hull and
# --no-polish runs in docs/bench/net/ were made by hand with the commands
# their logs end with.
set -euo pipefail
cd "$(dirname "$0")/.."
# On a shared machine an idle OpenMP thread that spins at a barrier holds a core
# the busy thread of the same loop is waiting for (perf: 86% of a (16,2,5)
# polishing run's samples in libgomp's wait loop at load 12); passive waiting
# sleeps instead. It does not change any result.
export OMP_WAIT_POLICY=passive
./scripts/build-cli.sh
M=$PWD/build/release/mhalearn
out=docs/bench/net
mkdir -p "$out"
run() {  # run NAME COMMAND...: the command's figures in $out/NAME.time
  local name=$1; shift
  local before; before=$(cut -d' ' -f1-3 /proc/loadavg)
  /usr/bin/time -f "%e %U %S" -o "$out/$name.time" "$@" > "$out/$name.log"
  echo "load $before / $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/$name.time"
  echo "$ ${*}" >> "$out/$name.log"
}
for m in 3 4 5; do
  name=d16_k2_m${m}_scale3_seed1
  "$M" generate --d 16 --k 2 --m "$m" --scale 3 --seed 1 -o "$out/$name.instance.json" >/dev/null
  run "$name" nice -n 10 "$M" learn "$out/$name.instance.json" --seed 1 --threads 2 --no-reference \
      --report "$out/$name.report.json" -o "$out/$name.learned.json"
done
if [[ "${1:-}" == "--mpi" ]]; then
  name=d16_k2_m4_scale3_seed1
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 \
    run "${name}_mpi2" nice -n 10 mpirun -np 2 "$M" learn "$out/$name.instance.json" --seed 1 --threads 1 \
        --no-reference --report "$out/${name}_mpi2.report.json" -o "$out/${name}_mpi2.learned.json"
fi
python3 scripts/net_table.py "$out" > docs/bench/net.md
echo "wrote docs/bench/net.md"
