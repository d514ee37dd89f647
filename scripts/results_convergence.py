"""The results page's convergence section: the paper's stages as written (`--variant paper`)
at growing budgets, error before polishing against total samples, the fitted rate, where
it would reach 1e-3, and what each stage's lemma says about its own error at those budgets.

Every sample budget of the paper variant is scaled by one factor f (stage 1's samples,
round 0's, stage 4's, stage 3's cap and its events) and so is stage 6's net (its tuples:
a computation budget, not samples, but its resolution bounds the error too). Runs are
`learn --variant paper --no-polish --no-reference` with those options, through
results.py's `learn` (scripts/experiments.py). Standard library only.
"""
import math
from statistics import median

SHAPES = [(16, 2, 2, 6), (32, 2, 2, 6)]
FACTORS = [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64]
# The paper variant's defaults (mhalearn learn --help), each multiplied by f.
BASE = [("--stage1-samples", 200000), ("--crude-sculpt-samples", 400000), ("--sculpt-samples", 2000000),
        ("--margin-samples", 20000000), ("--net-tuples", 20000)]
TARGET = 1e-3


def factor_tag(f):
    return f"x{f:g}".replace(".", "p")


def budget_options(f, d):
    """The learn options of budget factor f at dimension d (stage 3's events: 16·d by default)."""
    out = []
    for flag, base in BASE + [("--margin-events", 16 * d)]:
        out += [flag, str(max(1, round(base * f)))]
    return out


def runs(learn, instance, quick=False, shapes=None):
    """{(d, k, m, scale): [(f, report or None, status)]} for every shape and factor
    (quick: the first shape, factors up to 4; shapes: only these of SHAPES)."""
    rows = {}
    for d, k, m, scale in [s for s in (SHAPES[:1] if quick else SHAPES) if shapes is None or s in shapes]:
        tag = f"d{d}_k{k}_m{m}_scale{scale}_seed1"
        inst = instance(tag, d, k, m, scale, 1)
        rows[(d, k, m, scale)] = []
        for f in [f for f in FACTORS if f <= 4] if quick else FACTORS:
            extra = ["--variant", "paper", "--no-polish", "--no-reference"] + budget_options(f, d)
            report, status, _ = learn(f"convergence_paper_{tag}_{factor_tag(f)}", inst, extra)
            rows[(d, k, m, scale)].append((f, report, status))
    return rows


# --------------------------------------------------------------------------- reading a run


def stage(report, name):
    """The last record of stage `name` that is not a reference or oracle row (the paper runs once)."""
    rows = [s for s in report["stages"] if s["stage"] == name and "reference" not in s and not s.get("oracle")]
    return rows[-1] if rows else {}


def final_error(report):
    e = report.get("errors_before_polish") or report.get("errors")
    return max(e["theta_max_rel"], e["w_max_rel"]) if e else None


def margin_bias_bound(k, threshold):
    """Lemma 3.3.1's sharp bound S(k, M): how far a softmax with margin ≥ M is from one-hot (ℓ1)."""
    q = (k - 1) * math.exp(-threshold)
    return 2 * q / (1 + q)


def point(f, report):
    """One run's numbers: total samples, each stage's error and the lemma-level terms."""
    s1, s3, s4, s6 = (stage(report, n) for n in ("1", "3", "4", "6"))
    return dict(f=f, report=report, samples=report["samples_paper_stages"], seconds=report["seconds"],
                error=final_error(report),
                s1_err=s1.get("w_sum_rel_error"), s1_se=s1.get("standard_error_rel"), s1_n=s1.get("samples"),
                s3_err=s3.get("w_sum_rel_error"), s3_se=s3.get("relative_standard_error"), s3_events=s3.get("events"),
                s3_n=s3.get("samples"), s3_threshold=s3.get("threshold"), s3_not_large=s3.get("true_not_large_margin"),
                s4_hull=s4.get("hull_error"), s4_typical=s4.get("hull_error_typical"), s4_bound=s4.get("hull_error_bound"),
                s4_slabs=s4.get("constraints"), s4_n=s4.get("samples"), s4_violation=s4.get("theta_max_violation"),
                s6_resolution=s6.get("final_resolution"), s6_tuples=s6.get("tuples_exhaustive"))


# --------------------------------------------------------------------------- rates


def slope(xs, ys):
    """Least-squares slope and intercept of log y on log x (None with fewer than two points)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x and y]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if not sxx:
        return None
    b = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx
    return b, my - b * mx


def samples_at(fit, target=TARGET):
    """Samples where the fitted power law reaches `target` (None when it does not fall)."""
    if fit is None or fit[0] >= 0:
        return None
    b, a = fit
    return math.exp((math.log(target) - a) / b)


# --------------------------------------------------------------------------- what each stage's lemma says


def stage_budgets(p, k, target=TARGET):
    """Per stage, from one run: the lemma-level error term at the run's budget, how it scales with
    the stage's budget, and the budget at which that term reaches `target` (None: the term does not
    fall with samples). Rows: (stage, lemma, term, value, budget now, budget for target, unit)."""
    rows = []
    if p["s1_se"]:
        rows.append(("1", "Lemma 3.1.3 (CLT): standard error ∝ N^−1/2", "relative standard error of Ŵ",
                     p["s1_se"], p["s1_n"], p["s1_n"] * (p["s1_se"] / target) ** 2, "samples"))
        rows.append(("1", "W-sum lemma (measured, docs/wsum.md): bias M(Θ) − I, fixed by Θ", "Ŵ's error (its bias)",
                     p["s1_err"], p["s1_n"], None, "samples"))
    if p["s3_se"]:
        events_needed = p["s3_events"] * (p["s3_se"] / target) ** 2
        per_event = p["s3_n"] / p["s3_events"]
        rows.append(("3", "least squares over the events: standard error ∝ events^−1/2", "relative standard error of W_Σ",
                     p["s3_se"], p["s3_n"], events_needed * per_event, "samples"))
        bias = margin_bias_bound(k, p["s3_threshold"])
        needed_m = math.log((k - 1) * (2 - target) / target)
        rows.append(("3", f"Lemma 3.3.1: bias ≤ S(k, M) per event, fixed by M = {p['s3_threshold']:.2f} "
                          f"(S = {target:g} needs M = {needed_m:.2f})", "bias bound S(k, M)", bias, p["s3_n"], None, "samples"))
    if p["s4_typical"]:
        rows.append(("4", "Lemma 3.2.7: typical hull distance ∝ slabs^−1/2 (slabs ∝ samples)", "typical hull distance",
                     p["s4_typical"], p["s4_n"], p["s4_n"] * (p["s4_typical"] / target) ** 2, "samples"))
    return rows


# --------------------------------------------------------------------------- the section's outputs


def shape_label(shape):
    d, k, m, scale = shape
    return f"({d},{k},{m}), scale {scale}"


def points(rows):
    return {shape: [point(f, r) for f, r, _ in runs_ if r] for shape, runs_ in rows.items()}


UPPER = 4  # the upper half of the budgets: factors from this one on


def fits(pts, least=0):
    """{shape: (slope, intercept)} of log error on log samples over the budgets of factor ≥ least."""
    return {shape: slope([p["samples"] for p in ps if p["f"] >= least], [p["error"] for p in ps if p["f"] >= least])
            for shape, ps in pts.items()}


def rate_words(f, fmt_int, over):
    """'by the fitted rate R over …, 1e−3 at N samples (extrapolated)', or that it does not fall."""
    if f is None:
        return f"no fit over {over}"
    reach = samples_at(f)
    return (f"fitted rate {f[0]:+.2f} over {over}" +
            (f", 1e−3 at {fmt_int(round(reach))} samples by it (extrapolated)" if reach else
             ": the error does not fall with the budget"))


def runs_table(ps, fmt, fmt_int, table, learners):
    cells = [[f"{p['f']:g}", fmt_int(p["samples"]), fmt(p["error"]), fmt(p["s1_err"]), fmt(p["s3_err"]), fmt(p["s3_se"]),
              p["s3_events"], fmt(p["s3_not_large"], 2) if p.get("s3_not_large") is not None else "–",
              fmt(p["s4_hull"]), fmt(p["s4_typical"]), p["s4_slabs"], f"{p['s6_resolution']:.3f}", f"{p['seconds']:.1f}",
              learners.cell(p["report"])]
             for p in ps]
    return table(["budget ×", "samples", "error (paper's stages)", "stage 1: Ŵ error", "stage 3: W_Σ error",
                  "stage 3: SE", "stage 3: events", "events with a true head below M", "stage 4: hull error",
                  "stage 4: lemma's typical", "stage 4: slabs", "stage 6: net step", "wall s", "learner"], cells,
                 "rrrrrrrrrrrrrl")


def budgets_table(p, k, fmt, fmt_int, table, learners):
    cells = [[st, lemma, term, fmt(value), fmt_int(now), fmt_int(round(need)) if need else "not by samples",
              learners.cell(p["report"])]
             for st, lemma, term, value, now, need, _ in stage_budgets(p, k)]
    return table(["stage", "lemma", "term", "value", "samples used", f"samples for {TARGET:g}", "learner"], cells,
                 "llllrrl")


def figure(pts, fit, write_tsv, gnuplot):
    """Error against samples per shape, the fitted power law drawn to 1e9 (dashed past the runs)."""
    plots = []
    for i, (shape, ps) in enumerate(pts.items()):
        d, k, m, scale = shape
        name = f"convergence_d{d}_k{k}_m{m}_scale{scale}.tsv"
        path = write_tsv(name, ["samples", "error", "stage3_w_error", "stage4_hull_error"],
                         [[p["samples"], p["error"], p["s3_err"], p["s4_hull"]] for p in ps])
        label = shape_label(shape)
        plots += [f"'{path}' using 1:2 skip 1 with linespoints pt 7 lw 2 lc {i + 1} title \"{label}: paper's stages\"",
                  f"'{path}' using 1:3 skip 1 with linespoints pt 4 dt 3 lc {i + 1} title \"{label}: stage 3 W_Σ error\""]
        if fit.get(shape):
            b, a = fit[shape]
            plots.append(f"[{ps[-1]['samples']}:1e9] exp({a!r})*x**({b!r}) with lines dt 2 lc {i + 1} "
                         f"title \"{label}: fitted rate {b:+.2f}, extrapolated\"")
    script = ["set logscale xy", "set format x '10^{%L}'", "set format y '10^{%L}'", "set xrange [5e5:1e9]",
              "set xlabel \"samples of the paper's stages\"", "set ylabel 'max Θ, W relative error'",
              "set key outside right", f"set arrow from 5e5,{TARGET} to 1e9,{TARGET} nohead dt 4 lc 'gray'",
              "set title \"--variant paper, every budget scaled (no polishing)\"", "plot " + ", ".join(plots)]
    return gnuplot((460, "\n".join(script) + "\n"), "results_convergence.svg")


def outputs(rows, fmt, fmt_int, table, write_tsv, gnuplot, learners, fact):
    """The section's tables (Markdown, each with its learner note), its figure's path, each run's numbers and
    the fits; `rows` from runs(); learners: the page's (experiments.Learners); fact(report, quantity, text, row)
    records a number printed from one run."""
    pts = points(rows)
    fit = fits(pts)
    parts = []
    for shape, ps in pts.items():
        last = ps[-1]
        for p in ps:
            row = f"{p['f']:g} | {fmt_int(p['samples'])}"
            fact(p["report"], "samples of the paper's stages", fmt_int(p["samples"]), row)
            fact(p["report"], "error before polishing", fmt(p["error"]), row)
            fact(p["report"], "wall seconds (report)", f"{p['seconds']:.1f}", row)
        from experiments import learner_label
        shown = [learner_label(p["report"]) for p in ps]
        parts += [f"**{shape_label(shape)}**, instance seed 1.", "", *runs_table(ps, fmt, fmt_int, table, learners), "",
                  learners.note(shown), "",
                  f"Each stage's lemma on the largest budget (×{last['f']:g}), evaluated on its run:", "",
                  *budgets_table(last, shape[1], fmt, fmt_int, table, learners), "",
                  learners.note([learner_label(last["report"])]), ""]
    return "\n".join(parts), figure(pts, fit, write_tsv, gnuplot), pts, (fit, fits(pts, UPPER))


def summary(pts, fit_pair, fmt, fmt_int):
    """What the runs say, one bullet per shape, every figure read from them."""
    fit, upper = fit_pair
    lines = []
    for shape, ps in pts.items():
        errors = [p["error"] for p in ps]
        s3 = [p["s3_err"] for p in ps if p["s3_err"] is not None]
        below = [p["s3_not_large"] for p in ps if p.get("s3_not_large") is not None]
        hull = [p["s4_hull"] for p in ps if p["s4_hull"] is not None]
        verdict = (rate_words(fit.get(shape), fmt_int, f"all {len(ps)} budgets") + "; " +
                   rate_words(upper.get(shape), fmt_int, f"the budgets ×{UPPER} and up"))
        lines.append(
            f"- **{shape_label(shape)}**: over {fmt_int(ps[0]['samples'])} to {fmt_int(ps[-1]['samples'])} samples the "
            f"error of the paper's stages is {fmt(min(errors))} to {fmt(max(errors))}, "
            f"{sum(1 for e in errors if e <= TARGET)} of {len(errors)} budgets at ≤ 1e−3; {verdict}. "
            f"Stage 3's W_Σ is {fmt(min(s3))} to {fmt(max(s3))} off (median {fmt(median(s3[:3]))} at the three "
            f"smallest budgets, {fmt(median(s3[-3:]))} at the three largest), and {fmt(min(below), 2)} to "
            f"{fmt(max(below), 2)} of its events ({fmt(median(below[:3]), 2)}, {fmt(median(below[-3:]), 2)}) have a "
            f"true head whose margin is below the threshold M, against the premise of Lemma 3.3.1 (the threshold "
            f"is applied to the proxy's margin, not the heads'); stage 4's hull is {fmt(min(hull))} to "
            f"{fmt(max(hull))} from the true one.")
    return "\n".join(lines)


def section(md, fig, pts, fit_pair, fmt, fmt_int):
    """The results page's section on the paper variant's convergence."""
    factors = ", ".join(f"{f:g}" for f in FACTORS)
    return f"""## 5. The paper's stages as written, against their budget

`mhalearn learn --variant paper --no-polish --no-reference`, logit scale 6, instance seed 1,
every budget multiplied by one factor ({factors}): stage 1's samples (2·10⁵), round 0's
(4·10⁵), stage 4's (2·10⁶), stage 3's cap (2·10⁷) and its events (16·d), and stage 6's net
(2·10⁴ tuples: a computation budget, not samples, but its step bounds the error too). The
error is that of the paper's stages (no polishing). A fitted rate is the least-squares slope
of log error on log samples, over every budget and over the upper half; the figure draws the
first past the largest run, dashed: that part is an extrapolation. The theorem promises ε with poly(d, k)·(dk)^{{O(m³)}}
samples, constants not given: these runs measure what the stages as written do with more.

{summary(pts, fit_pair, fmt, fmt_int)}

![the paper variant's error against its budget]({fig.replace('docs/', '')})

{md}
The lemma rows are read from each stage's record in the run's report: a standard error
that falls as N^−1/2 reaches 1e−3 at N·(SE/1e−3)² (the same for the typical hull distance,
slabs growing with samples); a bias that no sample count lowers is marked "not by samples".
"""
