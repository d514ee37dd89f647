#!/usr/bin/env python3
"""Which stage of the paper's learner limits its error: runs with oracle stages.

For each configuration (d, k, m, logit scale, seed) this generates the instance
and runs the paper's stages (no polishing, no reference paths) five times:
  full      every stage as the learner runs it
  stage1    stage 1's Ŵ replaced by the exact W_Σ (round 0 then uses the lemma's widths)
  stage3    stage 3's refinement replaced by the exact W_Σ
  stage1,3  both
  hull      stages 2, 4 and 5 replaced by the true affine hull (stage 6 alone)
and reads each run's report: the error before polishing (max relative Θ / W
error after the best head permutation), each stage's own error against the
truth (stage 1 and 3: ‖Ŵ − W_Σ‖_F/‖W_Σ‖_F next to the stage's own standard
error; stages 2/4: the sculpted body's hull error), samples and seconds.

The verdict names the first stage whose replacement by the truth brings the
error under the target (1e−3 unless --target): if even the true hull leaves
the error above it, stage 6 (net and W fit) is the limit; otherwise, if the
full run is above it and exact W_Σ (stage 1, stage 3 or both) brings it under,
that W_Σ estimate; otherwise the sculpted body (stages 2/4/5).

Usage: scripts/diagnose.py --tool build/release/mhalearn --configs 16,2,2,6,1 [16,2,2,6,2 ...]
                           [--threads 2] [--target 1e-3] [--out docs/diagnosis.md] [--runs docs/diagnosis]
Standard library only. Each run's command line, stdout and report go to the --runs folder.
"""
import argparse
import json
import os
import subprocess
import sys
import time

VARIANTS = [("full", None), ("stage1", "stage1"), ("stage3", "stage3"), ("stage1,3", "stage1,stage3"),
            ("hull", "hull")]


def run(cmd, log):
    start = time.time()
    with open(log, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        status = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
    return status, time.time() - start


def stage_errors(report):
    """Own errors of stages 1, 3 (W_Σ, with their standard errors) and 2/4 (hull), in run order."""
    out = {"1": [], "3": [], "hull": []}
    for s in report.get("stages", []):
        if s.get("oracle"):
            continue
        if s["stage"] == "1" and "w_sum_rel_error" in s:
            out["1"].append((s["w_sum_rel_error"], s.get("standard_error_rel")))
        elif s["stage"] == "3" and "w_sum_rel_error" in s:
            out["3"].append((s["w_sum_rel_error"], s.get("relative_standard_error")))
        elif s["stage"] in ("2", "4") and "hull_error" in s:
            out["hull"].append(s["hull_error"])
    return out


def fmt(x):
    return "–" if x is None else f"{x:.1e}"


def verdict(errors, target):
    def ok(name):
        e = errors.get(name)
        return e is not None and e <= target
    if errors.get("hull") is None:
        return "stage 6 (the net could not run on the true hull)"
    if not ok("hull"):
        return f"stage 6: {fmt(errors['hull'])} on the true hull"
    if ok("full"):
        return "none"
    for name, label in (("stage1", "stage 1 (crude Ŵ)"), ("stage3", "stage 3 (refined Ŵ)"),
                        ("stage1,3", "W_Σ estimates (stages 1 and 3 together)")):
        if ok(name):
            return label
    return "stages 2/4/5 (the sculpted body): exact W_Σ does not bring it under the target"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True)
    parser.add_argument("--configs", nargs="+", required=True, help="d,k,m,scale,seed")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--target", type=float, default=1e-3)
    parser.add_argument("--out", default="docs/diagnosis.md")
    parser.add_argument("--runs", default="docs/diagnosis")
    parser.add_argument("--max-seconds", type=float, default=600, help="each run's --max-seconds")
    args = parser.parse_args()
    os.makedirs(args.runs, exist_ok=True)

    rows = []
    for config in args.configs:
        d, k, m, scale, seed = config.split(",")
        name = f"d{d}_k{k}_m{m}_scale{scale}_seed{seed}"
        inst = os.path.join(args.runs, name + ".json")
        subprocess.run([args.tool, "generate", "--d", d, "--k", k, "--m", m, "--scale", scale, "--seed", seed,
                        "-o", inst], check=True, stdout=subprocess.DEVNULL)
        errors, own, seconds, samples, commands = {}, {}, {}, {}, {}
        for label, oracle in VARIANTS:
            report = os.path.join(args.runs, f"{name}_{label.replace(',', '_')}.report.json")
            cmd = [args.tool, "learn", inst, "--threads", str(args.threads), "--no-polish", "--no-reference",
                   "--max-seconds", str(args.max_seconds), "--report", report]
            if oracle:
                cmd += ["--oracle", oracle]
            status, wall = run(cmd, report.replace(".report.json", ".log"))
            commands[label] = " ".join(cmd)
            rep = json.load(open(report)) if os.path.exists(report) else {}
            e = rep.get("errors_before_polish")
            errors[label] = max(e["theta_max_rel"], e["w_max_rel"]) if e else None
            own[label] = stage_errors(rep)
            seconds[label], samples[label] = wall, rep.get("samples_paper_stages")
            print(f"{name} {label}: exit {status}, error {fmt(errors[label])}, {wall:.0f} s", file=sys.stderr)
        rows.append({"name": name, "config": (d, k, m, scale, seed), "errors": errors, "own": own,
                     "seconds": seconds, "samples": samples, "verdict": verdict(errors, args.target),
                     "commands": commands})
    json.dump(rows, open(os.path.join(args.runs, "summary.json"), "w"), indent=1)
    write_page(args, rows)


def write_page(args, rows):
    lines = [
        "# Where the paper's stages lose accuracy: runs with oracle stages",
        "",
        "Produced by",
        "",
        "```sh",
        "python3 scripts/diagnose.py --tool build/release/mhalearn --configs " + " ".join(args.configs),
        "```",
        "",
        f"(per-run commands, logs and reports in `{args.runs}/`). Each configuration is learned five times with "
        "`mhalearn learn --no-polish --no-reference`, replacing stages by the truth with `--oracle` "
        "(src/learn/learner.hpp, `OracleStages`): *full* (no oracle), exact W_Σ in place of stage 1, of stage 3, "
        "of both, and the true affine hull in place of stages 2, 4 and 5. Errors are the paper's stages' "
        "max(Θ, W) relative error after the best head permutation, before polishing. The verdict names the "
        f"first stage whose replacement brings the error under {args.target:g} (scripts/diagnose.py says how).",
        "",
        "| (d,k,m), scale, seed | full | exact W_Σ for stage 1 | for stage 3 | for both | true hull | limiting stage |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        e = r["errors"]
        d, k, m, scale, seed = r["config"]
        lines.append(f"| ({d},{k},{m}), {scale}, {seed} | {fmt(e['full'])} | {fmt(e['stage1'])} | {fmt(e['stage3'])} | "
                     f"{fmt(e['stage1,3'])} | {fmt(e['hull'])} | {r['verdict']} |")
    lines += [
        "",
        "## Each stage's own error in the full run",
        "",
        "Stage 1 and 3: ‖Ŵ − W_Σ‖_F/‖W_Σ‖_F (true) beside the stage's own relative standard error; "
        "stages 2/4: the sculpted body's hull error against the true hull, per round.",
        "",
        "| (d,k,m), scale, seed | stage 1: true (SE) | stage 3 per round: true (SE) | hull error per round (2, then 4) | "
        "hull error with exact W_Σ | samples, full | seconds, full |",
        "|---|---|---|---|---|---:|---:|",
    ]
    for r in rows:
        d, k, m, scale, seed = r["config"]
        own = r["own"]["full"]
        s1 = "; ".join(f"{fmt(t)} ({fmt(se)})" for t, se in own["1"]) or "–"
        s3 = "; ".join(f"{fmt(t)} ({fmt(se)})" for t, se in own["3"]) or "–"
        hull = ", ".join(fmt(h) for h in own["hull"]) or "–"
        hull_exact = ", ".join(fmt(h) for h in r["own"]["stage1,3"]["hull"]) or "–"
        lines.append(f"| ({d},{k},{m}), {scale}, {seed} | {s1} | {s3} | {hull} | {hull_exact} | "
                     f"{r['samples']['full'] or '–'} | {r['seconds']['full']:.0f} |")
    lines.append("")
    with open(args.out + ".tmp", "w") as f:
        f.write("\n".join(lines))
    os.replace(args.out + ".tmp", args.out)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
