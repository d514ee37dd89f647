#!/usr/bin/env python3
"""docs/noise.md and docs/data/noise_*.tsv from the runs of scripts/noise.py.

usage: noise_table.py RUN_DIR CPU COMMIT   (the CPU and commit the runs' reports name)
"""
import itertools
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import Facts, Learners, block_error, fmt, learner_label, run_identity, table, write_page  # noqa: E402

run_dir, cpu, commit = sys.argv[1:4]
EPS = ["0", "1e-12", "1e-10", "1e-8", "1e-6", "1e-4", "1e-2"]
SQRT_N = [2048, 8192, 32768, 131072, 524288]


def load(name):
    with open(os.path.join(run_dir, name)) as f:
        return json.load(f)


def err(e):
    """max(Θ, W) error of an error block; NaN when absent (the TSVs write nan)."""
    x = block_error(e)
    return float("nan") if x is None else x


def stage(report, name):
    return [s for s in report["stages"] if s["stage"] == name]


def violation(report):
    """Largest slab violation of a true Θ_i in the rounds sculpted with the lemma's widths (stages 2/4)."""
    vals = [s["theta_max_violation"] for s in report["stages"] if s["stage"] in ("2", "4")
            and s.get("widths", "").startswith("certification lemma") and "theta_max_violation" in s]
    return max(vals) if vals else float("nan")


# ---- Gaussian noise rows
rows = []
for eps in EPS:
    r = load(f"noise_{eps}.report.json")
    n = r.get("noise", {})
    polished = r.get("errors_before_final_fit") or r.get("errors")
    fit = stage(r, "fit")
    polish = stage(r, "polish")
    rows.append(dict(eps=eps, x=float(eps) if float(eps) > 0 else 1e-16, paper=err(r.get("errors_before_polish")),
                     polished=err(polished), final=err(r.get("errors")),
                     test=r["errors"]["test_rel"] if r.get("errors") else float("nan"),
                     noise=n.get("noise", float("nan")), heldout=n.get("heldout_residual", float("nan")),
                     limit=n.get("limit", ""), fit_samples=fit[0]["train_samples"] if fit else 0,
                     fit_kept=bool(fit) and fit[0].get("kept", True), polish_stop=polish[0]["stop_reason"] if polish else "",
                     polish_kept=bool(polish) and polish[0].get("kept", True),
                     paper_samples=r["samples_paper_stages"], seconds=r["seconds"], violation=violation(r),
                     warning=n.get("warning", ""), report=r))

with open("docs/data/noise_errors.tsv", "w") as f:
    f.write("eps\tx\tpaper_err\tpolished_err\tfinal_err\tfinal_test_rel\tnoise_estimate\theldout_residual\tfinal_fit_samples\n")
    for w in rows:
        f.write(f"{w['eps']}\t{w['x']:.3g}\t{w['paper']:.6g}\t{w['polished']:.6g}\t{w['final']:.6g}\t{w['test']:.6g}\t"
                f"{w['noise']:.6g}\t{w['heldout']:.6g}\t{w['fit_samples']}\n")

# ---- float32 labels: the learned layers against the instance


def layer(path):
    d = load(path)
    return [(np.array(h["theta"]), np.array(h["w"])) for h in d["heads"]]


truth = layer("instance.json")


def layer_error(learned):
    best = None
    for perm in itertools.permutations(range(len(truth))):
        e = max(max(np.linalg.norm(learned[p][0] - t[0]) / np.linalg.norm(t[0]),
                    np.linalg.norm(learned[p][1] - t[1]) / np.linalg.norm(t[1])) for p, t in zip(perm, truth))
        best = e if best is None else min(best, e)
    return best


test_y = np.load(os.path.join(run_dir, "test_Y.npy"))
f32 = {}
for name in ("paper", "polished", "final"):
    path = f"float32_{name}.learned.json"
    if not os.path.exists(os.path.join(run_dir, path)):
        f32[name] = (float("nan"), float("nan"))
        continue
    y = np.load(os.path.join(run_dir, f"float32_{name}.test_Y.npy"))
    f32[name] = (layer_error(layer(path)), float(np.sum((y - test_y) ** 2) / np.sum(test_y ** 2)))
f32_report = load("float32_final.report.json")
f32_noise = f32_report.get("noise", {})
f32_fit = stage(f32_report, "fit")
with open("docs/data/noise_float32.tsv", "w") as f:
    f.write("labels\tx\tpaper_err\tpolished_err\tfinal_err\tfinal_test_rel\tnoise_estimate\tfinal_fit_samples\n")
    f.write(f"float32\t{f32_noise.get('noise', float('nan')):.6g}\t{f32['paper'][0]:.6g}\t{f32['polished'][0]:.6g}\t"
            f"{f32['final'][0]:.6g}\t{f32['final'][1]:.6g}\t{f32_noise.get('noise', float('nan')):.6g}\t"
            f"{f32_fit[0]['train_samples'] if f32_fit else 0}\n")

# ---- the final fit against N
sq = []
for n in SQRT_N:
    r = load(f"sqrt_n_{n}.report.json")
    fit = stage(r, "fit")
    sq.append(dict(n=n, report=r, final=err(r.get("errors")), kept=bool(fit) and fit[0].get("kept", True),
                   seconds=fit[0]["seconds"] if fit else float("nan"),
                   iterations=fit[0]["iterations"] if fit else 0, noise=r.get("noise", {}).get("noise", float("nan"))))
logn = np.log([s["n"] for s in sq])
loge = np.log([s["final"] for s in sq])
slope, intercept = np.polyfit(logn, loge, 1)
c_half = float(np.exp(np.mean(loge + 0.5 * logn)))  # the best c in c/√N (least squares in log space)
with open("docs/data/noise_sqrt_n.tsv", "w") as f:
    f.write("N\tfinal_err\tc_over_sqrt_N\n")
    for s in sq:
        f.write(f"{s['n']}\t{s['final']:.6g}\t{c_half / math.sqrt(s['n']):.6g}\n")

# ---- the page
float32_reports = [load(f"float32_{name}.report.json") for name in ("paper", "polished", "final")]
learners = Learners([w["report"] for w in rows] + float32_reports + [x["report"] for x in sq])
facts = Facts("docs/noise.md")
for w in rows:
    fact_row = f"ε = {w['eps']}"
    facts.add(run_identity(w["report"]), "error before polishing", fmt(w["paper"]), fact_row)
    facts.add(run_identity(w["report"]), "final error", fmt(w["final"]), fact_row)
    facts.add(run_identity(w["report"]), "wall seconds (report)", f"{w['seconds']:.0f}", fact_row)
for x in sq:
    facts.add(run_identity(x["report"]), "final error", fmt(x["final"], 2), f"{x['n']}")
cmd = "/usr/bin/python3 scripts/noise.py"
out = []
p = out.append
p("# Labels as users have them: label noise, float32 labels, the final fit")
p("")
p(f"Produced by `{cmd}` on {cpu}, its runs built at commit {commit} (the machine was shared: wall times are upper bounds; "
  "for how long a configuration takes, see [results.md](results.md)).")
p("Each Gaussian-noise row is")
p("")
p("```sh")
p("mhalearn generate --d 16 --k 2 --m 2 --scale 6 --seed 1 -o instance.json")
p("mhalearn learn instance.json --seed 1 --threads 2 --label-noise ε --report r.json")
p("```")
p("")
p("`--label-noise ε` adds Gaussian noise of relative size ε to every label (rms of the noise = ε × rms of the")
p("sample's labels, data/noisy_source.hpp), and certification assumes that level (`--assume-label-noise`")
p("defaults to it). The float32 row samples 6·10⁶ labelled inputs (`mhalearn sample --seed 1`), casts the labels")
p("to float32 with numpy and learns from `--x X.npy --y Y32.npy --m 2`; the dataset's learner does not know")
p("the truth, so its paper's, polished and final layers (`--no-polish`, `--final-fit-samples 0`, default) are")
p("compared with the instance by the script, on 20000 fresh test inputs.")
p("")
p("Errors: max over heads of ‖Θ̂_i − Θ_i‖_F/‖Θ_i‖_F and the same for W (best head permutation). \"paper\" =")
p("stages 1–6; \"polished\" = Levenberg–Marquardt on polishing's 512 samples (kept only when its validation")
p("error is lower); \"final\" = after the final fit, which runs when polishing stops at a noise floor, on the")
p("samples the noise calls for (an oracle: `--final-fit-samples`, default 131072; a dataset: all it has left).")
p("")
p("![errors against label noise](figures/noise_errors.svg)")
p("")
cells = []
for w in rows:
    floor = "rounding" if w["limit"].startswith("rounding") else ("label noise" if "label noise" in w["limit"] else w["limit"][:40])
    cells.append([f"ε = {w['eps']}", fmt(w["paper"]), f"{fmt(w['polished'])}{'' if w['polish_kept'] else ' (not kept)'}",
                  fmt(w["final"]), fmt(w["test"]),
                  f"{w['fit_samples'] if w['fit_samples'] else '–'}{'' if w['fit_kept'] or not w['fit_samples'] else ' (not kept)'}",
                  fmt(w["noise"]), fmt(w["heldout"]), floor, fmt(w["violation"]), f"{w['seconds']:.0f}",
                  learners.cell(w["report"])])
floor32 = f32_noise.get("limit", "")
cells.append(["float32", fmt(f32["paper"][0]), fmt(f32["polished"][0]), fmt(f32["final"][0]), fmt(f32["final"][1]),
              f32_fit[0]["train_samples"] if f32_fit else "–", fmt(f32_noise.get("noise", float("nan"))),
              fmt(f32_noise.get("heldout_residual", float("nan"))),
              "float32 rounding" if "float32" in floor32 else floor32[:40], fmt(violation(f32_report)),
              f"{f32_report['seconds']:.0f}", learners.cells(float32_reports)])
out += table(["labels", "paper", "polished (512)", "final", "final test error", "final-fit samples", "noise estimate",
              "held-out residual", "floor (report's `limit`)", "true Θ_i outside a slab (lemma-width rounds)", "wall s",
              "learner"], cells)
p("")
p(learners.note([learner_label(r) for r in [w["report"] for w in rows] + float32_reports]))
p("")
p("\"true Θ_i outside a slab\": the largest violation, by a true Θ_i, of a slab of the bodies sculpted with the")
p("certification lemma's widths (stage 4, and stage 2 under the stage-1 oracle; the report's")
p("`theta_max_violation`, 0 = every true Θ_i inside every slab). The widths there rest on the stated")
p("assumptions (σ_min(C) ≥ the default, ‖W_Σ − Ŵ‖ ≤ 3 × stage 3's standard error) and, with noise, on the")
p("declared noise level; the lemma-level count of false certifications is in proofs/certification.md.")
p("")
p("## The final fit's error against its samples")
p("")
p("```sh")
p("mhalearn learn instance.json --seed 1 --threads 2 --label-noise 1e-4 --final-fit-samples N --report r.json")
p("```")
p("")
p("The paper's stages and polishing are the same run for every N; only the final fit changes.")
p("")
p("![final-fit error against N](figures/noise_sqrt_n.svg)")
p("")
out += table(["N", "max Θ, W error", "√N × error", "final fit: iterations", "seconds", "noise estimate", "learner"],
             [[s["n"], f"{fmt(s['final'], 2)}{'' if s['kept'] else ' (not kept)'}", f"{s['final'] * math.sqrt(s['n']):.3f}",
               s["iterations"], f"{s['seconds']:.1f}", fmt(s["noise"], 3), learners.cell(s["report"])] for s in sq])
p("")
p(learners.note([learner_label(s["report"]) for s in sq]))
p("")
p(f"Least-squares slope of log error against log N: **{slope:.3f}** (1/√N is −0.5).")
p("")
notes = os.path.join(run_dir, "NOTES.md")  # the discussion, kept with the runs (rewritten by hand after a rerun)
if os.path.exists(notes):
    out.append(open(notes).read().rstrip("\n"))
    p("")
write_page("docs/noise.md", "\n".join(out))
facts.write()
print("slope", slope)
