#!/usr/bin/env python3
"""The README's facts about the repository hold.

Checked over the repository's files (git ls-files: tracked or new, not ignored):

  * the code block of the README's "## Layout" section names every folder of
    src/ (as `src/NAME/`) and every top-level folder of the repository (as
    `NAME/`, hidden folders aside), and names no such folder that does not
    exist;
  * the README's "## Where to read on" section links every page of docs/ —
    every tracked .md file under docs/, the NOTES.md written beside a folder of
    runs aside (each is included in its generated page) — and the README
    links no page of docs/ that does not exist;
  * every count the README states of something the repository holds ("7
    pages", "300 tests", "150+ cases", …) is right. A count is a number
    followed, within one word, by one of COUNTED's nouns; a count of a noun
    with no rule here is reported too, since nothing could keep it true: the
    README should link the place that has the number instead.

Tests of the tester: test_readme_facts.py runs this check on copies of the
README and tree with each kind of wrong fact and requires it to be reported.

  tests/docs/readme_facts.py [--root DIR]      exit 0 when every fact holds
"""
import argparse
import os
import re
import sys

from doc_checks import ROOT, read, report, tracked as tracked_files


def tracked(root):
    """The repository's files: tracked or new, not ignored, present in the working tree."""
    return tracked_files(root, untracked=True)


def section(text, title):
    """The body of the README's `## title` section ('' when it has none)."""
    m = re.search(r"^## " + re.escape(title) + r"[ \t]*\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1) if m else ""


def code_blocks(text):
    return re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)


def docs_pages(files):
    return sorted(f for f in files if f.startswith("docs/") and f.endswith(".md") and os.path.basename(f) != "NOTES.md")


# Nouns whose counts the README may state, and how to count them in the tree (None: no rule,
# so a stated count of them is reported). A stated "N+" means at least N.
def _subcommands(root, files):
    """The subcommands declared in src/commands/declarations.hpp (one function each)."""
    path = os.path.join(root, "src/commands/declarations.hpp")
    return len(set(re.findall(r"^Command (\w+)_command\(\);", read(path), re.M))) if os.path.exists(path) else None


def _bad_input_cases(root, files):
    path = os.path.join(root, "tests/cli/bad_inputs.txt")
    if not os.path.exists(path):
        return None
    return sum(1 for line in open(path, encoding="utf-8") if line.strip() and not line.lstrip().startswith("#"))


COUNTED = {
    "page": lambda root, files: len(docs_pages(files)),
    "subcommand": _subcommands,
    "harness": lambda root, files: len([f for f in files if re.match(r"fuzz/fuzz_\w+\.cpp$", f)]),
    "case": _bad_input_cases,
    "test": None,
    "unit test": None,
    "property": None,
    "file": None,
    "folder": None,
    "directory": None,
    "script": None,
    "proof": None,
    "lemma": None,
}
PLURAL = {"directory": "directories", "property": "properties", "harness": "harnesses"}
FORMS = {form: noun for noun in COUNTED for form in (noun, PLURAL.get(noun, noun + "s"))}
COUNT = re.compile(r"(?<![\w.§/:-])(\d[\d,]*)(\+?)\s+(?:[A-Za-z-]+\s+)?("
                   + "|".join(sorted((re.escape(f) for f in FORMS), key=len, reverse=True)) + r")\b")


def check(root, readme=None):
    files = tracked(root)
    path = readme or os.path.join(root, "README.md")
    text = open(path, encoding="utf-8").read()
    problems = []

    # Layout: every folder of src/ and of the repository, and none that is not there.
    layout = "\n".join(code_blocks(section(text, "Layout")))
    if not layout:
        problems.append('README: no "## Layout" section with a code block')
    named = set(re.findall(r"^(src/[\w.-]+|[\w.-]+)/", layout, re.M))
    named |= {n.split("/")[0] for n in named}  # src/NAME/ names src/ too
    src_dirs = {"src/" + f.split("/")[1] for f in files if f.startswith("src/") and f.count("/") >= 2}
    top_dirs = {f.split("/")[0] for f in files if "/" in f and not f.startswith(".")}
    for d in sorted(src_dirs - named):
        problems.append(f"README, Layout: {d}/ is not named")
    for d in sorted(top_dirs - named):
        problems.append(f"README, Layout: {d}/ is not named")
    for d in sorted(named - src_dirs - top_dirs):
        problems.append(f"README, Layout: {d}/ is named but not in the repository")

    # Where to read on: every page of docs/, and no page that is not there.
    reading = section(text, "Where to read on")
    if not reading:
        problems.append('README: no "## Where to read on" section')
    linked = set(re.findall(r"\]\((docs/[^)#\s]+\.md)(?:#[^)]*)?\)", reading))
    pages = set(docs_pages(files))
    for p in sorted(pages - linked):
        problems.append(f'README, Where to read on: {p} is not linked')
    for p in sorted(set(re.findall(r"\]\((docs/[^)#\s]+\.md)", text)) - pages):
        problems.append(f"README: links {p}, which is not a page of docs/")

    # Counts.
    for number, plus, form in COUNT.findall(text):
        noun = FORMS[form]
        stated = int(number.replace(",", ""))
        rule = COUNTED.get(noun)
        actual = rule(root, files) if rule else None
        if actual is None:
            problems.append(f'README: "{number}{plus} {noun}…": a count nothing checks (link the page that has it)')
        elif (actual < stated) if plus else (actual != stated):
            problems.append(f'README: "{number}{plus} {noun}…" but the repository has {actual}')
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", default=ROOT)
    args = p.parse_args()
    problems = check(args.root)
    return report(problems, f"readme facts: {len(problems)} problems", prefix="")


if __name__ == "__main__":
    sys.exit(main())
