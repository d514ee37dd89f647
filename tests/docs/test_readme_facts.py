#!/usr/bin/env python3
"""Tests of the tester for readme_facts.py: in a small git tree of its own, a
README whose facts hold passes, and each kind of wrong fact is reported."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme_facts  # noqa: E402
from doc_checks import case, tree as make_tree  # noqa: E402

# The fixture spells src/ and docs/ as SRC/ and DOCS/ (real() puts them back), so that
# citations.py, which checks every path written out in the repository, does not take the
# fixture's files for the project's.


def real(text):
    return text.replace("SRC/", "src/").replace("DOCS/", "docs/")


LAYOUT = """## Layout

```
SRC/alpha/   one folder
SRC/beta/    another
SRC/commands/ the subcommands
docs/        the pages
fuzz/        harnesses
tests/       tests
```
"""
READING = """## Where to read on

- [DOCS/one.md](DOCS/one.md) — a page
- [DOCS/bench/two.md](DOCS/bench/two.md) — another
"""
COUNTS = "The docs hold 2 pages, fuzz/ 1 harness, and the bad inputs 2+ cases.\n"
README = "# r\n\n" + COUNTS + "\n" + READING + "\n" + LAYOUT
TREE = {
    "SRC/alpha/a.cpp": "",
    "SRC/beta/b.cpp": "",
    "SRC/commands/declarations.hpp": "Command demo_command();\nCommand learn_command();\n",
    "SRC/top.hpp": "",
    "DOCS/one.md": "# one\n",
    "DOCS/bench/two.md": "# two\n",
    "DOCS/bench/runs/NOTES.md": "notes beside runs: not a page\n",
    "fuzz/fuzz_npy.cpp": "",
    "tests/cli/bad_inputs.txt": "# comment\ncase one\ncase two\ncase three\n",
}
BROKEN = [
    ("a src/ folder left out of the layout", LAYOUT, LAYOUT.replace("SRC/beta/    another\n", ""),
     "SRC/beta/ is not named"),
    ("a top-level folder left out of the layout", LAYOUT, LAYOUT.replace("fuzz/        harnesses\n", ""),
     "fuzz/ is not named"),
    ("a layout folder that does not exist", LAYOUT, LAYOUT.replace("tests/ ", "tests/ \nSRC/gone/     gone\n"),
     "SRC/gone/ is named but not in the repository"),
    ("a page of docs/ not linked", READING, READING.replace("- [DOCS/bench/two.md](DOCS/bench/two.md) — another\n", ""),
     "DOCS/bench/two.md is not linked"),
    ("a link to a page that is not there", READING, READING + "- [DOCS/old.md](DOCS/old.md) — removed\n",
     "DOCS/old.md, which is not a page"),
    ("a wrong count of pages", COUNTS, COUNTS.replace("2 pages", "3 pages"), "but the repository has 2"),
    ("a wrong count of harnesses", COUNTS, COUNTS.replace("1 harness", "4 harnesses"), "but the repository has 1"),
    ("an at-least count that is not reached", COUNTS, COUNTS.replace("2+ cases", "150+ cases"),
     "but the repository has 3"),
    ("a count nothing checks", COUNTS, COUNTS + "The test command runs 300 unit tests.\n", "a count nothing checks"),
    ("no layout section", LAYOUT, "", 'no "## Layout" section'),
]


def tree(readme):
    return make_tree({real(rel): real(text) for rel, text in dict(TREE, **{"README.md": readme}).items()}, git=True)


def main():
    failures = []
    clean = readme_facts.check(tree(README))
    if not case("a README whose facts hold", not clean, str(clean)):
        failures.append("clean")
    for label, part, wrong, needle in BROKEN:
        assert part in README, label
        problems = readme_facts.check(tree(README.replace(part, wrong)))
        if not case(label, any(real(needle) in p for p in problems), str(problems)):
            failures.append(label)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
