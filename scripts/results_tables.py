"""One table, one command: `scripts/results.sh --table NAME [--into DIR] [--rows PREFIX ...]`.

Each table and figure of docs/results.md has a NAME (TABLES below). The command

  1. prints the table's expected time: the wall seconds of the committed runs it would
     make, from their logs (the last line, `exit status S after T s`) or, where a log
     has none (runs from before the runner), the wall time results.py wrote into the
     report (`_wall`, else the report's own `seconds`);
  2. makes those runs again, alone, into DIR (a new or empty folder outside docs/,
     default a new temporary one; with --reuse, a folder an earlier --table left is
     read back): no committed run is read, deleted or overwritten;
  3. writes the table (DIR/NAME.md) or the figure's data (DIR/*.tsv), and compares it
     with the page's: the table's rows cell by cell, aside from the columns that time
     something or hold a run on a wall-clock budget (named in the output, and here as
     `aside`) and from the learner column (which names the build that made each run:
     the page's runs' and these differ unless this build is theirs); a figure's data
     file by file. Exit 0 when they agree, 1 otherwise.

--rows PREFIX ... (regimes only) makes and compares only the rows whose first cell starts
with a prefix: the test command re-makes the regimes table's small-budget rows so.
"""
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PAGE = os.path.join(ROOT, "docs", "results.md")
TIMED = "it times something"
BUDGET = "its runs stop on a wall-clock budget (another run's time)"


class Table:
    """A table (make returns Markdown holding it, the `index`-th table there) or a figure (files: the
    data files it is drawn from, under the results folder) of the page, the sections whose runs it needs,
    and the columns a comparison leaves aside ({header: why})."""

    def __init__(self, where, sections, make, aside=None, occurrence=0, index=0, files=None, shapes=None):
        self.where, self.sections, self.make = where, sections, make
        self.aside, self.occurrence, self.index = aside or {}, occurrence, index
        self.files, self.shapes = files, shapes


def _glance(r, got):
    import results_page
    return results_page.glance(dict(budget_variant=r.budget_variant, runs_dir=r.RUNS, learners=r.LEARNERS,
                                    variant_labels={v: r.variant_label(v) for v in r.variants},
                                    fact=lambda *a: None, facts=r.side_by_side_summary(got["sbs"])[1]))


def _convergence(r, got):
    return r.results_convergence.outputs(got["convergence"], r.fmt, r.fmt_int, r.table, r.write_tsv, r.gnuplot,
                                         r.LEARNERS, lambda *a: None)[0]


C16, C32 = [(16, 2, 2, 6)], [(32, 2, 2, 6)]
TABLES = {
    "glance": Table("Per configuration: accuracy, samples, time, machine", ("sbs", "throughput"), _glance,
                    {"wall s (median; min–max)": TIMED, "machine (threads used of available)": "the machine"}),
    "sbs-summary": Table("§1, Summary", ("sbs",), lambda r, got: r.side_by_side_summary(got["sbs"])[0],
                         {"Adam, equal time": BUDGET, "random-polish": BUDGET}),
    "sbs-runs": Table("§1, Every run", ("sbs",), lambda r, got: r.side_by_side_tables(got["sbs"]),
                      {"time (s)": TIMED, "Adam, equal time (samples)": BUDGET,
                       "random-polish, equal samples and time (starts)": BUDGET}),
    "sbs-figures": Table("§1, the figures error vs samples and error vs time", ("sbs",),
                         lambda r, got: r.side_by_side_figures(got["sbs"]), files="fig_"),
    "phase": Table("§2, Phase diagram (the rates)", ("phase",), lambda r, got: r.phase_outputs(*got["phase"])[0],
                   {"random-polish": BUDGET, "random-polish, per start: recovered / run to the end (median s)": BUDGET}),
    "phase-runs": Table("§2, every run of the phase diagram", ("phase",),
                        lambda r, got: r.phase_outputs(*got["phase"])[4],
                        {"random-polish": BUDGET, "random-polish starts": BUDGET}),
    "phase-figure": Table("§2, the phase diagram's figure", ("phase",), lambda r, got: r.phase_outputs(*got["phase"]),
                          files="phase_"),
    "regimes": Table("§2, Other regimes", ("regimes",), lambda r, got: r.regimes_table(got["regimes"])),
    "scaling": Table("§3, Scaling", ("scaling",), lambda r, got: r.scaling_outputs(*got["scaling"])[0],
                     {"paper: s": TIMED, "Adam: s to 1e−3": TIMED}),
    "scaling-figure": Table("§3, the scaling figure", ("scaling",), lambda r, got: r.scaling_outputs(*got["scaling"]),
                            files="scaling"),
    "throughput-ratio": Table("§4, Fast vs reference paths", ("throughput",),
                              lambda r, got: r.throughput_tables(got["throughput"])[0],
                              {"fast (s)": TIMED, "reference (s)": TIMED, "reference / fast": TIMED}),
    "forward": Table("§4, Forward pass against the peak", ("throughput",),
                     lambda r, got: r.throughput_tables(got["throughput"])[1],
                     {"examples/s": TIMED, "effective GFLOP/s": TIMED, "of 1-core GEMM peak": TIMED}),
    "convergence-16": Table("§5, (16,2,2) at every budget", ("convergence",), _convergence, {"wall s": TIMED},
                            shapes=C16),
    "convergence-16-lemmas": Table("§5, (16,2,2): each stage's lemma", ("convergence",), _convergence, index=1,
                                   shapes=C16),
    "convergence-32": Table("§5, (32,2,2) at every budget", ("convergence",), _convergence, {"wall s": TIMED},
                            occurrence=1, shapes=C32),
    "convergence-32-lemmas": Table("§5, (32,2,2): each stage's lemma", ("convergence",), _convergence, index=1,
                                   occurrence=1, shapes=C32),
    "convergence-figure": Table("§5, the figure", ("convergence",), _convergence, files="convergence_"),
}


# --------------------------------------------------------------------------- Markdown tables


def split_row(line):
    return [c.strip() for c in line.strip()[1:-1].split("|")]


def tables_in(text):
    """[(header cells, [row cells])] of every Markdown table in the text, in order."""
    out, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            out.append((split_row(block[0]), [split_row(x) for x in block[2:]]))
            block = []
    return out


def page_table(header, occurrence):
    """The page's `occurrence`-th table with this header, or None."""
    with open(PAGE) as f:
        found = [t for t in tables_in(f.read()) if t[0] == header]
    return found[occurrence] if len(found) > occurrence else None


def compare_tables(made, page, aside, rows_wanted):
    """Differences between a re-made table and the page's (lists of lines), the aside and learner columns left out."""
    header, rows = made
    keep = [i for i, h in enumerate(header) if h not in aside and h != "learner"]
    pick = lambda row: [row[i] if i < len(row) else "" for i in keep]
    page_rows = {row[0]: row for row in page[1]}
    problems = []
    if not rows_wanted and len(rows) != len(page[1]):
        problems.append(f"{len(rows)} rows here, {len(page[1])} on the page")
    for n, row in enumerate(rows):
        theirs = page_rows.get(row[0]) if rows_wanted else (page[1][n] if n < len(page[1]) else None)
        if theirs is None:
            problems.append(f"row {row[0]!r}: not on the page")
        elif pick(row) != pick(theirs):
            problems.append(f"row {row[0]!r}:\n    page: {' | '.join(pick(theirs))}\n    here: {' | '.join(pick(row))}")
    return problems


def learner_cells(table):
    header, rows = table
    if "learner" not in header:
        return set()
    i = header.index("learner")
    return {row[i] for row in rows if i < len(row)}


# --------------------------------------------------------------------------- the command


def estimate(r, args, t):
    """(seconds, runs, runs without a committed time) of the runs the table makes, read from the committed runs."""
    import contextlib
    import io
    r.ESTIMATE, reuse = {}, args.reuse
    args.reuse = True
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the sections' progress lines
            r.collect(t.sections, t.shapes)
        times = dict(r.ESTIMATE)
    finally:
        r.ESTIMATE, args.reuse = None, reuse
    known = {n: s for n, s in times.items() if s is not None}
    longest = max(known, key=known.get) if known else None
    return sum(known.values()), len(times), sorted(n for n, s in times.items() if s is None), \
        (longest, known[longest]) if longest else None


def duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200 else \
        f"{seconds / 3600:.1f} h"


def expected(name, t, seconds, runs, unknown, longest):
    return (f"{name} ({t.where}): {runs} runs, expected {duration(seconds)} on 2 cores (the committed runs' wall "
            f"times; the longest {longest[0]}, {duration(longest[1])})" +
            (f"; no committed time for {', '.join(unknown)}" if unknown else ""))


def listing(r, args):
    """--table list: every table and figure with its command and expected time (docs/cite.md's list)."""
    for name, t in TABLES.items():
        seconds, runs, unknown, longest = estimate(r, args, t)
        print(f"| {t.where} | `scripts/results.sh --table {name}` | {duration(seconds)} | {runs}; the longest "
              f"`{longest[0]}`, {duration(longest[1])}" + (f"; {', '.join(unknown)}: no committed time" if unknown else "")
              + " |")
    return 0


def fresh_folder(args, name):
    """The folder the runs go to: refused inside docs/ (the committed runs) or when it holds files (unless --reuse)."""
    into = os.path.abspath(args.into) if args.into else tempfile.mkdtemp(prefix=f"mhalearn-table-{name}-")
    docs = os.path.join(ROOT, "docs")
    if os.path.commonpath([into, docs]) == docs:
        sys.exit(f"--into {args.into}: inside docs/, where the committed runs are; give a folder outside it")
    if os.path.isdir(into) and os.listdir(into) and not args.reuse:
        sys.exit(f"--into {args.into}: not empty (add --reuse to read back the runs an earlier --table made there)")
    os.makedirs(os.path.join(into, "runs"), exist_ok=True)
    os.makedirs(os.path.join(into, "figures"), exist_ok=True)
    return into


def compare_files(prefix, into):
    """Each data file of a figure against the committed one (docs/results/PREFIX*.tsv)."""
    made = sorted(n for n in os.listdir(into) if n.startswith(prefix) and n.endswith(".tsv"))
    problems = []
    for name in made:
        committed = os.path.join(ROOT, "docs", "results", name)
        if not os.path.exists(committed):
            problems.append(f"{name}: not committed")
            continue
        with open(committed) as a, open(os.path.join(into, name)) as b:
            if a.read() != b.read():
                problems.append(f"{name}: differs")
    return made, problems


def command(r, args):
    """--table NAME: the expected time, the runs into a fresh folder, the table, the comparison; exit status."""
    if args.table == "list":
        return listing(r, args)
    name, t = args.table, TABLES[args.table]
    print(expected(name, t, *estimate(r, args, t)), flush=True)
    into = fresh_folder(args, name)
    r.DATA, r.RUNS, r.FIGS, r.INTO = into, os.path.join(into, "runs"), os.path.join(into, "figures"), into
    print(f"runs into {into}", flush=True)
    got = r.collect(t.sections, t.shapes)
    r.LEARNERS = r.page_learners(got)
    made = t.make(r, got)
    if t.files:
        files, problems = compare_files(t.files, into)
        print(f"{name}: the figure's data {', '.join(files)} in {into}; against docs/results/: "
              + ("the same bytes" if not problems else "DIFFERENT: " + "; ".join(problems))
              + " (where its runs time something or stop on a wall-clock budget, it depends on the machine)")
        return 1 if problems else 0
    table_text = "\n".join(line for line in made.splitlines())
    with open(os.path.join(into, name + ".md"), "w") as f:
        f.write(table_text + "\n")
    mine = tables_in(table_text)[t.index]
    theirs = page_table(mine[0], t.occurrence)
    if theirs is None:
        print(f"{name}: the page has no table with this header:\n  | {' | '.join(mine[0])} |")
        return 1
    problems = compare_tables(mine, theirs, t.aside, args.rows)
    aside = "; ".join(f"{h} ({why})" for h, why in t.aside.items()) or "none"
    print(f"{name}: written to {os.path.join(into, name + '.md')}; compared with docs/results.md's, columns aside: "
          f"{aside}; learner: the page's rows {', '.join(sorted(learner_cells(theirs)))}, these "
          f"{', '.join(sorted(learner_cells(mine)))}")
    print("the same as the page" if not problems else "DIFFERENT from the page:\n  " + "\n  ".join(problems))
    return 1 if problems else 0
