#!/usr/bin/env python3
"""Tests of the tester for citations.py: in a small git tree of its own, a clean
set of citations passes and each kind of broken citation is reported."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import citations  # noqa: E402
from doc_checks import case  # noqa: E402

MATH = "# Spec\n\n## 1. The model\n\n### 1.2 Heads\n\n## 2. Conditions\n"
PROOF = "# A proof\n\n## The bound on two paths\n\n- **Tightness.** attained\n"
CLEAN = {
    "MATH.md": MATH,
    "proofs/p.md": PROOF,
    "src/a.cpp": '// MATH.md §1.2 and §2; proofs/p.md, "The bound on two paths"; src/a.cpp\n',
    "README.md": "[p](proofs/p.md#the-bound-on-two-paths) [s](MATH.md#1-the-model) "
                 "[t](https://example.org/x.md) proofs/p.md (\"Tightness\")\n",
}
BROKEN = [
    ("a link to a missing file", "README.md", "[x](proofs/missing.md)\n", "no such file"),
    ("a link to a missing anchor", "README.md", "[x](proofs/p.md#no-such-heading)\n", "no such section"),
    ("a missing MATH.md section", "src/b.cpp", "// MATH.md §7.1\n", "§7.1: no such section"),
    ("a missing path", "src/b.cpp", "// see src/stages/nothing.cpp\n", "src/stages/nothing.cpp: no such file"),
    ("a missing titled section", "src/b.cpp", '// proofs/p.md, "The bound on one path"\n', "no such section"),
]


def tree(files):
    from doc_checks import tree as make
    return make(files, git=True)


def main():
    failures = []
    clean = citations.check(tree(CLEAN))
    if clean:
        failures.append(f"the clean tree reported {clean}")
    for label, rel, text, needle in BROKEN:
        files = dict(CLEAN)
        files[rel] = files.get(rel, "") + text
        problems = citations.check(tree(files))
        if not case(label, any(needle in p for p in problems), str(problems)):
            failures.append(label)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
