set -e
T=/work/main/build/release/mhalearn
I=/work/main/docs/results/runs/phase_scale24_coh0.0.instance.json
for n in 0 1024; do
  extra=""; [ $n -gt 0 ] && extra="--polish-train-samples $n"
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)" > n$n.load
  /usr/bin/time -f "%e %U %S %M" -o n$n.time nice -n 10 $T learn $I --seed 1 --threads 2 --report n$n.report.json --no-reference $extra > n$n.log 2>&1
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)" >> n$n.load
done
