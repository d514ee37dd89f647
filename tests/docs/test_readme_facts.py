#!/usr/bin/env python3
"""Tests of the tester for readme_facts.py: in a small git tree of its own, a
README whose facts hold passes, and each kind of wrong fact is reported."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme_facts  # noqa: E402

LAYOUT = """## Layout

```
src/alpha/   one folder
src/beta/    another
src/cli/     the tool
docs/        the pages
fuzz/        harnesses
tests/       tests
```
"""
READING = """## Where to read on

- [docs/one.md](docs/one.md) — a page
- [docs/bench/two.md](docs/bench/two.md) — another
"""
COUNTS = "The docs hold 2 pages, fuzz/ 1 harness, and the bad inputs 2+ cases.\n"
README = "# r\n\n" + COUNTS + "\n" + READING + "\n" + LAYOUT
TREE = {
    "src/alpha/a.cpp": "",
    "src/beta/b.cpp": "",
    "src/cli/main.cpp": 'runners["demo"] = 1;\nrunners["learn"] = 2;\n',
    "src/top.hpp": "",
    "docs/one.md": "# one\n",
    "docs/bench/two.md": "# two\n",
    "docs/bench/runs/NOTES.md": "notes beside runs: not a page\n",
    "fuzz/fuzz_npy.cpp": "",
    "tests/cli/bad_inputs.txt": "# comment\ncase one\ncase two\ncase three\n",
}
BROKEN = [
    ("a src/ folder left out of the layout", LAYOUT, LAYOUT.replace("src/beta/    another\n", ""),
     "src/beta/ is not named"),
    ("a top-level folder left out of the layout", LAYOUT, LAYOUT.replace("fuzz/        harnesses\n", ""),
     "fuzz/ is not named"),
    ("a layout folder that does not exist", LAYOUT, LAYOUT.replace("tests/ ", "tests/ \nsrc/gone/     gone\n"),
     "src/gone/ is named but not in the repository"),
    ("a page of docs/ not linked", READING, READING.replace("- [docs/bench/two.md](docs/bench/two.md) — another\n", ""),
     "docs/bench/two.md is not linked"),
    ("a link to a page that is not there", READING, READING + "- [docs/old.md](docs/old.md) — removed\n",
     "docs/old.md, which is not a page"),
    ("a wrong count of pages", COUNTS, COUNTS.replace("2 pages", "3 pages"), "but the repository has 2"),
    ("a wrong count of harnesses", COUNTS, COUNTS.replace("1 harness", "4 harnesses"), "but the repository has 1"),
    ("an at-least count that is not reached", COUNTS, COUNTS.replace("2+ cases", "150+ cases"),
     "but the repository has 3"),
    ("a count nothing checks", COUNTS, COUNTS + "The test command runs 300 unit tests.\n", "a count nothing checks"),
    ("no layout section", LAYOUT, "", 'no "## Layout" section'),
]


def tree(readme):
    d = tempfile.mkdtemp()
    for rel, text in dict(TREE, **{"README.md": readme}).items():
        os.makedirs(os.path.dirname(os.path.join(d, rel)) or d, exist_ok=True)
        with open(os.path.join(d, rel), "w") as f:
            f.write(text)
    subprocess.run(["git", "init", "-q"], cwd=d, check=True)
    subprocess.run(["git", "add", "-A"], cwd=d, check=True)
    return d


def main():
    failures = []
    clean = readme_facts.check(tree(README))
    print(("ok   " if not clean else "FAIL ") + "a README whose facts hold" + (f": {clean}" if clean else ""))
    if clean:
        failures.append("clean")
    for label, part, wrong, needle in BROKEN:
        assert part in README, label
        problems = readme_facts.check(tree(README.replace(part, wrong)))
        ok = any(needle in p for p in problems)
        print(("ok   " if ok else "FAIL ") + label + (f": {problems}" if not ok else ""))
        if not ok:
            failures.append(label)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
