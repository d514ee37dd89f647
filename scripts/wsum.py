#!/usr/bin/env python3
"""The W-sum lemma's error ‖M(Θ) − I‖_op against the stable rank of Θ (MATH.md §3, stage 1).

One run of `mhalearn study-wsum`, through scripts/experiments.py:

  build/release/mhalearn study-wsum --d 8,16,32 --k 2 --scale 3 --points 10 --samples 4000000 --seed 1 --threads 2 --quiet

Writes
  docs/data/wsum_stable_rank.tsv     the run's table (its stdout)
  docs/wsum/study_wsum.log           its log (the command, its stderr, its exit status)
  docs/wsum/provenance.json          the commit, date, machine and binary of the run, written when it is made
  docs/figures/wsum_stable_rank.svg  the figure (gnuplot)
  docs/wsum.md                       the page (the run's commit, date and machine from provenance.json,
                                     so that a page written again from the same run is the same page)

Usage: scripts/wsum.py [--tool build/release/mhalearn] [--reuse] [--remake-other-learners] [--into DIR]
--tool    the binary to run (the logged command names build/release/mhalearn, the documented tool;
          provenance.json names the binary that ran)
--reuse   read back the finished run (its logged command the same, its table present) instead of
          running it again; nothing is run then. The run: 85 s on 2 cores (2026-11-29).
--into    the results page's figure alone (`scripts/results.sh --table wsum-figure`): its expected time
          (the committed run's log), the run into DIR (a new or empty folder outside docs/), its table
          compared with the committed docs/data/wsum_stable_rank.tsv; no committed file is touched.
Standard library only (and gnuplot for the figure).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import (Learners, Run, draw, driver_arguments, made_on, previous, provenance_now,  # noqa: E402
                         recorded_label, record, run, tool_path, write_page)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DOC_TOOL = "build/release/mhalearn"  # the tool the page's and the log's command name
RUNS = "docs/wsum"
TSV = "docs/data/wsum_stable_rank.tsv"
SVG = "docs/figures/wsum_stable_rank.svg"
PAGE = "docs/wsum.md"
ARGS = ["study-wsum", "--d", "8,16,32", "--k", "2", "--scale", "3", "--points", "10", "--samples", "4000000",
        "--seed", "1", "--threads", "2", "--quiet"]

GNUPLOT = r"""set terminal svg size 720,440 font "sans,12"
set output "docs/figures/wsum_stable_rank.svg"
set xlabel "stable rank ‖Θ‖_F² / ‖Θ‖_op²"
set ylabel "‖M(Θ) − I‖_op"
set logscale x
set key top right
set title "W-sum lemma: M(Θ) = (1/k) E[Xᵀ J softmax(XΘXᵀ) X], k = 2, ‖Θ‖_F = 3"
plot for [d in "8 16 32"] "< awk -F'\t' 'NR>1 && $1==".d."' docs/data/wsum_stable_rank.tsv" using 4:5:7 with yerrorlines title "d = ".d
"""

INTRO = """\
M(Θ) = (1/k) E[Xᵀ J softmax(XΘXᵀ) X] is stage 1's population value for one head with W = I,
so E[Ŵ] = Σ_i M(Θ_i) W_i and ‖M(Θ) − I‖ is the bias of the crude estimate.
Θ = U diag(i^{−α}) Vᵀ with random orthogonal U, V, rescaled to ‖Θ‖_F = 3; α from 0 (flat spectrum,
stable rank d) to 3 (nearly rank one). d = 8 is exact (enumeration of all 2^16 inputs, in double);
d = 16, 32 are Monte Carlo with 4·10⁶ samples on the fast path (error bars: operator norm of the
entrywise standard-error matrix, an upper bound on the noise's own operator norm only up to constants).
"""

CLOSING = """\
The claim checked here is a trend (the lemma says the error shrinks as the stable rank grows), so it is
a figure, not an assertion; the exact identities behind it (M(0) = I, fixed row-stochastic patterns)
are property tests (proofs/stage1_identities.md).
"""


# --------------------------------------------------------------------------- provenance


# --------------------------------------------------------------------------- page


def rows(tsv):
    """The TSV's data rows as lists of strings (the header line dropped)."""
    return [line.split("\t") for line in tsv.splitlines()[1:] if line]


def data_table(tsv, learner):
    """The run's rows, each naming the learner (the one run's build) that made it, and the note under them."""
    learners = Learners(labels=[learner])
    lines = ["| d | α | stable rank | ‖M − I‖_op | ‖M − I‖_F/√d | SE (op) | method | learner |",
             "|---|---|---|---|---|---|---|---|"]
    return lines + ["| " + " | ".join([r[i] for i in (0, 2, 3, 4, 5, 6, 7)] + [learners.label_cell(learner)]) + " |"
                    for r in rows(tsv)] + ["", learners.note([learner])]


def extremes(tsv):
    """Per d: the error at the largest and at the smallest stable rank (the first row of a tie)."""
    by_d = {}
    for r in rows(tsv):
        by_d.setdefault(int(r[0]), []).append((float(r[3]), float(r[4])))
    lines = []
    for d, points in sorted(by_d.items()):
        hi = max(points, key=lambda p: p[0])
        lo = min(points, key=lambda p: p[0])
        lines.append(f"- d = {d}: {hi[1]:.3g} at stable rank {hi[0]:.3g}, {lo[1]:.3g} at stable rank {lo[0]:.3g}")
    return lines


def page(result):
    tsv = result.output
    return "\n".join([
        "# W-sum lemma: error against stable rank", "",
        "Produced by `scripts/wsum.py`, which ran", "",
        "```sh", f"{result.command} > {TSV}", "```", "",
        f"on {made_on(RUNS, [result.name])} (its log: [wsum/{result.name}.log](wsum/{result.name}.log)).", "",
        INTRO,
        "![‖M(Θ) − I‖ against stable rank](figures/wsum_stable_rank.svg)", ""]
        + data_table(tsv, recorded_label(RUNS, result.name)) + ["",
        "In this run, per d: ‖M − I‖_op at the largest and at the smallest stable rank:", ""]
        + extremes(tsv) + ["", CLOSING])


def into(tool, folder):
    """The figure's run alone into `folder`, compared with the committed table; the exit status."""
    folder = os.path.abspath(folder)
    if os.path.commonpath([folder, os.path.join(ROOT, "docs")]) == os.path.join(ROOT, "docs"):
        sys.exit(f"--into {folder}: inside docs/, where the committed runs are")
    if os.path.isdir(folder) and os.listdir(folder):
        sys.exit(f"--into {folder}: not empty")
    committed = previous(Run("study_wsum", [DOC_TOOL], os.path.join(ROOT, RUNS), report=None))
    print(f"wsum-figure (§3, the W-sum figure): 1 run, expected "
          f"{f'{committed.seconds:.0f} s' if committed and committed.seconds else 'unknown'} on 2 cores "
          "(the committed run's log)", flush=True)
    os.makedirs(folder, exist_ok=True)
    tsv = os.path.join(folder, "wsum_stable_rank.tsv")
    result = run(Run("study_wsum", [tool] + ARGS, folder, report=None, stdout=tsv, shown=" ".join([DOC_TOOL] + ARGS)))
    if result.failed:
        sys.exit(f"wsum.py: the run failed (exit status {result.status}): see {result.spec.log}")
    with open(os.path.join(ROOT, TSV)) as f:
        same = f.read() == result.output
    print(f"wsum-figure: its data {tsv}; against {TSV} (no column times anything): "
          + ("the same bytes" if same else "DIFFERENT"))
    return 0 if same else 1


def main():
    parser = driver_arguments(__doc__, os.path.join(ROOT, DOC_TOOL))
    parser.add_argument("--into", help="the figure's run alone into this folder, compared with the committed table")
    args = parser.parse_args()
    tool = tool_path(args.tool)
    if args.into:
        return into(tool, args.into)
    os.chdir(ROOT)
    provenance = provenance_now(tool, ROOT)
    spec = Run("study_wsum", [tool] + ARGS, RUNS, report=None, stdout=TSV, shown=" ".join([DOC_TOOL] + ARGS))
    result = run(spec, reuse=args.reuse)
    if result.failed:
        sys.exit(f"wsum.py: the run failed (exit status {result.status}): see {spec.log}")
    record(RUNS, [result], provenance)
    draw(GNUPLOT, ROOT)
    write_page(PAGE, page(result))
    print(f"wrote {PAGE}, {SVG}, {TSV}" + (" (the run read back)" if result.reused else ""))


if __name__ == "__main__":
    sys.exit(main())
