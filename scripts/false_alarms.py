#!/usr/bin/env python3
"""False alarms of the learner's verdict, measured: `mhalearn learn` with its
reference step on (the default) over many clean configurations, counting exit
status 4 (a fast path disagreeing with its reference beyond the derived bound) —
the target is 0 — and, with each stage's fault switch on (the test build
`mhalearn_faulty`, MHALEARN_INJECT_FAULT=<stage>), counting the runs that do exit 4
— the target is all of them.

Clean configurations: d ∈ {8, 16, 32} × k ∈ {2, 3} × m ∈ {2, 3} at two budgets
("tiny", "small") and four instance seeds (eight at d = 8), both variants at the tiny budget of
seed 1, and the default budget on the m = 2 shapes with d ≤ 16 (two seeds). Fault
runs: every stage's fault on the tiny budget of (8,2,2), (16,2,2), (16,2,3) and
(8,3,2). At d = 32 the reference step skips stages 3's proxy and 5 (d² = 1024 >
--reference-max-unknowns 400: both grow as (d²)³), which the table says.

Usage: scripts/false_alarms.py --tool build/release/mhalearn --faulty build/release/mhalearn_faulty
                               [--runs docs/verify/false_alarms] [--out docs/verify/false_alarms.md]
                               [--reuse] [--threads 2] [--only clean|faults]
Each run's command and output go to its .log in --runs, its report to .report.json;
--reuse keeps every finished run; --finished-only writes the page from the
finished runs alone (the configurations not yet run are counted, not run), and
--built-from names the commit the binaries were built at, for the page.
Standard library only; the runs go through scripts/experiments.py.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import (Learners, Run, add_learner_option, generate, provenance_now, record,  # noqa: E402
                         recorded_fingerprint, recorded_label, require_learner, run, table)
import experiments  # noqa: E402  (REQUIRE_LEARNER, set by --remake-other-learners)

STAGES = ["forward", "1", "2", "3", "4", "5", "6", "polish"]
BUDGETS = {
    "tiny": ["--stage1-samples", "20000", "--crude-sculpt-samples", "40000", "--sculpt-samples", "100000",
             "--final-sculpt-samples", "100000", "--margin-samples", "200000", "--rounds", "2", "--net-tuples", "500",
             "--test-samples", "1000"],
    "small": ["--stage1-samples", "100000", "--crude-sculpt-samples", "200000", "--sculpt-samples", "400000",
              "--final-sculpt-samples", "1000000", "--margin-samples", "1000000", "--rounds", "3",
              "--net-tuples", "2000", "--test-samples", "2000"],
    "default": [],
}
FAULT_SHAPES = [(8, 2, 2), (16, 2, 2), (16, 2, 3), (8, 3, 2)]


def clean_configurations():
    """Cheapest first (d, then budget), so that a run cut short has the widest spread."""
    configs = []
    for d in (8, 16, 32):
        for k in (2, 3):
            for m in (2, 3):
                for budget in ("tiny", "small"):
                    for seed in ((1, 2, 3, 4, 5, 6, 7, 8) if d == 8 else (1, 2, 3, 4)):
                        configs.append({"d": d, "k": k, "m": m, "budget": budget, "seed": seed, "variant": "extended"})
                configs.append({"d": d, "k": k, "m": m, "budget": "tiny", "seed": 1, "variant": "paper"})
    for d, k in ((8, 2), (16, 2), (8, 3), (16, 3)):
        for seed in (1, 2):
            configs.append({"d": d, "k": k, "m": 2, "budget": "default", "seed": seed, "variant": "extended"})
    cost = {"tiny": 0, "small": 1, "default": 2}
    return sorted(configs, key=lambda c: (c["d"], cost[c["budget"]], c["k"], c["m"], c["variant"], c["seed"]))


def fault_configurations():
    return [{"d": d, "k": k, "m": m, "budget": "tiny", "seed": 1, "variant": "extended", "fault": stage}
            for d, k, m in FAULT_SHAPES for stage in STAGES]


def name_of(c):
    base = f"d{c['d']}_k{c['k']}_m{c['m']}_seed{c['seed']}_{c['budget']}_{c['variant']}"
    return base + (f"_fault{c['fault']}" if "fault" in c else "")


def instance_path(runs, c, tool):
    path = os.path.join(runs, f"d{c['d']}_k{c['k']}_m{c['m']}_seed{c['seed']}.json")
    return generate(tool, path, c["d"], c["k"], c["m"], 6, c["seed"])


def outcome(rep):
    """What the page needs of a report beyond the verdicts (reports are not committed): the paper's
    stages' error before polishing and the names of the warnings raised."""
    rep = rep or {}
    return dict(stages_error=experiments.error(rep, "errors_before_polish"),
                warning_names=sorted({d["name"] for d in rep.get("diagnostics", []) if d["warning"]}))


def run_one(c, args):
    name = name_of(c)
    report = os.path.join(args.runs, name + ".report.json")
    result = os.path.join(args.runs, name + ".result.json")
    other = experiments.REQUIRE_LEARNER and recorded_fingerprint(args.runs, name) != experiments.REQUIRE_LEARNER
    if args.reuse and os.path.exists(result) and not other:
        with open(result) as f:
            kept = json.load(f)
        if "warning_names" not in kept and os.path.exists(report):  # a record older than these fields
            kept.update(outcome(experiments.load(report)))
            with open(result, "w") as f:
                json.dump(kept, f)
        return kept
    tool = args.faulty if "fault" in c else args.tool
    cmd = [tool, "learn", instance_path(args.runs, c, args.tool), "--seed", "1", "--variant", c["variant"],
           "--threads", str(args.threads), "--report", report] + BUDGETS[c["budget"]]
    # The fault switch is set for a fault run (and shown before the command in its log), unset otherwise.
    made = provenance_now(tool, os.getcwd())
    done = run(Run(name, cmd, args.runs, report=report, env={"MHALEARN_INJECT_FAULT": c.get("fault")}), quiet=True)
    record(args.runs, [done], made)  # which build made it (provenance.json): the page's learner column
    status, seconds, rep = done.status, done.seconds, done.report
    rows, warnings, disagreeing = 0, 0, []
    if rep is not None:
        for r in rep.get("reference", []):
            rows += 1
            if r["verdict"] == "DISAGREE":
                disagreeing.append(r["stage"])
        warnings = sum(1 for d in rep.get("diagnostics", []) if d["warning"])
    out = dict(c, exit=status, seconds=round(seconds, 1), reference_rows=rows, warnings=warnings,
               disagreeing=disagreeing, **outcome(rep))
    with open(result, "w") as f:
        json.dump(out, f)
    return out


def warnings_against_outcome(clean):
    """Lines: each warning's name, in how many runs it was raised, and in how many of those the paper's
    stages worked (max(Θ, W) ≤ 1e−3 before polishing, recorded from the run's report): a warning raised
    on a run that worked is one a user could not act on."""
    counts = {}
    worked_runs = warned_worked = 0
    known = [r for r in clean if "warning_names" in r]  # records made before these fields carry neither
    for r in known:
        e = r["stages_error"]
        worked = e is not None and e <= 1e-3
        worked_runs += worked
        names = r["warning_names"]
        warned_worked += worked and bool(names)
        for n in names:
            raised, on_worked = counts.get(n, (0, 0))
            counts[n] = (raised + 1, on_worked + worked)
    if not known:
        return []
    lines = [f"Whether a warning was one a user could act on: in {worked_runs} of the {len(known)} runs "
             + (f"(of {len(clean)}: the others' records predate the measure) " if len(known) < len(clean) else "")
             + "the paper's "
             "stages worked (max(Θ, W) ≤ 1e−3 before polishing, read from the run's report); "
             f"{warned_worked} of those printed a warning anyway. By warning:", ""]
    lines += table(["warning (a diagnostic past its threshold)", "runs that raised it", "of them, runs whose stages worked"],
                   [[n, raised, on_worked] for n, (raised, on_worked) in sorted(counts.items())], "lrr")
    return lines + [""]


def page(clean, faults, command, configured, built_from, runs):
    lines = ["# False alarms of the learner's verdict, measured", "",
             "Generated by `scripts/false_alarms.py` — the command:", "", "```sh", command, "```", "",
             f"Finished: {len(clean)} of {configured[0]} clean configurations and {len(faults)} of {configured[1]} "
             "fault runs" + (f"; binaries built at {built_from}." if built_from else "."), "",
             "Every run is `mhalearn learn` with its reference step on (the default: every stage's fast path against "
             "its reference on the run's own inputs, src/learn/reference_checks.hpp). Exit 4 means a fast path "
             "disagreed with its reference beyond the derived bound after escalation; a statistical shortfall "
             "(the body not thin across the hull, the proxy far from the minimum-norm point of K, K empty) is a "
             "warning and leaves the exit status 0 (exit 1: the run could not finish, e.g. a stage found too few "
             "events). Instances: `mhalearn generate --d D --k K --m M --scale 6 --seed S`; sample seed 1.", ""]
    exits4 = [r for r in clean if r["exit"] == 4]
    by_exit = {}
    for r in clean:
        by_exit[r["exit"]] = by_exit.get(r["exit"], 0) + 1
    lines += ["## Clean runs", "",
              f"**{len(clean)} configurations, exit 4 in {len(exits4)}.** Exit statuses: " +
              ", ".join(f"{k}: {v}" for k, v in sorted(by_exit.items())) +
              f"; reference rows compared in all: {sum(r['reference_rows'] for r in clean)}; runs with a warning "
              f"(a diagnostic): {sum(1 for r in clean if r['warnings'])}; wall time in all "
              f"{sum(r['seconds'] for r in clean) / 60:.0f} min.", ""]
    lines += warnings_against_outcome(clean)
    groups = {}
    for r in clean:
        groups.setdefault((r["d"], r["k"], r["m"], r["budget"], r["variant"]), []).append(r)
    each = lambda rs, f: ", ".join(str(f(r)) for r in rs)
    label = lambda r: recorded_label(runs, name_of(r))
    learners = Learners(labels=[label(r) for r in clean + faults])
    lines += table(["shape", "budget", "variant", "seeds", "exit statuses", "reference rows", "warnings",
                    "seconds (each)", "learner"],
                   [[f"({d},{k},{m})", budget, variant, each(rs, lambda r: r["seed"]), each(rs, lambda r: r["exit"]),
                     each(rs, lambda r: r["reference_rows"]), each(rs, lambda r: r["warnings"]),
                     each(rs, lambda r: round(r["seconds"])), learners.cells(labels=[label(r) for r in rs])]
                    for (d, k, m, budget, variant), rs in sorted(groups.items())])
    lines += ["", learners.note([label(r) for r in clean])]
    caught = [r for r in faults if r["exit"] == 4]
    lines += ["", "## Runs with a stage's fault switch on", "",
              f"**{len(faults)} runs, exit 4 in {len(caught)}.** `mhalearn_faulty` with MHALEARN_INJECT_FAULT=<stage> "
              "swaps that stage's fast path for its deliberately wrong copy (src/verify/faults.hpp), the one the "
              "learner's steps and its reference step then use.", ""]
    cells = []
    for shape in FAULT_SHAPES:
        cells.append([shape])
        for stage in STAGES:
            r = next((r for r in faults if (r["d"], r["k"], r["m"]) == shape and r["fault"] == stage), None)
            cells[-1].append("–" if r is None else f"exit {r['exit']}" + (f" ({', '.join(r['disagreeing'])})"
                                                                          if r["disagreeing"] else ""))
        cells[-1].append(learners.cells(labels=[label(r) for r in faults if (r["d"], r["k"], r["m"]) == shape]))
    lines += table(["shape"] + STAGES + ["learner"], cells)
    lines += ["", learners.note([label(r) for r in faults])]
    lines += ["", "(In parentheses: the stages of the rows that disagreed; 2 and 4 share the certification fast "
              "path, so either fault shows in both.)", ""]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True)
    p.add_argument("--faulty", required=True)
    p.add_argument("--runs", default="docs/verify/false_alarms")
    p.add_argument("--out", default="docs/verify/false_alarms.md")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reuse", action="store_true")
    p.add_argument("--only", choices=["clean", "faults"])
    p.add_argument("--finished-only", action="store_true")
    p.add_argument("--built-from", default="")
    add_learner_option(p)
    args = p.parse_args()
    require_learner(args)
    os.makedirs(args.runs, exist_ok=True)
    clean, faults = [], []
    if args.only != "faults":
        for c in clean_configurations():
            if args.finished_only and not os.path.exists(os.path.join(args.runs, name_of(c) + ".result.json")):
                continue
            r = run_one(dict(c), argparse.Namespace(**{**vars(args), "reuse": True}) if args.finished_only else args)
            clean.append(r)
            print(f"{name_of(c)}: exit {r['exit']} in {r['seconds']:.0f} s", flush=True)
    if args.only != "clean":
        for c in fault_configurations():
            if args.finished_only and not os.path.exists(os.path.join(args.runs, name_of(c) + ".result.json")):
                continue
            r = run_one(dict(c), argparse.Namespace(**{**vars(args), "reuse": True}) if args.finished_only else args)
            faults.append(r)
            print(f"{name_of(c)}: exit {r['exit']} in {r['seconds']:.0f} s", flush=True)
    command = "scripts/false_alarms.py --tool build/release/mhalearn --faulty build/release/mhalearn_faulty " + \
              f"--threads {args.threads} --reuse"
    if args.only is None:
        with open(args.out, "w") as f:
            f.write(page(clean, faults, command, (len(clean_configurations()), len(fault_configurations())),
                         args.built_from, args.runs))
    bad = sum(r["exit"] == 4 for r in clean) + sum(r["exit"] != 4 for r in faults)
    print(f"clean: {len(clean)} runs, exit 4 in {sum(r['exit'] == 4 for r in clean)}; "
          f"faults: {len(faults)} runs, exit 4 in {sum(r['exit'] == 4 for r in faults)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
