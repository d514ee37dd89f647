set -e
T=/work/main/build/release/mhalearn
for s in 2 3; do
I=/work/main/docs/results/runs/phase_scale24_coh0.0_seed$s.instance.json
[ -f $I ] || I=$(ls /work/main/docs/results/runs/phase_scale24_coh0.0*seed$s*.instance.json | head -1)
for n in 0 1024; do
  extra=""; [ $n -gt 0 ] && extra="--polish-train-samples $n"
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)" > s${s}n$n.load
  /usr/bin/time -f "%e %U %S %M" -o s${s}n$n.time nice -n 10 $T learn $I --seed 1 --threads 2 --report s${s}n$n.report.json --no-reference $extra > s${s}n$n.log 2>&1
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)" >> s${s}n$n.load
done; done
