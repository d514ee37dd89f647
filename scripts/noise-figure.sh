#!/usr/bin/env bash
# Regenerates docs/noise.md, docs/figures/noise_errors.svg and noise_sqrt_n.svg
# (data: docs/data/noise_*.tsv): the learner at (16,2,2), logit scale 6,
# instance seed 1, on labels with Gaussian noise of relative size 0, 1e-12 …
# 1e-2 (`--label-noise`), and on float32 labels (sampled, cast to float32 with
# numpy, learned from --x/--y); then the final fit's error against its sample
# count at noise 1e-4 (`--final-fit-samples`). Reports and logs go to
# docs/bench/noise/. Runs at nice 10, one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build-cli.sh
M=./build/release/mhalearn
out=docs/bench/noise
mkdir -p "$out" docs/figures docs/data
run() { nice -n 10 "$M" "$@"; }

run generate --d 16 --k 2 --m 2 --scale 6 --seed 1 -o "$out/instance.json" >/dev/null
# 1. Gaussian label noise (certification assumes the same level: --assume-label-noise defaults to it).
for eps in 0 1e-12 1e-10 1e-8 1e-6 1e-4 1e-2; do
  run learn "$out/instance.json" --seed 1 --threads 2 --label-noise "$eps" \
      --report "$out/noise_$eps.report.json" -o "$out/noise_$eps.learned.json" > "$out/noise_$eps.log" 2>&1 || true
  echo "noise $eps done" >&2
done
# 2. float32 labels: 6e6 samples (the paper's stages use ~5.3e6 of them at this seed), labels cast with numpy.
run sample "$out/instance.json" --n 6000000 --seed 1 --threads 2 --x "$out/X.npy" --y "$out/Y.npy" >/dev/null
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[2], np.load(sys.argv[1]).astype(np.float32))" \
    "$out/Y.npy" "$out/Y32.npy"
rm -f "$out/Y.npy"
# The learner does not know the truth of a dataset: the paper's layer (--no-polish), the polished one
# (--final-fit-samples 0) and the final one are written out and compared with the instance below.
for variant in "paper --no-polish" "polished --final-fit-samples 0" "final"; do
  set -- $variant
  name=$1; shift
  run learn --x "$out/X.npy" --y "$out/Y32.npy" --m 2 --seed 1 --threads 2 "$@" \
      --report "$out/float32_$name.report.json" -o "$out/float32_$name.learned.json" > "$out/float32_$name.log" 2>&1 || true
  echo "float32 $name done" >&2
done
rm -f "$out/X.npy" "$out/Y32.npy"
run sample "$out/instance.json" --n 20000 --seed 1000 --x "$out/test_X.npy" --y "$out/test_Y.npy" >/dev/null
for name in paper polished final; do
  run forward "$out/float32_$name.learned.json" --x "$out/test_X.npy" -o "$out/float32_$name.test_Y.npy" >/dev/null
done
# 3. The final fit's error against its samples N, noise 1e-4 (the paper's stages are the same run each time).
for n in 2048 8192 32768 131072 524288; do
  run learn "$out/instance.json" --seed 1 --threads 2 --label-noise 1e-4 --final-fit-samples "$n" \
      --report "$out/sqrt_n_$n.report.json" > "$out/sqrt_n_$n.log" 2>&1 || true
  echo "final fit on $n done" >&2
done

/usr/bin/python3 scripts/noise_table.py "$out" "$(lscpu | sed -n 's/^Model name: *//p')" "$(git rev-parse --short HEAD)"
gnuplot <<'GP'
set terminal svg size 760,460 font "sans,12"
set output "docs/figures/noise_errors.svg"
set logscale xy
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "relative label noise ε (rms of the noise / rms of the labels)"
set ylabel "max relative error of Θ_i and W_i"
set key top left
set title "(16,2,2), logit scale 6: errors against label noise (ε = 0 drawn at 10^{-16})"
plot "docs/data/noise_errors.tsv" using 2:3 skip 1 with linespoints pt 7 title "paper's stages", \
     "" using 2:4 skip 1 with linespoints pt 5 title "polished (512 samples)", \
     "" using 2:5 skip 1 with linespoints pt 9 lw 2 title "final fit", \
     "docs/data/noise_float32.tsv" using 2:3 skip 1 with points pt 6 ps 1.6 title "float32 labels: paper's stages", \
     "" using 2:4 skip 1 with points pt 4 ps 1.6 title "float32: polished", \
     "" using 2:5 skip 1 with points pt 8 ps 1.6 title "float32: final fit"
set output "docs/figures/noise_sqrt_n.svg"
set xlabel "training samples N of the final fit"
set format x "2^{%L}"
set logscale x 2
set title "(16,2,2), label noise 10^{-4}: the final fit's error against N"
plot "docs/data/noise_sqrt_n.tsv" using 1:2 skip 1 with linespoints pt 7 lw 2 title "max Θ, W error", \
     "" using 1:3 skip 1 with lines dt 2 title "fitted c/√N"
GP
echo "wrote docs/noise.md, docs/figures/noise_errors.svg, docs/figures/noise_sqrt_n.svg" >&2
