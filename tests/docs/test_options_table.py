#!/usr/bin/env python3
"""Tests of the tester for options_table.py: a --help that matches the table
passes, and each kind of drift is reported (a flag missing, a default or help
changed, a flag the table lacks, a stale page)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options_table  # noqa: E402

ROWS = [
    {"flag": "--rounds", "keyword": "rounds", "negated": False, "methods": "paper", "type": "integer",
     "default": "5", "range": "1..20", "help": "most rounds"},
    {"flag": "--no-polish", "keyword": "polish", "negated": True, "methods": "paper", "type": "flag",
     "default": "false", "range": "", "help": "stop before polishing"},
    {"flag": "--init", "keyword": "init", "negated": False, "methods": "adam", "type": "text",
     "default": "random", "range": "random|symmetric", "help": "adam: starting point with a rather long help "
     "text that CLI11 puts on its own line"},
]
HELP = """Options:
  -h,--help                   Print this help message and exit
  --seed UINT:in 0..2^64-1=1  sample seed of the oracle
  --rounds INT:in 1..20=5     most rounds
  --no-polish                 stop before polishing
  --init TEXT:{random,symmetric}=random
                              adam: starting point with a rather long help text that CLI11 puts on its own line
  --report TEXT               JSON report to write
"""


def expect(name, problems, fragment):
    ok = any(fragment in p for p in problems) if fragment else not problems
    print(("ok  " if ok else "FAIL"), name, problems)
    return ok


def main():
    results = [expect("matching help", options_table.help_problems(HELP, ROWS), None)]
    results.append(expect("missing flag", options_table.help_problems(HELP.replace("  --no-polish", "  --no-polishing"), ROWS),
                          "--no-polish: in the table, not in learn --help"))
    results.append(expect("default changed", options_table.help_problems(HELP.replace("1..20=5", "1..20=6"), ROWS),
                          "--help's default '6', the table's '5'"))
    results.append(expect("help changed", options_table.help_problems(HELP.replace("most rounds", "most of the rounds"), ROWS),
                          "--rounds: --help says"))
    results.append(expect("help on its own line changed",
                          options_table.help_problems(HELP.replace("on its own line", "on a line"), ROWS), "--init: --help says"))
    results.append(expect("flag not in table", options_table.help_problems(HELP + "  --extra INT=1  more\n", ROWS),
                          "--extra: in learn --help, not in the table"))
    page = options_table.render(ROWS)
    results.append(expect("page matches", options_table.page_problems(page, ROWS), None))
    results.append(expect("stale page", options_table.page_problems(page.replace("most rounds", "rounds"), ROWS),
                          "docs/options.md differs"))
    other = [("stage1", "stage1", "Options:\n  --samples INT:in 1..2^40=1000000\n                              samples to use\n")]
    with_other = options_table.render(ROWS, other)
    results.append(expect("page with another subcommand matches", options_table.page_problems(with_other, ROWS, other), None))
    results.append(expect("another subcommand's default changed",
                          options_table.page_problems(with_other, ROWS, [(n, f, h.replace("=1000000", "=2000000")) for n, f, h in other]),
                          "docs/options.md differs"))
    row = "| `--samples` | integer | 1..2^40 | 1000000 | samples to use |"
    results.append(expect("another subcommand's row rendered", [] if row in with_other.splitlines() else ["row missing"], None))
    print(f"options-table tester: {sum(results)} of {len(results)} cases as expected")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
