#!/usr/bin/env python3
"""Writes docs/bench/scaling.md: the learner on 1 and 2 MPI ranks of this
machine (scripts/bench-scaling.sh), each stage's time on both, the bytes the
ranks exchanged, and a model of strong scaling to 64 ranks built from them.

Usage: scaling_table.py DIR [--out PAGE]
  DIR holds run.json and, per configuration NAME and rank count P in {1, 2},
  NAME_npP.{time,report.json,log}; and DIR/d64_centre_side_by_side/ the (64,2,2) runs
  with the iterative and the streamed centre ({iterative,streamed}.{time,load,log,report.json},
  `command`; GNU time -v output), rendered by centre_section().
Standard library only.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import Learners, error, fmt, learner_label, page_main, table  # noqa: E402

CONFIGS = [("d32_k2_m2_scale6_seed1", "(32,2,2)"), ("d16_k2_m3_scale6_seed1", "(16,2,3)")]
RANKS = [1, 2, 4, 8, 16, 32, 64]
# A cluster's interconnect, assumed (not measured here): per-message latency of
# one step of an all-gather and the bandwidth each rank receives at (InfiniBand
# HDR class).
LATENCY = 2e-6      # seconds per step; an all-gather of P ranks takes ⌈log2 P⌉ steps
BANDWIDTH = 10e9    # bytes per second


def secs(x):
    """Seconds as a reader compares them: 314, 51.3, 0.18."""
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def read_time(path):
    wall, user, system, kb = open(path).read().split()[:4]
    return float(wall), float(user) + float(system), int(kb) * 1024


def parts(report, wall):
    """Seconds by part of the run: shared between the ranks, or run by each."""
    out = {"sample loops of stages 1–4 (shared)": 0.0, "stage 6 (tuple loops shared)": 0.0,
           "polishing (its per-sample work shared)": 0.0,
           "centres of stages 2 and 4 (each rank)": 0.0, "other stage work (each rank)": 0.0}
    for s in report["stages"]:
        seconds, stage = s["seconds"], s["stage"]
        # Stage 1 is its loop; stages 2–4 say which part of their time is.
        loop = seconds if stage == "1" else s.get("shared_loop_seconds", 0.0)
        centre = s.get("centre_seconds", 0.0)
        if stage == "6":
            out["stage 6 (tuple loops shared)"] += seconds
            continue
        if stage in ("polish", "fit"):  # polishing and its final fit
            out["polishing (its per-sample work shared)"] += seconds
            continue
        out["sample loops of stages 1–4 (shared)"] += loop
        out["centres of stages 2 and 4 (each rank)"] += centre
        out["other stage work (each rank)"] += seconds - loop - centre
    out["outside the stages (each rank)"] = max(0.0, wall - sum(out.values()))
    return out


def fit(t1, t2, shared):
    """(replicated R, parallel S) with t(P) = R + S/P through the two measurements; a part run
    by each rank is all R."""
    if not shared:
        return t1, 0.0
    s = min(max(2 * (t1 - t2), 0.0), t1)
    return t1 - s, s


def comm_seconds(gathers, gathered_bytes, p):
    """The model's communication per rank at P ranks: ⌈log2 P⌉ latency steps per all-gather,
    and each rank receives the others' (P−1)/P of everything gathered."""
    if p == 1:
        return 0.0
    return gathers * LATENCY * math.ceil(math.log2(p)) + gathered_bytes * (p - 1) / p / BANDWIDTH


def config_section(directory, name, label, learners):
    runs = {}
    for np in (1, 2):
        base = os.path.join(directory, f"{name}_np{np}")
        if not os.path.exists(base + ".time"):
            return [], None
        wall, cpu, peak = read_time(base + ".time")
        report = json.load(open(base + ".report.json"))
        runs[np] = (wall, cpu, peak, report, parts(report, wall))
    (w1, c1, m1, r1, p1), (w2, c2, m2, r2, p2) = runs[1], runs[2]
    procs = r2.get("processes", {})
    text = [f"## {label}", ""]
    text += table(["ranks", "wall (s)", "CPU (s)", "peak RSS per rank (MB)", "max(Θ, W) error before polishing",
                   "after", "samples", "learner"],
                  [[str(np), secs(w), secs(c), f"{m / 1e6:.0f}", fmt(error(r, "errors_before_polish"), 2),
                    fmt(error(r), 2), f"{r['samples_total']:.3g}", learners.cell(r)]
                   for np, (w, c, m, r, _) in runs.items()], "rrrrrrrl")
    text += ["", learners.note([learner_label(r) for _, _, _, r, _ in runs.values()])]
    same = r1.get("errors") == r2.get("errors") and r1.get("errors_before_polish") == r2.get("errors_before_polish")
    text += ["", f"Speed-up {w1 / w2:.2f}× on 2 ranks; the two runs' errors are {'identical' if same else 'DIFFERENT'} "
             f"(the learned bytes are compared by the CTest of tests/cli/mpi_net.py). The 2-rank run's shares of the "
             f"shared loops' samples: {procs.get('shared_samples_by_process')}; rank 0 took part in "
             f"{procs.get('this_process_gathers')} all-gathers, sending {procs.get('this_process_bytes_sent', 0) / 1e6:.2f} MB "
             f"and receiving {procs.get('this_process_bytes_received', 0) / 1e6:.2f} MB.", ""]
    rows, model = [], {}
    for part in p1:
        shared = "shared" in part
        r, s = fit(p1[part], p2[part], shared)
        model[part] = (r, s)
        rows.append([part, secs(p1[part]), secs(p2[part]), f"{p1[part] / p2[part]:.2f}" if p2[part] > 0 else "—",
                     secs(r), secs(s)])
    text += table(["part", "1 rank (s)", "2 ranks (s)", "ratio", "model: each rank R (s)", "model: shared S (s)"],
                  rows, "lrrrrr")
    gathered = procs.get("this_process_bytes_received", 0)
    return text, (w1, model, procs.get("this_process_gathers", 0), gathered)


def projection(label, fitted):
    w1, model, gathers, gathered = fitted
    replicated = sum(r for r, _ in model.values())
    shared = sum(s for _, s in model.values())
    rows, dominated = [], None
    for p in RANKS:
        comm = comm_seconds(gathers, gathered, p)
        t = replicated + shared / p + comm
        if dominated is None and comm > shared / p:
            dominated = p
        rows.append([str(p), secs(t), f"{w1 / t:.2f}", f"{w1 / t / p:.0%}", secs(shared / p), f"{comm:.2g}"])
    text = [f"### {label}: the model to 64 ranks", "",
            f"t(P) = R + S/P + c(P) with R = {secs(replicated)} s (every rank), S = {secs(shared)} s (shared), "
            f"c(P) = {gathers} all-gathers × {LATENCY * 1e6:.0f} µs × ⌈log₂ P⌉ + {gathered / 1e6:.2f} MB × (P−1)/P "
            f"÷ {BANDWIDTH / 1e9:.0f} GB/s:", ""]
    text += table(["ranks P", "t(P) (s)", "speed-up", "efficiency", "S/P (s)", "c(P) (s)"], rows, "rrrrrr")
    limit = w1 / replicated if replicated > 0 else float("inf")
    text += ["", f"The part every rank runs bounds the speed-up at {limit:.2f}× (Amdahl). "
             + (f"Communication would exceed the shared work from P = {dominated} on."
                if dominated else "Communication stays below the shared work up to 64 ranks.")]
    return text


def run_reports(directory):
    """Every learner report of the page's runs (the page's learner is the one most of them name)."""
    return [json.load(open(os.path.join(directory, f"{name}_np{np}.report.json")))
            for name, _ in CONFIGS for np in (1, 2)
            if os.path.exists(os.path.join(directory, f"{name}_np{np}.report.json"))]


SIDE_BY_SIDE = "d64_centre_side_by_side"
ROUND_RULE = "d64_round_rule"


def read_time_v(path):
    """wall (s), user (s), system (s), peak RSS (bytes), percent of CPU from GNU time -v's output."""
    fields = {}
    for line in open(path):
        key, _, value = line.strip().rpartition(": ")
        fields[key] = value
    h, m, sec = (["0"] + fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"))[-3:]
    wall = 3600 * float(h) + 60 * float(m) + float(sec)
    return (wall, float(fields["User time (seconds)"]), float(fields["System time (seconds)"]),
            int(fields["Maximum resident set size (kbytes)"]) * 1024, fields["Percent of CPU this job got"])


def side_run(directory, name):
    report = json.load(open(os.path.join(directory, name + ".report.json")))
    wall, user, system, rss, percent = read_time_v(os.path.join(directory, name + ".time"))
    centres = [s["centre_seconds"] for s in report["stages"] if s["stage"] in ("2", "4")]
    loads = [line.split(":", 1)[1].split()[:3] for line in open(os.path.join(directory, name + ".load"))
             if line.startswith("load")]
    return {"report": report, "wall": wall, "user": user, "system": system, "rss": rss, "percent": percent,
            "centres": centres, "stage_seconds": sum(s["seconds"] for s in report["stages"]),
            "stage6": [s["seconds"] for s in report["stages"] if s["stage"] == "6"],
            "final4": [s for s in report["stages"] if s["stage"] in ("2", "4")][-1],
            "polish": sum(s["seconds"] for s in report["stages"] if s["stage"] == "polish"),
            "load": " / ".join(" ".join(l) for l in loads)}


def centre_section(directory):
    """(64,2,2) end to end with the iterative centre against the streamed one (hand-run, side by side)."""
    path = os.path.join(directory, SIDE_BY_SIDE)
    if not os.path.isdir(path):
        return []
    it, st = side_run(path, "iterative"), side_run(path, "streamed")
    rule_path = os.path.join(directory, ROUND_RULE)
    rule = side_run(rule_path, "rounds") if os.path.isdir(rule_path) else None
    rows = []
    runs = [("iterative (04c9869)", it), ("streamed (main, 238e316)", st)]
    if rule:
        runs.append(("iterative, rounds by a third", rule))
    for label, r in runs:
        before, after = r["report"]["errors_before_polish"], r["report"]["errors"]
        rows.append([label, secs(r["wall"]), f"{r['user']:.1f} + {r['system']:.1f}", f"{r['rss'] / 1e9:.3f}",
                     ", ".join(f"{c:.1f}" for c in r["centres"]), f"{sum(r['centres']):.1f}",
                     f"{r['stage_seconds']:.1f}",
                     f"{fmt(before['theta_max_rel'], 3)} / {fmt(before['w_max_rel'], 3)}",
                     f"{fmt(after['theta_max_rel'], 2)} / {fmt(after['w_max_rel'], 2)}", r["load"],
                     learner_label(r["report"])])
    cpu = lambda r: r["user"] + r["system"]
    later = it["centres"][1:]
    return ([
        "## (64,2,2) end to end with the iterative centre", "",
        "The default learner at (64,2,2) (the instance of docs/targets.md, scale 6, seed 1; `--threads 2 "
        "--no-reference`, as docs/bench/memory.md's runs), since `automatic` takes the iterative centre beyond "
        "d = 35 (MATH.md §3.2), against the streamed centre it took before, run one after the other on the same "
        "shared machine under `nice -n 10` and `/usr/bin/time -v`. Commands, logs, reports, GNU time's output "
        f"and the load averages (before / after): [scaling/{SIDE_BY_SIDE}/](scaling/{SIDE_BY_SIDE}/) "
        "(`command`, `iterative.*`, `streamed.*`).", ""]
    + table(["centre", "wall (s)", "CPU user + sys (s)", "peak RSS (GB)", "centres, one per sculpt (s, `centre_seconds`)",
             "their sum (s)", "stage records (s)", "Θ / W error before polishing", "after", "load before / after",
             "learner"],
            rows, "lrrrlrrrrll") + ["",
        "What the rows say:", "",
        f"- The machine was shared (the load averages above; the runs got {it['percent']} and {st['percent']} "
        "of a CPU on average, GNU time's \"Percent of CPU\"), so neither wall time is the idle machine's: the "
        f"streamed run here took {secs(st['wall'])} s where the same method took 389 s on the idle machine "
        f"(docs/bench/memory.md, b0a766d). Side by side the iterative centres took {sum(it['centres']):.0f} s "
        f"against {sum(st['centres']):.0f} s ({sum(st['centres']) / sum(it['centres']):.2f}× less), the run "
        f"{secs(it['wall'])} s against {secs(st['wall'])} s wall and {cpu(it):.0f} s against {cpu(st):.0f} s of "
        f"CPU ({cpu(st) / cpu(it):.2f}× less).",
        "- The two logs' stage lines are the same in every printed figure but the seconds, the lemma's typical "
        "hull error (the iterative centre has only the smallest 2m + 1 singular values, and its typical figure "
        "sums those alone, a lower bound of the formula's: src/stages/stage2/sculpt.hpp) and polishing's last "
        "validation error; both reach the rounding floor after polishing.",
        f"- Round 0's body has no gap (s₁/s₀ = {it['report']['stages'][1]['gap']:.2f}): its iterative centre "
        f"took {it['centres'][0]:.1f} s, against {min(later):.0f}–{max(later):.0f} s in the later rounds and "
        f"{st['centres'][0]:.0f} s for the streamed one. The final round spent "
        f"{it['final4']['seconds'] - it['final4']['centre_seconds']:.0f} s outside its centre.",
        "- The target of ≤ 2 min end to end is not met: the centres are "
        f"{100 * sum(it['centres']) / it['wall']:.0f} % of the iterative run's wall time, and the rest — stage 6's "
        f"nets ({min(it['stage6'][1:]):.0f}–{max(it['stage6'][1:]):.0f} s a round after round 0's "
        f"{it['stage6'][0]:.0f} s), the sample loops of stages 3 and 4, polishing ({it['polish']:.0f} s) — is "
        f"no smaller than before. The iterative run's {it['system']:.0f} s of system time "
        f"({st['system']:.0f} s for the streamed run) were not examined.", ""]
        + round_rule_lines(it, rule))


def round_rule_lines(it, rule):
    """What the third row, made later with the rounds' rule 'by a third', says."""
    if not rule:
        return []
    cpu = lambda r: r["user"] + r["system"]
    v_it, v_rule = it["report"]["round_validation_error"], rule["report"]["round_validation_error"]
    return [
        "The third row is the same command by a later build, whose rounds go on only while the layer's "
        "validation error or stage 3's standard error of W_Σ falls by a third or more (src/learn/learner.cpp, "
        f"`kRoundImprovement`; before, any fall of the layer's error sufficed), run alone beside a mutation-test run "
        f"that held the other core ([scaling/{ROUND_RULE}/](scaling/{ROUND_RULE}/)). The validation errors of rounds "
        f"0–{len(v_it) - 2} before: {', '.join(fmt(v, 2) for v in v_it[:-1])}; the fourth round's gain "
        f"({v_it[2] / v_it[3]:.2f}×) no longer pays for a fifth, so the rule stops after round {len(v_rule) - 2} "
        f"and the final round follows: {cpu(rule):.0f} s of CPU against {cpu(it):.0f} s "
        f"({cpu(it) / cpu(rule):.2f}× less), {rule['report']['samples_total']:.3g} samples against "
        f"{it['report']['samples_total']:.3g}, and the same order of error before polishing "
        f"({fmt(rule['report']['errors_before_polish']['theta_max_rel'], 3)} / "
        f"{fmt(rule['report']['errors_before_polish']['w_max_rel'], 3)}) and after. Still {secs(rule['wall'])} s "
        "wall, not ≤ 2 min.", ""]


def page(directory):
    run = json.load(open(os.path.join(directory, "run.json")))
    text = ["# The learner over MPI ranks", "",
            "Every sample-indexed loop the ranks share — stage 1's sums, stages 2 and 4's certification "
            "(`sculpt_slabs`), stage 3's margin events (after its pilot) and stage 6's tuple loops — gives each rank "
            "a contiguous block of every "
            "batch; the outcomes are gathered and merged in sample order, so any number of ranks writes the bytes "
            "of one process (tests/cli/mpi_net.py at -np 1, 2, 3). Validation and test errors and polishing's "
            "matrix-free solver (the design's rows, J·v, Jᵀ·R and the diagonal of JᵀJ over blocks of samples, the "
            "projection's chunk sums, each head's preconditioner block on one rank) are shared the same way. Every "
            "other part runs on each rank: the pilots, the least-squares centres (except the products of the iterative "
            "centre, which `automatic` takes beyond d = 35 on the learner's slabs: each rank multiplies by its blocks "
            "of slabs, with the bytes of one process — unit test \"the iterative centre gives the same bytes on 1 and "
            "2 threads and on 1, 2 and 3 processes\"; the rank tables below are at d ≤ 32, where the dense centre "
            "runs), stage 5, polishing's least-squares "
            "solves for W and its dense solver (m·d² ≤ 1024). A rank's `--threads` share the streamed centre's "
            "fold, bidiagonalisation and QR (d ≥ 36; the same bytes on any number: tests/geometry/test_centre_streamed.cpp, "
            "\"the streamed centre on 2 threads gives the bytes of 1 thread\"), so one rank per node with the node's "
            "cores as threads is the layout for large d.", "",
            f"Made by `{run['command']}` ({run['mpi']}, one thread per rank). Machine: {run['machine']}, "
            f"{run['cpus']} CPUs; commit {run['commit']}; run {run['date']}; load average (1, 5, 15 min) before "
            f"{run['load_before']}, after {run['load_after']}.", "",
            "The part times come from the reports (each stage's `seconds`; stage 1's all shared, stages 2–4's "
            "`shared_loop_seconds` "
            "and `centre_seconds`); the model fits t = R + S/P through the 1- and 2-rank times of each shared part "
            "(a part every rank runs is all R), and adds the all-gathers' cost on an assumed interconnect "
            f"({LATENCY * 1e6:.0f} µs per step, {BANDWIDTH / 1e9:.0f} GB/s; not measured here), with the gathered "
            "bytes and the number of all-gathers counted in the 2-rank run (the gathered data — certified rows "
            "with their slabs, margin events, tuple errors — does not grow with P).", ""]
    learners = Learners(reports=run_reports(directory))
    for name, label in CONFIGS:
        section, fitted = config_section(directory, name, label, learners)
        if not section:
            continue
        text += section + [""] + projection(label, fitted) + [""]
    text += centre_section(directory)
    text += ["## On a cluster", "",
             "What a cluster user would type (Open MPI; 8 nodes of 16 cores, one rank per core; the same bytes "
             "as one process):", "",
             "```",
             "mpirun -np 128 --map-by ppr:16:node --bind-to core \\",
             "    mhalearn learn inst.json --threads 1 --seed 1 --report report.json -o learned.json",
             "```", "",
             "or one rank per node with 16 threads each (`--map-by ppr:1:node:PE=16 ... --threads 16`), which "
             "shares the sample loops between threads inside a node and between ranks across nodes. "
             "`--checkpoint`/`--resume` are refused under mpirun. Not run here: this machine has 2 cores."]
    return "\n".join(text) + "\n"


if __name__ == "__main__":
    page_main(__doc__, page, "docs/bench/scaling.md")
