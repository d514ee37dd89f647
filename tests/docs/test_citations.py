#!/usr/bin/env python3
"""Tests of the tester for citations.py: in a small git tree of its own, a clean
set of citations passes and each kind of broken citation is reported."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import citations  # noqa: E402

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
    d = tempfile.mkdtemp()
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, rel)) or d, exist_ok=True)
        with open(os.path.join(d, rel), "w") as f:
            f.write(text)
    subprocess.run(["git", "init", "-q"], cwd=d, check=True)
    subprocess.run(["git", "add", "-A"], cwd=d, check=True)
    return d


def main():
    failures = []
    clean = citations.check(tree(CLEAN))
    if clean:
        failures.append(f"the clean tree reported {clean}")
    for label, rel, text, needle in BROKEN:
        files = dict(CLEAN)
        files[rel] = files.get(rel, "") + text
        problems = citations.check(tree(files))
        ok = any(needle in p for p in problems)
        print(("ok   " if ok else "FAIL ") + label + (f": {problems}" if not ok else ""))
        if not ok:
            failures.append(label)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
