#!/usr/bin/env python3
"""proofs/README.md's "Every stage on two paths" table is a checked contract.

Each row names, per cell, files (Markdown links) and functions (`backticked`
after the link they live in). The check fails when

  * a linked file does not exist;
  * a function named after a link is not defined in that file (a definition:
    the name followed by its parameter list and a body, `name(…) … {`);
  * a cross-check function's body does not reach a reference function of its
    row: directly, through functions of its own file, or through another
    cross-check function of the row (which must reach one itself);
  * a property file (in property_tests/) of the row does not call one of the
    row's fast functions and one of its reference or cross-check functions;
  * a property file of the row has no test of the tester (`property_rejects(`);
  * a stage `mhalearn verify` knows has no row;
  * a file in property_tests/ is cited nowhere in proofs/README.md.

Tests of the tester: test_stage_table.py runs this check on broken copies of
the table and requires each to be reported. Exit 0 when everything holds.
"""
import os
import re
import sys

from doc_checks import ROOT, read, report
README = os.path.join(ROOT, "proofs/README.md")
STAGES = ["forward", "1", "2", "3", "4", "5", "6", "polish"]  # verify_stage_names()
CELLS = ["stage", "fast path", "reference path", "cross-check", "property", "proof"]


def links_with_functions(cell):
    """[(path relative to proofs/, [function names])] in the order they appear."""
    out = []
    for m in re.finditer(r"\]\(([^)]+)\)|`([A-Za-z_][A-Za-z0-9_]*)`", cell):
        if m.group(1):
            out.append((m.group(1), []))
        elif out:
            out[-1][1].append(m.group(2))
    return out


def strip_comments(code):
    code = re.sub(r"//[^\n]*", "", code)
    return re.sub(r"/\*.*?\*/", "", code, flags=re.S)


def function_body(code, name):
    """The body of the first definition of `name` in code (comments stripped), or None."""
    for m in re.finditer(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"\s*\(", code):
        # Skip the parameter list, then expect optional qualifiers and a '{'.
        depth, i = 0, m.end() - 1
        while i < len(code):
            depth += code[i] == "("
            depth -= code[i] == ")"
            i += 1
            if depth == 0:
                break
        rest = code[i:i + 200]
        q = re.match(r"\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[^{;]+)?\{", rest)
        if not q:
            continue
        start = i + q.end() - 1
        depth, j = 0, start
        while j < len(code):
            depth += code[j] == "{"
            depth -= code[j] == "}"
            j += 1
            if depth == 0:
                return code[start:j]
    return None


def calls(code, name):
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"\s*[(<]", code) is not None


def calls_within(code, body, targets, depth=2):
    """Whether `body` calls one of `targets`, directly or through functions of `code` it calls."""
    if any(calls(body, t) for t in targets):
        return True
    if depth == 0:
        return False
    for callee in set(re.findall(r"(?<![A-Za-z0-9_.>])([a-z_][a-z0-9_]*)\s*(?:<[^<>;]*>)?\s*\(", body)):
        inner = function_body(code, callee)
        if inner and inner != body and calls_within(code, inner, targets, depth - 1):
            return True
    return False


def check_table(text, root):
    problems = []
    start = text.index("## Every stage on two paths")
    section = text[start:text.index("\n## ", start + 5)]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| stage")]
    seen = set()
    readme_dir = os.path.join(root, "proofs")
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) != len(CELLS):
            problems.append(f"row with {len(cells)} cells: {row[:60]}")
            continue
        stage = cells[0]
        seen.add(stage.split(" ")[0])
        named = {}
        for name, cell in zip(CELLS[1:], cells[1:]):
            entries = links_with_functions(cell)
            if not entries:
                problems.append(f"stage {stage}: no {name}")
            named[name] = []
            for link, functions in entries:
                path = os.path.normpath(os.path.join(readme_dir, link))
                if not os.path.exists(path):
                    problems.append(f"stage {stage}: {name} links to a missing file {link}")
                    continue
                code = strip_comments(read(path)) if path.endswith((".cpp", ".hpp")) else ""
                for f in functions:
                    if function_body(code, f) is None:
                        problems.append(f"stage {stage}: {name} names {f}, which {link} does not define")
                named[name].append((path, code, functions))
        fast = [f for _, _, fs in named.get("fast path", []) for f in fs]
        reference = [f for _, _, fs in named.get("reference path", []) for f in fs]
        checks = [f for _, _, fs in named.get("cross-check", []) for f in fs]
        bodies = {f: (code, function_body(code, f)) for _, code, fs in named.get("cross-check", []) for f in fs}

        def reaches_reference(f, visited):
            code, body = bodies[f]
            if body is None:
                return False
            if calls_within(code, body, reference):
                return True
            return any(g not in visited and calls_within(code, body, [g]) and reaches_reference(g, visited | {g})
                       for g in bodies if g != f)

        for f in bodies:
            if bodies[f][1] is not None and not reaches_reference(f, {f}):
                problems.append(f"stage {stage}: the cross-check {f} does not reach a reference function "
                                f"({', '.join(reference)})")
        properties = [(p, c) for p, c, _ in named.get("property", []) if "/property_tests/" in p]
        if not properties:
            problems.append(f"stage {stage}: the cross-check has no property in property_tests/")
        for path, code in properties:
            rel = os.path.relpath(path, root)
            if not any(calls(code, f) for f in fast):
                problems.append(f"stage {stage}: {rel} calls none of the fast functions ({', '.join(fast)})")
            if not any(calls(code, f) for f in reference + checks):
                problems.append(f"stage {stage}: {rel} calls neither a reference nor the cross-check function")
            if "property_rejects(" not in code:
                problems.append(f"stage {stage}: {rel} has no test of the tester (property_rejects)")
    for stage in STAGES:
        if stage not in seen:
            problems.append(f"stage {stage}: no row (mhalearn verify runs it)")
    for f in sorted(os.listdir(os.path.join(root, "property_tests"))):
        if f.endswith(".cpp") and f not in text:
            problems.append(f"property_tests/{f} is not cited in proofs/README.md")
        if f.endswith(".cpp") and "property_rejects(" not in read(os.path.join(root, "property_tests", f)) \
                and "test of the tester" not in read(os.path.join(root, "property_tests", f)):
            problems.append(f"property_tests/{f} has no test of the tester")
    return rows, problems


def main():
    rows, problems = check_table(read(README), ROOT)
    return report(problems, f"stage table: {len(rows)} rows, {len(problems)} problems", prefix="stage table: ")


if __name__ == "__main__":
    sys.exit(main())
