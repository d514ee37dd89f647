#!/usr/bin/env bash
# The learner's targets (issue: stages 3–6 and the end-to-end learner), written
# to docs/learner.md: `mhalearn learn` on (16,2,2), (32,2,2), (16,3,2), (16,2,3)
# at logit scale 6 (instance seed 1, sample seed 1), the (16,2,2) run for three
# instance seeds, the sample-lean setting (--sculpt-samples 1000000) next to the
# default, and (16,3,2), (16,2,3) at logit scale 3. Per-run logs and JSON reports go to docs/bench/learner/.
# `--quick` runs only the (16,2,2) rows.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build-cli.sh
M=./build/release/mhalearn
out=docs/bench/learner
mkdir -p "$out"
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1
# name d k m logit-scale instance-seed extra-options
runs=(
  "d16_k2_m2_s1 16 2 2 6 1"
  "d16_k2_m2_s2 16 2 2 6 2"
  "d16_k2_m2_s3 16 2 2 6 3"
  "d16_k2_m2_s1_lean 16 2 2 6 1 --sculpt-samples 1000000"
)
if [[ $quick == 0 ]]; then
  runs+=("d32_k2_m2_s1 32 2 2 6 1" "d16_k3_m2_s1 16 3 2 6 1" "d16_k2_m3_s1 16 2 3 6 1"
         "d16_k3_m2_s1_scale3 16 3 2 3 1" "d16_k2_m3_s1_scale3 16 2 3 3 1")
fi
rm -f "$out/wall.txt.new"
for r in "${runs[@]}"; do
  set -- $r
  name=$1; d=$2; k=$3; m=$4; scale=$5; seed=$6; shift 6
  $M generate --d "$d" --k "$k" --m "$m" --scale "$scale" --seed "$seed" -o "$out/$name.instance.json" >/dev/null
  start=$(date +%s.%N)
  $M learn "$out/$name.instance.json" --seed 1 --threads 2 "$@" --report "$out/$name.report.json" \
     -o "$out/$name.learned.json" > "$out/$name.log" 2>&1 || true
  end=$(date +%s.%N)
  echo "$name $(echo "$end - $start" | bc)" >> "$out/wall.txt.new"
  echo "$name done" >&2
done
mv "$out/wall.txt.new" "$out/wall.txt"
python3 scripts/learner_table.py "$out" "$*" > docs/learner.md
echo "wrote docs/learner.md" >&2
