#!/usr/bin/env python3
"""learn's options are defined once, in src/cli/learn_settings.hpp's table; this
checks the surfaces made from it against the table as the Python module reads it
(mhalearn._core.learn_option_table()):

- `mhalearn learn --help` lists every row's flag with the row's default and help,
  and no learn option that is not in the table (besides the input and output
  options: the instance, --x, --y, --seed, --m, --report, --output, --quiet);
- docs/options.md is the page rendered from the table (`--write` regenerates it),
  followed by the options of every other subcommand as its `--help` lists them
  (their one definition is their CLI11 registration; python/tests/test_options.py
  checks that Python's functions take the same names with the same defaults).

Python's keywords and help() are checked by python/tests/test_options.py, the
report's options record by the same file's side-by-side runs.

    python3 tests/docs/options_table.py --tool build/release/mhalearn --python build/release/python [--write]
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "options.md")
NOT_IN_TABLE = {"--help", "--x", "--y", "--seed", "--m", "--report", "--output", "--quiet"}
# The other subcommands, in the order of `mhalearn --help`, with their Python function.
OTHERS = [("generate", "generate"), ("check", "check"), ("sample", "sample"), ("forward", "forward"),
          ("import", "import_attention"), ("verify", "verify"), ("stage1", "stage1"), ("sculpt", "sculpt"),
          ("hard", "hard"), ("study-wsum", "study_wsum"), ("demo", None)]


# CLI11's spec of an option: TYPE[:in LO..HI | :{a,b}][=default], " ..." for a list, then its Needs/Excludes.
SPEC = re.compile(r"^(?P<spec>(?P<main>\S+(?: [^\s=]*\.\.\S+)?)(?: \.\.\.)?(?: (?:Needs|Excludes): \S+)*)(?:\s+(?P<help>.*))?$")
ANNOTATION = re.compile(r"( \.\.\.)?( (Needs|Excludes): \S+)*$")


def split_spec(rest, help_below):
    """(type and range, default or None, help) of what follows a flag:
    " INT:in 1..20=5 Needs: --x  help" -> ("INT:in 1..20", "5", "help"). The help is on
    the next line (`help_below`: the whole line is the spec, a default may have spaces),
    or after two spaces, or after one when the spec fills its column."""
    body = (rest[1:] if rest.startswith(" ") else rest).replace(" REQUIRED", "", 1)
    if rest.startswith("  ") or not rest:
        return "", None, rest.strip()
    if help_below:
        main, help_text = ANNOTATION.sub("", body.strip()), ""
    elif "  " in body:
        spec, _, help_text = body.partition("  ")
        main = ANNOTATION.sub("", spec)
    else:
        m = SPEC.match(body)
        main, help_text = m.group("main"), m.group("help") or ""
    kind_range, has_default, default = main.partition("=")
    return kind_range, default if has_default else None, help_text.strip()


FLAG = re.compile(r"^  (?:-\w,)?(--[\w-]+)(.*)$")


def option_lines(text):
    """(flag, what follows it, the help on the next line or "") of each option line of a --help text."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = FLAG.match(line)
        if m:
            below = lines[i + 1] if i + 1 < len(lines) else ""
            help_below = below.startswith(" " * 10) and not FLAG.match(below)
            yield m.group(1), m.group(2), below.strip() if help_below else None


def parse_help(text):
    """{flag: (default or None, help)} from CLI11's option list: "  --flag SPEC[=default]  help",
    the help on the next line when the flag and its spec are long."""
    options = {}
    for flag, rest, below in option_lines(text):
        _, default, help_text = split_spec(rest, below is not None)
        options[flag] = (default, below if below is not None else help_text)
    return options


def parse_spec(text):
    """{flag: (type and range, whether it is required)} from a --help text."""
    return {flag: (split_spec(rest, below is not None)[0], " REQUIRED" in rest) for flag, rest, below in option_lines(text)}


def help_problems(help_text, rows):
    """Each difference between `learn --help` and the table, one line each."""
    problems, listed = [], parse_help(help_text)
    for r in rows:
        if r["flag"] not in listed:
            problems.append(f"{r['flag']}: in the table, not in learn --help")
            continue
        default, text = listed[r["flag"]]
        want = None if r["type"] == "flag" else r["default"]
        if default != want:
            problems.append(f"{r['flag']}: --help's default {default!r}, the table's {want!r}")
        if text != r["help"]:
            problems.append(f"{r['flag']}: --help says {text!r}, the table {r['help']!r}")
    table = {r["flag"] for r in rows}
    for flag in sorted(set(listed) - table - NOT_IN_TABLE):
        problems.append(f"{flag}: in learn --help, not in the table (src/cli/learn_settings.cpp)")
    return problems


def spec_cells(spec):
    """("integer", "1..20") from CLI11's spec "INT:in 1..20" ("TEXT:{a,b}": ("text", "a, b"))."""
    kind, _, rest = spec.partition(":")
    kind = {"INT": "integer", "UINT": "integer", "FLOAT": "number", "TEXT": "text"}.get(kind, kind.lower() or "flag")
    rest = rest.strip()
    if rest.startswith("in "):
        rest = rest[3:]
    return kind, rest.strip("{}").replace(",", ", ") if rest.startswith("{") else rest


def render_other(name, function, help_text):
    """The section of one other subcommand: its options as its --help lists them."""
    listed, specs = parse_help(help_text), parse_spec(help_text)
    python = (f"Python: `mhalearn.{function}`, each option an argument of the same name (`-` as `_`) but those "
              "that name a file to write or the printing." if function else "No Python function.")
    lines = ["", f"## `mhalearn {name}`", "", python, "", "| flag | type | range | default | what it sets |", "|---|---|---|---|---|"]
    for flag, (default, text) in listed.items():
        if flag == "--help":
            continue
        spec, required = specs.get(flag, ("", False))
        kind, rng = spec_cells(spec)
        cells = [f"`{flag}`", kind, rng.replace("|", ", "), "required" if required else default or "", text.replace("|", "\\|")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render(rows, others=()):
    """The page: learn's table, then each of `others` ((name, Python function, --help text))."""
    lines = [
        "# The options of `mhalearn learn` and `mhalearn.learn`",
        "",
        "Generated from the one table that defines them (`src/cli/learn_settings.cpp`) by",
        "`python3 tests/docs/options_table.py --tool build/release/mhalearn --python build/release/python --write`;",
        "the test command checks that this page, `mhalearn learn --help`, Python's `help(mhalearn.learn)` and",
        "the report's options record agree with the table. A Python keyword is the flag without dashes, `-` as",
        "`_`; `--no-polish` and `--no-reference` are `polish=False` and `reference=False`. An option given",
        "that the chosen `--method` does not read is refused. Besides these, `learn` takes its samples from an",
        "instance file (with `--seed`) or `--x`/`--y` (with `--m`), and writes `--report` and `-o`.",
        "",
        "| flag | Python keyword | methods | type | default | range | what it sets |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        keyword = f"`{r['keyword']}`" + (" (negated)" if r["negated"] else "")
        cells = [f"`{r['flag']}`", keyword, r["methods"], r["type"], r["default"], r["range"].replace("|", ", "),
                 r["help"].replace("|", "\\|")]
        lines.append("| " + " | ".join(cells) + " |")
    if others:
        lines += ["", "# The options of the other subcommands", "",
                  "Each as its `--help` lists it (generated by the same command, and checked by it)."]
    for name, function, help_text in others:
        lines += render_other(name, function, help_text)
    return "\n".join(lines) + "\n"


def page_problems(page_text, rows, others=()):
    if page_text == render(rows, others):
        return []
    return ["docs/options.md differs from the table or a subcommand's --help: regenerate it with --write"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--python", required=True, help="the build's python directory (holds mhalearn/)")
    ap.add_argument("--write", action="store_true", help="regenerate docs/options.md")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.python))
    from mhalearn import _core
    rows = _core.learn_option_table()

    def help_of(name):
        return subprocess.run([args.tool, name, "--help"], capture_output=True, text=True, check=True).stdout

    others = [(name, function, help_of(name)) for name, function in OTHERS]
    if args.write:
        with open(PAGE, "w") as f:
            f.write(render(rows, others))
    help_text = help_of("learn")
    page = open(PAGE).read() if os.path.exists(PAGE) else ""
    problems = help_problems(help_text, rows) + page_problems(page, rows, others)
    for p in problems:
        print("PROBLEM", p)
    print(f"options table: {len(rows)} options, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
