#!/usr/bin/env python3
"""CITATION.cff and docs/cite.md name one version, one release and the paper.

The check fails when
  * CITATION.cff's `version` is not CMakeLists.txt's project version (the one place
    the version is declared; Python reads it from there);
  * CITATION.cff has one of `date-released` and `commit` without the other, or a
    malformed one (YYYY-MM-DD; 7 to 40 hex digits);
  * docs/cite.md's release block (between `<!-- release -->` and `<!-- /release -->`)
    names another version, date or commit than CITATION.cff (when it names one);
  * either file does not name arXiv:2402.04084 and doi:10.1145/3717823.3718174, or
    docs/cite.md does not give the STOC pages 1744–1754.
Tests of the tester: test_citation_file.py. Exit 0 when everything holds.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def top_level(cff, key):
    m = re.search(rf"^{re.escape(key)}:\s*\"?([^\"\n]*)\"?\s*$", cff, re.M)
    return m.group(1).strip() if m else None


def check(cff, cite, cmake):
    problems = []
    declared = re.search(r"^project\(mhalearn VERSION ([0-9.]+)", cmake, re.M)
    version = top_level(cff, "version")
    if not declared or version != declared.group(1):
        problems.append(f"CITATION.cff version {version} is not CMakeLists.txt's {declared and declared.group(1)}")
    date, commit = top_level(cff, "date-released"), top_level(cff, "commit")
    if (date is None) != (commit is None):
        problems.append("CITATION.cff has one of date-released and commit without the other")
    if date is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        problems.append(f"CITATION.cff date-released {date!r} is not YYYY-MM-DD")
    if commit is not None and not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        problems.append(f"CITATION.cff commit {commit!r} is not a commit hash")
    block = re.search(r"<!-- release -->\n(.*?)<!-- /release -->", cite, re.S)
    if not block:
        problems.append("docs/cite.md has no release block")
    elif date is not None:
        m = re.search(r"mhalearn (\S+), released (\d{4}-\d{2}-\d{2}): tag `v\S+`, made from the source of commit `([0-9a-f]+)`",
                      block.group(1))
        if not m or (m.group(1), m.group(2), m.group(3)) != (version, date, commit):
            problems.append(f"docs/cite.md's release block does not name version {version}, date {date}, commit {commit}")
    for name, text in (("CITATION.cff", cff), ("docs/cite.md", cite)):
        for needle in ("2402.04084", "10.1145/3717823.3718174"):
            if needle not in text:
                problems.append(f"{name} does not name {needle}")
    if "1744–1754" not in cite and "1744--1754" not in cite:
        problems.append("docs/cite.md does not give the STOC pages 1744–1754")
    return problems


def main():
    problems = check(read(os.path.join(ROOT, "CITATION.cff")), read(os.path.join(ROOT, "docs/cite.md")),
                     read(os.path.join(ROOT, "CMakeLists.txt")))
    for p in problems:
        print("FAIL " + p)
    print(f"citation file: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
