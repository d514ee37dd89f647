#!/usr/bin/env python3
"""Checks proofs/README.md's "Every stage on two paths" table cannot go stale:
every linked file exists, every row names a reference path and a cross-check
property, every stage `mhalearn verify` knows has a row, and every file in
property_tests/ is cited somewhere in proofs/README.md. Exit 0 when all hold."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
README = os.path.join(ROOT, "proofs/README.md")
STAGES = ["forward", "1", "2", "3", "4", "5", "6", "polish"]  # verify_stage_names()


def main():
    text = open(README).read()
    problems = []
    start = text.index("## Every stage on two paths")
    section = text[start:text.index("\n## ", start + 5)]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| stage")]
    seen = set()
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) != 6:
            problems.append(f"row with {len(cells)} cells: {row[:60]}")
            continue
        stage, fast, reference, cross, prop, proof = cells
        seen.add(stage)
        for name, cell in (("fast path", fast), ("reference path", reference), ("cross-check", cross),
                           ("property", prop), ("proof", proof)):
            links = re.findall(r"\]\(([^)]+)\)", cell)
            if not links:
                problems.append(f"stage {stage}: no {name}")
            for link in links:
                path = os.path.normpath(os.path.join(os.path.dirname(README), link))
                if not os.path.exists(path):
                    problems.append(f"stage {stage}: {name} links to a missing file {link}")
        if "property_tests/" not in prop:
            problems.append(f"stage {stage}: the cross-check has no property in property_tests/")
    for stage in STAGES:
        if stage not in seen:
            problems.append(f"stage {stage}: no row (mhalearn verify runs it)")
    for f in sorted(os.listdir(os.path.join(ROOT, "property_tests"))):
        if f.endswith(".cpp") and f not in text:
            problems.append(f"property_tests/{f} is not cited in proofs/README.md")
    for p in problems:
        print("stage table: " + p)
    print(f"stage table: {len(rows)} rows, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
