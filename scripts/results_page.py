"""The prose of docs/results.md (scripts/results.py passes it the measurements).

Every sentence that compares the methods is computed from the numbers of the
run that wrote the page, so the conclusions cannot drift from the tables.
"""
import math

TARGET = 1e-3


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


def side_by_side_conclusions(facts):
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
        out.append(f"- ({d},{k},{m}), scale {scale}, {f['n']} seeds: " + "; ".join(who) + ". "
                   f"Runs at ≤ 1e−3: paper's stages {f['c_p']}/{f['n']}, polished {f['c_pp']}/{f['n']}, "
                   f"Adam at equal samples {f['c_an']}/{f['n']}.")
    return "\n".join(out)


def phase_conclusions(rows):
    """rows: scale, coherence, paper, polished, adam errors, then the three classes."""
    def where(col, cls):
        return [f"({r[0]}, {r[1]})" for r in rows if r[col] == cls]
    lines = []
    adam_bad = [r for r in rows if r[7] != "recovered"]
    paper_bad = [r for r in rows if r[6] != "recovered"]
    stages_ok = [r for r in rows if r[5] == "recovered"]
    lines.append(f"- Adam recovered {len(rows) - len(adam_bad)} of {len(rows)} cells to ≤ 1e−3; it did not in "
                 f"{', '.join(f'({r[0]}, {r[1]}): {fmt(r[4])} ({r[7]})' for r in adam_bad) or 'none'} "
                 "(cells are (logit scale, cos)).")
    lines.append(f"- The paper's learner with polishing recovered {len(rows) - len(paper_bad)} of {len(rows)}; it did not in "
                 f"{', '.join(f'({r[0]}, {r[1]}): {fmt(r[3])} ({r[6]})' for r in paper_bad) or 'none'}.")
    lines.append(f"- The paper's stages alone reached ≤ 1e−3 in {len(stages_ok)} of {len(rows)} cells: "
                 f"{', '.join(f'({r[0]}, {r[1]})' for r in stages_ok) or 'none'}.")
    only_paper = [r for r in rows if r[6] == "recovered" and r[7] != "recovered"]
    only_adam = [r for r in rows if r[7] == "recovered" and r[6] != "recovered"]
    lines.append(f"- Cells where only the polished learner recovers: {', '.join(f'({r[0]}, {r[1]})' for r in only_paper) or 'none'}; "
                 f"where only Adam does: {', '.join(f'({r[0]}, {r[1]})' for r in only_adam) or 'none'}.")
    return "\n".join(lines)


def scaling_text(fits, rows):
    lines = []
    for (label, who, what), (slope, xs) in sorted(fits.items()):
        name = "paper + polishing" if who == "paper" else "Adam"
        if slope is None:
            lines.append(f"- {what} vs {label}, {name}: fewer than two points reached 1e−3 ({', '.join(map(str, xs)) or 'none'}), no exponent fitted.")
        else:
            lines.append(f"- {what} vs {label}, {name}: fitted exponent **{slope:.2f}** from {label} = {', '.join(map(str, xs))}.")
    return "\n".join(lines)


def render(c):
    figs = c["figs"]
    regimes_md = c["regimes_md"]
    return f"""# Results: the paper's learner against Adam

Every table and figure on this page was regenerated from scratch by

```sh
{c['command']}
```

`scripts/results.sh` runs every configuration below; `scripts/results.sh --quick`
runs a few per section in a few minutes and writes the same page from them.{' **This page comes from a `--quick` run.**' if c['quick'] else ''} Raw reports, logs and instances:
`docs/results/runs/`; the tables' data: `docs/results/*.tsv`; figures:
`docs/figures/results_*.svg` (gnuplot).

- Machine: {c['cpu']}, {c['cores']} cores, {c['mem']}; {c['plat']}
- Commit: {c['commit']}; started {c['started']}; whole run {c['total'] / 60:.1f} min
- Seeds: instance seeds as listed (`mhalearn generate --seed`), sample stream seed 1, Adam's
  initialisation seed 1, test-stream seed 1; every run uses 2 threads (results do not depend on
  the thread count; wall times do).
- "Error" is max over heads of max(‖Θ̂_i − Θ_i‖_F/‖Θ_i‖_F, ‖Ŵ_i − W_i‖_F/‖W_i‖_F) after the best head
  permutation; "reached" means error ≤ 1e−3.
- The paper's learner runs with its defaults and `--no-reference` (`mhalearn learn --no-reference`: the reference paths are verification, timed in §4); "paper's stages" is its stage-6
  layer, "+ polishing" the same run after Levenberg–Marquardt (MATH.md §3, beyond the paper).
- Adam: `mhalearn learn --method adam`, batch 512 of fresh samples, Adam(0.9, 0.999, 1e−8),
  learning rate 3e−3 with cosine decay to 0 over the budget, the best checkpoint by a
  1000-sample validation set. *Equal samples*: its budget is the paper run's total sample
  count. *Equal time*: the schedule runs on the clock for the paper run's wall time.

## 1. Side by side

### Summary (medians over seeds)

{c['sum_md']}

{side_by_side_conclusions(c['facts'])}

### Every run

{c['sbs_md']}

![error vs samples]({figs[0].replace('docs/', '')})

*Error against samples, seed 1 of each configuration: Adam's trajectory (its
equal-samples run, checkpoint errors against the truth) and the paper's learner
as two points (its stages; after polishing) at its total sample count.*

![error vs time]({figs[1].replace('docs/', '')})

*The same against wall time (2 threads): Adam's equal-time run and the paper's
learner at its wall time.*

## 2. Where each method fails

### Phase diagram: logit scale × nearly parallel heads, (16,2,2), seed 1

`mhalearn generate --coherence c` makes cos(Θ_1, Θ_2) ≈ c (the incoherence
condition of MATH.md §2 then fails by design). Adam's budget is {c['adam_budget']:.0e} samples in every cell.

![phase diagram]({c['phase_fig'].replace('docs/', '')})

*Colour and label: log₁₀ of the error. Classes in the table: recovered (≤ 1e−3),
close (≤ 0.1), fits, other heads (test error ≤ 1e−6 but parameters > 1e−3 away),
stalled, failed (no layer; the paper's learner says why).*

{c['phase_md']}

{phase_conclusions(c['phase_rows'])}

### Other regimes

{regimes_md}

## 3. Scaling

Samples and time to error ≤ 1e−3, at k = 2, logit scale 6, seed 1, as d grows
(m = 2) and as m grows (d = 16). The paper's learner counts every sample of
its run (stages and polishing) and reaches the target only if its final layer
does; each run is capped at {c['cap']} s. Adam runs on a 4e7-sample cosine
horizon and stops at the first checkpoint at ≤ 1e−3 (`--stop-at-error`, a
study option that reads the truth). A run that did not reach 1e−3 is marked,
with what it used.

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

From `scripts/wsum-figure.sh` (see [wsum.md](wsum.md)): ‖M(Θ) − I‖ shrinks as
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

## How to read these numbers

Each number above is backed by a cross-check: the stages' fast paths agree
with their reference paths in the property tests (`proofs/README.md` lists
each claim, its test and its tolerance), the learner's report records the
reference paths' verdicts on the selected round, and Adam's gradient matches
MPFR central differences (`proofs/squared_loss_gradient.md`). See
[cite.md](cite.md) for how to cite and reproduce.
"""
