#!/usr/bin/env python3
"""Which stage of the paper's learner limits its error, and why: runs with oracle stages.

For each configuration (d, k, m, logit scale, seed) this generates the instance and
runs the paper's stages (no polishing, no reference paths) in both variants
(`--variant paper` and `--variant extended`, src/learn/learner.hpp). When the
extended run misses the target it runs two more, replacing stages by the truth
with `--oracle` (src/learn/learner.hpp, OracleStages):
  exactw    stages 1 and 3 return the exact W_Σ
  hull      stages 2, 4 and 5 return the true affine hull (stage 6 alone)
and reads every run's report: the error before polishing (max relative Θ / W
error after the best head permutation) and each stage's own error beside what
its lemma promises for the samples it used:
  stage 3     ‖Ŵ − W_Σ‖/‖W_Σ‖ against its standard error and the margin lemma's
              per-event bias bound 2(k−1)e^{−M} (M the margin threshold used);
  body (2/4/5) the hull error against the certification lemma's typical and
              worst-case distance (SculptReport, proofs/certification.md, "The
              hull from the body"), and whether any true head left a slab;
  stage 6     the error on the true hull.

The first failing stage: stage 6 if even the true hull leaves the error above
the target; else stage 3 (W_Σ) if the exact W_Σ brings it under; else the body.
The cause: an assumption of a lemma violated (a true head outside a slab, σ_min(C)
below its assumed bound), or the samples (the body's error falls with the samples
at the rate measured in docs/diagnosis.md: ∝ 1/S for m = 2, ∝ 1/√S for m ≥ 3; the
projected budget for the target is given), or neither — the code — when an error is
far above its lemma's prediction with every assumption holding.

Usage: scripts/diagnose.py --tool build/release/mhalearn [--grid | --configs 16,2,2,6,1[,0.5] ...]
                           [--threads 2] [--jobs 1] [--target 1e-3] [--reuse]
                           [--out docs/diagnosis.md] [--runs docs/diagnosis]
--grid is the issue's grid: (8,2,2), (16,2,2), (32,2,2), (64,2,2), (16,3,2),
(16,4,2), (16,2,3), (16,2,4) at logit scales 3 and 6, instance seeds 1–3.
--reuse keeps every report already in --runs whose logged command is the one the
run would have (runs are added, never repeated); --jobs N works on N configurations
at a time (each run uses --threads threads). Standard library only; the runs go
through scripts/experiments.py: each run's command line and output go to its .log
in --runs, its report to .report.json.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import (BLANK, Facts, Learners, Run, add_learner_option, error, fmt, generate, learner_label,  # noqa: E402
                         parallel, relative_link, require_learner, run, run_identity, table, write_page)
import diagnose_premise  # noqa: E402  (Lemma 3.3.1's premise in the paper variant: its own section)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

GRID_SHAPES = [(8, 2, 2), (16, 2, 2), (32, 2, 2), (64, 2, 2), (16, 3, 2), (16, 4, 2), (16, 2, 3), (16, 2, 4)]


def stages_of(report, name):
    return [s for s in report.get("stages", []) if s["stage"] == name and not s.get("oracle") and "reference" not in s]


def selected(report, name):
    """The record of stage `name` in the selected round (the body the layer came from)."""
    best = report.get("best_round", -1)
    rows = [s for s in stages_of(report, name) if s.get("round") == best]
    return rows[-1] if rows else None


def last_margin(report, before_round):
    rows = [s for s in stages_of(report, "3") if s.get("round", -1) < before_round]
    return rows[-1] if rows else None


def own_errors(report, k):
    """Each stage's own error and its lemma's prediction, for the selected round."""
    out = {}
    body = selected(report, "4") or selected(report, "2")
    if body:
        out["body"] = {"error": body.get("hull_error"), "typical": body.get("hull_error_typical"),
                       "bound": body.get("hull_error_bound"), "violation": body.get("theta_max_violation", 0),
                       "sigma_violated": body.get("sigma_assumption_violated", 0), "samples": body["samples"],
                       "widths": body.get("widths"), "round": body.get("round")}
        s3 = last_margin(report, body.get("round", 0))
        if s3 and "w_sum_rel_error" in s3:
            out["stage3"] = {"error": s3["w_sum_rel_error"], "se": s3.get("relative_standard_error"),
                             "bias": 2 * (k - 1) * math.exp(-s3["threshold"]), "threshold": s3["threshold"],
                             "not_large": s3.get("true_not_large_margin")}
    net = selected(report, "6")
    if net:
        out["net"] = {"error": max(net.get("theta_max_rel", 0), net.get("w_max_rel", 0)),
                      "resolution": net.get("final_resolution")}
    return out


def body_rate(m):
    """The body's error falls as S^(−1/D): D = 1 for m = 2, D = 2 for m ≥ 3 (docs/diagnosis.md)."""
    return 1 if m == 2 else 2


def diagnose(row, target):
    """(first failing stage, its error, the lemma's prediction, cause, projected samples)."""
    e = row["errors"]
    full = e.get("extended")
    if full is not None and full <= target:
        return "none", fmt(full), "", "", ""
    own = row["own"].get("extended", {})
    hull = e.get("hull")
    if hull is not None and hull > target:
        net = row["own"].get("hull", {}).get("net", {})
        return ("6 (net, W fit)", fmt(hull), f"resolution {fmt(net.get('resolution'))}",
                "the net on the true hull misses the target", "")
    exactw = e.get("exactw")
    if exactw is not None and exactw <= target:
        s3 = own.get("stage3", {})
        pred = f"SE {fmt(s3.get('se'))}, bias ≤ {fmt(s3.get('bias'))} (M = {s3.get('threshold', 0):.1f})"
        return "3 (W_Σ)", fmt(s3.get("error")), pred, "samples: the margin's bias e^−M (raise M with more samples)", ""
    body = own.get("body")
    if not body:
        return "2/4/5 (body)", fmt(full), "", "no body was sculpted (see the log)", ""
    pred = f"typical {fmt(body['typical'])}, bound {fmt(body['bound'])}"
    if body["violation"] and body["violation"] > 0:
        cause = f"assumption: a true head {fmt(body['violation'])} outside a slab"
    elif body["sigma_violated"]:
        cause = f"samples (σ_min(C) assumption failed on {body['sigma_violated']} rows, no slab violated)"
    elif body["bound"] is not None and body["error"] is not None and body["error"] > body["bound"]:
        cause = "code: the hull error exceeds the lemma's worst case with no assumption violated"
    else:
        cause = "samples: within the lemma's bound; more slabs or smaller residuals needed"
    need = ""
    if body["error"] and body["samples"]:
        need = f"{body['samples'] * (body['error'] / target) ** body_rate(row['config'][2]):.1e}"
    return "2/4/5 (body)", fmt(body["error"]), pred, cause, need


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True)
    parser.add_argument("--configs", nargs="+", default=[],
                        help="d,k,m,scale,seed[,coherence] (coherence: mhalearn generate --coherence)")
    parser.add_argument("--grid", action="store_true", help="the issue's grid (see the docstring)")
    parser.add_argument("--corner", action="store_true",
                        help="also the phase diagram's hard corner: (16,2,2), logit scale 24, cos 0.5, 0.9, 0.99, "
                             "seeds 1-3 (the results page's instances)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=1, help="configurations worked on at a time")
    parser.add_argument("--target", type=float, default=1e-3)
    parser.add_argument("--reuse", action="store_true", help="keep the reports already in --runs")
    parser.add_argument("--existing", action="store_true",
                        help="with --grid: tabulate only configurations whose runs are in --runs (implies --reuse); "
                             "the page lists the others as not run")
    parser.add_argument("--out", default="docs/diagnosis.md")
    parser.add_argument("--runs", default="docs/diagnosis")
    add_learner_option(parser)
    args = parser.parse_args()
    require_learner(args)
    configs = [tuple(int(x) if i not in (3, 5) else x for i, x in enumerate(c.split(","))) for c in args.configs]
    if args.grid:
        configs += [(d, k, m, str(scale), seed) for (d, k, m) in GRID_SHAPES for scale in (3, 6) for seed in (1, 2, 3)]
    if args.corner:
        configs += [(16, 2, 2, "24", seed, coh) for coh in ("0.5", "0.9", "0.99") for seed in (1, 2, 3)]
    os.makedirs(args.runs, exist_ok=True)
    args.missing = []
    if args.existing:
        args.reuse = True
        have = lambda c: all(os.path.exists(os.path.join(args.runs, f"{config_name(c)}_{v}.report.json"))
                             for v in ("extended", "paper"))
        args.missing = [c for c in configs if not have(c)]
        configs = [c for c in configs if have(c)]
    rows = parallel(lambda c: diagnose_config(args, c), configs, args.jobs)
    with open(os.path.join(args.runs, "summary.json"), "w") as f:
        json.dump([{key: value for key, value in r.items() if key != "runs"} for r in rows], f, indent=1)
    write_diagnosis_page(args, rows)


def learn_run(args, name, inst, label, extra):
    report = os.path.join(args.runs, f"{name}_{label}.report.json")
    cmd = [args.tool, "learn", inst, "--threads", str(args.threads), "--no-polish", "--no-reference",
           "--report", report] + extra
    spec = Run(f"{name}_{label}", cmd, args.runs, report=report)
    result = run(spec, reuse=args.reuse)
    return result.report or {}, relative_link(spec.log, args.out)


def config_name(config):
    """The runs' file prefix: d16_k2_m2_scale6_seed1, with _coh0.5 when the config has a coherence."""
    d, k, m, scale, seed, *coherence = config
    return f"d{d}_k{k}_m{m}_scale{scale}_seed{seed}" + (f"_coh{coherence[0]}" if coherence else "")


def config_label(config):
    """'(d,k,m), scale, seed' as the tables write a configuration (', cos c' with a coherence)."""
    d, k, m, scale, seed, *coherence = config
    return f"({d},{k},{m}), {scale}, {seed}" + (f", cos {coherence[0]}" if coherence else "")


def diagnose_config(args, config):
    d, k, m, scale, seed, *coherence = config
    name = config_name(config)
    inst = generate(args.tool, os.path.join(args.runs, name + ".json"), d, k, m, scale, seed,
                    ["--coherence", coherence[0]] if coherence else [], reuse=args.reuse)
    row = {"name": name, "config": config, "errors": {}, "own": {}, "seconds": {}, "samples": {}, "logs": {},
           "learners": {}, "runs": {}}
    plan = [("extended", ["--variant", "extended"]), ("paper", ["--variant", "paper"])]
    for label, extra in plan:
        record(row, label, *learn_run(args, name, inst, label, extra), k)
    if row["errors"]["extended"] is None or row["errors"]["extended"] > args.target:
        for label, oracle in (("exactw", "stage1,stage3"), ("hull", "hull")):
            record(row, label, *learn_run(args, name, inst, label, ["--oracle", oracle]), k)
    row["verdict"] = diagnose(row, args.target)
    return row


def record(row, label, report, log, k):
    row["errors"][label] = error(report, "errors_before_polish")
    row["own"][label] = own_errors(report, k)
    row["seconds"][label] = report.get("seconds")
    row["samples"][label] = report.get("samples_paper_stages")
    row["logs"][label] = log
    row["learners"][label] = learner_label(report) if report else None
    row["runs"][label] = run_identity(report) if report else None


def row_labels(r, runs=None):
    """The learner labels of a configuration's runs (those named in `runs`, default every one)."""
    return [label for run, label in r["learners"].items() if label and (runs is None or run in runs)]


def success_counts(args, rows, learners):
    """Per shape and scale: the seeds run and how many reach the target, for each variant."""
    groups = {}
    for r in rows:
        d, k, m, scale, seed, *coherence = r["config"]
        groups.setdefault(((d, k, m), scale + (f", cos {coherence[0]}" if coherence else "")), []).append(r)
    cells = []
    # By shape, then logit scale as a number (a scale with a cosine, "24, cos 0.5", after the plain ones).
    order = lambda g: (g[0][0], float(str(g[0][1]).split(",")[0]), str(g[0][1]))
    for ((d, k, m), scale), rs in sorted(groups.items(), key=order):
        ok = lambda label: sum(1 for r in rs if r["errors"].get(label) is not None and r["errors"][label] <= args.target)
        errs = ", ".join(fmt(r["errors"].get("extended")) for r in rs)
        labels = [label for r in rs for label in row_labels(r, ("paper", "extended"))]
        cells.append([f"({d},{k},{m})", scale, len(rs), ok("paper"), ok("extended"), errs, learners.cells(labels=labels)])
    shown = [label for r in rows for label in row_labels(r, ("paper", "extended"))]
    return [f"Seeds reaching max(Θ, W) error ≤ {args.target:g} before polishing, per shape and logit scale:", ""] + \
        table(["(d,k,m)", "scale", "seeds run", "paper", "extended", "extended errors", "learner"], cells, "lrrrrll") + \
        ["", learners.note(shown)]


def record_facts(facts, r):
    """The numbers the main table prints from one run each: both variants' errors, the extended run's
    samples and seconds, and (the other table) the oracle runs' errors."""
    row = config_label(r["config"])
    for label, quantity, value in (("paper", "error before polishing", fmt(r["errors"].get("paper"))),
                                   ("extended", "error before polishing", fmt(r["errors"].get("extended"))),
                                   ("extended", "samples of the paper's stages", fmt(r["samples"].get("extended"))),
                                   ("hull", "error before polishing", fmt(r["errors"].get("hull"))),
                                   ("exactw", "error before polishing", fmt(r["errors"].get("exactw")))):
        if r["runs"].get(label):
            facts.add(r["runs"][label], quantity, value, row)
    if r["runs"].get("extended") and r["seconds"].get("extended") is not None:
        facts.add(r["runs"]["extended"], "wall seconds (report)", f"{r['seconds']['extended']:.0f}", row)


def write_diagnosis_page(args, rows):
    grid = ("--grid" + (" --corner" if args.corner else "") + (" --existing" if args.existing else "")) if args.grid \
        else "--configs " + " ".join(args.configs)
    learners = Learners(labels=[label for r in rows for label in row_labels(r)] +
                        [learner_label(report) for _, report in diagnose_premise.runs(ROOT)])
    facts = Facts(args.out)
    lines = [
        "# Where the paper's stages lose accuracy, and why",
        "",
        "Produced by",
        "",
        "```sh",
        f"python3 scripts/diagnose.py --tool build/release/mhalearn {grid}",
        "```",
        "",
        f"Every run is `mhalearn learn INSTANCE --threads {args.threads} --no-polish --no-reference` with the options "
        "its log's first line shows (logs, JSON reports and instances in "
        f"`{relative_link(args.runs, args.out)}/`). Errors are max(Θ, W) relative errors "
        "after the best head permutation, before polishing. Both variants run on every instance; when the extended "
        f"one misses {args.target:g}, two more runs replace stages by the truth (`--oracle stage1,stage3`: exact W_Σ; "
        "`--oracle hull`: the true affine hull, stage 6 alone). scripts/diagnose.py's docstring says how the first "
        "failing stage, its lemma's prediction and the cause are read off the reports. Each row names the "
        "learner that made its runs (their reports' provenance; the notes under the tables say what a mark means)."
        " The seconds below are these runs' own wall times (their builds, without polishing or the reference "
        "step, on a machine not always idle; the reports record no load): for how long a configuration takes, "
        "see [results.md](results.md).",
        "",
    ]
    lines += success_counts(args, rows, learners)
    if any(len(r["config"]) > 5 for r in rows):
        lines += ["", "The rows with a cosine are the results page's hard corner of the phase diagram (`--corner`: "
                      "instances made with `mhalearn generate --coherence`, heads at that cosine). There every head has "
                      "‖Θ_i‖_F = 24, beyond the learner's radius R = 20 (the condition theta_norm_bound fails), and "
                      "stage 6 searched only the ball ‖Θ‖_F ≤ R: the net could not reach the heads. The extended variant "
                      "now grows the ball from round 1 (variants.md); the paper variant keeps R, its a priori bound, and "
                      "its runs stop with \"the hull point lies outside the ball of radius R\" (their logs)."]
    if args.missing:
        lines += ["", "Not run (the grid's remaining configurations, left for lack of machine time; "
                      "`--reuse` adds them to this page): "
                  + ", ".join(config_label(c) for c in args.missing) + "."]
    cells = []
    for r in rows:
        stage, err, pred, cause, need = r["verdict"]
        logs = ", ".join(f"[{label}]({log})" for label, log in r["logs"].items())
        secs = r["seconds"].get("extended")
        first = [config_label(r["config"]), fmt(r["errors"].get("paper"))]
        cells.append(first + [fmt(r["errors"].get("extended")), stage, err, pred, cause, need,
                              f"{fmt(r['samples'].get('extended'))}, {secs:.0f}", logs] if secs is not None else
                     first + ["–", "run failed", BLANK, BLANK, BLANK, BLANK, BLANK, logs])
        cells[-1].append(learners.cells(labels=row_labels(r)))
        record_facts(facts, r)
    lines += [""] + table(["(d,k,m), scale, seed", "paper", "extended", "first failing stage", "its error",
                           "its lemma's prediction", "cause", f"projected samples for {args.target:g}",
                           "extended: samples, s", "logs", "learner"], cells, "lrrlrllrrll")
    lines += ["", learners.note([label for r in rows for label in row_labels(r)])]
    lines += [
        "",
        "## Each stage's own error in the extended run",
        "",
        "The selected round's body and the stage-3 estimate it was sculpted with. Stage 3: ‖Ŵ − W_Σ‖_F/‖W_Σ‖_F "
        "against its standard error (SE) and the margin lemma's per-event bias bound 2(k−1)e^{−M}; "
        "body: the hull error against the certification lemma's typical and worst-case prediction "
        "(divided by ‖x0‖); stage 6: the error of the net's layer on that body, and on the true hull.",
        "",
    ]
    cells = []
    for r in rows:
        own = r["own"].get("extended", {})
        s3, body, net = own.get("stage3", {}), own.get("body", {}), own.get("net", {})
        cells.append([config_label(r["config"]),
                      f"{fmt(s3.get('error'))} ({fmt(s3.get('se'))}; {fmt(s3.get('bias'))})",
                      f"{fmt(body.get('error'))} ({fmt(body.get('typical'))}; {fmt(body.get('bound'))})",
                      fmt(body.get("samples")), fmt(net.get("error")), fmt(r["errors"].get("hull")),
                      fmt(r["errors"].get("exactw")), learners.cells(labels=row_labels(r, ("extended", "hull", "exactw")))])
    lines += table(["(d,k,m), scale, seed", "stage 3: true (SE; bias bound)", "body: hull error (typical; bound)",
                    "body samples", "stage 6 on the body", "stage 6 on the true hull", "exact W_Σ", "learner"], cells,
                   "lllrrrrl")
    lines += ["", learners.note([label for r in rows for label in row_labels(r, ("extended", "hull", "exactw"))]), ""]
    lines += diagnose_premise.section(ROOT, learners)
    write_page(args.out, "\n".join(lines))
    facts.write()
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
