#!/usr/bin/env python3
"""Writes docs/bench/sample_loops.md: the sample loop of stages 2 and 4 against
its floor, the fast forward pass, from one run of mhalearn_bench
(bench/sample_loops.cpp beside BM_FastForward), and the profile of a learner
run (perf report output). scripts/bench-sample-loops.sh makes both.

Usage: sample_loops_table.py DIR [--out PAGE]
  DIR holds bench.json (Google Benchmark JSON), profile.txt (perf report --stdio)
  and run.json (the commands, machine, commit and load the bench script recorded).
Standard library only.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import Learners, page_main, provenance_label, table  # noqa: E402

# Issue target: the loop's sample rate at least this fraction of the forward pass's.
TARGET_FRACTION = 0.25
NAME_RE = re.compile(r"^BM_(FastForward|OracleDraw|SculptLoop)/\((\d+),(\d+),(\d+)\)/threads:(\d+)")


def medians(bench):
    """{(kind, (k,d,m), threads): (median items/s, rows_certified)} of the run's median aggregates
    (the plain runs when there are no repetitions)."""
    out = {}
    entries = bench["benchmarks"]
    have_aggregates = any(e.get("aggregate_name") == "median" for e in entries)
    for e in entries:
        if have_aggregates and e.get("aggregate_name") != "median":
            continue
        m = NAME_RE.match(e.get("run_name", e["name"]))
        if not m:
            continue
        kind, k, d, heads, threads = m.group(1), *map(int, m.groups()[1:])
        out[(kind, (k, d, heads), threads)] = (e["items_per_second"], e.get("rows_certified"))
    return out


def rate_rows(rates):
    rows = []
    shapes = sorted({(shape, threads) for (kind, shape, threads) in rates if kind == "SculptLoop"})
    for shape, threads in shapes:
        forward = rates.get(("FastForward", shape, threads), (None, None))[0]
        draw = rates.get(("OracleDraw", shape, threads), (None, None))[0]
        loop, certified = rates[("SculptLoop", shape, threads)]
        fraction = loop / forward if forward else None
        verdict = "—" if fraction is None else ("met" if fraction >= TARGET_FRACTION else "missed")
        rows.append([f"({shape[0]},{shape[1]},{shape[2]})", threads,
                     f"{forward:.3g}" if forward else "—", f"{draw:.3g}" if draw else "—", f"{loop:.3g}",
                     f"{fraction:.0%}" if fraction is not None else "—", verdict,
                     f"{certified:.0f}" if certified is not None else "—"])
    return rows


def profile_lines(path, limit=25):
    """The top symbols of a `perf report --stdio -g none` output, as (percent, symbol)."""
    lines = []
    if not os.path.exists(path):
        return lines
    for line in open(path):
        m = re.match(r"^\s+(\d+\.\d+)%\s+\S+\s+(\S+)\s+\[[.k]\]\s+(.*)$", line)
        if m:
            symbol = m.group(3).strip()
            lines.append((float(m.group(1)), m.group(2), symbol[:110]))
    return lines[:limit]


def page(directory):
    bench = json.load(open(os.path.join(directory, "bench.json")))
    run = json.load(open(os.path.join(directory, "run.json")))
    command, profile_command = run["command"], run.get("profile_command", "")
    rates = medians(bench)
    label = provenance_label(run)  # the build the bench script recorded (run.json), every row's
    learners = Learners(labels=[label])
    text = ["# The sample loop of stages 2 and 4 against its floor", ""]
    text += [
        "Every sample the learner certifies costs at least its label, one fast forward pass. "
        "`BM_FastForward` times the forward pass alone, `BM_OracleDraw` the oracle's draw (inputs from "
        "their counter-based stream, labels by the forward pass, into a reused batch), and `BM_SculptLoop` "
        "stage 4's sample loop as the learner's final round runs it (`sculpt_slabs` with `sculpt_round_options` "
        "of the default options at round 1, Ŵ the exact W_Σ, 2²¹ samples; the body's least-squares centre "
        "after the loop is not timed) — "
        "all three in one run of one binary (bench/sample_loops.cpp, bench/forward_throughput.cpp). "
        f"The target: the loop at ≥ {TARGET_FRACTION:.0%} of the forward pass's rate.", ""]
    text += [f"Command: `{command}`", "",
             f"Machine: {run['machine']}, {run['cpus']} CPUs; commit {run['commit']}; run {run['date']}; "
             f"load average (1, 5, 15 min) before the run {run['load_before']}, after it {run['load_after']}. "
             "Medians of the repetitions, examples/s.", ""]
    if float(run["load_before"].split()[0]) >= run["cpus"]:
        text += ["**The machine was loaded** (the 1-minute load average before the run was at least its "
                 "number of CPUs): the 2-thread rows measure contention with another job, and only the "
                 "ratios, of rates measured in the same run under the same load, compare.", ""]
    text += table(["(k,d,m)", "threads", "forward pass", "oracle draw", "stage-4 loop", "loop / forward",
                   f"≥ {TARGET_FRACTION:.0%}", "rows certified", "learner"],
                  [row + [learners.label_cell(label)] for row in rate_rows(rates)], "lrrrrrcrl")
    text += ["", learners.note([label])]
    prof = profile_lines(os.path.join(directory, "profile.txt"))
    if prof:
        text += ["", "## Profile of a learner run", "",
                 f"`{profile_command}` (perf, cycles, self time over the whole run, stages 1–6 without "
                 "polishing; symbols above 1 %):", ""]
        text += table(["self %", "object", "symbol", "learner"],
                      [[f"{p:.1f}", o, s.replace("|", "\\|"), learners.label_cell(label)] for p, o, s in prof], "rlll")
        text += ["", learners.note([label])]
    return "\n".join(text) + "\n"


if __name__ == "__main__":
    page_main(__doc__, page, "docs/bench/sample_loops.md")
