#!/usr/bin/env python3
"""Re-makes every generated experiment page by one learner: each page's command with `--reuse
--remake-other-learners`, so that a run another build made (another fingerprint than the tool's)
is made again, a run of the tool's build is read back, and the page's learner rows share the
tool's fingerprint (docs/cite.md, "Re-making every page").

Usage: scripts/remake_pages.py [--tool build/release/mhalearn] [--pages NAME ...] [--plan]
  --plan    print, for each page, its command and how many of its committed runs another learner
            made, with their wall times summed from the runs' logs (the pass's expected time on the
            machine that made them), and run nothing
  --pages   only these pages (default: all, in the order below)
Resumable: every run is written when it ends, so a pass stopped part-way (Ctrl-C, the end of a
session) keeps the runs it finished, and the next pass with the same build reads them back. Any
change to src/ changes the fingerprint (cmake/fingerprint.py): the pass is meant to run after the
last change to the learner's sources, and the release (scripts/release.sh) after it.
The benchmark pages (docs/bench/*.md, docs/benchmarks.md) are re-made whole by their own scripts.
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from experiments import load, report_fingerprint, tool_fingerprint  # noqa: E402

TOOL = "build/release/mhalearn"
FAULTY = "build/release/mhalearn_faulty"
# The targets page's studies: the command at the top of docs/targets.md.
TARGETS_STUDIES = ["--timed", "d16_k2_m4_scale3_seed1", "d64_k2_m2_scale6_seed1", "d16_k2_m5_scale3_seed1",
                   "--sample-study", "--final-rounds-study", "--auto-final-study", "--floor-study",
                   "--lean-grid-study", "16,2,3", "16,4,2", "16,3,2", "32,2,2", "16,2,4", "8,2,2", "64,2,2"]


def pages(tool):
    """(name, page, runs folders, command) in the order a pass makes them: the diagnosis grid before
    the targets page, which reads its runs; the theorem's shape first: the diagnosis page reads its paper runs, the results page embeds its tables."""
    return [
        ("theorem-shape", "docs/theorem_shape.md", ["docs/theorem_shape"],
         ["python3", "scripts/theorem_shape.py", "--tool", tool]),
        ("diagnosis", "docs/diagnosis.md", ["docs/diagnosis"],
         ["python3", "scripts/diagnose.py", "--tool", tool, "--grid", "--corner"]),
        ("targets", "docs/targets.md", ["docs/targets"],
         ["python3", "scripts/targets.py", "--tool", tool] + TARGETS_STUDIES),
        ("noise", "docs/noise.md", ["docs/bench/noise"], ["python3", "scripts/noise.py", "--tool", tool]),
        ("hardness", "docs/hardness.md", ["docs/hardness"], ["python3", "scripts/hardness.py", "--tool", tool]),
        ("wsum", "docs/wsum.md", ["docs/wsum"], ["python3", "scripts/wsum.py", "--tool", tool]),
        ("net", "docs/bench/net.md", ["docs/bench/net"], ["python3", "scripts/net.py", "--tool", tool, "--mpi"]),
        ("false-alarms", "docs/verify/false_alarms.md", ["docs/verify/false_alarms"],
         ["python3", "scripts/false_alarms.py", "--tool", tool, "--faulty", FAULTY, "--threads", "2"]),
        ("results", "docs/results.md", ["docs/results/runs"], ["scripts/results.sh"]),
    ]


_END = re.compile(r"^(?:exit status -?\d+|killed) after ([0-9.]+) s$", re.M)


def committed_runs(folder):
    """(name, wall seconds or None, fingerprint or None) of every run with a log in `folder`."""
    recorded = load(os.path.join(ROOT, folder, "provenance.json")) or {}
    out = []
    for name in sorted(os.listdir(os.path.join(ROOT, folder))):
        if not name.endswith(".log"):
            continue
        stem = name[:-len(".log")]
        report = load(os.path.join(ROOT, folder, stem + ".report.json"))
        fp = report_fingerprint(report) if report else (recorded.get(stem) or {}).get("fingerprint")
        out.append((stem, wall_seconds(folder, stem, report), fp))
    return out


def wall_seconds(folder, stem, report):
    """A run's wall time: its log's last line (experiments.py), else its GNU time file, else the
    seconds its report or result file gives; None when none of them does."""
    path = os.path.join(ROOT, folder, stem)
    ends = _END.findall(open(path + ".log", errors="replace").read())
    if ends:
        return float(ends[-1])
    if os.path.exists(path + ".time"):  # GNU time's figures, after "Command exited ..." when the run failed
        figures = [ln for ln in open(path + ".time").read().splitlines() if ln and ln[0].isdigit()]
        if figures:
            return float(figures[0].split()[0])
    for record in (report, load(path + ".result.json")):
        if isinstance(record, dict) and isinstance(record.get("seconds"), (int, float)):
            return float(record["seconds"])
    return None


def duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else \
        f"{seconds / 3600:.1f} h"


def plan_line(name, page, folders, command, fingerprint):
    runs = [r for f in folders for r in committed_runs(f)]
    other = [r for r in runs if r[2] != fingerprint]
    seconds = sum(r[1] for r in other if r[1] is not None)
    unknown = sum(r[1] is None for r in other)
    return (f"{name} ({page}): {len(other)} of {len(runs)} committed runs by another learner, "
            f"{duration(seconds)} of wall time by their logs" + (f" ({unknown} without a time)" if unknown else "")
            + f"\n    {' '.join(command)} --reuse --remake-other-learners")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", default=TOOL)
    ap.add_argument("--pages", nargs="+", help="only these pages")
    ap.add_argument("--plan", action="store_true", help="print what a pass would make, and its expected time")
    args = ap.parse_args()
    os.chdir(ROOT)
    fingerprint = tool_fingerprint(args.tool)
    if not fingerprint:
        sys.exit(f"remake_pages: {args.tool} --version prints no fingerprint (build it: scripts/build-cli.sh)")
    chosen = pages(args.tool)
    names = [p[0] for p in chosen]
    for unknown in set(args.pages or []) - set(names):
        sys.exit(f"remake_pages: no page named {unknown} (pages: {', '.join(names)})")
    chosen = [p for p in chosen if not args.pages or p[0] in args.pages]
    print(f"learner: fingerprint {fingerprint} ({args.tool})")
    for p in chosen:
        print(plan_line(*p, fingerprint))
    if args.plan:
        return 0
    for name, page, _, command in chosen:
        start = time.time()
        print(f"== {name}: {' '.join(command)} --reuse --remake-other-learners", flush=True)
        status = subprocess.run(command + ["--reuse", "--remake-other-learners"]).returncode
        print(f"== {name}: exit {status} after {duration(time.time() - start)}", flush=True)
        if status != 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
