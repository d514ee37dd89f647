#!/usr/bin/env python3
"""Test of the tester for tests/docs/lemma_index.py: broken copies of MATH.md's
index (and of a property file) must each be reported. Exit 0 when every broken
copy is caught and the committed index passes."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lemma_index  # noqa: E402

ROOT = lemma_index.ROOT
TEXT = lemma_index.read(lemma_index.MATH)

# (what is broken, old text, new text, a phrase the report must contain)
BREAKS = [
    ("a row dropped", "| 3.3.0 | the minimum-norm point", "| — | the minimum-norm point",
     "3.3.0: stated in MATH.md but not in the index"),
    ("a row for a lemma stated nowhere", "| 5.2 | instance files", "| 5.9 | instance files",
     "5.9: in the index but stated nowhere"),
    ("a proof file moved", "[margin_stability.md](proofs/margin_stability.md) | [margin_stability.cpp]",
     "[margin_stability.md](proofs/margin_stabilty.md) | [margin_stability.cpp]", "missing proof file"),
    ("a property file unnamed", "[net_two_paths.cpp](property_tests/net_two_paths.cpp)", "—",
     "net_two_paths.cpp: named in no row"),
    ("a named test that does not exist", "— (`tests/learn/test_noise.cpp`)", "— (`tests/learn/test_nose.cpp`)",
     "missing test file tests/learn/test_nose.cpp"),
]


def main():
    failures = 0
    _, problems = lemma_index.check_index(TEXT, ROOT)
    if problems:
        print("FAIL the committed index: " + "; ".join(problems))
        failures += 1
    for what, old, new, phrase in BREAKS:
        if old not in TEXT:
            print(f"FAIL {what}: MATH.md no longer contains {old!r}")
            failures += 1
            continue
        _, problems = lemma_index.check_index(TEXT.replace(old, new, 1), ROOT)
        matching = [p for p in problems if phrase in p]
        print(("ok   " if matching else "FAIL ") + f"{what}: " + (matching[0] if matching else f"not reported: {problems}"))
        failures += not matching
    failures += not untested_property_reported()
    return 1 if failures else 0


def untested_property_reported():
    """A copy of the tree whose net property lost its test of the tester."""
    with tempfile.TemporaryDirectory() as root:
        for folder in ("property_tests", "proofs", "tests"):
            shutil.copytree(os.path.join(ROOT, folder), os.path.join(root, folder))
        path = os.path.join(root, "property_tests", "net_two_paths.cpp")
        code = lemma_index.read(path)
        with open(path, "w") as f:
            f.write(code.replace("property_rejects(", "property("))
        _, problems = lemma_index.check_index(TEXT, root)
    matching = [p for p in problems if "net_two_paths.cpp has no test of the tester" in p]
    print(("ok   " if matching else "FAIL ") + "a property without a test of the tester: " +
          (matching[0] if matching else f"not reported: {problems}"))
    return bool(matching)


if __name__ == "__main__":
    sys.exit(main())
