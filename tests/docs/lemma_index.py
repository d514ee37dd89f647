#!/usr/bin/env python3
"""MATH.md's "Index of lemmas" is complete and every row resolves.

The check fails when

  * a lemma stated in MATH.md's body (`**Lemma N.M…**`, `**Claim …**`,
    `**Theorem …**`, `**Corollary …**`) has no row in the index, or a row names
    a lemma the body does not state (a row "3.1.1–3.1.2" covers both ends);
  * a row's proof cell links no file under proofs/, or a linked file is missing;
  * a row's property cell neither links a property file nor, after "—", names
    the test file that checks the lemma; or a named file is missing;
  * a linked property file has no test of the tester (a `property_rejects(`
    call, or a Catch2 section or case named "test of the tester");
  * a file in property_tests/ is named in no row.

Tests of the tester: test_lemma_index.py runs this check on broken copies of
MATH.md and of a property file and requires each to be reported. Exit 0 when
everything holds.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
MATH = os.path.join(ROOT, "MATH.md")
# "**Lemma 3.2.1 (…).**" or a bold heading followed by "(Lemma 3.1.4)".
STATEMENT = re.compile(r"\*\*(?:Lemma|Claim|Theorem|Corollary) (\d+(?:\.\d+)+)|\*\* \(Lemma (\d+(?:\.\d+)+)\)")
# A test of the tester: a property_rejects call, or a Catch2 section or case that says it is one.
TESTER = re.compile(r"property_rejects\(|(?:SECTION|TEST_CASE)\(\s*\"[^\"]*test of the tester")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def index_rows(text):
    """[(lemma cell, proof cell, property cell)] of the table under "## Index of lemmas"."""
    start = text.find("## Index of lemmas")
    if start < 0:
        return None
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("lemma", "---"):
            continue
        rows.append((cells[0], cells[2], cells[3]))
    return rows


def lemma_numbers(cell):
    """"3.1.1–3.1.2" -> {"3.1.1", "3.1.2"}; "5.1" -> {"5.1"}."""
    return set(re.findall(r"\d+(?:\.\d+)+", cell))


def links(cell):
    return re.findall(r"\]\(([^)]+)\)", cell)


def body_statements(text):
    body = text[:text.find("## Index of lemmas")]
    return {a or b for a, b in STATEMENT.findall(body)}


def check_row(row, root):
    lemma, proof, prop = row
    problems = []
    proofs = [p for p in links(proof) if p.startswith("proofs/")]
    if not proofs:
        problems.append(f"lemma {lemma}: no proof file linked")
    for p in proofs:
        if not os.path.isfile(os.path.join(root, p)):
            problems.append(f"lemma {lemma}: missing proof file {p}")
    properties = [p for p in links(prop) if p.startswith("property_tests/")]
    named_tests = re.findall(r"`((?:tests|python)/[^`]+)`", prop)
    if not properties and not (prop.startswith("—") and named_tests):
        problems.append(f"lemma {lemma}: no property file and no named test")
    for t in named_tests:
        if not os.path.isfile(os.path.join(root, t)):
            problems.append(f"lemma {lemma}: missing test file {t}")
    for p in properties:
        path = os.path.join(root, p)
        if not os.path.isfile(path):
            problems.append(f"lemma {lemma}: missing property file {p}")
        elif not TESTER.search(read(path)):
            problems.append(f"lemma {lemma}: {p} has no test of the tester")
    return problems, properties


def check_index(text, root):
    """(number of rows, [problem, …])."""
    rows = index_rows(text)
    if rows is None:
        return 0, ["MATH.md has no '## Index of lemmas'"]
    problems, named = [], set()
    for row in rows:
        row_problems, properties = check_row(row, root)
        problems += row_problems
        named |= {os.path.basename(p) for p in properties}
    indexed = set().union(*(lemma_numbers(r[0]) for r in rows)) if rows else set()
    stated = body_statements(text)
    problems += [f"lemma {n}: stated in MATH.md but not in the index" for n in sorted(stated - indexed)]
    problems += [f"lemma {n}: in the index but stated nowhere in MATH.md" for n in sorted(indexed - stated)]
    for f in sorted(os.listdir(os.path.join(root, "property_tests"))):
        if f.endswith(".cpp") and f not in named:
            problems.append(f"property_tests/{f}: named in no row of the index")
    return len(rows), problems


def main():
    count, problems = check_index(read(MATH), ROOT)
    for p in problems:
        print("FAIL " + p)
    print(f"lemma index: {count} rows, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
