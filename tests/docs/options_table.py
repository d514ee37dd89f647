#!/usr/bin/env python3
"""learn's options are defined once, in src/cli/learn_settings.hpp's table; this
checks the surfaces made from it against the table as the Python module reads it
(mhalearn._core.learn_option_table()):

- `mhalearn learn --help` lists every row's flag with the row's default and help,
  and no learn option that is not in the table (besides the input and output
  options: the instance, --x, --y, --seed, --m, --report, --output, --quiet);
- docs/options.md is the page rendered from the table (`--write` regenerates it).

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


def parse_help(text):
    """{flag: (default or None, help)} from CLI11's option list: "  --flag SPEC[=default]  help",
    the help on the next line when the flag and its spec are long."""
    options, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^  (?:-\w,)?(--[\w-]+)(.*)$", line)
        if m:
            rest = m.group(2)
            if rest.startswith("  ") or not rest:
                spec, help_text = "", rest
            else:
                spec, _, help_text = rest[1:].partition("  ")
            default = spec.split("=", 1)[1] if "=" in spec else None
            options[m.group(1)] = [default, help_text.strip()]
            current = m.group(1)
        elif current and line.startswith(" " * 10) and not options[current][1]:
            options[current][1] = line.strip()
    return {k: tuple(v) for k, v in options.items()}


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


def render(rows):
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
    return "\n".join(lines) + "\n"


def page_problems(page_text, rows):
    if page_text == render(rows):
        return []
    return ["docs/options.md differs from the table: regenerate it with --write"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--python", required=True, help="the build's python directory (holds mhalearn/)")
    ap.add_argument("--write", action="store_true", help="regenerate docs/options.md")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.python))
    from mhalearn import _core
    rows = _core.learn_option_table()
    if args.write:
        with open(PAGE, "w") as f:
            f.write(render(rows))
    help_text = subprocess.run([args.tool, "learn", "--help"], capture_output=True, text=True, check=True).stdout
    page = open(PAGE).read() if os.path.exists(PAGE) else ""
    problems = help_problems(help_text, rows) + page_problems(page, rows)
    for p in problems:
        print("PROBLEM", p)
    print(f"options table: {len(rows)} options, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
