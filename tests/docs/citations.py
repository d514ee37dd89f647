#!/usr/bin/env python3
"""Every citation and relative link in the repository points at something that exists.

Checked over the tracked files (git ls-files; Markdown, C++, Python, shell,
CMake and text):

  * a relative Markdown link [text](path) or [text](path#anchor) names an
    existing file, and its anchor a heading (GitHub's slug) or an <a id> of it;
  * "MATH.md §N" and "MATH.md §N.M" name a numbered section of MATH.md;
  * a repository path written out (src/…, tests/…, proofs/…, docs/…, scripts/…,
    property_tests/…, python/…, fuzz/…, bench/…, cmake/…, examples/…) exists,
    from the root or from the citing file's folder (files the build or a test writes,
    GENERATED, aside);
  * "X.md, \"Title\"" and "X.md (\"Title\")" name a heading of X.md (or a bold
    paragraph title, **Title.**) that starts with or contains Title.

Tests of the tester: test_citations.py runs this check on a copy of the tree
with each kind of broken citation and requires it to be reported.

  tests/docs/citations.py [--root DIR]      exit 0 when every citation resolves
"""
import argparse
import os
import re
import sys

from doc_checks import ROOT, report, tracked as tracked_files

KINDS = (".md", ".cpp", ".hpp", ".h", ".py", ".sh", ".txt", ".cmake", ".in", ".toml", ".cff")
TOP = r"(?:src|tests|proofs|docs|scripts|property_tests|python|fuzz|bench|cmake|examples)"
PATH = re.compile(r"(?<![\w./-])(" + TOP + r"/[\w./+-]*\w\.(?:md|cpp|hpp|py|sh|txt|json|cmake|toml))\b")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MATH = re.compile(r"MATH\.md[^§\n]{0,3}§\s?(\d+(?:\.\d+)?)")
# Written, not tracked: configure_file's output, and the page test's second targets page (in its sandbox).
GENERATED = {"src/version.hpp", "docs/targets_reuse_only.md"}
# Files whose citations are the tester's deliberately broken fixtures.
FIXTURES = {"tests/docs/test_citations.py", "tests/docs/test_lemma_index.py"}
TITLED = re.compile(r"([\w./-]+\.md)\)?,? \(?\"([^\"\n]{3,80})\"")


def tracked(root):
    return tracked_files(root, KINDS)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as '-'."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def headings(path):
    titles, anchors = [], set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                titles.append(m.group(1))
                anchors.add(slug(m.group(1)))
            anchors.update(re.findall(r'<a id="([^"]+)"', line))
            # A paragraph or list item that opens with an emphasised title is a section too.
            lead = re.match(r"\s*(?:[-*]|\d+\.)?\s*\*{1,2}([^*]+?)\.?\*{1,2}", line)
            if lead:
                titles.append(lead.group(1).replace("`", ""))
    return titles, anchors


def math_sections(root):
    titles, _ = headings(os.path.join(root, "MATH.md"))
    return {m.group(1) for t in titles for m in [re.match(r"(\d+(?:\.\d+)?)[. ]", t)] if m}


def check(root):
    problems = []
    sections = math_sections(root)
    cache = {}

    def heads(path):
        if path not in cache:
            cache[path] = headings(path)
        return cache[path]

    for rel in tracked(root):
        if rel in FIXTURES:
            continue
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        here = os.path.dirname(path)
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{rel}:{number}"
            if rel.endswith(".md"):
                for target in LINK.findall(line):
                    if re.match(r"^[a-z]+:", target):
                        continue  # http:, https:, mailto:
                    file_part, _, anchor = target.partition("#")
                    dest = os.path.normpath(os.path.join(here, file_part)) if file_part else path
                    if not os.path.exists(dest):
                        problems.append(f"{where}: link to {target}: no such file")
                    elif anchor and dest.endswith(".md") and anchor not in heads(dest)[1]:
                        problems.append(f"{where}: link to {target}: no such section")
            for sec in MATH.findall(line):
                if sec not in sections:
                    problems.append(f"{where}: MATH.md §{sec}: no such section")
            for cited in PATH.findall(line):
                if "*" in cited or "<" in cited:
                    continue
                if cited in GENERATED:
                    continue
                # From the root, the citing file's folder, or docs/ (scripts write docs pages).
                if not any(os.path.exists(os.path.join(base, cited)) for base in (root, here, os.path.join(root, "docs"))):
                    problems.append(f"{where}: {cited}: no such file")
            for name, title in TITLED.findall(line):
                candidates = [os.path.join(root, name), os.path.join(here, name),
                              os.path.join(root, "proofs", name), os.path.join(root, "docs", name)]
                dest = next((c for c in candidates if os.path.exists(c)), None)
                if dest is None:
                    problems.append(f"{where}: {name}: no such file")
                    continue
                title_l = title.lower().rstrip(".").replace("`", "")
                if not any(t.lower().startswith(title_l) or title_l in t.lower() for t in heads(dest)[0]):
                    problems.append(f"{where}: {name}, \"{title}\": no such section")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", default=ROOT)
    args = p.parse_args()
    problems = check(args.root)
    return report(problems, f"citations: {len(problems)} problems", prefix="")


if __name__ == "__main__":
    sys.exit(main())
