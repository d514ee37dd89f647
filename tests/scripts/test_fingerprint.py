#!/usr/bin/env python3
"""cmake/fingerprint.py: what makes another learner and what does not.

On a copy of src/: a comment or blank line added keeps the fingerprint; a changed
constant, a changed string literal that looks like a comment, and a changed build
setting each make another one. Exit 0 when all hold.
"""
import os
import shutil
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
sys.path.insert(0, os.path.join(ROOT, "cmake"))
import fingerprint  # noqa: E402

SETTINGS = "arithmetic reproducible | compiler GNU 12.2.0"
FILE = "src/numeric/softmax.hpp"


def edited(root, edit):
    path = os.path.join(root, FILE)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(edit(text))
    return fingerprint.fingerprint(root, SETTINGS)


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as root:
        shutil.copytree(os.path.join(ROOT, "src"), os.path.join(root, "src"))
        base = fingerprint.fingerprint(root, SETTINGS)
        cases = [
            ("a line comment added", lambda t: "// a new comment\n" + t, True),
            ("a block comment and blank lines added", lambda t: t.replace("#pragma once", "/* why */\n\n#pragma once", 1), True),
            ("a string literal with // inside", lambda t: t + '\ninline const char* kProbe = "// not a comment";\n', False),
            ("a constant changed", lambda t: t + "\ninline constexpr int kProbe = 2;\n", False),
        ]
        for what, edit, same in cases:
            shutil.copy(os.path.join(ROOT, FILE), os.path.join(root, FILE))
            fp = edited(root, edit)
            ok = (fp == base) == same
            print(("ok   " if ok else "FAIL ") + f"{what}: {'same' if fp == base else 'another'} fingerprint")
            failures += not ok
        shutil.copy(os.path.join(ROOT, FILE), os.path.join(root, FILE))
        other = fingerprint.fingerprint(root, SETTINGS.replace("12.2.0", "12.3.0"))
        print(("ok   " if other != base else "FAIL ") + "another compiler version: another fingerprint")
        failures += other == base
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
