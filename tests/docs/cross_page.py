#!/usr/bin/env python3
"""Two pages give one number for the same run and quantity, and every recorded number is on its page.

Each page writer records the numbers it prints from one run as facts (scripts/experiments.py,
Facts): docs/facts/<page>.json holds {"page", "runs": {KEY: identity}, "facts": [[KEY, quantity,
text, row], ...]}, a run's identity being its normalised command (a report's options, sorted, its
outputs aside), the content hash of the instance it read and the learner that made it. This check
fails when

  * two facts of the same run and quantity disagree: their printed values, read at the precision each
    is printed with (4.2e+07 stands for [4.15e7, 4.25e7]), have no value in common, or (text, e.g.
    "not reached") differ. Two runs are the same for a quantity when their identities agree but for
    the options that do not reach it (experiments.QUANTITIES: the thread count for every number but
    a time; polishing for the errors and samples before it);
  * a fact's value is not on its page: no line of the page holds both the fact's row (the leading
    cells of its table row) and its printed text — the page changed, its facts did not.

  python3 tests/docs/cross_page.py [--docs DIR]
Exit 0 when every fact agrees and is on its page, 1 otherwise (each finding printed).
"""
import argparse
import glob
import json
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from experiments import QUANTITIES  # noqa: E402

_NUMBER = re.compile(r"^[+-]?(\d+(?:\.(\d*))?)(?:[eE]([+-]?\d+))?$")


def printed_value(text):
    """(value, quantum) of a printed number — the quantum is one unit of its last printed digit —
    or None for text that is not a number ("not reached")."""
    t = text.replace(",", "").strip()
    m = _NUMBER.match(t)
    if not m:
        return None
    decimals = len(m.group(2) or "")
    exponent = int(m.group(3) or 0)
    return float(t), 10.0 ** (exponent - decimals)


def agree(a, b):
    """Whether two printed values could be the same number (their rounding intervals meet), or are the same text."""
    va, vb = printed_value(a), printed_value(b)
    if va is None or vb is None:
        return a.strip() == b.strip()
    (x, qx), (y, qy) = va, vb
    return abs(x - y) <= (qx + qy) / 2 * (1 + 1e-9)


def same_run(run, quantity):
    """The identity of a run as far as a quantity goes: the options that do not reach it left out."""
    ignored = QUANTITIES[quantity]
    words = [w for w in run["command"].split() if w.split("=", 1)[0] not in ignored]
    return (" ".join(words), run["instance"], run["learner"])


def load_facts(docs):
    """[(page path, page text, run identity, quantity, text, row)] of every facts file under DOCS/facts."""
    out = []
    for path in sorted(glob.glob(os.path.join(docs, "facts", "*.json"))):
        with open(path) as f:
            data = json.load(f)
        page = os.path.join(os.path.dirname(docs), data["page"])
        text = open(page).read() if os.path.exists(page) else None
        for key, quantity, printed, row in data["facts"]:
            out.append((data["page"], text, data["runs"][key], quantity, printed, row))
    return out


def drifted(facts):
    """The facts whose printed text is not on their page, in their row."""
    problems = []
    for page, text, run, quantity, printed, row in facts:
        if text is None:
            problems.append(f"{page}: the page is gone ({quantity} {printed!r} of row {row!r})")
        elif not any(row in line and printed in line for line in text.splitlines()):
            problems.append(f"{page}: {quantity} {printed!r} of row {row!r} is not on the page")
    return problems


def disagreements(facts):
    """The pairs of facts of the same run and quantity whose values disagree."""
    groups = {}
    for page, _, run, quantity, printed, row in facts:
        groups.setdefault((quantity, same_run(run, quantity)), []).append((page, printed, row))
    problems = []
    for (quantity, (command, instance, learner)), seen in sorted(groups.items()):
        first = seen[0]
        for other in seen[1:]:
            if not agree(first[1], other[1]):
                problems.append(f"{quantity} of one run ({learner}; instance {instance}; {command[:160]}): "
                                f"{first[1]} on {first[0]} (row {first[2]!r}), {other[1]} on {other[0]} "
                                f"(row {other[2]!r})")
    return problems


def shared(facts):
    """How many (run, quantity) pairs more than one fact gives, and on how many pages."""
    groups = {}
    for page, _, run, quantity, _, _ in facts:
        groups.setdefault((quantity, same_run(run, quantity)), set()).add(page)
    return sum(1 for pages in groups.values() if len(pages) > 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs"))
    args = ap.parse_args(argv)
    facts = load_facts(args.docs)
    problems = [f"DISAGREE  {p}" for p in disagreements(facts)] + [f"DRIFTED   {p}" for p in drifted(facts)]
    pages = sorted({f[0] for f in facts})
    print(f"cross-page check: {len(facts)} facts on {len(pages)} pages; {shared(facts)} (run, quantity) pairs on "
          f"more than one page; {len(problems)} problems")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
