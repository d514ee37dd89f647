#!/usr/bin/env python3
"""Regenerates docs/results.md: every table and figure of the results page.

Called by scripts/results.sh (which builds the tool first). Runs `mhalearn`
for every configuration, keeps each run's instance, log and JSON report under
docs/results/runs/, writes the tables' data as TSV under docs/results/, draws
the figures with gnuplot (SVG, docs/figures/results_*.svg) and writes the page.

  --quick   a few configurations per section (29 min on the shared 2 cores at a
            load of 7–15, the learner without --variant; about half that idle)
  --reuse   keep reports already in docs/results/runs/ whose logged command is
            the run's (for editing this script, and for a pass made over several
            sittings: a run killed half-way has no report and is made again)
  --sections S,...  make only these sections' runs (sbs, phase, regimes, scaling,
            throughput, convergence) and write no page: a long pass in pieces, each piece
            kept by --reuse; the page is written by a run of every section
  --remake-other-learners  with --reuse: make again every run another build made
            (scripts/experiments.py, REQUIRE_LEARNER), so that the page's rows share one learner
  --table NAME [--into DIR] [--rows PREFIX ...]  one table or figure alone, into a fresh folder,
            compared with the page's (scripts/results_tables.py; `--table list`: every one with
            its expected time)
  --tool PATH  the mhalearn to run (default build/release/mhalearn; mhalearn_bench beside it)

Every table names, per row, the learner that made its runs (experiments.Learners), and the
numbers printed from one run are recorded as facts (docs/facts/results.json). Adam's samples
to 1e−3 (the scaling section) follow the one rule of every page (experiments.adam_rule_run):
the targets page's runs where the instance is the diagnosis grid's.

Time of the full page, measured at f671bbd on the otherwise idle 2-core
machine (made in three sittings with --sections and --reuse; per-run wall
times in each run's log): side by side 111 min (20 configurations; (16,2,3)
is 64 min of it, (32,2,2) 24), phase diagram 62 min (12 cells × 5 seeds × 4
methods, about 62 s per cell and seed), other regimes 3 min, scaling 21 min,
throughput and the page 3 min: about 3.4 h on 2 cores; the convergence
section (18 runs of the paper variant, every budget ×0.25 to ×64) 21 min more,
measured at d1965ee with a compiler running beside it. To stay near that,
the phase diagram leaves out logit scale 6 (its 4 cells would add about
21 min) and the side by side runs two seeds, not three, at (32,2,2) and
(16,2,3), the shapes that take most of its time (a third seed would add
about 44 min, the mean of the first two); the page says so.

Every run goes through scripts/experiments.py (its command the first line of its
log, its report beside it).
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import (ADAM_RULE_PAGE, ADAM_RULE_RUNS, DASH, NOT_RECORDED, Facts, Learners, Result, Run,  # noqa: E402
                         adam_reached, adam_rule_run, add_learner_option, cpu_model, error, fmt, fmt_int, generate,
                         instance_hash, learner_label, load, previous, provenance_now, recorded_label,
                         require_learner, run_identity, table)
from experiments import run as make_run  # noqa: E402  (`run` names a phase-diagram run below)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TOOL = os.path.join(ROOT, "build/release/mhalearn")
BENCH = os.path.join(ROOT, "build/release/mhalearn_bench")
DATA = os.path.join(ROOT, "docs/results")
RUNS = os.path.join(DATA, "runs")
FIGS = os.path.join(ROOT, "docs/figures")
THREADS = "2"
TARGET = 1e-3  # "reached": max Θ and W relative error at most this
PAPER_TIMEOUT = 1200  # s; a run killed at this is reported as such (no report, no Adam comparison)
RP_STARTS = 1000  # random-polish's start cap: its sample and time budgets (the paper run's) end it first

args = None
ESTIMATE = None  # {run name: seconds} while --table reads the committed runs for its expected time
INTO = None  # --table's folder: every run made there, none read from the committed runs
LEARNERS = Learners()  # the page's learners (main sets them from every report the page shows)
FACTS = None  # the page's facts (experiments.Facts), set by main
timings = {}
run_walls = {"made": [], "reused": []}  # wall seconds of each learn run, by whether this sitting made it
variants = [None]  # the learner's --variant values this build has (main() asks it); None: no such option
budget_variant = None  # the variant whose run sets the baselines' equal-sample and equal-time budgets


def learner_variants():
    """`mhalearn learn --variant paper|extended` when the build has it, else the one default learner."""
    out = subprocess.run([TOOL, "learn", "--help"], capture_output=True, text=True, cwd=ROOT).stdout
    return ["paper", "extended"] if "--variant" in out else [None]


def variant_label(v):
    return "paper's learner" if v is None else f"`{v}` variant"


def variant_name(v):
    """The variant's part of run names: the paper variant keeps the name of the one learner
    the page had before variants existed ("paper"), so committed names keep their meaning."""
    return "paper" if v in (None, "paper") else v


def variant_args(v):
    return [] if v is None else ["--variant", v]


def paper_runs(prefix, tag, inst, extra, timeout=PAPER_TIMEOUT):
    """The paper's learner in every variant: {variant: (report or None, status, wall)}."""
    return {v: learn(f"{prefix}_{variant_name(v)}_{tag}", inst, variant_args(v) + extra, timeout=timeout) for v in variants}


def random_polish_run(name, inst, budget):
    """Polishing alone from random starts with the samples and wall time of `budget`, a paper
    run's (report, status, wall): its report's samples_total and seconds, or (no report) the
    wall time it was given and no sample budget."""
    paper, _, wall = budget
    seconds = paper["seconds"] if paper else wall
    extra = ["--method", "random-polish", "--starts", str(RP_STARTS), "--max-seconds", f"{max(seconds, 1):.2f}"]
    if paper:
        extra += ["--max-samples", str(paper["samples_total"])]
    return learn(name, inst, extra, vary=("--max-seconds",))[0]


def recovered(e):
    return e is not None and e <= TARGET


def rate(errors):
    """"k/n": how many of the runs' errors are at most TARGET (a run without a layer counts as not)."""
    return f"{sum(1 for e in errors if recovered(e))}/{len(errors)}"


def rel(path):
    return os.path.relpath(path, ROOT)


def instance(name, d, k, m, scale, seed, coherence=0.0):
    path = os.path.join(RUNS, name + ".instance.json")
    if ESTIMATE is not None:  # the committed runs' instances: nothing is made
        return path
    return generate(TOOL, path, d, k, m, scale, seed, ["--coherence", coherence] if coherence else [],
                    reuse=args.reuse, cwd=ROOT)


def committed_seconds(prev):
    """A committed run's wall seconds: its log's last line, else the report's `_wall` (results.py's
    measurement), else the report's own `seconds`; None without a run."""
    if prev is None:
        return None
    if prev.seconds is not None:
        return prev.seconds
    r = prev.report or {}
    if "_wall" in r or "seconds" in r:
        return r.get("_wall", r.get("seconds"))
    # A report with per-stage times only (`mhalearn stage1`): its stages and their reference passes.
    stages = r.get("stages") or []
    return sum(st.get("seconds", 0) + (st.get("reference_same_sample") or {}).get("seconds_reference", 0)
               for st in stages) or None


def run_spec(spec):
    """Every run of this script: made or read back by the runner, or (--table's estimate) the committed
    run read back whatever its command, its wall seconds noted in ESTIMATE."""
    if ESTIMATE is not None:
        prev = previous(spec)
        ESTIMATE[spec.name] = committed_seconds(prev)
        return prev or Result(spec, None, None, None, None, reused=True)
    return make_run(spec, reuse=args.reuse)


def learn(name, inst, extra, timeout=None, vary=()):
    """`mhalearn learn` with a report; returns (report or None, exit status, wall seconds).
    A run that outlived `timeout` seconds is killed (a stage can run past the learner's
    --max-seconds, which only stops new rounds): its status is "killed". vary: options
    whose value --reuse ignores (a wall-clock budget copied from another run's time, which
    a re-made budget run changes: the baseline keeps the time it ran on)."""
    report = os.path.join(RUNS, name + ".report.json")

    def keep(prev):
        # A run stopped by a signal (a pass cut short) writes an interrupted report: make it again.
        # A killed run is a result too: do not spend the timeout again.
        return (prev.report is not None and not prev.report.get("interrupted")) or \
            bool(timeout and prev.status == "killed" and prev.seconds == timeout)

    spec = Run(name, [TOOL, "learn", inst, "--seed", "1", "--threads", THREADS, "--report", report] + extra, RUNS,
               report=report, timeout=timeout, cwd=ROOT, keep=keep, vary=vary)
    result = run_spec(spec)
    r, status, wall = result.report, result.status, result.seconds
    if result.reused:
        if r is None:
            return None, "killed", timeout
        wall = r.get("_wall", r.get("seconds", 0))
        run_walls["reused"].append(wall)
        return r, r.get("_exit", 0), wall
    run_walls["made"].append(wall)
    if r is None:
        return None, status, wall
    r["_exit"], r["_wall"] = status, wall
    with open(report, "w") as f:
        json.dump(r, f, indent=1)
    return r, status, wall


err = error  # max(Θ, W) relative error of a report's error block, or None


def test_err(r, key="errors"):
    """Relative test error of a report's error block, or None."""
    if not r or key not in r:
        return None
    e = r[key]
    return e.get("test_rel", e.get("test_relative_error"))


def write_tsv(name, header, rows):
    """DATA/NAME; returns its path relative to the repository (gnuplot runs there, and the figures' SVG
    name their data files: an absolute path would make their bytes depend on the checkout's folder)."""
    path = os.path.join(DATA, name)
    with open(path, "w") as f:
        f.write("\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join("nan" if v is None else str(v) for v in r) + "\n")
    return rel(path)


def gnuplot(script, name):
    path = os.path.join(FIGS, name)
    full = f"set terminal svg size 1200,{script[0]} dynamic font 'sans,11' background '#ffffff'\nset output '{path}'\n" + script[1]
    subprocess.run(["gnuplot"], input=full, text=True, check=True, cwd=ROOT)
    return rel(path)


# --------------------------------------------------------------------------- side by side

SHAPES = [(16, 2, 2), (32, 2, 2), (16, 3, 2), (16, 2, 3)]
# Instance seeds per shape: two at the two costly shapes (see the docstring's time estimate).
SBS_SEEDS = {(16, 2, 2): [1, 2, 3], (32, 2, 2): [1, 2], (16, 3, 2): [1, 2, 3], (16, 2, 3): [1, 2]}


def side_by_side():
    t0 = time.time()
    shapes = SHAPES if not args.quick else [(16, 2, 2), (16, 3, 2)]
    scales = [3, 6] if not args.quick else [6]
    rows = []
    for (d, k, m) in shapes:
        for scale in scales:
            for seed in (SBS_SEEDS[(d, k, m)] if not args.quick else [1]):
                tag = f"d{d}_k{k}_m{m}_scale{scale}_seed{seed}"
                inst = instance(tag, d, k, m, scale, seed)
                papers = paper_runs("sbs", tag, inst, ["--no-reference"])
                paper, status, wall = papers[budget_variant]
                samples = paper["samples_total"] if paper else 0
                seconds = paper["seconds"] if paper else 0
                adam_n = adam_t = None  # no budget to match when the paper run gave no report
                if paper:
                    adam_n, _, _ = learn("sbs_adam_samples_" + tag, inst,
                                         ["--method", "adam", "--max-samples", str(max(samples - 1000, 512))])
                    adam_t, _, _ = learn("sbs_adam_time_" + tag, inst,
                                         ["--method", "adam", "--max-samples", "0", "--max-seconds", f"{max(seconds, 1):.2f}"],
                                         vary=("--max-seconds",))
                rp = random_polish_run("sbs_random_polish_" + tag, inst, papers[budget_variant])
                rows.append(dict(d=d, k=k, m=m, scale=scale, seed=seed, tag=tag, papers=papers, paper=paper, status=status,
                                 samples=samples, seconds=seconds, adam_n=adam_n, adam_t=adam_t, rp=rp))
    timings["side by side"] = time.time() - t0
    return rows


def sbs_reports(r):
    """Every report of a side-by-side row: each variant's, then the baselines'."""
    return [r["papers"][v][0] for v in variants] + [r["adam_n"], r["adam_t"], r["rp"]]


def fact(report, quantity, text, row):
    """Records a number printed from one run's report (nothing without the run or the number)."""
    if FACTS is not None and report and text:
        FACTS.add(run_identity(report, cwd=ROOT), quantity, text, row)


def note(reports=(), labels=()):
    """The learner note under a table whose rows show these runs."""
    return LEARNERS.note([learner_label(r) for r in reports if r] + list(labels))


def starts_of(r):
    """How many starts a random-polish report ran, or None."""
    return len(r["starts"]) if r and "starts" in r else None


def side_by_side_tables(rows):
    header = ["d", "k", "m", "scale", "seed", "paper_samples", "paper_seconds"]
    for v in variants:
        n = variant_name(v)
        header += [f"{n}_err", f"{n}_polished_err", f"{n}_polished_test"]
    header += ["adam_samples_err", "adam_samples_test", "adam_time_err", "adam_time_test", "adam_time_samples",
               "random_polish_err", "random_polish_test", "random_polish_starts", "random_polish_samples"]
    tsv = []
    for r in rows:
        line = [r["d"], r["k"], r["m"], r["scale"], r["seed"], r["samples"], f"{r['seconds']:.2f}"]
        for v in variants:
            p = r["papers"][v][0]
            line += [err(p, "errors_before_polish"), err(p), test_err(p)]
        line += [err(r["adam_n"]), test_err(r["adam_n"]), err(r["adam_t"]), test_err(r["adam_t"]),
                 r["adam_t"]["samples_total"] if r["adam_t"] else None,
                 err(r["rp"]), test_err(r["rp"]), starts_of(r["rp"]), r["rp"]["samples_total"] if r["rp"] else None]
        tsv.append(line)
    write_tsv("side_by_side.tsv", header, tsv)
    paper_cols = [c for v in variants for c in (f"{variant_label(v)}: stages", "+ polishing")]
    header = ["(d,k,m)", "scale", "seed", "samples", "time (s)"] + paper_cols + \
        ["Adam, equal samples", "Adam, equal time (samples)", "random-polish, equal samples and time (starts)", "learner"]
    cells = []
    for r in rows:
        at, rp = r["adam_t"], r["rp"]
        key = f"({r['d']},{r['k']},{r['m']}) | {r['scale']} | {r['seed']}"
        line = [f"({r['d']},{r['k']},{r['m']})", r["scale"], r["seed"]]
        line += [fmt_int(r["samples"]), f"{r['seconds']:.1f}"] if r["paper"] else ["–", "–"]
        fact(r["paper"], "samples", fmt_int(r["samples"]), key)
        fact(r["paper"], "wall seconds (report)", f"{r['seconds']:.1f}", key)
        for v in variants:
            p, status, _ = r["papers"][v]
            if p:
                line += [fmt(err(p, "errors_before_polish")), fmt(err(p))]
                fact(p, "error before polishing", fmt(err(p, "errors_before_polish")), key)
                fact(p, "final error", fmt(err(p)), key)
            else:
                line += [f"killed after {PAPER_TIMEOUT} s" if status == "killed" else f"exit {status}, no report", "–"]
        line += [fmt(err(r["adam_n"])), f"{fmt(err(at))} ({fmt_int(at['samples_total']) if at else '–'})",
                 f"{fmt(err(rp))} ({starts_of(rp) if rp else '–'})", LEARNERS.cells(sbs_reports(r))]
        for baseline in (r["adam_n"], at, rp):
            fact(baseline, "final error", fmt(err(baseline)), key)
        fact(at, "samples", fmt_int(at["samples_total"]) if at else None, key)
        cells.append(line)
    return "\n".join(table(header, cells, "lrrrr" + "rr" * len(variants) + "rrrl") +
                     ["", note([x for r in rows for x in sbs_reports(r)])])


def side_by_side_summary(rows):
    """Per (shape, scale): medians and rates per method; returns (markdown, facts)."""
    groups = {}
    for r in rows:
        groups.setdefault((r["d"], r["k"], r["m"], r["scale"]), []).append(r)

    def med(vals):
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    paper_cols = [c for v in variants for c in (f"{variant_label(v)}: stages", "+ polishing")]
    header = ["(d,k,m)", "scale", "runs"] + paper_cols + ["Adam, equal samples", "Adam, equal time", "random-polish",
                                                          "learner"]
    cells = []
    facts = []
    cnt = lambda vals: sum(1 for v in vals if recovered(v))
    for key, rs in groups.items():
        d, k, m, scale = key
        methods = {}
        for v in variants:
            methods[("stages", v)] = [err(r["papers"][v][0], "errors_before_polish") for r in rs]
            methods[("polished", v)] = [err(r["papers"][v][0]) for r in rs]
        methods["adam_n"] = [err(r["adam_n"]) for r in rs]
        methods["adam_t"] = [err(r["adam_t"]) for r in rs]
        methods["rp"] = [err(r["rp"]) for r in rs]
        cell = lambda vals: f"{rate(vals)} ({fmt(med(vals))})"
        paper_cells = [cell(methods[(what, v)]) for v in variants for what in ("stages", "polished")]
        cells.append([f"({d},{k},{m})", scale, len(rs)] + paper_cells +
                     [cell(methods["adam_n"]), cell(methods["adam_t"]), cell(methods["rp"]),
                      LEARNERS.cells([x for r in rs for x in sbs_reports(r)])])
        f = dict(key=key, n=len(rs), paper=med(methods[("stages", budget_variant)]),
                 polished=med(methods[("polished", budget_variant)]), adam_n=med(methods["adam_n"]),
                 adam_t=med(methods["adam_t"]), rp=med(methods["rp"]), c_p=cnt(methods[("stages", budget_variant)]),
                 c_pp=cnt(methods[("polished", budget_variant)]), c_an=cnt(methods["adam_n"]), c_at=cnt(methods["adam_t"]),
                 c_rp=cnt(methods["rp"]),
                 variants={v: (cnt(methods[("stages", v)]), cnt(methods[("polished", v)])) for v in variants})
        facts.append(f)
    return "\n".join(table(header, cells, "lrr" + "ll" * len(variants) + "llll") +
                     ["", note([x for r in rows for x in sbs_reports(r)])]), facts


def side_by_side_figures(rows):
    """Error vs samples and error vs time, seed 1 of every (shape, scale): Adam's trajectory,
    the paper's learner (each variant) and random-polish as points."""
    panels = [r for r in rows if r["seed"] == 1]
    figs = []
    for axis, key, adam_key, xlabel, fname in [
            ("samples", "samples", "adam_n", "samples", "results_error_vs_samples.svg"),
            ("seconds", "seconds", "adam_t", "seconds (2 threads)", "results_error_vs_time.svg")]:
        plots = []
        for r in panels:
            base = f"fig_{axis}_{r['tag']}"
            traj = []
            if r[adam_key]:
                for c in r[adam_key]["trajectory"]:
                    if "theta_max_rel" in c:
                        traj.append([c[key], max(c["theta_max_rel"], c["w_max_rel"])])
            t_path = write_tsv(base + "_adam.tsv", [key, "err"], traj)
            pts = []
            for v in variants:
                p = r["papers"][v][0]
                pts.append([p[key if axis == "seconds" else "samples_total"], err(p, "errors_before_polish"), err(p)]
                           if p else [None, None, None])
            rp = r["rp"]
            pts.append([rp[key if axis == "seconds" else "samples_total"], None, err(rp)] if rp else [None, None, None])
            p_path = write_tsv(base + "_points.tsv", [key, "stages", "final"], pts)
            plots.append((r, t_path, p_path))
        cols = 4
        nrows = math.ceil(len(plots) / cols)
        script = [f"set multiplot layout {nrows},{cols}", "set logscale xy", "set format y '10^{%L}'",
                  "set format x '10^{%L}'" if axis == "samples" else "set format x '%g'",
                  f"set xlabel '{xlabel}'", "set ylabel 'max Θ/W error'", "set yrange [1e-16:10]", "set key bottom left font ',9'",
                  "set datafile missing 'nan'"]
        for r, t_path, p_path in plots:
            script.append(f"set title '({r['d']},{r['k']},{r['m']}), scale {r['scale']}, seed 1'")
            terms = [f"'{t_path}' using 1:2 skip 1 with lines lw 2 title 'Adam'"]
            for i, v in enumerate(variants):
                name = "paper" if v is None else v
                terms.append(f"'{p_path}' every ::{i}::{i} using 1:2 skip 1 with points pt {7 + 2 * i} ps 1.5 title '{name}'")
                terms.append(f"'{p_path}' every ::{i}::{i} using 1:3 skip 1 with points pt {5 + 2 * i} ps 1.5 title '{name}+polish'")
            n = len(variants)
            terms.append(f"'{p_path}' every ::{n}::{n} using 1:3 skip 1 with points pt 13 ps 1.5 title 'random-polish'")
            script.append("plot " + ", ".join(terms))
        script.append("unset multiplot")
        figs.append(gnuplot((300 * nrows + 40, "\n".join(script) + "\n"), fname))
    return figs


# --------------------------------------------------------------------------- phase diagram


def classify(r, key="errors"):
    if not r or key not in r:
        return "failed"
    e = err(r, key)
    test = test_err(r, key)
    if e <= TARGET:
        return "recovered"
    if test <= 1e-6:
        return "fits, other heads"
    if e <= 0.1:
        return "close"
    return "stalled"


PHASE_SEEDS = [1, 2, 3, 4, 5]
# Logit scale 6 is left out (docstring: time); with one seed its cells behaved as scale 3's for
# every method, and the side by side runs scale 6 at cos 0.
PHASE_SCALES = [3, 12, 24]


def phase_tag(scale, coh, seed):
    """Seed 1 keeps the name the cell had when the diagram had one seed per cell."""
    return f"scale{scale}_coh{coh}" + ("" if seed == 1 else f"_seed{seed}")


def phase_diagram():
    t0 = time.time()
    scales = PHASE_SCALES if not args.quick else [3, 12]
    coherences = [0.0, 0.5, 0.9, 0.99] if not args.quick else [0.0, 0.9]
    seeds = PHASE_SEEDS if not args.quick else PHASE_SEEDS[:2]
    adam_budget = 6000000 if not args.quick else 2000000
    cells = []
    for scale in scales:
        for coh in coherences:
            runs = []
            for seed in seeds:
                tag = phase_tag(scale, coh, seed)
                inst = instance("phase_" + tag, 16, 2, 2, scale, seed, coh)
                papers = paper_runs("phase", tag, inst, ["--no-reference"])
                adam, _, _ = learn("phase_adam_" + tag, inst, ["--method", "adam", "--max-samples", str(adam_budget)])
                rp = random_polish_run("phase_random_polish_" + tag, inst, papers[budget_variant])
                runs.append(dict(seed=seed, papers=papers, adam=adam, rp=rp))
            cells.append(dict(scale=scale, coh=coh, runs=runs))
    timings["phase diagram"] = time.time() - t0
    return cells, scales, coherences, adam_budget, seeds


def phase_methods():
    """(key, title, error of a run) for every method of the phase diagram."""
    out = []
    for v in variants:
        name = "paper's learner" if v is None else f"{v} variant"
        out.append((f"{variant_name(v)}_stages", f"{name}: stages",
                    lambda run, v=v: err(run["papers"][v][0], "errors_before_polish")))
        out.append((f"{variant_name(v)}_polished", f"{name} + polishing", lambda run, v=v: err(run["papers"][v][0])))
    out.append(("adam", "Adam", lambda run: err(run["adam"])))
    out.append(("random_polish", "random-polish", lambda run: err(run["rp"])))
    return out


def per_start(reports):
    """Random-polish's starts over some runs: (recovered, run to the end, median seconds of those).
    A start the time budget cut says nothing about where its local search leads, so only starts
    polishing ended itself count."""
    done = [st for r in reports if r for st in r["starts"] if st["stop_reason"] != "time budget"]
    ok = [st for st in done if "theta_max_rel" in st and max(st["theta_max_rel"], st["w_max_rel"]) <= TARGET]
    return len(ok), len(done), statistics.median(st["seconds"] for st in done) if done else None


def phase_outputs(cells, scales, coherences, adam_budget, seeds):
    methods = phase_methods()
    # Every run, one row per (cell, seed).
    header = ["scale", "coherence", "seed"] + [key + "_err" for key, _, _ in methods] + ["random_polish_starts"]
    every = []
    for c in cells:
        for run in c["runs"]:
            every.append([c["scale"], c["coh"], run["seed"]] + [f(run) for _, _, f in methods] + [starts_of(run["rp"])])
    write_tsv("phase_diagram_runs.tsv", header, every)
    # Per cell and method: how many seeds recover, and the median error.
    rates = []  # scale, coh, {key: (recovered, n, median)}, random-polish per start
    for c in cells:
        per = {}
        for key, _, f in methods:
            errs = [f(run) for run in c["runs"]]
            known = [e for e in errs if e is not None]
            per[key] = (sum(1 for e in errs if recovered(e)), len(errs), statistics.median(known) if known else None)
        rates.append((c["scale"], c["coh"], per, per_start([run["rp"] for run in c["runs"]])))
    grid = []
    for scale, coh, per, _ in rates:
        i, j = coherences.index(coh), scales.index(scale)
        row = [i, j]
        for key, _, _ in methods:
            k, n, _ = per[key]
            row += [k / n, f"{k}/{n}"]
        grid.append(row)
    g_header = ["coh_index", "scale_index"]
    for key, _, _ in methods:
        g_header += [key + "_fraction", key + "_rate"]
    g_path = write_tsv("phase_rates.tsv", g_header, grid)
    xt = ", ".join(f"'{c}' {i}" for i, c in enumerate(coherences))
    yt = ", ".join(f"'{s}' {i}" for i, s in enumerate(scales))
    cols = 3 if len(methods) <= 6 else 4
    nrows = math.ceil(len(methods) / cols)
    script = [f"set multiplot layout {nrows},{cols}", f"set xtics ({xt})", f"set ytics ({yt})",
              "set xlabel 'pairwise cos(Θ_1, Θ_2)'", "set ylabel 'logit scale'", "set cbrange [0:1]",
              "set cblabel 'fraction of seeds recovered'",
              "set palette defined (0 '#d73027', 0.4 '#fc8d59', 0.6 '#fee08b', 0.8 '#91cf60', 1 '#1a9850')",
              f"set xrange [-0.5:{len(coherences) - 0.5}]", f"set yrange [-0.5:{len(scales) - 0.5}]", "unset key",
              "set datafile separator tab"]
    for n, (key, title, _) in enumerate(methods):
        col = 3 + 2 * n
        script.append(f"set title \"{title}\"")
        script.append(f"plot '{g_path}' using 1:2:{col} skip 1 with image, '' using 1:2:(stringcolumn({col + 1})) skip 1 with labels")
    script.append("unset multiplot")
    fig = gnuplot((380 * nrows + 40, "\n".join(script) + "\n"), "results_phase_diagram.svg")
    titles = [title for _, title, _ in methods]
    lines = table(["logit scale", "cos(Θ_1,Θ_2)"] + titles +
                  ["random-polish, per start: recovered / run to the end (median s)", "learner"],
                  [[scale, coh] + [f"{per[key][0]}/{per[key][1]} ({fmt(per[key][2])})" for key, _, _ in methods] +
                   [f"{ps[0]}/{ps[1]} ({f'{ps[2]:.1f}' if ps[2] is not None else '–'})",
                    LEARNERS.cells([x for run in c["runs"] for x in phase_reports(run)])]
                   for (scale, coh, per, ps), c in zip(rates, cells)],
                  "rr" + "l" * (len(methods) + 2))
    every_reports = [phase_reports(run) for c in cells for run in c["runs"]]
    # Every run, for the reader who wants the seeds behind a rate.
    run_lines = table(["logit scale", "cos", "seed"] + titles + ["random-polish starts", "learner"],
                      [row[:3] + [fmt(e) for e in row[3:-1]] + [row[-1] if row[-1] is not None else "–",
                                                                 LEARNERS.cells(reports)]
                       for row, reports in zip(every, every_reports)],
                      "rrr" + "r" * (len(methods) + 1) + "l")
    for row, (c, run) in zip(every, [(c, run) for c in cells for run in c["runs"]]):
        key = " | ".join(str(x) for x in row[:3])
        for v in variants:
            paper = run["papers"][v][0]
            fact(paper, "error before polishing", fmt(err(paper, "errors_before_polish")), key)
            fact(paper, "final error", fmt(err(paper)), key)
        fact(run["adam"], "final error", fmt(err(run["adam"])), key)
        fact(run["rp"], "final error", fmt(err(run["rp"])), key)
    shown = [x for reports in every_reports for x in reports]
    return ("\n".join(lines + ["", note(shown)]), fig, rates, methods,
            "\n".join(run_lines + ["", note(shown)]))


def phase_reports(run):
    """Every report of one seed of a phase-diagram cell."""
    return [run["papers"][v][0] for v in variants] + [run["adam"], run["rp"]]


def wanted(row_name):
    """Whether --rows (the table command's rows, by the start of their first cell) asks for this row."""
    return not getattr(args, "rows", None) or any(row_name.startswith(prefix) for prefix in args.rows)


REGIME_LEAN = ["--stage1-samples", "50000", "--crude-sculpt-samples", "100000", "--sculpt-samples", "300000",
               "--margin-samples", "100000", "--rounds", "3"]


def other_regimes():
    """Single runs for the regimes the grid does not cover: [(row name, paper report, its status, Adam report, note)]
    (only the rows --rows asks for)."""
    t0 = time.time()
    out = []
    base = instance("regime_base", 16, 2, 2, 6, 1)
    adam = ["--method", "adam", "--max-samples", "6000000"]
    # More heads.
    for m in ([4] if not args.quick else []):
        if wanted(name := f"more heads: (16,2,{m}), scale 6"):
            inst = instance(f"regime_m{m}", 16, 2, m, 6, 1)
            p, s, _ = learn(f"regime_paper_m{m}", inst, ["--no-reference"], timeout=PAPER_TIMEOUT)
            a, _, _ = learn(f"regime_adam_m{m}", inst, adam)
            out.append((name, p, s, a, "Adam 6e6 samples"))
    # Symmetric and saturated starts (Adam only; the paper's learner has no starting point).
    if wanted(name := "Adam from a symmetric start (both heads equal)"):
        out.append((name, None, None, learn("regime_adam_symmetric", base, adam + ["--init", "symmetric"])[0],
                    "6e6 samples"))
    if wanted(name := "Adam from a saturated start (‖Θ_i‖_F = 30 at init)"):
        out.append((name, None, None, learn("regime_adam_saturated", base, adam + ["--init-theta-norm", "30"])[0],
                    "6e6 samples"))
    # Small budgets, both methods.
    for n in [100000, 300000, 1000000] if not args.quick else [300000]:
        if wanted(name := f"small budget: Adam, {n:.0e} samples"):
            a, _, _ = learn(f"regime_adam_budget{n}", base, ["--method", "adam", "--max-samples", str(n)])
            out.append((name, None, None, a, f"{n:.0e} samples"))
    if wanted(name := "small budget: paper, stage1 5e4 / crude 1e5 / sculpt 3e5 / margin 1e5, 3 rounds"):
        p, s, _ = learn("regime_paper_lean", base, REGIME_LEAN + ["--no-reference"], timeout=PAPER_TIMEOUT)
        out.append((name, p, s, None, ""))
    # The SQ-hard family's member (MATH.md §4).
    if wanted(name := "SQ-hard member (d = 16, m = 3 hidden heads + 1, `mhalearn hard`)"):
        hard = os.path.join(RUNS, "regime_sq_member.instance.json")
        if not (args.reuse and os.path.exists(hard)):
            subprocess.run([TOOL, "hard", "--d", "16", "--m", "3", "--seed", "1", "-o", hard], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        p, s, _ = learn("regime_paper_sq", hard, ["--no-reference"], timeout=PAPER_TIMEOUT)
        a, _, _ = learn("regime_adam_sq", hard, adam)
        out.append((name, p, s, a, "Adam 6e6 samples"))
    timings["other regimes"] = time.time() - t0
    return out


def regimes_table(out):
    """The other regimes' table (Markdown) and its note; records its facts."""
    cells = []
    for name, p, s, a, _ in out:
        pm = "–"
        if p is not None:
            pm = (p.get("message") or "ok").replace("|", "/")[:120]
        elif s == "killed":
            pm = f"killed after {PAPER_TIMEOUT} s, no report"
        elif s is not None:
            pm = f"exit {s}, no report"
        cells.append([name, fmt(err(p, "errors_before_polish")) if p else "–", fmt(err(p)) if p else "–", pm,
                      f"{fmt(err(a))} ({classify(a)})", fmt(test_err(a)), LEARNERS.cells([p, a])])
        fact(p, "error before polishing", fmt(err(p, "errors_before_polish")), name)
        fact(p, "final error", fmt(err(p)), name)
        fact(a, "final error", fmt(err(a)), name)
    lines = table(["regime", "paper's stages", "+ polishing", "paper's message", "Adam", "Adam test error", "learner"],
                  cells)
    return "\n".join(lines + ["", note([x for _, p, _, a, _ in out for x in (p, a)])])


# --------------------------------------------------------------------------- scaling


first_reach = adam_reached  # (samples, seconds) of Adam's first checkpoint at ≤ 1e−3, or None


def adam_rule(tag, d, m, inst):
    """Adam's samples to 1e−3 on a scaling instance by the one rule (experiments.adam_rule_run): the targets
    page's run when the instance is the diagnosis grid's (the same content), so that both pages give one run's
    number; else a run of its own in RUNS. A --table pass (INTO) makes its own."""
    grid = os.path.join(ROOT, "docs", "diagnosis", f"d{d}_k2_m{m}_scale6_seed1.json")
    if INTO is None and os.path.exists(grid) and instance_hash(grid) == instance_hash(inst):
        spec = adam_rule_run(TOOL, rel(grid), f"d{d}_k2_m{m}_scale6_seed1_adam", runs=os.path.join(ROOT, ADAM_RULE_RUNS),
                             cwd=ROOT)
    else:
        spec = adam_rule_run(TOOL, inst, "scaling_adam_" + tag, runs=RUNS, cwd=ROOT)
    return run_spec(spec).report


def fit_exponent(xs, ys):
    """Least-squares slope of log y on log x (None with fewer than two points)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if y]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else None


def scaling(sbs_rows):
    t0 = time.time()
    ds = [8, 16, 32, 64] if not args.quick else [8, 16]
    ms = [1, 2, 3] if not args.quick else [1, 2]
    cap = 300 if not args.quick else 60
    rows = []
    points = [("d", d, 2) for d in ds] + [("m", 16, m) for m in ms if m != 2]
    for axis, d, m in points:
        tag = f"d{d}_k2_m{m}"
        inst = instance("scaling_" + tag, d, 2, m, 6, 1)
        extra = ["--max-seconds", str(cap), "--no-reference"]
        # The side-by-side study already ran the learner on this instance (same generator options).
        same = [r for r in sbs_rows if (r["d"], r["k"], r["m"], r["scale"], r["seed"]) == (d, 2, m, 6, 1)]
        if same and same[0]["paper"] and same[0]["paper"]["seconds"] <= cap:
            paper, status = same[0]["paper"], same[0]["status"]
        else:
            paper, status, wall = learn("scaling_paper_" + tag, inst, extra, timeout=2 * cap)
            if ESTIMATE is not None and ESTIMATE.get("scaling_paper_" + tag) is None:
                # The page took this run from the side by side (the same instance): its time.
                sbs = previous(Run(f"sbs_{variant_name(budget_variant)}_{tag}_scale6_seed1", ["-"], RUNS))
                ESTIMATE["scaling_paper_" + tag] = committed_seconds(sbs)
                paper = sbs.report if sbs else None
        adam = adam_rule(tag, d, m, inst)
        pe = err(paper)
        rows.append(dict(axis=axis, d=d, m=m, paper=paper, status=status,
                         paper_reached=(paper["samples_total"], paper["seconds"]) if pe is not None and pe <= TARGET else None,
                         paper_err=pe, adam=adam, adam_reached=first_reach(adam),
                         adam_samples=adam["samples_total"] if adam else None,
                         adam_seconds=adam["seconds"] if adam else None))
    timings["scaling"] = time.time() - t0
    return rows, cap


def scaling_outputs(rows, cap):
    tsv, cells = [], []
    for r in rows:
        pr, ar = r["paper_reached"], r["adam_reached"]
        p_s = fmt_int(pr[0]) if pr else (f"not reached ({fmt_int(r['paper']['samples_total'])} used)" if r["paper"]
                                         else f"no layer (exit {r['status']}{', after ' + str(2 * cap) + ' s' if r['status'] == 'killed' else ''})")
        p_t = f"{pr[1]:.1f}" if pr else (f"{r['paper']['seconds']:.0f} used" if r["paper"] else "–")
        a_s = fmt_int(ar[0]) if ar else f"not reached ({fmt_int(r['adam_samples'])} in {r['adam_seconds']:.0f} s)" if r["adam"] else "–"
        a_t = f"{ar[1]:.1f}" if ar else "–"
        key = f"({r['d']},2,{r['m']})"
        cells.append([key, p_s, p_t, fmt(r["paper_err"]), a_s, a_t, fmt(err(r["adam"])),
                      LEARNERS.cells([r["paper"], r["adam"]])])
        tsv.append([r["d"], r["m"], pr[0] if pr else None, pr[1] if pr else None, ar[0] if ar else None, ar[1] if ar else None])
        fact(r["paper"], "samples", fmt_int(pr[0]) if pr else None, key)
        fact(r["paper"], "wall seconds (report)", p_t if pr else None, key)
        fact(r["paper"], "final error", fmt(r["paper_err"]), key)
        fact(r["adam"], "Adam's samples to 1e-3", fmt_int(ar[0]) if ar else ("not reached" if r["adam"] else None), key)
        fact(r["adam"], "final error", fmt(err(r["adam"])), key)
    lines = table(["(d,k,m)", "paper: samples", "paper: s", "paper: final error", "Adam: samples to 1e−3",
                   "Adam: s to 1e−3", "Adam: final error", "learner"], cells, "lrrrrrrl")
    lines += ["", note([x for r in rows for x in (r["paper"], r["adam"])])]
    write_tsv("scaling.tsv", ["d", "m", "paper_samples", "paper_seconds", "adam_samples", "adam_seconds"], tsv)
    d_rows = [r for r in rows if r["axis"] == "d" or (r["d"] == 16 and r["m"] == 2)]
    d_rows = sorted({r["d"]: r for r in d_rows}.values(), key=lambda r: r["d"])
    m_rows = sorted([r for r in rows if r["d"] == 16], key=lambda r: r["m"])
    fits = {}
    for label, rs, var in [("d", d_rows, "d"), ("m", m_rows, "m")]:
        for who in ["paper", "adam"]:
            for i, what in [(0, "samples"), (1, "seconds")]:
                xs = [r[var] for r in rs if r[who + "_reached"]]
                ys = [r[who + "_reached"][i] for r in rs if r[who + "_reached"]]
                fits[(label, who, what)] = (fit_exponent(xs, ys), xs)
    d_path = write_tsv("scaling_d.tsv", ["d", "paper_samples", "paper_seconds", "adam_samples", "adam_seconds"],
                       [[r["d"]] + [r["paper_reached"][0] if r["paper_reached"] else None,
                                    r["paper_reached"][1] if r["paper_reached"] else None,
                                    r["adam_reached"][0] if r["adam_reached"] else None,
                                    r["adam_reached"][1] if r["adam_reached"] else None] for r in d_rows])
    script = ["set multiplot layout 1,2", "set logscale xy", "set key top left", "set xlabel 'd (k = 2, m = 2)'",
              "set datafile missing 'nan'", "set xtics (8, 16, 32, 64)", "set format y '10^{%L}'",
              "set title 'samples to max Θ/W error 1e-3'", "set ylabel 'samples'",
              f"plot '{d_path}' using 1:2 skip 1 with linespoints pt 7 lw 2 title 'paper + polishing', '' using 1:4 skip 1 with linespoints pt 5 lw 2 title 'Adam'",
              "set title 'seconds to max Θ/W error 1e-3 (2 threads)'", "set ylabel 'seconds'", "set format y '%g'",
              f"plot '{d_path}' using 1:3 skip 1 with linespoints pt 7 lw 2 title 'paper + polishing', '' using 1:5 skip 1 with linespoints pt 5 lw 2 title 'Adam'",
              "unset multiplot"]
    fig = gnuplot((420, "\n".join(script) + "\n"), "results_scaling.svg")
    return "\n".join(lines), fits, fig


# --------------------------------------------------------------------------- throughput


BENCH_FILTER = r"GemmPeak|FastForward/\(2,16,2\)|FastForward/\(2,32,2\)|ReferenceForward/\(2,16,2\)|CertifyRow|WStack|LossGradient"


def throughput(sbs_rows):
    """The throughput section's runs: the benchmark (DATA/bench.json, its build recorded as `bench` in
    RUNS/provenance.json), stage 1 with its reference, and the learner with its reference step."""
    t0 = time.time()
    out = os.path.join(DATA, "bench.json")
    if ESTIMATE is not None:  # the benchmark's time is not in a log: its timed iterations (a lower bound)
        units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
        ESTIMATE["bench"] = sum(b.get("iterations", 0) * b["real_time"] * units[b["time_unit"]]
                                for b in (load(out) or {}).get("benchmarks", [])) or None
    elif not (args.reuse and os.path.exists(out)):
        # Benchmark names spell shapes as (k,d,m); the filter is a regular expression.
        made = provenance_now(TOOL, ROOT)
        subprocess.run([BENCH, f"--benchmark_filter={BENCH_FILTER}", "--benchmark_min_time=0.3", "--benchmark_format=json",
                        f"--benchmark_out={out}", "--benchmark_out_format=json"], check=True, stdout=subprocess.DEVNULL,
                       cwd=ROOT)
        entries = load(os.path.join(RUNS, "provenance.json")) or {}
        entries["bench"] = dict(made, binary=rel(BENCH))
        with open(os.path.join(RUNS, "provenance.json"), "w") as f:
            json.dump(entries, f, indent=1, sort_keys=True)
            f.write("\n")
    # Stage 1: fast vs MPFR statistic on the same samples.
    s1 = os.path.join(RUNS, "throughput_stage1.report.json")
    inst = instance("regime_base", 16, 2, 2, 6, 1)
    st1 = run_spec(Run("throughput_stage1", [TOOL, "stage1", inst, "--samples", "200000", "--reference",
                                             "--reference-samples", "2000", "--threads", THREADS, "--report", s1],
                       RUNS, report=s1, cwd=ROOT)).report
    ref, _, _ = learn("throughput_paper_with_reference", inst, [])
    timings["throughput"] = time.time() - t0
    return dict(bench=load(out) if ESTIMATE is None else None, stage1=st1, ref=ref,
                bench_label=recorded_label(RUNS, "bench"))


def throughput_tables(runs):
    """The fast-vs-reference table and the forward table (Markdown, each with its learner note), the
    GEMM peak and the reference forward pass's rate."""
    bench = {b["name"]: b for b in runs["bench"]["benchmarks"]}
    st1, ref, bench_label = runs["stage1"], runs["ref"], runs["bench_label"]

    def per_call(name):
        b = bench.get(name)
        if not b:
            return None
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
        return b["real_time"] * unit

    rows = []
    cross = st1["stages"][0].get("reference_same_sample") or {}
    if cross:
        rows.append(("1: W_Σ statistic", f"{cross['samples']} samples, fast vs MPFR", cross["seconds_fast"],
                     cross["seconds_reference"], learner_label(st1)))
    f, rf = per_call("BM_CertifyRow_fast"), per_call("BM_CertifyRow_reference")
    rows.append(("2: certify one row", "double normal equations vs MPFR QR (200 bits)", f, rf, bench_label))
    if ref:
        fast3 = [s["seconds"] for s in ref["stages"] if s["stage"] == "3" and "reference" not in s]
        ref3 = [s["seconds"] for s in ref["stages"] if s["stage"] == "3" and "reference" in s]
        fast5 = [s["seconds"] for s in ref["stages"] if s["stage"] == "5" and "reference" not in s]
        ref5 = [s["seconds"] for s in ref["stages"] if s["stage"] == "5" and "reference" in s]
        if fast3 and ref3:
            rows.append(("3: proxy of the hull", "whole fast stage 3 (incl. sampling) vs CLP QP min-norm point",
                         statistics.median(fast3), ref3[0], learner_label(ref)))
        if fast5 and ref5:
            rows.append(("5: span of the hull", "singular-value gap vs 2d² LP widths (CLP)", statistics.median(fast5),
                         ref5[0], learner_label(ref)))
    f, rf = per_call("BM_WStack_fast"), per_call("BM_WStack_reference")
    rows.append(("6 / polish: W least squares", "64 samples: double QR vs exact rational Gauss–Jordan", f, rf, bench_label))
    f, rf = per_call("BM_LossGradient_fast"), per_call("BM_LossGradient_reference")
    rows.append(("Adam: loss gradient", "one sample: double vs MPFR (200 bits)", f, rf, bench_label))
    cells = []
    for name, what, f, rf, label in rows:
        ratio = rf / f if f and rf else None
        cells.append([name, what, fmt(f, 2), fmt(rf, 2), ("%.0f×" % ratio) if ratio else "–", LEARNERS.label_cell(label)])
    lines = table(["stage", "what is compared", "fast (s)", "reference (s)", "reference / fast", "learner"], cells,
                  "llrrrl") + ["", note(labels=[label for *_, label in rows])]
    peak = bench.get("BM_GemmPeak", {}).get("GFLOPs")
    fwd = []
    for shape, (k, d, m) in [("(2,16,2)", (2, 16, 2)), ("(2,32,2)", (2, 32, 2))]:
        for name, b in bench.items():
            if name.startswith(f"BM_FastForward/{shape}") and b.get("run_type", "iteration") == "iteration":
                thr = name.split("threads:")[-1].split("/")[0] if "threads:" in name else "?"
                fwd.append((f"({k},{d},{m})", thr, b.get("items_per_second"), b.get("GFLOPs")))
    cells = []
    for shape, thr, ips, gf in fwd:
        frac = f"{100 * gf / peak:.0f} %" if gf and peak else "–"
        cells.append([shape, thr, fmt(ips, 2)] + ([f"{gf:.1f}", frac] if gf else ["–", "–"]) +
                     [LEARNERS.label_cell(bench_label)])
    flines = table(["shape (k,d,m)", "threads", "examples/s", "effective GFLOP/s", "of 1-core GEMM peak", "learner"],
                   cells, "lrrrrl") + ["", note(labels=[bench_label])]
    refps = bench.get("BM_ReferenceForward/(2,16,2)", {}).get("items_per_second")
    return "\n".join(lines), "\n".join(flines), peak, refps


# --------------------------------------------------------------------------- page


def machine():
    cpu = cpu_model("unknown")
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    # docs/ is excluded: the run itself rewrites the tracked docs/results*, figures and wsum page.
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)docs"],
                           capture_output=True, text=True, cwd=ROOT).stdout.strip()
    return (cpu, os.cpu_count(), mem, commit + (" (with uncommitted changes outside docs/)" if dirty else ""),
            platform.platform())


SECTIONS = ["sbs", "phase", "regimes", "scaling", "throughput", "convergence"]


def collect(sections, shapes=None):
    """The runs of the sections named (in SECTIONS' order), each section's result by name;
    shapes: the convergence shapes to run (default all)."""
    got = {}
    for section in [s for s in SECTIONS if s in sections]:
        print(section, file=sys.stderr)
        if section == "sbs":
            got["sbs"] = side_by_side()
        elif section == "phase":
            got["phase"] = phase_diagram()
        elif section == "regimes":
            got["regimes"] = other_regimes()
        elif section == "scaling":
            got["scaling"] = scaling(got.get("sbs", []))  # without the side-by-side rows its shared runs are made again
        elif section == "throughput":
            got["throughput"] = throughput(got.get("sbs", []))
        elif section == "convergence":
            got["convergence"] = results_convergence.runs(learn, instance, args.quick, shapes)
    return got


def page_learners(got):
    """The learners of every run the sections gave (experiments.Learners)."""
    reports = [x for r in got.get("sbs", []) for x in sbs_reports(r)]
    reports += [x for c in got.get("phase", ([],))[0] for run in c["runs"] for x in phase_reports(run)]
    reports += [x for _, p, _, a, _ in got.get("regimes", []) for x in (p, a)]
    reports += [x for r in got.get("scaling", ([],))[0] for x in (r["paper"], r["adam"])]
    labels = []
    if "throughput" in got:
        reports += [got["throughput"]["stage1"], got["throughput"]["ref"]]
        labels.append(got["throughput"]["bench_label"])
    reports += [r for rows in got.get("convergence", {}).values() for _, r, _ in rows]
    return Learners(reports, labels)


def make_runs_only(sections):
    """The runs of some sections, in the order given; the page needs every section."""
    t0 = time.time()
    collect(sections)
    print(f"made the runs of {', '.join(sections)} in {(time.time() - t0) / 60:.1f} min; no page written "
          f"(a run of every section writes it)", file=sys.stderr)


def write_page(got, start, started):
    """docs/results.md and its facts from every section's runs."""
    global LEARNERS, FACTS
    LEARNERS = page_learners(got)
    FACTS = Facts(os.path.join(ROOT, "docs/results.md"))
    sbs = got["sbs"]
    cells, scales, cohs, adam_budget, phase_seeds = got["phase"]
    sc_rows, cap = got["scaling"]
    regimes = got["regimes"]
    regimes_md = regimes_table(regimes)
    ratio_md, fwd_md, peak, refps = throughput_tables(got["throughput"])
    conv_md, conv_fig, conv_points, conv_fits = results_convergence.outputs(
        got["convergence"], fmt, fmt_int, table, write_tsv, gnuplot, LEARNERS, fact)
    conv_section = results_convergence.section(conv_md, conv_fig, conv_points, conv_fits, fmt, fmt_int)
    sbs_md = side_by_side_tables(sbs)
    sum_md, facts = side_by_side_summary(sbs)
    stages_md = results_stages.stage_tables(sbs, variants, variant_label, fmt, fmt_int, table, LEARNERS.cells,
                                            lambda reports: note(reports))
    figs = side_by_side_figures(sbs)
    phase_md, phase_fig, phase_rates, phase_methods_, phase_runs_md = phase_outputs(cells, scales, cohs, adam_budget,
                                                                                   phase_seeds)
    sc_md, fits, sc_fig = scaling_outputs(sc_rows, cap)
    rp_reports = [run["rp"] for c in cells for run in c["runs"] if run["rp"]]
    rp_starts = [len(r["starts"]) for r in rp_reports]
    rp_cut = sum(1 for r in rp_reports if len(r["starts"]) == 1 and r["starts"][0]["stop_reason"] == "time budget")
    total = time.time() - start
    cpu, cores, mem, commit, plat = machine()
    page = render(dict(sbs_md=sbs_md, sum_md=sum_md, stages_md=stages_md, shape=theorem_shape.sections(TOOL, LEARNERS), facts=facts, figs=figs, phase_md=phase_md, phase_fig=phase_fig,
                       phase_rates=phase_rates, phase_methods=[(k, t) for k, t, _ in phase_methods_],
                       phase_runs_md=phase_runs_md, phase_seeds=phase_seeds, variants=variants,
                       budget_variant=budget_variant, variant_labels={v: variant_label(v) for v in variants},
                       rp_starts=RP_STARTS, phase_rp_starts=rp_starts, phase_rp_cut=rp_cut, regimes_md=regimes_md,
                       regimes=regimes, sc_md=sc_md, fits=fits, sc_fig=sc_fig, sc_rows=sc_rows, cap=cap,
                       ratio_md=ratio_md, fwd_md=fwd_md, peak=peak, refps=refps, total=total, run_walls=run_walls,
                       cpu=cpu, cores=cores, mem=mem, commit=commit, plat=plat, started=started, adam_budget=adam_budget,
                       scales=scales, cohs=cohs, command=args.command, quick=args.quick, conv_section=conv_section,
                       learners=LEARNERS, fact=fact, runs_dir=RUNS, adam_rule=ADAM_RULE_PAGE))
    with open(os.path.join(ROOT, "docs/results.md"), "w") as f:
        f.write(page)
    FACTS.write()
    print(f"wrote docs/results.md in {total / 60:.1f} min", file=sys.stderr)


def main():
    global args, TOOL, BENCH
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--command", default="scripts/results.sh")
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--tool", default=TOOL, help="the mhalearn to run (mhalearn_bench: beside it)")
    ap.add_argument("--table", choices=sorted(results_tables.TABLES) + ["list"],
                    help="re-make this table or figure alone (results_tables.py): its expected time first, its runs "
                         "into --into, then a comparison with the page's; `list`: every table with its expected time")
    ap.add_argument("--into", help="with --table: a new or empty folder outside docs/ (default: a new temporary one)")
    ap.add_argument("--rows", nargs="+", help="with --table: only the rows whose first cell starts with one of these")
    add_learner_option(ap)
    args = ap.parse_args()
    TOOL = os.path.abspath(args.tool)
    BENCH = os.path.join(os.path.dirname(TOOL), "mhalearn_bench")
    require_learner(args)
    sections = args.sections.split(",")
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        sys.exit(f"results.py: unknown section {unknown[0]!r} (sections: {', '.join(SECTIONS)})")
    global variants, budget_variant
    variants = learner_variants()
    budget_variant = "extended" if "extended" in variants else variants[0]
    if args.table:
        return results_tables.command(sys.modules[__name__], args)
    os.makedirs(RUNS, exist_ok=True)
    os.makedirs(FIGS, exist_ok=True)
    if set(sections) != set(SECTIONS):
        make_runs_only(sections)
        return 0
    start = time.time()
    started = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    write_page(collect(SECTIONS), start, started)
    return 0


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_page import render  # noqa: E402  (the page's prose, kept apart from the runs)
import results_convergence  # noqa: E402  (the paper variant's budgets: its runs and tables)
import results_tables  # noqa: E402  (one table, one command: --table)
import results_stages  # noqa: E402  (§1's per-stage tables: paper against extended)
import theorem_shape  # noqa: E402  (§6: the error floor against kd, Gaussian inputs; its own runs and page)

if __name__ == "__main__":
    sys.exit(main())
