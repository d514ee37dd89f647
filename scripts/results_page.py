"""The prose of docs/results.md (scripts/results.py passes it the measurements).

Every sentence that compares the methods is computed from the numbers of the
run that wrote the page, so the conclusions cannot drift from the tables. The
per-configuration table (accuracy, samples, wall time, machine, commit) is read
from the committed reports themselves, which record no CPU time and no load:
the page says so rather than fill them in.
"""
import glob
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import learner_label  # noqa: E402

TARGET = 1e-3
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
RUNS = os.path.join(ROOT, "docs/results/runs")  # scripts/results.py keeps every run's report here


def fmt(x, digits=1):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "–"
    return f"{x:.{digits}e}"


def ratio_words(a, b):
    """How a compares with b (errors: smaller is better)."""
    if a is None or b is None:
        return "could not be compared"
    if a <= 0 or b <= 0:
        return "compared at zero"
    r = b / a
    big = lambda x: f"{x:.0f}" if x < 1000 else f"{x:.0e}"
    if r >= 3:
        return f"{big(r)}× smaller"
    if r <= 1 / 3:
        return f"{big(1 / r)}× larger"
    return "about the same"


MACHINE = 1e-12  # both errors below this: round-off decides the order, so it is a tie


def side_by_side_conclusions(facts, c):
    labels = c["variant_labels"]
    out = []
    for f in facts:
        d, k, m, scale = f["key"]
        who = []
        tie = lambda a, b: a is not None and b is not None and a < MACHINE and b < MACHINE
        if f["adam_n"] is not None and f["paper"] is not None:
            if f["adam_n"] < f["paper"]:
                who.append(f"at equal samples **Adam wins** against the paper's stages (median {fmt(f['adam_n'])} vs "
                           f"{fmt(f['paper'])}, Adam's error {ratio_words(f['adam_n'], f['paper'])})")
            else:
                who.append(f"at equal samples the paper's stages are ahead of Adam (median {fmt(f['paper'])} vs {fmt(f['adam_n'])})")
        if tie(f["adam_n"], f["polished"]):
            who.append(f"with polishing both are at machine precision ({fmt(f['polished'])} vs Adam's {fmt(f['adam_n'])}: a tie)")
        elif f["adam_n"] is not None and f["polished"] is not None:
            if f["polished"] < f["adam_n"]:
                who.append(f"with polishing the paper's learner is ahead ({fmt(f['polished'])} vs Adam's {fmt(f['adam_n'])})")
            else:
                who.append(f"even with polishing Adam is ahead or level ({fmt(f['adam_n'])} vs {fmt(f['polished'])})")
        if tie(f["adam_t"], f["polished"]):
            who.append(f"at equal wall time both are at machine precision ({fmt(f['polished'])} vs Adam's {fmt(f['adam_t'])}: a tie)")
        elif f["adam_t"] is not None and f["polished"] is not None:
            if f["adam_t"] < f["polished"]:
                who.append(f"at equal wall time **Adam wins** ({fmt(f['adam_t'])} vs {fmt(f['polished'])} for the polished learner)")
            else:
                who.append(f"at equal wall time the polished learner is ahead ({fmt(f['polished'])} vs Adam's {fmt(f['adam_t'])})")
        if f["c_rp"] >= f["c_pp"] and f["c_rp"] > 0:
            who.append(f"**polishing alone from random starts recovers the heads as often** as the paper's learner "
                       f"({f['c_rp']}/{f['n']} against {f['c_pp']}/{f['n']})")
        elif f["c_pp"] > f["c_rp"]:
            who.append(f"the paper's learner recovers where polishing from random starts does not "
                       f"({f['c_pp']}/{f['n']} against {f['c_rp']}/{f['n']})")
        rates = "; ".join(f"{labels[v]}: stages {st}/{f['n']}, polished {po}/{f['n']}" for v, (st, po) in f["variants"].items())
        out.append(f"- ({d},{k},{m}), scale {scale}, {f['n']} seed{'s' if f['n'] != 1 else ''}: " + "; ".join(who) + ". "
                   f"Runs at ≤ 1e−3: {rates}; Adam at equal samples {f['c_an']}/{f['n']}, at equal time "
                   f"{f['c_at']}/{f['n']}; random-polish {f['c_rp']}/{f['n']}.")
    return "\n".join(out)


def phase_conclusions(c):
    """Rates per method over the phase diagram's cells, computed from the runs."""
    rates, methods = c["phase_rates"], c["phase_methods"]
    cell = lambda scale, coh: f"({scale}, {coh})"
    lines = []
    for key, title in methods:
        got = sum(per[key][0] for _, _, per, _ in rates)
        total = sum(per[key][1] for _, _, per, _ in rates)
        every = [cell(s, h) for s, h, per, _ in rates if per[key][0] == per[key][1]]
        none = [cell(s, h) for s, h, per, _ in rates if per[key][0] == 0]
        lines.append(f"- {title}: {got}/{total} runs recovered; every seed in {len(every)} of {len(rates)} cells, "
                     f"no seed in {len(none)} of {len(rates)}" + (f": {', '.join(none)}." if none else "."))
    polished = f"{variant_key(c['budget_variant'])}_polished"
    rp_ok = [cell(s, h) for s, h, per, _ in rates
             if per["random_polish"][0] >= per[polished][0] and per["random_polish"][0] > 0]
    paper_ok = [f"{cell(s, h)}: {per[polished][0]}/{per[polished][1]} against {per['random_polish'][0]}/{per['random_polish'][1]}"
                + (f", though {ps[0]} of its {ps[1]} starts that ran to the end recovered (median {ps[2]:.0f} s each)"
                   if ps[0] else "")
                for s, h, per, ps in rates if per[polished][0] > per["random_polish"][0]]
    neither = [cell(s, h) for s, h, per, _ in rates if per[polished][0] == 0 and per["random_polish"][0] == 0]
    name = c["variant_labels"][c["budget_variant"]]
    lines.append(f"- **Where local search from random starts recovers the heads** at least as often as the {name} "
                 f"with polishing, at the same samples and wall time: {', '.join(rp_ok) or 'no cell'}.")
    lines.append(f"- **Where the paper's learner earns its place** (the {name} with polishing recovers more seeds than "
                 f"random-polish): {'; '.join(paper_ok) or 'no cell'}.")
    lines.append(f"- Neither recovers any seed: {', '.join(neither) or 'no cell'}.")
    starts = c["phase_rp_starts"]
    if starts:
        lines.append(f"- Random-polish ran {min(starts)}–{max(starts)} starts per run (median "
                     f"{statistics.median(starts):g}) within the paper run's wall time; a run whose first start was "
                     f"cut by the time budget counts as that start's layer ({c['phase_rp_cut']} of {len(starts)} runs).")
    return "\n".join(lines)


def variant_key(v):
    return "paper" if v in (None, "paper") else v


def scaling_text(fits, rows):
    lines = []
    for (label, who, what), (slope, xs) in sorted(fits.items()):
        name = "paper + polishing" if who == "paper" else "Adam"
        if slope is None:
            lines.append(f"- {what} vs {label}, {name}: fewer than two points reached 1e−3 ({', '.join(map(str, xs)) or 'none'}), no exponent fitted.")
        else:
            lines.append(f"- {what} vs {label}, {name}: fitted exponent **{slope:.2f}** from {label} = {', '.join(map(str, xs))}.")
    return "\n".join(lines)


def sitting(c):
    """How long this run of results.py took, and what --reuse took from earlier sittings."""
    made, reused = c["run_walls"]["made"], c["run_walls"]["reused"]
    text = f"this run {c['total'] / 60:.1f} min"
    if reused:
        text += (f", making {len(made)} learner runs and reusing {len(reused)} (`--reuse`) made earlier, "
                 f"whose wall times sum to {sum(reused) / 3600:.1f} h")
    return text


def _report(name):
    """A committed run's report (NAME.report.json in RUNS), or None."""
    try:
        with open(os.path.join(RUNS, name + ".report.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _err(r, key="errors"):
    if not r or key not in r:
        return None
    return max(r[key]["theta_max_rel"], r[key]["w_max_rel"])


def _median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def _instance_options(r):
    """generate's options (d, k, m, scale, seed) of the instance a report learned, from the instance file."""
    name = os.path.basename(r["provenance"]["options"].get("instance") or "")
    try:
        with open(os.path.join(RUNS, name)) as f:
            return json.load(f)["provenance"]["options"]
    except (OSError, ValueError, KeyError):
        return {}


def _where(reports):
    """Where the reports say they ran: CPU model, threads used of those available."""
    seen = sorted({(r["provenance"]["build"].get("cpu", "?"), r["provenance"]["options"].get("threads"),
                    r["provenance"]["build"].get("threads_available")) for r in reports}, key=str)
    return "; ".join(f"{cpu}, {used} of {avail} threads" for cpu, used, avail in seen)


def glance(c):
    """Per configuration: accuracy, samples, wall time, machine and commit of the default learner's runs,
    read from the committed reports, with what they do not record (CPU time, load) said as such."""
    v = variant_key(c["budget_variant"])
    label = c["variant_labels"][c["budget_variant"]]
    global RUNS
    RUNS = c.get("runs_dir", RUNS)
    learners = c["learners"]
    lines = [f"| configuration | runs | {label}: error after its stages (median) | + polishing (median) | reached ≤ 1e−3 | "
             "samples (median) | wall s (median; min–max) | machine (threads used of available) | learner |",
             "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    every = []

    def row(name, reports):
        walls = [r["seconds"] for r in reports]
        wall = f"{walls[0]:.1f}" if len(walls) == 1 else f"{_median(walls):.1f}; {min(walls):.1f}–{max(walls):.1f}"
        polished = [_err(r) for r in reports]
        lines.append(f"| {name} | {len(reports)} | {fmt(_median(_err(r, 'errors_before_polish') for r in reports))} | "
                     f"{fmt(_median(polished))} | {sum(1 for e in polished if e is not None and e <= TARGET)}/{len(reports)} | "
                     f"{_median(r['samples_total'] for r in reports):.2e} | {wall} | "
                     f"{_where(reports)} | {learners.cells(reports)} |")
        if len(reports) == 1:
            r = reports[0]
            c["fact"](r, "error before polishing", fmt(_err(r, "errors_before_polish")), name)
            c["fact"](r, "final error", fmt(_err(r)), name)
            c["fact"](r, "wall seconds (report)", wall, name)

    for f in c["facts"]:
        d, k, m, scale = f["key"]
        paths = sorted(glob.glob(os.path.join(RUNS, f"sbs_{v}_d{d}_k{k}_m{m}_scale{scale}_seed*.report.json")))
        reports = [r for r in (_report(os.path.basename(p)[:-len(".report.json")]) for p in paths) if r]
        if reports:
            every += reports
            row(f"({d},{k},{m}), scale {scale}, `--no-reference` (§1)", reports)
    ref = _report("throughput_paper_with_reference")
    if ref:
        o = _instance_options(ref)
        every.append(ref)
        row(f"({o.get('d')},{o.get('k')},{o.get('m')}), scale {o.get('scale', 0):g}, seed {o.get('seed')}: the defaults, "
            "reference step on (what `mhalearn demo` runs; §4)", [ref])
    # Runs made apart from the pass, and equal-time budgets that no longer match their paper run.
    commits = {}
    for r in every:
        commits[r["provenance"]["git_commit"]] = commits.get(r["provenance"]["git_commit"], 0) + 1
    main = max(commits, key=commits.get) if commits else None
    notes = []
    for p in sorted(glob.glob(os.path.join(RUNS, f"sbs_{v}_*.report.json"))):
        name = os.path.basename(p)[:-len(".report.json")]
        tag = name[len(f"sbs_{v}_"):]
        r, adam = _report(name), _report("sbs_adam_time_" + tag)
        if not r or r["provenance"]["git_commit"] == main:
            continue
        budget = adam["provenance"]["options"].get("max_seconds") if adam else None
        note = f"`{name}` ({r['seconds']:.1f} s, made at {r['provenance']['git_commit'][:7]}"
        if budget and abs(budget - r["seconds"]) > 0.05 * budget:
            note += f"; its equal-time baselines ran on the {budget:g} s of the run it replaced"
        notes.append(note + ")")
    text = "\n".join(lines + ["", learners.note([learner_label(r) for r in every])])
    text += ("\n\nWall time is the report's `seconds` (the whole `learn`, 2 threads). **CPU time and the machine's load "
             "were not recorded** by these runs: a report has wall time only, so every wall time on this page was "
             "measured at an unknown load on the machine named (`scripts/results.sh` asks for an otherwise idle one).")
    if notes:
        text += (f" Most of these runs were made at commit {main[:7]}; {len(notes)} of the side-by-side runs above were "
                 f"re-made later, apart from the pass, so their wall times come from another sitting: "
                 + "; ".join(notes) + ". The sections below show these wall times wherever they list these runs.")
    return text


def render(c):
    figs = c["figs"]
    regimes_md = c["regimes_md"]
    variants_note = (
        "This build's learner has no `--variant` option: every paper run uses its one default, and the "
        "page shows one variant." if c["variants"] == [None] else
        f"The learner runs in both variants, `--variant paper` and `--variant extended`; the baselines' equal "
        f"budgets are those of the `{c['budget_variant']}` run (the default).")
    return f"""# Results: the paper's learner against Adam and against polishing from random starts

Every table and figure on this page was {'written from the committed runs' if '--reuse' in c['command'] else 'regenerated from scratch'} by

```sh
{c['command']}
```

This is the project's one page of learner results: other pages link here for
how accurate the learner is, on how many samples, in how long, and on what
machine. `scripts/results.sh` runs every configuration below;
`scripts/results.sh --quick` runs a few per section (its measured time is in
`scripts/results.py`'s docstring) and writes the same page from them;
`scripts/results.sh --reuse` writes the page again from the committed runs,
making only those it cannot reuse (`scripts/results.py --help` says which).{' **This page comes from a `--quick` run.**' if c['quick'] else ''} Raw reports, logs and instances:
`docs/results/runs/`; the tables' data: `docs/results/*.tsv`; figures:
`docs/figures/results_*.svg` (gnuplot).

- Runs: on the machine their reports name (table below); page written on {c['cpu']}, {c['cores']} cores, {c['mem']}; {c['plat']}
- Page written at commit {c['commit']}; started {c['started']}; {sitting(c)}
- Seeds: instance seeds as listed (`mhalearn generate --seed`), sample stream seed 1, Adam's
  initialisation seed 1, random-polish's start seed 1 (`--init-seed`), test-stream seed 1; every run uses 2 threads (results do not depend on
  the thread count; wall times do).
- "Error" is max over heads of max(‖Θ̂_i − Θ_i‖_F/‖Θ_i‖_F, ‖Ŵ_i − W_i‖_F/‖W_i‖_F) after the best head
  permutation; "reached" means error ≤ 1e−3.
- The paper's learner runs with its defaults and `--no-reference` (`mhalearn learn --no-reference`: the reference paths are verification, timed in §4); "paper's stages" is its stage-6
  layer, "+ polishing" the same run after Levenberg–Marquardt (MATH.md §3, beyond the paper).
  {variants_note}
- Adam: `mhalearn learn --method adam`, batch 512 of fresh samples, Adam(0.9, 0.999, 1e−8),
  learning rate 3e−3 with cosine decay to 0 over the budget, the best checkpoint by a
  1000-sample validation set. *Equal samples*: its budget is the paper run's total sample
  count. *Equal time*: the schedule runs on the clock for the paper run's wall time.
- Random-polish: `mhalearn learn --method random-polish`, the learner's polishing step alone
  (Levenberg–Marquardt with variable projection) from random layers — Θ_i a Gaussian direction at
  norm R·u, u uniform in [0, 1), R = 20 the learner's radius; W solved by polishing — each start
  on 4× polishing's default training samples (fresh per start), the start with the smallest error
  on a 1000-sample validation set kept. It gets the paper run's samples (`--max-samples`) and wall
  time (`--max-seconds`: no new start, and no further iteration of a running fit, after it;
  `--starts {c['rp_starts']}` caps nothing here). It measures what stages 1–6 add: where it
  recovers the heads, local search from random starts suffices.

## Per configuration: accuracy, samples, time, machine

The default learner's runs of §1, and its run with the reference step of §4,
read from their reports:

{glance(c)}

## 1. Side by side

### Summary (rates and medians over seeds)

{c['sum_md']}

Each cell: runs that reached ≤ 1e−3, and in brackets the median error.{f" The sentences compare the baselines with the `{c['budget_variant']}` variant, whose samples and time they got." if c['budget_variant'] else ''}

{side_by_side_conclusions(c['facts'], c)}

### Every run

{c['sbs_md']}

![error vs samples]({figs[0].replace('docs/', '')})

*Error against samples, seed 1 of each configuration: Adam's trajectory (its
equal-samples run, checkpoint errors against the truth), the paper's learner
as two points per variant (its stages; after polishing) at its total sample
count, and random-polish's kept start at the samples it drew.*

![error vs time]({figs[1].replace('docs/', '')})

*The same against wall time (2 threads): Adam's equal-time run, the paper's
learner and random-polish at their wall times.*

### Stage by stage: the paper variant against extended

What each departure of the `extended` variant from the sources' steps buys, read from the
runs above (the same instances and sample stream; `scripts/results_stages.py` says which
record of each stage is shown): per stage, its error in the chain that made the layer, and
the samples and seconds it used over every round, medians over the seeds.

{c['stages_md']}

## 2. Where each method fails

### Phase diagram: logit scale × nearly parallel heads, (16,2,2), {len(c['phase_seeds'])} instance seeds per cell

`mhalearn generate --coherence c --seed s` makes cos(Θ_1, Θ_2) ≈ c (the incoherence
condition of MATH.md §2 then fails by design), for instance seeds s = {', '.join(map(str, c['phase_seeds']))} in every
cell. Adam's budget is {c['adam_budget']:.0e} samples in every cell; random-polish gets the samples and wall
time of the {f"`{c['budget_variant']}` " if c['budget_variant'] else ''}paper run on the same instance. A run *recovers* when its max Θ and W
relative error is at most 1e−3 (for the paper's learner: its stages alone, and after polishing).

![phase diagram]({c['phase_fig'].replace('docs/', '')})

*Colour: the fraction of seeds recovered; label: how many of them.*

Each cell: seeds recovered, and in brackets the median error over the seeds. The last
column pools random-polish's starts over the cell's seeds: of the starts that ran until
polishing stopped them (not cut by the time budget), how many reached ≤ 1e−3 — how often
one random start leads local search to the heads, whatever the time it was given.

{c['phase_md']}

{phase_conclusions(c)}

At logit scale 24 the runs above stop short of the rounding floor after polishing (Θ
errors of 10⁻⁵): polishing's 256 training samples under-determine Θ where the softmax
saturates; with 1024 the cos 0 cell's seeds 1–3 reach Θ errors of 10⁻¹⁵–10⁻¹⁴. The learner
now sees such a fit (its held-out residual above what its training residual allows) and
polishes again on 4× the samples (`--polish-resamplings`,
[bench/polish.md](bench/polish.md#where-the-softmax-saturates-polishings-training-samples));
the cells' runs were made before that rule (their learner column).

*Left out to keep the full page near 3.4 hours on 2 cores (the pass's measured time,
`scripts/results.py`'s docstring): logit scale 6 (about 21 min more; in the earlier
one-seed diagram its four cells behaved as scale 3's for the paper's learner and for
Adam; §1 runs scale 6 at cos 0 on three seeds), and in §1 the third seed at (32,2,2)
and (16,2,3) (about 44 min more).*

<details><summary>Every run of the phase diagram (error after each method)</summary>

{c['phase_runs_md']}

</details>

### Other regimes

{regimes_md}

## 3. Scaling

Samples and time to error ≤ 1e−3, at k = 2, logit scale 6, seed 1, as d grows
(m = 2) and as m grows (d = 16). The paper's learner counts every sample of
its run (stages and polishing) and reaches the target only if its final layer
does; each run is capped at {c['cap']} s. Adam's samples to 1e−3 follow
[the one rule]({c['adam_rule']}) of every page (one horizon, no time budget;
`--stop-at-error`, a study option that reads the truth): where the instance is
the diagnosis grid's, the run is the targets page's (`targets/`), so that both
pages give one run's number. A run that did not reach 1e−3 is marked, with
what it used. Adam's seconds are its run's own, on the machine and at the load
it had (the targets page's runs shared the machine at times: targets/NOTES.md
says which wall times are upper bounds, among them (32,2,2)'s 3016 s, 2862 s of
them a pause between two checkpoints).

{c['sc_md']}

![scaling]({c['sc_fig'].replace('docs/', '')})

Fitted exponents (least squares of log samples or log seconds on log d or log m, points that reached 1e−3 only):

{scaling_text(c['fits'], c['sc_rows'])}

The paper's guarantee is poly(k, d)·(dk)^{{O(m³)}} samples and time: polynomial in
d for fixed m with an exponent that grows like m³, and the constants are not
given. The fitted exponents above are finite-size measurements over a factor 4–8
in d, not asymptotics.

### Stage 1: the W-sum approximation against stable rank

![W-sum lemma](figures/wsum_stable_rank.svg)

From `scripts/wsum.py` (see [wsum.md](wsum.md)): ‖M(Θ) − I‖ shrinks as
the stable rank of Θ grows, the regime in which stage 1's crude Ŵ is accurate.

## 4. Throughput

### Fast vs reference paths, per stage (default shape (2,16,2))

{c['ratio_md']}

Reference paths are the high-precision or exact implementations every fast
path is checked against (ARCHITECTURE.md's dual-path rule); they run in the
tests and, in the learner, once on the selected round.

### Forward pass against the machine's double-precision peak

{c['fwd_md']}

Peak: one core's Eigen double GEMM (512³), {fmt(c['peak'], 3) if c['peak'] else '–'} GFLOP/s. "Effective" GFLOP/s
counts the dense formulation's m(4kd² + 4k²d) FLOPs per example; the fast
path does fewer (bit-packed Boolean tokens), so this is a throughput measure,
not a count of executed instructions. The MPFR reference forward pass runs at
{fmt(c['refps'], 2)} examples/s at (2,16,2). The full forward benchmark is
[benchmarks.md](benchmarks.md).

{c['conv_section']}
## 6. The theorem's shape, and Gaussian inputs

The sources promise error `(kd)^{{−Ω(m)}}` in time `(dk)^{{O(m³)}}`: a floor that falls with kd,
faster for larger m. These tables are [docs/theorem_shape.md](theorem_shape.md)'s, read from its
committed runs (`scripts/theorem_shape.py`; its page says how a floor is measured, and holds
each run's wall and CPU time and load).

{c['shape']['floors'] or 'No floor run has been made yet.'}

{c['shape']['fits']}

{c['shape']['alphas']}

{f"![error floor against kd]({c['shape']['figure'].replace('docs/', '')})" if c['shape']['figure'] else ''}

**Gaussian inputs** (both variants, defaults with polishing and the reference step on):

{c['shape']['gaussian'] or 'No Gaussian run has been made yet.'}

{c['shape']['note']}

## How to read these numbers

Each number above is backed by a cross-check: the stages' fast paths agree
with their reference paths in the property tests (`proofs/README.md` lists
each claim, its test and its tolerance), the learner's report records the
reference paths' verdicts on the selected round, and Adam's gradient matches
MPFR central differences (`proofs/squared_loss_gradient.md`). See
[cite.md](cite.md) for how to cite and reproduce.
"""
