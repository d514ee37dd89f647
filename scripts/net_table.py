#!/usr/bin/env python3
"""docs/bench/net.md from the runs of scripts/net.py (docs/bench/net/):
per run the wall and CPU seconds, the seconds per stage, stage 6's rounds, and
the errors of the exhaustive net, the paper's stages and polishing; then
docs/bench/net/NOTES.md (what the numbers say), as written by hand. Each row names the
learner that made it (its report's build); the numbers printed from one run are
recorded as facts (docs/facts/bench_net.json, experiments.Facts)."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import Facts, Learners, fmt, learner_label, run_identity, table  # noqa: E402

out = sys.argv[1]
runs = sorted(p[:-len(".report.json")] for p in glob.glob(os.path.join(out, "*.report.json")))
reports = {r: json.load(open(r + ".report.json")) for r in runs}
learners = Learners(list(reports.values()))
facts = Facts(os.path.join(os.path.dirname(os.path.abspath(out)), "net.md"))

print("Driver: `python3 scripts/net.py --mpi`; the runs here were made before it, by its shell predecessor and by hand,")
print("with the commands their logs start with (this file is overwritten by `scripts/net_table.py`; logs, reports,")
print("instances and learned layers in `docs/bench/net/`). Each run is `mhalearn generate --d 16 --k 2 --m M --scale 3")
print("--seed 1` then `nice -n 10 mhalearn learn inst.json --seed 1 --threads 2 --no-reference` (the `_mpi2` run:")
print("`mpirun -np 2 mhalearn learn … --threads 1`), default options otherwise, on a 2-core machine shared with other")
print("work: wall seconds depend on the load (given before/after), CPU seconds (user + system) much less, and")
print("OpenMP threads that spin while they wait inflate both (the m = 5 run had OMP_WAIT_POLICY=passive, which")
print("net.py sets for every run; each log starts with its command).\n")
cells = []
for r in runs:
    name = os.path.basename(r)
    rep = reports[r]
    wall, user, system = (float(x) for x in open(r + ".time").readline().split()[:3])
    load = open(r + ".time").read().splitlines()[-1].removeprefix("load ")
    secs = {}
    for s in rep["stages"]:
        key = {"2": "2/4", "4": "2/4"}.get(s["stage"], s["stage"])
        secs[key] = secs.get(key, 0) + s["seconds"]
    e0, e1, e2 = rep["errors_coarse_net"], rep["errors_before_polish"], rep["errors"]
    polished = any(s["stage"] == "polish" for s in rep["stages"])
    cells.append([name, f"{wall:.0f}", f"{user + system:.0f}", load] +
                 [f"{secs.get(key, 0):.1f}" for key in ("1", "2/4", "3", "6", "polish")] +
                 [fmt(e0["theta_max_rel"]), fmt(e1["theta_max_rel"]), fmt(e1["w_max_rel"]), fmt(e1["test_rel"])] +
                 ([fmt(e2["theta_max_rel"]), fmt(e2["test_rel"])] if polished else ["—", "—"]) + [learners.cell(rep)])
    run = run_identity(rep)
    facts.add(run, "wall seconds (/usr/bin/time)", f"{wall:.0f}", name)
    facts.add(run, "CPU seconds", f"{user + system:.0f}", name)
    facts.add(run, "Θ error before polishing", fmt(e1["theta_max_rel"]), name)
    facts.add(run, "W error before polishing", fmt(e1["w_max_rel"]), name)
    if polished:
        facts.add(run, "Θ final error", fmt(e2["theta_max_rel"]), name)
print("\n".join(table(["run", "wall s", "CPU s", "load before / after", "stage 1 s", "stages 2/4 s", "stage 3 s",
                       "stage 6 s", "polish s", "net Θ err", "paper Θ err", "paper W err", "paper test err",
                       "polished Θ err", "polished test err", "learner"], cells)))
print()
print(learners.note([learner_label(x) for x in reports.values()]))
print()
print("Stage 6, round by round (the exhaustive level's grid and tuples, the head-by-head refinement's sweeps and")
print("tuples, the round's validation error):\n")
cells = []
for r in runs:
    name = os.path.basename(r)
    for s in reports[r]["stages"]:
        if s["stage"] != "6" or s.get("oracle"):
            continue
        cells.append([name, s["round"], s["grid_per_axis"], f"{s.get('grid_points', '')} of {s.get('grid_cells', '')}",
                      s["tuples_exhaustive"], f"{s['refine_iterations']}{' (cap)' if s['refine_capped'] else ''}",
                      s["tuples_refine"], f"{s['seconds']:.1f}", fmt(s["validation_error"]),
                      fmt(s["theta_max_rel"]) if "theta_max_rel" in s else "", learners.cell(reports[r])])
print("\n".join(table(["run", "round", "G per axis", "points of cells", "tuples (exhaustive)", "sweeps",
                       "tuples (refinement)", "s", "validation err", "Θ err", "learner"], cells)))
print()
print(learners.note([learner_label(x) for x in reports.values()]))
print()
notes = os.path.join(out, "NOTES.md")
if os.path.exists(notes):
    print(open(notes).read().rstrip())
facts.write()
