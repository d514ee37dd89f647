#!/usr/bin/env python3
"""The theorem's shape: the learner's error floor against kd per m, and Gaussian inputs (docs/theorem_shape.md).

Floors. For each variant (`--variant paper`, the sources' stages; `extended`, the default)
and (k, m) = (2, 2) at d = 8, 16, 32, 64 and (2, 3) at d = 8, 16, 32 (logit scale 6,
instance seed 1, sample seed 1): `mhalearn learn --no-polish --no-reference` with every
sample budget multiplied by a factor f = 1, 4, 16, 64 — paper: stage 1's samples, round 0's,
stage 4's, stage 3's (its events stay 16·d: the threshold they meet rises with the budget)
and stage 6's net tuples; extended: stage 1's, round 0's, rounds ≥ 1's, stage 3's cap and the
final round's. The factors run in order while four times the budget helps by 2× or more:
the floor is the error at the first factor f whose 4f run is not below half of it (the
issue's definition). A configuration's largest factor is capped by its cost (MAX_FACTOR);
a configuration that is still falling by 2× at its cap has no floor by then, only the
upper bound of its last error. The error is max(Θ, W) relative error of the paper's stages
(before polishing). Per variant and m, log floor = c − α log(kd) is fitted by least squares
over d, α with its standard error, beside the sources' (kd)^{−Ω(m)}.

Gaussian inputs. Both variants on instances with Gaussian inputs (`generate --inputs
gaussian`) at (16,2,2), (32,2,2) and (16,2,3), instance seeds 1–3, with the defaults
(polishing and the reference step on).

Every run: `nice -n 10 mhalearn learn ... --threads 2`, one at a time, under /usr/bin/time
(wall, user, system seconds, then the load average before / after, in NAME.time). Runs,
reports, instances and logs in docs/theorem_shape/; the page docs/theorem_shape.md and
the figure docs/figures/theorem_shape_floors.svg are written from them.

  python3 scripts/theorem_shape.py [--tool build/release/mhalearn] [--reuse] [--only floors|gaussian|page]
      [--variants paper,extended] [--max-d 64] [--max-factor 64]

The results page (scripts/results.py) shows the same tables and figure, read from the committed
runs (`sections(tool)`).

--reuse reads back every finished run whose logged command is the run's (scripts/README.md);
`--only page` writes the page from the committed runs without making any.
"""
import argparse
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import (Learners, Run, driver_arguments, learner_label, fmt, fmt_int, generate, load, reusable, run, table,  # noqa: E402
                         write_page)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = "docs/theorem_shape"
PAGE = "docs/theorem_shape.md"
FIGURE = "docs/figures/theorem_shape_floors.svg"
PASSIVE = {"OMP_WAIT_POLICY": "passive"}  # an idle OpenMP thread sleeps (scripts/net.py says why); no result changes
K, SCALE = 2, 6
DIMS = {2: [8, 16, 32, 64], 3: [8, 16, 32]}
FACTORS = [1, 4, 16, 64]
VARIANTS = ["paper", "extended"]
# The largest budget factor a configuration runs (cost: the extended variant's large runs take
# most of the time; measured walls are on the page).
MAX_FACTOR = {("extended", 2, 64): 4, ("extended", 3, 16): 4, ("extended", 3, 32): 4, ("paper", 2, 64): 16}
GAUSSIAN = [(16, 2, 2), (32, 2, 2), (16, 2, 3)]
FAILED = 0.1  # a floor at or above this is a failure of the stages, left out of the fit (the page says so)
SEEDS = [1, 2, 3]


def budget_options(variant, f, d, m):
    """The learn options of budget factor f (every sample budget of the variant scaled by f)."""
    if variant == "paper":
        base = [("--stage1-samples", 200000), ("--crude-sculpt-samples", 400000), ("--sculpt-samples", 2000000),
                ("--margin-samples", 20000000), ("--net-tuples", 20000)]
    else:
        base = [("--stage1-samples", 200000), ("--crude-sculpt-samples", 400000), ("--sculpt-samples", 2000000),
                ("--margin-samples", 20000000), ("--final-sculpt-samples", 256000000 if m == 3 else 32000000)]
    out = []
    for flag, value in base:
        out += [flag, str(max(1, round(value * f)))]
    return out


def factor_tag(f):
    return f"x{f:g}"


def instance(tag, d, m, seed, inputs="boolean"):
    path = f"{OUT}/{tag}.instance.json"
    if ARGS.only == "page":  # the page from committed runs: nothing is generated or run
        return path
    extra = ["--inputs", "gaussian"] if inputs == "gaussian" else []
    return generate(TOOL, path, d, K, m, SCALE, seed, extra=extra, cwd=ROOT)


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def learn_run(name, inst, extra):
    """One timed learn: /usr/bin/time around `nice -n 10 mhalearn learn ...`; the log shows the
    command without the timing wrapper."""
    report = f"{OUT}/{name}.report.json"
    command = ["nice", "-n", "10", TOOL, "learn", inst, "--seed", "1", "--threads", "2", *extra, "--report", report]
    timed = ["/usr/bin/time", "-f", "%e %U %S", "-o", f"{OUT}/{name}.time"] + command
    shown = " ".join([f"{k}={v}" for k, v in PASSIVE.items()] + command)
    return Run(name, timed, OUT, report=report, tool=TOOL, env=PASSIVE, cwd=ROOT, shown=shown)


def timed_run(spec):
    """The run (read back under --reuse), with the load average before and after in its .time file."""
    if ARGS.only == "page":
        return reusable(spec)
    before = load_average()
    result = run(spec, reuse=ARGS.reuse)
    if not result.reused:
        with open(os.path.join(ROOT, OUT, spec.name + ".time"), "a") as f:
            f.write(f"load {before} / {load_average()}\n")
    return result


def timing(name):
    """(wall, cpu, load before, load after) from NAME.time, or None."""
    path = os.path.join(ROOT, OUT, name + ".time")
    if not os.path.exists(path):
        return None
    lines = open(path).read().split("\n")
    # GNU time writes "Command exited with non-zero status N" before its figures when the run failed
    figures = next(ln for ln in lines if ln and not ln.startswith(("Command", "load ")))
    wall, user, system = (float(v) for v in figures.split()[:3])
    load = next((ln[5:] for ln in lines if ln.startswith("load ")), "? / ?")
    before, after = (s.strip() for s in load.split("/"))
    return wall, user + system, before, after


def failure(name):
    """How a run without an error ended, from its log's last line (e.g. "exit 1")."""
    path = os.path.join(ROOT, OUT, name + ".log")
    last = open(path).read().strip().splitlines()[-1] if os.path.exists(path) else ""
    return "exit " + last.split()[2] if last.startswith("exit status") else "no report"


def stages_error(report):
    """max(Θ, W) error of the paper's stages (before polishing), or None."""
    e = report and (report.get("errors_before_polish") or report.get("errors"))
    return max(e["theta_max_rel"], e["w_max_rel"]) if e else None


# --------------------------------------------------------------------------- floors


def floor_runs(variant, d, m):
    """[(f, name, report)] in factor order, until the floor shows or the cap; the run at f is
    made only when the run at f/4 improved on the one before by 2× or more."""
    tag = f"d{d}_k{K}_m{m}_scale{SCALE}_seed1"
    inst = instance(tag, d, m, 1)
    out = []
    cap = min(MAX_FACTOR.get((variant, m, d), FACTORS[-1]), ARGS.max_factor)
    for f in [f for f in FACTORS if f <= cap]:
        last = [stages_error(r) for _, _, r in out[-2:]]
        if len(last) == 2 and None not in last and last[1] > last[0] / 2:
            break  # four times the budget no longer halves the error: the floor is found (a failed run does not stop)
        name = f"floor_{variant}_{tag}_{factor_tag(f)}"
        extra = ["--variant", variant, "--no-polish", "--no-reference"] + budget_options(variant, f, d, m)
        result = timed_run(learn_run(name, inst, extra))
        if result is None:  # the page from committed runs: this one was not made
            break
        out.append((f, name, result.report))
    return out


def floor_of(runs):
    """(floor, factor, reached): the error at the first f whose 4f run is not below half of it;
    else the last error, reached = False."""
    errors = {f: stages_error(r) for f, _, r in runs}
    for f, e in errors.items():
        if e is not None and errors.get(4 * f) is not None and errors[4 * f] > e / 2:
            return e, f, True
    made = [(f, e) for f, e in errors.items() if e is not None]
    return (made[-1][1], made[-1][0], False) if made else (None, None, False)


def fit_alpha(points):
    """Least squares of log floor on log(kd): (α, its standard error, intercept); SE None for 2 points."""
    if len(points) < 2:
        return None
    xs = [math.log(K * d) for d, _ in points]
    ys = [math.log(e) for _, e in points]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    intercept = my - slope * mx
    se = None
    if n > 2:
        rss = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys))
        se = math.sqrt(rss / (n - 2) / sxx)
    return -slope, se, intercept


def floors():
    """{(variant, m): [(d, runs, (floor, factor, reached))]}."""
    out = {}
    for variant in ARGS.variants:
        for m, dims in DIMS.items():
            rows = []
            for d in [d for d in dims if d <= ARGS.max_d]:
                runs = floor_runs(variant, d, m)
                rows.append((d, runs, floor_of(runs)))
            out[(variant, m)] = rows
    return out


def stage(report, name):
    """The last record of stage `name` (not a reference or oracle row)."""
    rows = [s for s in report.get("stages", []) if s["stage"] == name and not s.get("oracle")]
    return rows[-1] if rows else {}


def w_sum_error(record):
    """Stage 3's W_Σ error, or "no fit" when it kept no event (its record then says 0)."""
    if not record:
        return "–"
    return fmt(record.get("w_sum_rel_error")) if record.get("events_kept", 0) > 0 else "no fit"


def floor_table(results, learners):
    rows = []
    for (variant, m), entries in results.items():
        for d, runs, (floor, f, reached) in entries:
            if not runs:
                rows.append([f"`{variant}`", f"(2,{m})", d, K * d, "not run"] + ["–"] * 7)
                continue
            errors = ", ".join(f"×{g:g}: {fmt(stages_error(r), missing=failure(name))}" for g, name, r in runs)
            walls = [timing(name) for _, name, _ in runs]
            wall = sum(t[0] for t in walls if t)
            cpu = sum(t[1] for t in walls if t)
            loads = ", ".join(f"{t[2].split()[0]}→{t[3].split()[0]}" for t in walls if t)
            last = runs[-1][2] if runs and runs[-1][2] else {}
            hull = stage(last, "5").get("hull_error", stage(last, "4").get("hull_error"))
            rows.append([f"`{variant}`", f"(2,{m})", d, K * d, errors,
                         ("none: no run gave a layer" if floor is None else
                          fmt(floor) + ("" if reached else f" (no floor by ×{runs[-1][0]:g}: an upper bound)")),
                         f"×{f:g}" if f else "–", w_sum_error(stage(last, "3")), fmt(hull),
                         f"{wall:.0f} / {cpu:.0f}", loads or "–", learners.cells([r for _, _, r in runs])])
    return "\n".join(table(["variant", "(k,m)", "d", "kd", "error of the paper's stages per budget factor", "floor",
                  "at factor", "largest run: stage 3 W_Σ error", "largest run: hull error", "wall / CPU s (all runs)",
                  "load avg (1 min) before→after each run", "learner"], rows, "llrrllrrrrll"))


def fits(results):
    """{(variant, m): (α, se, intercept, points, all_reached)}."""
    out = {}
    for key, entries in results.items():
        # A floor of 0.1 or more is a run whose stages learned nothing: no point of the shape
        pts = [(d, floor) for d, _, (floor, _, _) in entries if floor and floor < FAILED]
        fit = fit_alpha(pts)
        if fit:
            out[key] = (*fit, pts, all(reached for _, _, (_, _, reached) in entries))
    return out


def fit_table(fitted):
    rows = []
    for (variant, m), (alpha, se, _, pts, reached) in fitted.items():
        rows.append([f"`{variant}`", f"(2,{m})", ", ".join(str(d) for d, _ in pts), f"{alpha:+.2f}",
                     "–" if se is None else f"{se:.2f}", "yes" if reached else "no (some are upper bounds)",
                     f"(kd)^−Ω({m})"])
    return "\n".join(table(["variant", "(k,m)", "d", "fitted α (error ∝ (kd)^−α)", "standard error of α",
                  "every point a floor", "the sources"], rows, "lllrrll"))


def figure(results, fitted):
    plots, i = [], 0
    data = os.path.join(ROOT, OUT, "floors.tsv")
    with open(data, "w") as f:
        for (variant, m), entries in results.items():
            f.write(f"# {variant} m={m}\nkd\tfloor\treached\n")
            for d, _, (floor, _, reached) in entries:
                if floor:
                    f.write(f"{K * d}\t{floor!r}\t{int(reached)}\n")
            f.write("\n\n")
    for (variant, m) in results:
        i += 1
        label = f"{variant}, m = {m}"
        plots.append(f"'{data}' index {i - 1} using 1:2 with linespoints pt {5 + 2 * (m - 2)} lw 2 lc {i} "
                     f"title \"{label}\"")
        if (variant, m) in fitted:
            alpha, _, a, _, _ = fitted[(variant, m)]
            plots.append(f"exp({a!r})*x**({-alpha!r}) with lines dt 2 lc {i} title \"{label}: fit, α = {alpha:+.2f}\"")
    script = "\n".join([
        "set terminal svg size 1000,520 dynamic font 'sans,11' background '#ffffff'",
        f"set output '{os.path.join(ROOT, FIGURE)}'",
        "set logscale xy", "set format y '10^{%L}'", "set xrange [12:160]", "set xtics (16, 32, 64, 128)",
        "set xlabel 'kd'", "set ylabel \"error floor of the paper's stages (max Θ, W relative)\"",
        "set key outside right", "set title 'error floor against kd (k = 2; logit scale 6, instance seed 1)'",
        "plot " + ", ".join(plots)]) + "\n"
    subprocess.run(["gnuplot"], input=script, text=True, check=True, cwd=ROOT)


# --------------------------------------------------------------------------- Gaussian inputs


def gaussian_runs():
    """[(variant, (d, k, m), seed, name, report)] with the defaults, polishing and the reference step on."""
    out = []
    for variant in ARGS.variants:
        for d, k, m in GAUSSIAN:
            for seed in SEEDS:
                tag = f"gauss_d{d}_k{k}_m{m}_scale{SCALE}_seed{seed}"
                inst = instance(tag, d, m, seed, inputs="gaussian")
                name = f"{variant}_{tag}"
                result = timed_run(learn_run(name, inst, ["--variant", variant]))
                out.append((variant, (d, k, m), seed, name, result.report if result else None))
    return out


def reference_verdict(report):
    """'agree (N rows)' / 'DISAGREE: …' / '–' from the report's reference rows."""
    rows = report.get("reference", []) if report else []
    if not rows:
        return "–"
    bad = [r for r in rows if r.get("verdict") == "DISAGREE" or
           any(p.get("verdict") == "DISAGREE" for p in r.get("parts", []))]
    if bad:
        return "DISAGREE: stage " + ", ".join(str(r.get("stage")) for r in bad)
    compared = sum(1 for r in rows if r.get("verdict") != "not compared")
    return f"agree ({compared} of {len(rows)} rows compared)"


def gaussian_table(runs, learners):
    rows = []
    for variant, (d, k, m), seed, name, report in runs:
        t = timing(name)
        after = report.get("errors") if report else None
        rows.append([f"`{variant}`", f"({d},{k},{m})", seed, fmt(stages_error(report)),
                     fmt(max(after["theta_max_rel"], after["w_max_rel"]) if after else None),
                     fmt_int(report.get("samples_total")) if report else "–", reference_verdict(report),
                     f"{t[0]:.0f} / {t[1]:.0f}" if t else "–", f"{t[2].split()[0]}→{t[3].split()[0]}" if t else "–",
                     (report or {}).get("message", "") or "–", learners.cell(report)])
    return "\n".join(table(["variant", "(d,k,m)", "seed", "error of the paper's stages", "+ polishing", "samples",
                  "reference step", "wall / CPU s", "load avg before→after", "note", "learner"], rows, "llrrrrlrlll"))


# --------------------------------------------------------------------------- the page


def alpha_sentences(fitted):
    """Per variant, plainly: does the fitted α grow from m = 2 to m = 3?"""
    out = []
    for variant in VARIANTS:
        a2, a3 = fitted.get((variant, 2)), fitted.get((variant, 3))
        if not a2 or not a3:
            out.append(f"- `{variant}`: no fit for both m (fewer than two usable floors for "
                       + " and ".join(f"m = {m}" for m, a in ((2, a2), (3, a3)) if not a)
                       + "), so whether α grows with m is not measured yet.")
            continue
        diff = a3[0] - a2[0]
        ses = [a[1] for a in (a2, a3)]
        if None in ses:
            verdict = (f"α is {a2[0]:+.2f} at m = 2 and {a3[0]:+.2f} at m = 3 (a difference of {diff:+.2f}); one fit "
                       "has two points and no standard error, so the difference has none either")
        else:
            se = math.sqrt(ses[0] ** 2 + ses[1] ** 2)
            grows = "grows" if diff > 2 * se else "falls" if diff < -2 * se else "does not change beyond its error"
            verdict = (f"α is {a2[0]:+.2f} ± {ses[0]:.2f} at m = 2 and {a3[0]:+.2f} ± {ses[1]:.2f} at m = 3: "
                       f"from m = 2 to m = 3 it {grows} ({diff:+.2f} ± {se:.2f}, two standard errors as the line)")
        reached = a2[4] and a3[4]
        out.append(f"- `{variant}`: {verdict}" + ("." if reached else
                   "; some points are upper bounds (no floor by the largest budget), so α is not a floor's slope "
                   "there."))
    return "\n".join(out)


def sections(tool=None, learners=None):
    """{floors, fits, alphas, figure, gaussian, note}: the page's parts; with tool, from the committed
    runs alone (for scripts/results.py, which embeds them: tool the mhalearn whose runs are read back,
    learners the results page's Learners, so that its learner column and note are that page's)."""
    global ARGS, TOOL
    if tool is not None:
        ARGS = argparse.Namespace(only="page", reuse=True, variants=VARIANTS, max_d=64, max_factor=FACTORS[-1])
        TOOL = os.path.abspath(tool)
    results = floors()
    fitted = fits(results)
    runs = gaussian_runs()
    reports = [r for entries in results.values() for _, rs, _ in entries for _, _, r in rs] + [x[4] for x in runs]
    own = learners is None
    learners = Learners([r for r in reports if r]) if own else learners
    has_floors = any(rs for entries in results.values() for _, rs, _ in entries)
    if has_floors and ARGS.only != "page":
        figure(results, fitted)
    return dict(floors=floor_table(results, learners) if has_floors else None, fits=fit_table(fitted),
                alphas=alpha_sentences(fitted), figure=FIGURE if os.path.exists(os.path.join(ROOT, FIGURE)) else None,
                gaussian=gaussian_table(runs, learners) if any(x[4] for x in runs) else None,
                note=learners.note() if own else learners.note([learner_label(r) for r in reports if r]))


def page(parts, command):
    lines = [
        "# The theorem's shape: the error floor against kd, and Gaussian inputs", "",
        f"Generated by `scripts/theorem_shape.py` (the page's tables are also on docs/results.md, §6). Command:", "",
        "```sh", command, "```", "",
        "The sources promise error (kd)^{−Ω(m)} in time (dk)^{O(m³)} [S, T, U]: a floor that falls with kd, "
        "faster for larger m. The **error floor** of a configuration is the error of the paper's stages (max of "
        "the Θ and W relative errors before polishing) at the first budget factor f whose run at 4f is not below "
        "half of it; every sample budget of the variant is scaled by f (the script's docstring lists them). "
        "Per variant and m, log floor = c − α·log(kd) is fitted by least squares over d, leaving out floors of "
        f"{FAILED:g} or more (the stages learned nothing there). Logit scale 6, instance "
        "seed 1, sample seed 1, `--no-polish --no-reference`, 2 threads, one run at a time under `nice -n 10`; "
        "wall and CPU seconds from /usr/bin/time and the load average before and after each run are in the "
        "runs' `.time` files (docs/theorem_shape/).", "",
        "## Floors", ""]
    lines += [parts["floors"] or "No floor run has been made yet.", "", "## The fitted α", "", parts["fits"], "",
              parts["alphas"], ""]
    if parts["figure"]:
        lines += [f"![error floor against kd]({os.path.relpath(FIGURE, 'docs')})", ""]
    lines += ["## Gaussian inputs", "",
              "Both variants at (16,2,2), (32,2,2) and (16,2,3) on instances with Gaussian inputs "
              "(`mhalearn generate --inputs gaussian`, instance seeds 1–3), with the defaults: polishing and the "
              "reference step on (MATH.md §6, row 16, says what holds for them).", "",
              parts["gaussian"] or "No Gaussian run has been made yet.", "", parts["note"], ""]
    return "\n".join(lines)


def main():
    global ARGS, TOOL
    ap = driver_arguments(__doc__)
    ap.add_argument("--only", choices=["floors", "gaussian", "page"])
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--max-d", type=int, default=64)
    ap.add_argument("--max-factor", type=float, default=FACTORS[-1],
                    help="run no budget factor above this (a sitting's cap; the page marks what it leaves out)")
    ARGS = ap.parse_args()
    ARGS.variants = ARGS.variants.split(",")
    TOOL = os.path.abspath(ARGS.tool)
    os.makedirs(os.path.join(ROOT, OUT), exist_ok=True)
    if ARGS.only == "floors":
        floors()
        return 0
    if ARGS.only == "gaussian":
        gaussian_runs()
        return 0
    parts = sections()
    command = "python3 scripts/theorem_shape.py" + "".join(
        f" {a}" for a in sys.argv[1:] if a not in ("--only", "page"))
    write_page(os.path.join(ROOT, PAGE), page(parts, command))
    print(f"wrote {PAGE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
