#!/usr/bin/env python3
"""The experiment scripts' one runner: configurations in, runs out, pages written.

A run is one command (usually `mhalearn learn ... --report R`) with a name and a
runs directory. On disk, beside the other runs of its script:

  NAME.log          first line `$ COMMAND` (environment variables the run sets
                    written before it), then the command's stdout and stderr,
                    then `exit status S after T s` (or `killed after T s` when
                    it outlived its timeout) once it has ended;
  NAME.report.json  the command's report (the run's result), when it wrote one;
  (or) its stdout   for a command whose result is what it prints (`stdout=PATH`:
                    written whole when it exits 0, removed otherwise; the log then
                    holds its stderr).

This is the layout scripts/diagnose.py, targets.py, results.py and
false_alarms.py always wrote, so the committed run directories under docs/ are
read as they are (their logs have no last line; a run's report says it ended).

Reuse: with reuse on, a run whose report exists and whose logged command is this
run's command is read back, not run again; any other run (no report, a changed
command, a report the script refuses through `keep`) is made again, its old
report removed first. Commands are compared token by token, the tool's path and
`./` prefixes aside (`--tool build/release/mhalearn` and `--tool
/abs/build/release/mhalearn` name the same run), and the values of the options
a run declares as varying (`vary`: a wall-clock budget measured from another run).

  Run(name, argv, runs, ...)        one configuration's run (see the class)
  run(spec, reuse=False)            -> Result: made now, or read back when finished
  Learners(reports, labels), learner_label, provenance_label, recorded_label
                                    which build made each run: a page's learner column and its note
  Facts(page), run_identity(...)    the numbers a page prints, with their runs: docs/facts/<page>.json
  adam_rule_run, adam_reached       Adam's samples to 1e-3: the one rule every page uses
  reusable(spec)                    -> the finished Result run() would read back, or None
  run_all(specs, reuse, jobs=N)     -> [Result] in the order given, N at a time
  generate(tool, path, d, k, m, scale, seed)   an instance, unless it exists
  fmt, fmt_int, error, load         number formatters, a report's max(Θ, W) error
  table(header, rows, align)        a Markdown table's lines (BLANK: a cell written `| |`)
  write_page(path, text)            written whole or not at all

Standard library only; importable from any script of scripts/ (they put their
own folder first on sys.path).
"""
import argparse
import datetime
import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

DASH = "–"  # an absent value in every table


# --------------------------------------------------------------------------- numbers


def fmt(x, digits=1, missing=DASH):
    """x in scientific notation with `digits` decimals; `missing` for None, NaN and ±inf."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return missing
    return f"{x:.{digits}e}"


def fmt_int(x, missing=DASH):
    """A count: with thousands separators below 10⁵, in scientific notation (3 digits) above."""
    return missing if x is None else f"{x:.2e}" if x >= 1e5 else f"{x:,}"


def block_error(block):
    """max(Θ, W) relative error of an error block ({theta_max_rel, w_max_rel, ...}), or None."""
    return max(block["theta_max_rel"], block["w_max_rel"]) if block else None


def error(report, key="errors"):
    """max(Θ, W) relative error of a report's error block (errors, errors_before_polish, ...),
    or None when the report or the block is absent."""
    return block_error(report.get(key) if report else None)


def load(path):
    """A JSON file, or None when it does not exist."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


# --------------------------------------------------------------------------- pages


class _Blank:
    def __str__(self):
        return ""


BLANK = _Blank()  # a cell written `| |` (an empty string is written `|  |`)


def row(cells):
    """One Markdown table row: `| a | b |`."""
    return "|" + "|".join(" " if c is BLANK else f" {c} " for c in cells) + "|"


def table(header, rows=(), align=None):
    """A Markdown table's lines: the header, the separator, the rows (lists of cells).
    align: one letter per column, l (---), r (---:) or c (:---:); default all l."""
    align = align or "l" * len(header)
    if len(align) != len(header):
        raise ValueError(f"table: {len(header)} columns, {len(align)} alignments")
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    return [row(header), "|" + "|".join(marks[a] for a in align) + "|"] + [row(r) for r in rows]


def write_page(path, text):
    """Writes the file whole or not at all (a temporary file renamed over it)."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def page_main(doc, page, default_out):
    """The command line of a script that renders a page from a directory of runs:
    `script DIRECTORY [--out PAGE]`, `page(DIRECTORY)` written whole to PAGE."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory")
    ap.add_argument("--out", default=default_out)
    a = ap.parse_args()
    write_page(a.out, page(a.directory))


class _DriverParser(argparse.ArgumentParser):
    """A parser whose parse_args() also applies --remake-other-learners (require_learner)."""

    def parse_args(self, *args, **kwargs):
        parsed = super().parse_args(*args, **kwargs)
        require_learner(parsed)
        return parsed


def driver_arguments(doc, default_tool="build/release/mhalearn"):
    """The command line every experiment driver shares: --tool (the mhalearn to run), --reuse
    (read back the finished runs) and --remake-other-learners; a driver adds its own options to the
    returned parser, whose parse_args() applies the last (require_learner)."""
    ap = _DriverParser(description=doc.splitlines()[0])
    ap.add_argument("--tool", default=default_tool, help="the mhalearn binary to run")
    ap.add_argument("--reuse", action="store_true", help="read back the finished runs instead of running them again")
    add_learner_option(ap)
    return ap


def add_learner_option(parser):
    """--remake-other-learners, for a driver with its own parser (then call require_learner(args))."""
    parser.add_argument("--remake-other-learners", action="store_true",
                        help="with --reuse: make again every run whose report another build made (another fingerprint "
                             "than the tool's), so that the page's learner rows share the tool's")


def require_learner(args):
    """After a driver parsed driver_arguments() (or add_learner_option()): with --remake-other-learners, reuse only runs of the tool's
    fingerprint (REQUIRE_LEARNER). Refuses a tool that prints no fingerprint."""
    global REQUIRE_LEARNER
    if getattr(args, "remake_other_learners", False):
        REQUIRE_LEARNER = tool_fingerprint(args.tool)
        if not REQUIRE_LEARNER:
            sys.exit(f"--remake-other-learners: {args.tool} --version prints no fingerprint")


def draw(script, cwd):
    """A gnuplot script (its own `set terminal` and `set output`), run in `cwd`."""
    subprocess.run(["gnuplot"], input=script, text=True, check=True, cwd=cwd)


def relative_link(path, page):
    """path as the page at `page` links to it."""
    return os.path.relpath(path, os.path.dirname(page) or ".")


def cpu_model(default="unknown"):
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return default


# --------------------------------------------------------------------------- provenance
# For commands whose output records no provenance of its own (a table, a text report): what
# made each run, in RUNS/provenance.json, written when the run is made.


def git_commit(root):
    """The short hash of HEAD in `root`, marked when src/ or CMakeLists.txt (what the tool is built from) differ from it."""
    git = ["git", "-C", root]
    commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if not commit:  # not a git checkout
        return "unknown"
    dirty = subprocess.run(git + ["diff", "--quiet", "HEAD", "--", "src", "CMakeLists.txt"]).returncode != 0
    return commit + (" (with uncommitted changes to src/)" if dirty else "")


def provenance_now(tool, root):
    """What a run made now records: the commit checked out, the date (UTC), the machine, the
    binary and what it says of itself (`--version`: the commit its build was configured at, and its
    fingerprint, also kept apart as `fingerprint`)."""
    try:
        version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:  # no such binary: nothing will be made with it
        version = ""
    entry = {"commit": git_commit(root), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
             "machine": cpu_model(), "binary": os.path.relpath(tool, root) if tool.startswith(root + os.sep) else tool,
             "version": version}
    fingerprint = _FINGERPRINT.search(version)
    if fingerprint:  # the build's fingerprint (a page's learner label), when it prints one
        entry["fingerprint"] = fingerprint.group(1)
    return entry


def record(runs, results, provenance):
    """Adds `provenance` to RUNS/provenance.json (a runs directory's record of what made its runs) for each run made now (a run read back keeps its entry)."""
    made = [r for r in results if not r.reused]
    if not made:
        return
    path = os.path.join(runs, "provenance.json")
    entries = load(path) or {}
    for r in made:
        entries[r.name] = provenance
    write_page(path, json.dumps(entries, indent=1, sort_keys=True) + "\n")


def made_on(runs, names):
    """'MACHINE, commit C, DATE' of the named runs, from RUNS/provenance.json (several: each listed)."""
    entries = load(os.path.join(runs, "provenance.json")) or {}
    rows = [entries.get(n, {}) for n in names]

    def values(key):
        return ", ".join(sorted({r.get(key, "unknown") for r in rows}))

    dates = sorted({r.get("date", "unknown") for r in rows})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return f"{values('machine')}, commit {values('commit')}, {when}"


# --------------------------------------------------------------------------- which learner made a run
# Every report records the fingerprint of the build that made it (provenance.build.fingerprint:
# the sources without comments and the settings that reach the arithmetic; cmake/fingerprint.py).
# A page names, per row, the learner its numbers came from, and marks rows of another learner
# than the page's; reports older than fingerprints are named by their commit.


def report_fingerprint(report):
    """The fingerprint of the build that wrote `report`, or None (no report, or one from before fingerprints)."""
    build = ((report or {}).get("provenance") or {}).get("build") or {}
    return build.get("fingerprint")


def report_commit(report):
    """The short commit the report's build was configured at, or None."""
    commit = ((report or {}).get("provenance") or {}).get("git_commit")
    return commit[:7] if commit and commit != "unknown" else None


NOT_RECORDED = "not recorded"  # a run whose report and runs directory record no build


def learner_label(report):
    """Who made a report, as a page names it: the fingerprint's first 8 hex digits, or (a report
    from before fingerprints) `commit C`; `–` without a report."""
    fp = report_fingerprint(report)
    if fp:
        return fp[:8]
    commit = report_commit(report)
    return f"commit {commit}" if commit else DASH


_FINGERPRINT = re.compile(r"fingerprint ([0-9a-f]{16})")


def provenance_label(entry):
    """Who made a run without a report, from its runs directory's record (an entry of provenance.json,
    or a bench script's run.json): the fingerprint its binary printed (`--version`), else the commit the
    entry names (the checkout the run was made from, as made_on() prints it); NOT_RECORDED without either."""
    entry = entry or {}
    fp = entry.get("fingerprint") or (_FINGERPRINT.search(entry.get("version", "")) or [None, None])[1]
    if fp:
        return fp[:8]
    commit = (entry.get("commit") or "").split(" ")[0]
    return f"commit {commit[:7]}" if commit and commit != "unknown" else NOT_RECORDED


def recorded_label(runs, name):
    """The learner label of run `name` of a runs directory, from its provenance.json (provenance_label)."""
    return provenance_label((load(os.path.join(runs, "provenance.json")) or {}).get(name))


def tool_fingerprint(tool):
    """The fingerprint `tool --version` prints, or None (no such tool, or a build from before fingerprints)."""
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = _FINGERPRINT.search(out)
    return m.group(1) if m else None


def _quoted(label):
    return label if label.startswith("commit") or label in (DASH, NOT_RECORDED) else f"`{label}`"


class Learners:
    """The learners behind one page's runs. The page's learner is the label most of its runs carry
    (ties: the first in sorted order), so that a page regenerated from its committed runs does not
    depend on the build that regenerates it; `cell(report)` names a row's learner and marks one
    that is not the page's with a dagger, `note()` says what the marks mean.

    reports  the reports of the page's runs (learner_label)
    labels   labels of runs without a report (provenance_label, recorded_label)"""

    MARK = "†"

    def __init__(self, reports=(), labels=()):
        labels = [learner_label(r) for r in reports if r] + list(labels)
        counts = {}
        for label in labels:
            if label not in (DASH, NOT_RECORDED):
                counts[label] = counts.get(label, 0) + 1
        self.page = min(counts, key=lambda label: (-counts[label], label)) if counts else None
        self.others = sorted(set(counts) - {self.page})

    def label_cell(self, label):
        """A label as a row shows it: marked when it is another learner than the page's."""
        return label if label in (self.page, DASH, NOT_RECORDED) else f"{label} {self.MARK}"

    def cell(self, report):
        return self.label_cell(learner_label(report))

    def cells(self, reports=(), labels=()):
        """One cell for a row made of several runs: each learner once, in the order first met, `; ` between."""
        seen = []
        for label in [learner_label(r) for r in reports if r] + list(labels):
            if label not in seen:
                seen.append(label)
        return "; ".join(self.label_cell(label) for label in seen) if seen else DASH

    def note(self, shown=None):
        """One line for under a table. shown: the labels its rows carry (default: every label of the page),
        so that the line names only the other learners that table has."""
        if self.page is None:
            return "No run on this page records the build that made it." if shown else "No learner run on this page."
        others = self.others if shown is None else sorted(set(shown) & set(self.others))
        line = (f"Learner: every row names the build that made it (column \"learner\": the first 8 hex digits of its "
                f"fingerprint, `mhalearn --version`; runs older than fingerprints: their commit). "
                f"This page's learner is {_quoted(self.page)}")
        if shown is not None and NOT_RECORDED in shown:
            line += f" (\"{NOT_RECORDED}\": the run's build was not recorded)"
        if not others:
            return line + (", and every row is its." if shown is None or not set(shown) - {self.page, DASH, NOT_RECORDED}
                           else ".")
        return line + (f"; rows marked {self.MARK} were made by another learner ("
                       + ", ".join(_quoted(o) for o in others) + ") and describe it, not this page's.")


# --------------------------------------------------------------------------- facts: the numbers a page prints
# A page writer records each number it prints from one run as a fact: the run (its identity), the
# quantity and the text printed. docs/facts/<page>.json holds a page's facts; tests/docs/cross_page.py
# fails when two facts of the same run and quantity disagree, or when a fact's text is not on its page.

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FACTS = os.path.join(ROOT, "docs", "facts")

# Each quantity, and the options of a run that do not reach it: two runs whose options differ only in
# these are one run as far as the quantity goes (threads: results do not depend on them, only wall
# times; polishing and the final fit come after the paper's stages).
_OUTPUTS = ("instance", "x", "y", "report", "output", "quiet", "checkpoint")
QUANTITIES = {
    "error before polishing": ("threads", "polish", "final_fit_samples"),
    "Θ error before polishing": ("threads", "polish", "final_fit_samples"),
    "W error before polishing": ("threads", "polish", "final_fit_samples"),
    "final error": ("threads",),
    "Θ final error": ("threads",),
    "W final error": ("threads",),
    "samples": ("threads",),
    "samples of the paper's stages": ("threads", "polish", "final_fit_samples"),
    "samples to 1e-3": ("threads", "polish", "final_fit_samples"),
    "Adam's samples to 1e-3": ("threads",),
    "wall seconds (report)": (),
    "wall seconds (/usr/bin/time)": (),
    "CPU seconds": (),
    "peak RSS MB": (),
}


def in_this_checkout(path, cwd=ROOT):
    """The file a run's recorded path names, read from this checkout: a relative path from `cwd`; an absolute
    one into another checkout of the repository (a worktree or clone that wrote a committed run, such as
    /work/main/docs/results/runs/X) from its `docs/` on here, when that file is here — so that a committed
    run names the same instance on every machine; any other path as it is."""
    if not os.path.isabs(path):
        return os.path.join(cwd, path)
    at = path.rfind("/docs/")
    if at >= 0:
        here = os.path.join(ROOT, path[at + 1:])
        if os.path.exists(here):
            return here
    return path


def instance_hash(path, cwd=ROOT):
    """The first 16 hex digits of the SHA-256 of an instance's content (its JSON without `provenance`, which
    names the commit and date that wrote it), so that two files of one layer hash alike; `path:P` for a file
    that is not an instance (a dataset's .npy, absent from git)."""
    import hashlib
    full = in_this_checkout(path, cwd)
    try:
        with open(full) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return "path:" + os.path.normpath(path)
    data.pop("provenance", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _option_text(v):
    return f"{v!r}" if isinstance(v, float) else (v if isinstance(v, str) else json.dumps(v))


def run_identity(report=None, command=None, label=None, cwd=ROOT):
    """What names a run on every page: {command, instance, learner}.
    With a report that records its options (provenance.options): `COMMAND key=value ...` over its options
    sorted, outputs and the instance aside; else the logged command from the tool on, output paths aside.
    instance: instance_hash of the file the run read. learner: learner_label(report), or `label`."""
    options = ((report or {}).get("provenance") or {}).get("options")
    if options is not None:
        name = (report.get("provenance") or {}).get("command", "learn")
        instance = options.get("instance") or options.get("x") or ""
        keys = sorted(k for k in options if k not in _OUTPUTS)
        text = " ".join([name] + [f"{k}={_option_text(options[k])}" for k in keys])
        return {"command": text, "instance": instance_hash(instance, cwd) if instance else "", "learner":
                label or learner_label(report)}
    tokens = (command or "").split()
    start = next((i for i, t in enumerate(tokens) if os.path.basename(t).startswith("mhalearn")), 0)
    kept, instance, skip = [os.path.basename(tokens[start])] if tokens else [], "", False
    for t in tokens[start + 1:]:
        if skip:
            skip = False
        elif t in ("--report", "-o", "--study-data", "--x", "--y", "--out"):
            skip = True
        elif not t.startswith("-") and t.endswith(".json") and not instance:
            instance = instance_hash(t, cwd)
        else:
            kept.append(t)
    return {"command": " ".join(kept), "instance": instance, "learner": label or NOT_RECORDED}


def run_key(run):
    """A short name of a run identity (the first 12 hex digits of the SHA-256 of its JSON)."""
    import hashlib
    return hashlib.sha256(json.dumps(run, sort_keys=True).encode()).hexdigest()[:12]


class Facts:
    """The facts of one page: `add(run, quantity, text, row)` for each number printed from one run
    (run: run_identity(); quantity: a key of QUANTITIES; text: as printed; row: the text of the row's
    first cell, which the page's line holding the number also holds), then `write()` to
    docs/facts/<the page's path under docs/, `/` as `_`>.json:
    {"page": PATH, "runs": {KEY: identity}, "facts": [[KEY, quantity, text, row], ...]}."""

    def __init__(self, page):
        self.page = os.path.relpath(os.path.abspath(page), ROOT)
        self.runs, self.facts = {}, []

    def add(self, run, quantity, text, row):
        if quantity not in QUANTITIES:
            raise ValueError(f"facts: unknown quantity {quantity!r}")
        if text is None or str(text) in ("", DASH):
            return
        key = run_key(run)
        self.runs[key] = run
        self.facts.append([key, quantity, str(text), str(row)])

    def path(self):
        """docs/facts/<page>.json for a page under docs/; beside the page (PAGE.facts.json) elsewhere."""
        name = os.path.relpath(os.path.join(ROOT, self.page), os.path.join(ROOT, "docs"))
        if name.startswith(".."):
            return os.path.splitext(os.path.join(ROOT, self.page))[0] + ".facts.json"
        return os.path.join(FACTS, os.path.splitext(name)[0].replace(os.sep, "_") + ".json")

    def write(self):
        path = self.path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = json.dumps({"page": self.page, "runs": self.runs}, indent=1, ensure_ascii=False, sort_keys=True)
        facts = ",\n".join("  " + json.dumps(f, ensure_ascii=False) for f in self.facts)
        write_page(path, text[:-2] + ',\n "facts": [\n' + facts + "\n ]\n}\n")


# --------------------------------------------------------------------------- Adam's samples to 1e-3: one rule
# Every page that gives Adam's samples to 1e-3 takes them from a run of this command, made once per
# instance in ADAM_RULE_RUNS (targets.md states the rule, the other pages link to it). The count depends
# on the horizon: the cosine schedule decays to 0 at --max-samples, and a run that reaches 1e-3 only as it
# anneals reaches it near its horizon; no time budget, so that the count does not depend on the machine.
ADAM_TARGET = "0.001"  # --stop-at-error: the first checkpoint whose max(Θ, W) error is at most this
ADAM_HORIZON = 20000000  # --max-samples: Adam's default horizon
ADAM_RULE_RUNS = "docs/targets"
ADAM_RULE_PAGE = "targets.md#adams-samples-to-1e3-one-rule"


def adam_rule_run(tool, instance, name, runs=ADAM_RULE_RUNS, cwd=None):
    """The rule's run of Adam on `instance` (a Run named NAME in `runs`, its report NAME.report.json)."""
    report = os.path.join(runs, name + ".report.json")
    argv = [tool, "learn", instance, "--method", "adam", "--seed", "1", "--threads", "2", "--stop-at-error",
            ADAM_TARGET, "--max-samples", str(ADAM_HORIZON), "--report", report]
    return Run(name, argv, runs, report=report, cwd=cwd)


def adam_reached(report):
    """(samples, seconds) at Adam's first checkpoint with max(Θ, W) error ≤ ADAM_TARGET, or None."""
    for c in (report or {}).get("trajectory", []):
        if "theta_max_rel" in c and max(c["theta_max_rel"], c["w_max_rel"]) <= float(ADAM_TARGET):
            return c["samples"], c["seconds"]
    return None


def tool_path(tool):
    """The tool as given, absolute when it is a path (for scripts that work from the repository's root)."""
    return os.path.abspath(tool) if os.sep in tool else tool


# --------------------------------------------------------------------------- runs


class Run:
    """One configuration's run.

    name     file names in `runs`: NAME.log, NAME.report.json
    argv     the command (the tool first, or a wrapper such as /usr/bin/time)
    runs     the runs directory
    report   where the command writes its report (default runs/NAME.report.json;
             the command must name it itself, e.g. `--report`); None: no report
    tool     the program whose path may differ between sittings (default argv[0])
    env      variables to set (shown before the command in the log) or, with
             value None, to remove from the environment
    timeout  seconds; a run that outlives it is killed and recorded so
    cwd      the working directory; arguments under it are logged relative to it
    shown    the command line to log instead of argv (e.g. the documented tool
             when another binary runs)
    stdout   a file for the command's standard output, when that is its result (a
             table, a JSON report printed with --json): written whole when the command
             exits 0, absent otherwise; the log then holds the command's stderr only
    keep     which finished runs to read back instead of running them again:
             a function of the Result (default: it has a report, or its stdout file
             when it has no report)
    vary     options whose values may differ between sittings without making the
             run another one (e.g. `--max-seconds` copied from another run's wall time)
    """

    def __init__(self, name, argv, runs, report="", tool=None, env=None, timeout=None, cwd=None, shown=None,
                 keep=None, vary=(), stdout=None):
        self.name, self.argv, self.runs = name, [str(a) for a in argv], runs
        self.report = os.path.join(runs, name + ".report.json") if report == "" else report
        self.stdout = stdout
        self.log = os.path.join(runs, name + ".log")
        self.tool = tool or self.argv[0]
        self.env = env or {}
        self.timeout, self.cwd, self.keep = timeout, cwd, keep or _has_result
        self._shown, self.vary = shown, tuple(vary)

    def command(self):
        """The log's first line, without its `$ `."""
        if self._shown is not None:
            return self._shown
        shown = [os.path.relpath(a, self.cwd) if self.cwd and a.startswith(self.cwd) else a for a in self.argv]
        prefix = [f"{k}={v}" for k, v in self.env.items() if v is not None]
        return " ".join(prefix + shown)

    def path(self, p):
        """A path of the run's as the process sees it."""
        return p if not self.cwd or os.path.isabs(p) else os.path.join(self.cwd, p)


class Result:
    """What one run gave: its logged command, exit status (an int, "killed", or None when
    its log does not say), wall seconds (None: unknown), report (None: none written),
    output (the text of its stdout file; None: none asked for or none written)
    and whether it was read back (reused) rather than made now."""

    def __init__(self, spec, command, status, seconds, report, reused, output=None):
        self.spec, self.command, self.status, self.seconds = spec, command, status, seconds
        self.report, self.reused, self.output = report, reused, output

    @property
    def name(self):
        return self.spec.name

    @property
    def failed(self):
        """Killed, a non-zero exit status, or no report from a command that should write one."""
        if self.status is not None and self.status != 0:
            return True
        if self.spec.stdout is not None and self.output is None:
            return True
        return self.spec.report is not None and self.report is None

    def __repr__(self):
        return f"Result({self.name!r}, status={self.status!r}, reused={self.reused})"


def _has_result(result):
    """The default `keep`: a run with a report, or (a command without one) with its stdout file."""
    if result.spec.report is not None:
        return result.report is not None
    return result.spec.stdout is not None and result.output is not None


def _read_text(path):
    if path is None or not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


_END = re.compile(r"^(?:exit status (-?\d+)|killed) after ([0-9.]+) s$")


def _tokens(command, tool, vary=()):
    """A command line's tokens for comparison: the tool's path, ./ prefixes and the values
    of the options in `vary` aside."""
    base = os.path.basename(tool)
    out = []
    for t in command.split():
        if out and out[-1] in vary:
            t = "*"
        elif "=" in t and t.split("=", 1)[0] in vary:
            t = t.split("=", 1)[0] + "=*"
        elif os.path.basename(t) == base and ("/" in t or t == base):
            t = base
        elif "/" in t and not t.startswith("-"):
            t = os.path.normpath(t)
        out.append(t)
    return out


def same_command(logged, command, tool, vary=()):
    """Whether a logged command line names the same run as `command` (see the module's docstring)."""
    return logged is not None and _tokens(logged, tool, vary) == _tokens(command, tool, vary)


def previous(spec):
    """The run as its runs directory holds it (a Result with reused=True), or None when it has no log."""
    log = spec.path(spec.log)
    if not os.path.exists(log):
        return None
    with open(log, errors="replace") as f:
        lines = f.read().splitlines()
    command = lines[0][2:] if lines and lines[0].startswith("$ ") else None
    status = seconds = None
    last = next((line for line in reversed(lines[1:]) if line.strip()), "")
    end = _END.match(last)
    if end:
        status = int(end.group(1)) if end.group(1) is not None else "killed"
        seconds = float(end.group(2))
    report = None
    if spec.report is not None and os.path.exists(spec.path(spec.report)):
        try:
            report = load(spec.path(spec.report))
        except ValueError:  # cut short while written
            report = None
    return Result(spec, command, status, seconds, report, reused=True,
                  output=_read_text(spec.stdout and spec.path(spec.stdout)))


def execute(spec):
    """Runs the command now: a fresh log (command first, end last), the old report removed first."""
    log, report = spec.path(spec.log), spec.report and spec.path(spec.report)
    stdout = spec.stdout and spec.path(spec.stdout)
    os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
    for old in (report, stdout):
        if old and os.path.exists(old):
            os.remove(old)
    env = dict(os.environ)
    for k, v in spec.env.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    command = spec.command()
    start = time.time()
    with open(log, "w") as f, open(stdout + ".tmp", "w") if stdout else f as out:
        f.write("$ " + command + "\n")
        f.flush()
        # Its own process group, so that a timeout or an interrupt ends a wrapped tool too
        # (/usr/bin/time, mpirun, nice), not only the wrapper.
        proc = subprocess.Popen(spec.argv, stdout=out, stderr=f if stdout else subprocess.STDOUT, env=env,
                                cwd=spec.cwd, start_new_session=True)
        try:
            status = proc.wait(timeout=spec.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = "killed"
        except BaseException:  # KeyboardInterrupt: the tool removes its temporary files on SIGTERM
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            if stdout:
                os.remove(stdout + ".tmp")
            raise
        seconds = time.time() - start
        f.write(f"\nkilled after {spec.timeout} s\n" if status == "killed" else
                f"\nexit status {status} after {seconds:.1f} s\n")
    if stdout:
        if status == 0:
            os.replace(stdout + ".tmp", stdout)
        else:
            os.remove(stdout + ".tmp")
    result = None
    if report and os.path.exists(report):
        try:
            result = load(report)
        except ValueError:
            result = None
    return Result(spec, command, status, seconds, result, reused=False, output=_read_text(stdout))


_print_lock = threading.Lock()


# A fingerprint: with it set (a driver's --remake-other-learners), a finished run whose report
# another build made is made again instead of read back.
REQUIRE_LEARNER = None


def reusable(spec):
    """The run's Result read back when it finished with this command (and `keep` accepts it, and,
    with REQUIRE_LEARNER set, its report was made by that learner), else None."""
    prev = previous(spec)
    if prev is None or not same_command(prev.command, spec.command(), spec.tool, spec.vary) or not spec.keep(prev):
        return None
    if REQUIRE_LEARNER and _fingerprint_of(spec, prev) != REQUIRE_LEARNER:
        return None
    return prev


def _fingerprint_of(spec, prev):
    """The fingerprint of the build that made a finished run: its report's, or (a run without a report)
    the one its runs directory's provenance.json recorded; None when neither records one."""
    if spec.report is not None:
        return report_fingerprint(prev.report)
    return recorded_fingerprint(spec.path(spec.runs), spec.name)


def recorded_fingerprint(runs, name):
    """The fingerprint a runs directory's provenance.json recorded for run `name`, or None."""
    entry = (load(os.path.join(runs, "provenance.json")) or {}).get(name) or {}
    return entry.get("fingerprint") or (_FINGERPRINT.search(entry.get("version", "")) or [None, None])[1]


def run(spec, reuse=False, quiet=False):
    """The run's Result: read back when `reuse` and it is reusable, else made now.
    Prints one line per run made to stderr unless quiet."""
    if reuse:
        prev = reusable(spec)
        if prev is not None:
            return prev
    result = execute(spec)
    if not quiet:
        with _print_lock:
            wall = f"{result.seconds:.1f} s"
            print(f"  {spec.name}: {'killed' if result.status == 'killed' else f'exit {result.status}'}, {wall}",
                  file=sys.stderr, flush=True)
    return result


def run_all(specs, reuse=False, jobs=1, quiet=False):
    """Every run's Result, in the order of `specs`, `jobs` runs at a time."""
    specs = list(specs)
    if jobs <= 1 or len(specs) <= 1:
        return [run(s, reuse, quiet) for s in specs]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda s: run(s, reuse, quiet), specs))


def parallel(function, items, jobs=1):
    """[function(item) for item in items], `jobs` at a time, in order (for drivers whose unit
    of work is a configuration with several dependent runs)."""
    items = list(items)
    if jobs <= 1 or len(items) <= 1:
        return [function(i) for i in items]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(function, items))


def generate(tool, path, d, k, m, scale, seed, extra=(), reuse=True, cwd=None):
    """`mhalearn generate --d D --k K --m M --scale B --seed S -o PATH` (plus extra), unless reuse
    and PATH exists; returns PATH. A failed generation raises with the tool's message."""
    if reuse and os.path.exists(path if not cwd or os.path.isabs(path) else os.path.join(cwd, path)):
        return path
    cmd = [tool, "generate", "--d", str(d), "--k", str(k), "--m", str(m), "--scale", str(scale), "--seed", str(seed),
           "-o", path] + [str(e) for e in extra]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()}")
    return path


if __name__ == "__main__":
    # `python3 scripts/experiments.py provenance TOOL [BINARY]`: provenance_now() as JSON on stdout (commit, date,
    # machine, the build's --version and fingerprint), for shell scripts whose outputs record none (a benchmark's
    # JSON); BINARY: the program that ran, when TOOL (`mhalearn`, for --version) is its build's other binary.
    if sys.argv[1:2] != ["provenance"] or len(sys.argv) not in (3, 4):
        sys.exit("usage: experiments.py provenance TOOL [BINARY]")
    made = provenance_now(os.path.abspath(sys.argv[2]), os.getcwd())
    if len(sys.argv) == 4:
        made["binary"] = sys.argv[3]
    print(json.dumps(made, indent=1, sort_keys=True))
