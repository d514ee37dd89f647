#!/usr/bin/env python3
"""The pages under docs/ that scripts generate from committed runs regenerate to the same text.

Copies the tracked docs/ and scripts/ into a temporary folder, puts a stub in
place of `mhalearn` there (it answers --help and --version through the real
tool and refuses everything else, so that no run is ever made), regenerates
each page in its from-existing-runs mode and compares it with the committed one:

  docs/diagnosis.md, docs/diagnosis/summary.json
                     scripts/diagnose.py --grid --corner --existing
  docs/targets.md    scripts/targets.py (the page's command) --reuse, and again with
                     --reuse alone (no study options: every study's runs read, the
                     command line aside)
  docs/bench/net.md  scripts/net_table.py docs/bench/net
  docs/noise.md, docs/data/noise_*.tsv
                     scripts/noise.py --page-only (with the real tool: the test
                     arrays .gitignore keeps out of git are remade first, `sample
                     --n 20000 --seed 1000` and three `forward` passes, a second)
  docs/theorem_shape.md
                     scripts/theorem_shape.py --only page
  docs/results.md, docs/results/*.tsv
                     scripts/results.py --reuse (the lines that name the machine,
                     commit and time of writing aside)
  docs/verify/false_alarms.md
                     scripts/false_alarms.py --finished-only (the "Finished:" line's
                     binaries phrase aside: it was written by hand)
  docs/benchmarks.md scripts/forward_table.py (its machine and commit lines from the benchmark's data)
  docs/bench/sample_loops.md
                     scripts/sample_loops_table.py (from docs/bench/sample_loops/)
  docs/bench/memory.md
                     scripts/memory_table.py (from docs/bench/memory/)
  docs/bench/scaling.md
                     scripts/scaling_table.py (from docs/bench/scaling/)
  docs/wsum.md, docs/hardness.md (and their data)
                     scripts/wsum.py --reuse, scripts/hardness.py --reuse

docs/facts/*.json (the numbers each page prints, with their runs) are compared too.
docs/learner.md and docs/stages12.md are written by hand.

  tests/scripts/regenerate_pages.py --tool build/release/mhalearn [--keep DIR]
Exit 0 when every page matches, 1 otherwise (the differences are printed).
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STUB = """#!/bin/sh
for a in "$@"; do case "$a" in --help|--version) exec "{tool}" "$@";; esac; done
echo "$0 $*" >> "{calls}"
exit 99
"""
TARGETS_COMMAND = ["--timed", "d16_k2_m4_scale3_seed1", "d64_k2_m2_scale6_seed1",
                   "d16_k2_m5_scale3_seed1", "--sample-study", "--final-rounds-study", "--auto-final-study", "--floor-study",
                   "--lean-grid-study", "16,2,3", "16,4,2", "16,3,2", "32,2,2", "16,2,4", "8,2,2", "64,2,2", "--reuse"]
TARGETS_READ_ONLY = "docs/targets_reuse_only.md"
BUILT_FROM = "`mhalearn` built at 5a91196 (its code unchanged at c6b70f8), `mhalearn_faulty` at c6b70f8"
BENCH_COMMAND = ("build/release/mhalearn_bench --benchmark_format=console --benchmark_out=docs/bench/forward.json "
                 "--benchmark_out_format=json --benchmark_display_aggregates_only=true "
                 "--benchmark_filter=^BM_(FastForward|ReferenceForward|GemmPeak) --benchmark_min_time=0.5 "
                 "--benchmark_repetitions=3")


def tracked(folder):
    out = subprocess.run(["git", "ls-files", "-z", folder], cwd=ROOT, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.split("\0") if p]


def copy_tree(sandbox):
    for path in tracked("docs") + tracked("scripts"):
        src, dst = os.path.join(ROOT, path), os.path.join(sandbox, path)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)


def stub_tools(sandbox, tool, calls):
    folder = os.path.join(sandbox, "build", "release")
    os.makedirs(folder)
    for name in ("mhalearn", "mhalearn_faulty", "mhalearn_bench"):
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(STUB.format(tool=os.path.abspath(tool), calls=calls))
        os.chmod(path, 0o755)


def has_numpy():
    return subprocess.run([sys.executable, "-c", "import numpy"], capture_output=True).returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True, help="the real mhalearn (only for --help, sample and forward)")
    ap.add_argument("--keep", help="regenerate in this folder (made, or emptied) and leave it")
    args = ap.parse_args()
    tool = os.path.abspath(args.tool)
    sandbox = args.keep or tempfile.mkdtemp(prefix="mhalearn-pages-")
    if args.keep:
        shutil.rmtree(sandbox, ignore_errors=True)
        os.makedirs(sandbox)
    calls = os.path.join(sandbox, "stub_calls.log")
    problems = []
    try:
        copy_tree(sandbox)
        stub_tools(sandbox, tool, calls)
        # results.py writes its tables' data again: what it does not write is not compared.
        data = os.path.join(sandbox, "docs", "results")
        for name in os.listdir(data):
            if name.endswith(".tsv"):
                os.remove(os.path.join(data, name))
        py = [sys.executable]
        t = "build/release/mhalearn"

        def regenerate(what, argv, stdout=None):
            out = subprocess.run(py + argv, cwd=sandbox, capture_output=True, text=True)
            if out.returncode != 0:
                problems.append(f"{what}: exit {out.returncode}: {out.stderr.strip()[-2000:]}")
            elif stdout:
                with open(os.path.join(sandbox, stdout), "w") as f:
                    f.write(out.stdout)

        regenerate("diagnose.py", ["scripts/diagnose.py", "--tool", t, "--grid", "--corner", "--existing"])
        regenerate("targets.py", ["scripts/targets.py", "--tool", t] + TARGETS_COMMAND)
        # Without the study options, --reuse alone must read every committed run of the studies.
        regenerate("targets.py --reuse", ["scripts/targets.py", "--tool", t, "--reuse",
                                          "--out", TARGETS_READ_ONLY])
        regenerate("net_table.py", ["scripts/net_table.py", "docs/bench/net"], stdout="docs/bench/net.md")
        numpy = has_numpy()
        if numpy:  # the real tool: --page-only samples the test inputs and runs `forward` (no learn)
            regenerate("noise.py", ["scripts/noise.py", "--tool", tool, "--page-only"])
        regenerate("theorem_shape.py", ["scripts/theorem_shape.py", "--tool", t, "--only", "page"])
        regenerate("results.py", ["scripts/results.py", "--reuse", "--command", "scripts/results.sh --reuse"])
        regenerate("false_alarms.py", ["scripts/false_alarms.py", "--tool", t, "--faulty", "build/release/mhalearn_faulty",
                                       "--threads", "2", "--finished-only", "--built-from", BUILT_FROM])
        regenerate("forward_table.py", ["scripts/forward_table.py", "docs/bench/forward.json", "--torch",
                                        "docs/bench/forward_vs_torch.json", "--command", "scripts/bench-forward.sh",
                                        "--bench-command", BENCH_COMMAND, "--out", "docs/benchmarks.md"])
        regenerate("sample_loops_table.py", ["scripts/sample_loops_table.py", "docs/bench/sample_loops"])
        regenerate("memory_table.py", ["scripts/memory_table.py", "docs/bench/memory"])
        regenerate("scaling_table.py", ["scripts/scaling_table.py", "docs/bench/scaling"])
        regenerate("wsum.py", ["scripts/wsum.py", "--tool", t, "--reuse"])
        regenerate("hardness.py", ["scripts/hardness.py", "--tool", t, "--reuse"])
        if os.path.exists(calls):
            problems.append("a regeneration tried to make a run:\n  " + open(calls).read().replace("\n", "\n  "))

        stamp = re.compile(r"; started |page written on ")
        checks = [("docs/diagnosis.md", None), ("docs/diagnosis/summary.json", None), ("docs/targets.md", None),
                  ("docs/bench/net.md", None), ("docs/bench/sample_loops.md", None), ("docs/bench/memory.md", None),
                  ("docs/bench/scaling.md", None), ("docs/wsum.md", None), ("docs/hardness.md", None),
                  ("docs/data/wsum_stable_rank.tsv", None), ("docs/data/hardness_study.tsv", None),
                  ("docs/theorem_shape.md", None), ("docs/results.md", lambda line: not stamp.search(line)),
                  ("docs/verify/false_alarms.md", lambda line: not line.startswith("Finished: ")),
                  ("docs/benchmarks.md", None),
                  ("docs/targets.md", lambda line: not line.startswith("python3 scripts/targets.py"), TARGETS_READ_ONLY)]
        # Every page's facts (docs/facts/, tests/docs/cross_page.py) are written again with the page.
        facts = os.path.join(ROOT, "docs", "facts")
        committed_facts = sorted(n for n in os.listdir(facts) if n.endswith(".json")) if os.path.isdir(facts) else []
        checks += [(f"docs/facts/{name}", None) for name in committed_facts
                   if name != "noise.json" or numpy]
        committed_tsv = sorted(n for n in os.listdir(os.path.join(ROOT, "docs/results")) if n.endswith(".tsv"))
        checks += [(f"docs/results/{name}", None) for name in committed_tsv if os.path.exists(os.path.join(data, name))]
        for name in sorted(set(os.listdir(data)) - set(committed_tsv)):
            if name.endswith(".tsv"):
                problems.append(f"docs/results/{name}: written by results.py, not committed")
        left = [n for n in committed_tsv if not os.path.exists(os.path.join(data, n))]
        if numpy:
            checks += [("docs/noise.md", None)] + [(f"docs/data/noise_{n}.tsv", None)
                                                   for n in ("errors", "float32", "sqrt_n")]
        for path, keep, *regenerated in checks:  # regenerated: where it was written, when not at path
            with open(os.path.join(ROOT, path)) as f:
                committed = f.read().splitlines(keepends=True)
            written = os.path.join(sandbox, *(regenerated or [path]))
            if not os.path.exists(written):
                problems.append(f"{path}: not written again")
                print(f"DIFF   {path}")
                continue
            with open(written) as f:
                made = f.read().splitlines(keepends=True)
            if keep:
                committed, made = [x for x in committed if keep(x)], [x for x in made if keep(x)]
            label = f"{path} against {regenerated[0]}" if regenerated else path
            if committed == made:
                print(f"same   {label}")
            else:
                diff = "".join(difflib.unified_diff(committed, made, path + " (committed)", path + " (regenerated)", n=1))
                problems.append(f"{label} differs:\n{diff[:4000]}")
                print(f"DIFF   {label}")
        if left:
            print(f"not written by results.py (left by an earlier version): {', '.join(left)}")
        if not numpy:
            print(f"skipped docs/noise.md and docs/data/noise_*.tsv: no numpy for {sys.executable}")
    finally:
        if not args.keep:
            shutil.rmtree(sandbox, ignore_errors=True)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
