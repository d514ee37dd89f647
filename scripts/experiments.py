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
  Learners(reports), learner_label  which build made each run: a page's learner column
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


def driver_arguments(doc, default_tool="build/release/mhalearn"):
    """The command line every experiment driver shares: --tool (the mhalearn to run) and --reuse
    (read back the finished runs); a driver adds its own options to the returned parser."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--tool", default=default_tool, help="the mhalearn binary to run")
    ap.add_argument("--reuse", action="store_true", help="read back the finished runs instead of running them again")
    ap.add_argument("--remake-other-learners", action="store_true",
                    help="with --reuse: make again every run whose report another build made (another fingerprint "
                         "than the tool's), so that the page's learner rows share the tool's")
    return ap


def require_learner(args):
    """After a driver parsed driver_arguments(): with --remake-other-learners, reuse only runs of the tool's
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
    binary and what it says of itself (`--version`: the commit its build was configured at)."""
    try:
        version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:  # no such binary: nothing will be made with it
        version = ""
    return {"commit": git_commit(root), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "machine": cpu_model(), "binary": os.path.relpath(tool, root) if tool.startswith(root + os.sep) else tool,
            "version": version}


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


def learner_label(report):
    """Who made a report, as a page names it: the fingerprint's first 8 hex digits, or (a report
    from before fingerprints) `commit C`; `–` without a report."""
    fp = report_fingerprint(report)
    if fp:
        return fp[:8]
    commit = report_commit(report)
    return f"commit {commit}" if commit else DASH


def tool_fingerprint(tool):
    """The fingerprint `tool --version` prints, or None (no such tool, or a build from before fingerprints)."""
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r"fingerprint ([0-9a-f]{16})", out)
    return m.group(1) if m else None


class Learners:
    """The learners behind one page's runs. The page's learner is the label most of its runs carry
    (ties: the first in sorted order), so that a page regenerated from its committed runs does not
    depend on the build that regenerates it; `cell(report)` names a row's learner and marks one
    that is not the page's with a dagger, `note()` says what the marks mean."""

    MARK = "†"

    def __init__(self, reports):
        labels = [learner_label(r) for r in reports if r]
        counts = {}
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        self.page = min(counts, key=lambda label: (-counts[label], label)) if counts else None
        self.others = sorted(set(labels) - {self.page})

    def cell(self, report):
        label = learner_label(report)
        return label if label == self.page or label == DASH else f"{label} {self.MARK}"

    def note(self):
        """One line for under the page's tables."""
        if self.page is None:
            return "No learner run on this page."
        page = f"`{self.page}`" if not self.page.startswith("commit") else self.page
        line = (f"Learner: every row names the build that made it (column \"learner\": the first 8 hex digits of its "
                f"fingerprint, `mhalearn --version`; reports older than fingerprints: their commit). "
                f"This page's learner is {page}")
        if not self.others:
            return line + ", and every row is its."
        return line + (f"; rows marked {self.MARK} were made by another learner ("
                       + ", ".join(f"`{o}`" if not o.startswith("commit") else o for o in self.others)
                       + ") and describe it, not this page's.")


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
    if REQUIRE_LEARNER and spec.report is not None and report_fingerprint(prev.report) != REQUIRE_LEARNER:
        return None
    return prev


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
