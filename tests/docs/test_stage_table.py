#!/usr/bin/env python3
"""Test of the tester for tests/docs/stage_table.py: broken copies of
proofs/README.md's stage table must each be reported. Exit 0 when every broken
copy is caught and the committed table passes."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stage_table  # noqa: E402
from doc_checks import case  # noqa: E402

ROOT = stage_table.ROOT
TEXT = stage_table.read(stage_table.README)

# (what is broken, old text, new text, a phrase the report must contain)
BREAKS = [
    ("a function renamed", "`stage1_estimate_wsum`", "`stage1_estimate_wsum_typo`", "does not define"),
    ("a file moved", "(../src/stages/stage5/check.cpp)", "(../src/stages/stage5/checks.cpp)", "missing file"),
    ("a reference the cross-check never calls", "`span_reference` (MPFR)", "`gram` (MPFR)",
     "does not reach a reference function"),
    ("a property that calls no fast function", "`min_norm_point_active_set` |", "`active_set_tolerance` |",
     "calls none of the fast functions"),
    ("a stage without a row", "| 4 | ", "| 4b | ", "stage 4: no row"),
]


def main():
    failures = 0
    _, problems = stage_table.check_table(TEXT, ROOT)
    if problems:
        print("FAIL the committed table: " + "; ".join(problems))
        failures += 1
    for what, old, new, phrase in BREAKS:
        if old not in TEXT:
            print(f"FAIL {what}: the table no longer contains {old!r}")
            failures += 1
            continue
        _, problems = stage_table.check_table(TEXT.replace(old, new, 1), ROOT)
        failures += not case(what, any(phrase in p for p in problems), f"not reported: {problems}")
    failures += not untested_property_reported()
    return 1 if failures else 0


def untested_property_reported():
    """A copy of the tree whose stage-5 property lost its test of the tester."""
    with tempfile.TemporaryDirectory() as root:
        for folder in ("src", "property_tests", "proofs"):
            shutil.copytree(os.path.join(ROOT, folder), os.path.join(root, folder))
        path = os.path.join(root, "property_tests", "span_fast_vs_reference.cpp")
        code = stage_table.read(path)
        with open(path, "w") as f:
            f.write(code.replace("property_rejects(", "property("))
        _, problems = stage_table.check_table(TEXT, root)
    return case("a property without a test of the tester",
                any("span_fast_vs_reference.cpp has no test of the tester" in p for p in problems),
                f"not reported: {problems}")


if __name__ == "__main__":
    sys.exit(main())
