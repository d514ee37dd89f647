#!/usr/bin/env python3
"""Re-runs committed runs of docs/results/runs/ and compares the report bytes.

Called by `scripts/results.sh --check [all | NAME ...]`. Each run's log starts
with the command that made it (`$ build/release/mhalearn learn ...`); the
command is re-run with its report redirected to a temporary folder, and both
reports are compared after the normalisation of the golden-output test
(tests/golden/golden.py: provenance and wall-clock keys dropped, and the keys
scripts/results.py adds: `_exit`, `_wall`). When the bytes differ, it lists
which provenance `build` facts differ between the two reports. Runs whose command has a
wall-clock budget (`--max-seconds`) depend on the machine's speed by design
and are never checked.

  (no names)   the default subset: DEFAULT below, about a minute on 2 cores
  all          every run without a wall-clock budget (about 40 min on 2 cores for the
               page's runs before random-polish, learner variants and five phase-diagram
               seeds; about 1.6 h estimated with them)
  NAME ...     the named runs (file names without .log)
  --tool PATH  (first) run this mhalearn instead of the logged build/release/mhalearn
  --compare A B  compare two reports (e.g. one made on another machine with one
               committed here) the same way; when their bytes differ, also list
               the provenance `build` facts that differ (architecture, ISA level,
               flags, compiler, library versions, CPU and its features)
  --remake NAME ...  re-run the named runs and replace their committed report
               and log (what scripts/results.py writes), e.g. after a change
               of the build's arithmetic; the page is then regenerated with
               `scripts/results.sh --reuse`

Exit 0 when every checked report matches byte for byte, 1 otherwise.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
RUNS = os.path.join(ROOT, "docs/results/runs")
sys.path.insert(0, os.path.join(ROOT, "tests/golden"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import first_json_difference, normalise_json  # noqa: E402
from experiments import Run, execute  # noqa: E402

DEFAULT = ["sbs_paper_d16_k2_m2_scale3_seed1", "sbs_paper_d16_k2_m2_scale6_seed1",
           "sbs_adam_samples_d16_k2_m2_scale6_seed1", "phase_paper_scale12_coh0.5"]


def command_of(name):
    """The logged command as an argument list, or None when the run is not checkable."""
    log = os.path.join(RUNS, name + ".log")
    first = open(log).readline()
    if not first.startswith("$ ") or "--max-seconds" in first or "--report" not in first:
        return None
    return first[2:].split()


def comparable(report_path):
    r = json.load(open(report_path))
    r.pop("_exit", None)
    r.pop("_wall", None)
    return normalise_json(r)


def check(name, scratch, tool):
    argv = command_of(name)
    if argv is None:
        return None
    if tool:
        argv[0] = tool
    committed = os.path.join(ROOT, argv[argv.index("--report") + 1])
    fresh = os.path.join(scratch, name + ".report.json")
    argv[argv.index("--report") + 1] = fresh
    if "-o" in argv:
        argv[argv.index("-o") + 1] = os.path.join(scratch, name + ".learned.json")
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.path.exists(fresh):
        return f"{name}: the re-run wrote no report"
    problem = report_difference(committed, fresh)
    return None if problem is None else f"{name}: {problem}" + provenance_note(committed, fresh)


def flat(value, prefix):
    if isinstance(value, dict):
        return {k: v for key, sub in value.items() for k, v in flat(sub, f"{prefix}.{key}").items()}
    return {prefix: value}


# Build facts that never decide a result's bytes: where it was written, and how
# many threads the machine had (the results are the same for any thread count).
NOT_ARITHMETIC = ("build.threads_available",)


def build_differences(a, b):
    """The provenance `build` facts (architecture, ISA level, flags, compiler,
    library versions, CPU and its features) that differ between two reports."""
    fa = flat(json.load(open(a)).get("provenance", {}).get("build", {}), "build")
    fb = flat(json.load(open(b)).get("provenance", {}).get("build", {}), "build")
    return [f"{k}: {fa.get(k, '(absent)')!r} → {fb.get(k, '(absent)')!r}" for k in sorted(set(fa) | set(fb))
            if fa.get(k) != fb.get(k) and k not in NOT_ARITHMETIC]


def provenance_note(a, b):
    """What a difference of bytes could come from: the differing build facts, one a line."""
    diff = build_differences(a, b)
    return ("\n    provenance differs in: " + "\n      ".join([""] + diff)) if diff else \
        "\n    provenance: the same build facts (architecture, flags, compiler, libraries, CPU)"


def report_difference(committed, fresh):
    """None when two reports agree bit for bit once normalised, else the first difference.
    Compared as serialised text, not as values: 0.0 == -0.0 as values, and a double's
    shortest round-trip form differs whenever its bits do."""
    a, b = comparable(committed), comparable(fresh)
    if json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True):
        return None
    return first_json_difference(a, b) or "the sign of a zero differs"


def remake(name, tool):
    """Re-runs one run in place, as scripts/results.py's learn() does (scripts/experiments.py);
    the log keeps the documented command even when --tool runs another binary."""
    argv = command_of(name)
    if argv is None:
        sys.exit(f"remake: {name} has a wall-clock budget or no report; scripts/results.sh re-makes it")
    report = os.path.join(ROOT, argv[argv.index("--report") + 1])
    done = execute(Run(name, [tool or argv[0]] + argv[1:], RUNS, report=report, cwd=ROOT, shown=" ".join(argv)))
    if done.report is None:
        sys.exit(f"remake: {name}: exit {done.status}, no report (its log: {os.path.relpath(done.spec.log, ROOT)})")
    r = done.report
    r["_exit"], r["_wall"] = done.status, done.seconds
    with open(report, "w") as f:
        json.dump(r, f, indent=1)
    print(f"  {name}: re-made, exit {done.status}, {done.seconds:.1f} s", flush=True)


def main(args):
    tool = None
    if args[:1] == ["--tool"]:
        tool, args = os.path.abspath(args[1]), args[2:]
    if args[:1] == ["--compare"]:
        if len(args) != 3:
            sys.exit("usage: check_runs.py --compare REPORT_A REPORT_B")
        problem = report_difference(args[1], args[2])
        print("same bytes (provenance and timings aside)" if problem is None else
              "DIFFERENT: " + problem + provenance_note(args[1], args[2]))
        return 0 if problem is None else 1
    if args[:1] == ["--remake"]:
        for name in args[1:]:
            remake(name, tool)
        return 0
    if args == ["all"]:
        names = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(RUNS, "*.log")))
        names = [n for n in names if command_of(n) and os.path.exists(os.path.join(RUNS, n + ".report.json"))]
    else:
        names = args or DEFAULT
    failures, checked = [], 0
    with tempfile.TemporaryDirectory(prefix="mhalearn-check-") as scratch:
        for name in names:
            if not os.path.exists(os.path.join(RUNS, name + ".log")):
                sys.exit(f"check: no run named {name} in docs/results/runs")
            if command_of(name) is None:
                print(f"  {name}: skipped (wall-clock budget: not reproducible by design)")
                continue
            problem = check(name, scratch, tool)
            checked += 1
            print(f"  {name}: " + ("same bytes" if problem is None else "DIFFERENT"), flush=True)
            if problem:
                failures.append(problem)
    print(f"check: {checked - len(failures)} of {checked} re-run reports match the committed ones byte for byte")
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
