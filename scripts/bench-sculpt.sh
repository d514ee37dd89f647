#!/usr/bin/env bash
# Stages 1–2 targets (docs/stages12.md): with the exact W_Σ as an oracle, the
# samples and seconds stage 2 needs for the hull estimate at (16,2,2), (16,3,2),
# (16,2,3), (32,2,2), logit scale 3, and the certification throughput; plus one
# run from the stage-1 estimate instead of the oracle. Writes docs/stages12.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build-cli.sh
M=./build/release/mhalearn
out=docs/bench/sculpt
mkdir -p "$out"
# d k m tau w_sum sigma_min (0: the default assumption). The stage-1 run is the
# crude round of the learner: Ŵ is ~14% off, so τ must be of that order, and
# the lemma's widths are vacuous, so an optimistic σ_min keeps them finite.
runs=(
  "16 2 2 1e-3 oracle 0"
  "16 3 2 1e-2 oracle 0"
  "16 2 3 1e-2 oracle 0"
  "32 2 2 1e-3 oracle 0"
  "16 2 2 0.15 stage1 1000"
)
for r in "${runs[@]}"; do
  set -- $r
  name="d$1_k$2_m$3_$5"
  $M generate --d "$1" --k "$2" --m "$3" --scale 3 --seed 1 -o "$out/$name.instance.json" >/dev/null
  $M sculpt "$out/$name.instance.json" --w-sum "$5" --tau "$4" --sigma-min "$6" --stage1-samples 1000000 --max-samples 40000000 --max-seconds 300 --threads 2 \
     --report "$out/$name.report.json" > "$out/$name.log" || true
done
python3 - "$out" <<'PY'
import json, os, subprocess, sys
out = sys.argv[1]
rows = []
for name in sorted(os.listdir(out)):
    if not name.endswith(".report.json"): continue
    rep = json.load(open(os.path.join(out, name)))
    inst = json.load(open(os.path.join(out, name.replace(".report.json", ".instance.json"))))
    s2 = [s for s in rep["stages"] if s["name"] == "stage2_sculpt"][0]
    s1 = [s for s in rep["stages"] if s["name"] == "stage1_wsum"]
    t = s2.get("truth", {})
    rows.append((inst["d"], inst["k"], inst["m"], s2["w_sum_source"], s2["tau"],
                 (s1[0]["samples"] if s1 else 0), (s1[0]["w_sum_rel_error"] if s1 else 0.0),
                 s2["samples"], s2["seconds"], s2["rows_certified"], s2["rows_certified_first_row"], s2["constraints"],
                 s2["numerical_rank"], s2["gap"], t.get("hull_error", float("nan")), max(t.get("theta_violation") or [float("nan")]),
                 t.get("sigma_assumption_violated", 0), s2["rows_per_second"], s2["budget_exhausted"]))
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = [l.split(":", 1)[1].strip() for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines() if l.startswith("Model name")][0]
with open("docs/stages12.md", "w") as f:
    f.write("# Stages 1–2: targets\n\nProduced by `scripts/bench-sculpt.sh` (reports and logs in `docs/bench/sculpt/`) on %s, 2 threads, commit %s.\n\n" % (cpu, commit))
    f.write("Each run: `mhalearn generate --d D --k K --m M --scale 3 --seed 1`, then `mhalearn sculpt INSTANCE --w-sum SOURCE --tau TAU "
            "--sigma-min S --stage1-samples 1000000 --max-samples 40000000 --max-seconds 300 --threads 2` (S = 0: the default assumption 0.5(√d − √(km))). Stage 2 stops once it holds 3d² constraints. "
            "Hull error: max_i ‖Θ_i − proj(Θ_i)‖_F/‖Θ_i‖_F onto the estimated affine hull (least-squares centre and m−1 "
            "free directions of the stacked constraints). Target: ≤ 1e−3 at (16,2,2) with the oracle W_Σ.\n\n")
    f.write("| (d,k,m) | W_Σ | τ | stage-1 samples | stage-1 error | stage-2 samples | seconds | rows certified (row 0 only) | constraints | rank | gap | hull error | max slab violation of a true Θ_i | rows with σ_min(C) below assumption | certification rows/s | budget exhausted |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write("| (%d,%d,%d) | %s | %g | %d | %.3g | %d | %.1f | %d (%d) | %d | %d | %.3g | %.2e | %.1e | %d | %.3g | %s |\n" % r)
    f.write("\nCertifying every row instead of row 0 alone roughly doubles the certified rows at k = 2 and "
            "multiplies them by k at larger k (the column 'row 0 only' is what the paper's single-row version would keep). "
            "k = 3 and m = 3 need two coincidences per certified row instead of one, so certified rows are rarer by about "
            "a factor τ: those runs use τ = 1e−2 and reach a hull error of about 1e−2 within the budget.\n\n"
            "Small d: at (8,2,2), scale 3 (seed 3) the certified rows come from only 32 distinct token pairs, whose "
            "constraints span 32 of the 64 dimensions: the least-squares centre then cannot find the hull (gap 1, hull "
            "error 0.88). From d = 10 on the certified directions are nearly all distinct and span R^{d²} "
            "(`tests/stages/test_stage2.cpp` checks d = 10).\n\n"
            "The `stage1` row is the learner's crude round: with Ŵ from stage 1 (about 14% off) the certification "
            "lemma's widths are vacuous, so the body is a poor hull estimate; stage 3 (`tests/stages/test_stage3.cpp`) "
            "shows that the minimum-norm point of this crude hull is already a proxy whose large-margin events give W_Σ "
            "to about 3e−3.\n")
print("wrote docs/stages12.md")
PY
