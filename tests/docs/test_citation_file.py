#!/usr/bin/env python3
"""Test of the tester for tests/docs/citation_file.py: broken copies must each be reported."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import citation_file as c  # noqa: E402

CFF = c.read(os.path.join(c.ROOT, "CITATION.cff"))
CITE = c.read(os.path.join(c.ROOT, "docs/cite.md"))
CMAKE = c.read(os.path.join(c.ROOT, "CMakeLists.txt"))
VERSION = c.top_level(CFF, "version")
RELEASED = CFF.replace(f"version: {VERSION}\n", f"version: {VERSION}\ndate-released: 2026-12-06\ncommit: \"abcdef123456\"\n")
BLOCK = ("<!-- release -->\n**This release.** mhalearn {v}, released {d}: tag `v{v}`, made from the source of commit "
         "`{c}` (…).\n<!-- /release -->")


def with_block(cite, v, d, commit):
    return c.re.sub(r"<!-- release -->\n.*?<!-- /release -->", BLOCK.format(v=v, d=d, c=commit), cite, flags=c.re.S)


CASES = [  # (what, cff, cite, cmake, phrase)
    ("a version CMakeLists.txt does not declare", CFF.replace(f"version: {VERSION}", "version: 9.9.9"), CITE, CMAKE,
     "is not CMakeLists.txt's"),
    ("a date without a commit", CFF.replace(f"version: {VERSION}\n", f"version: {VERSION}\ndate-released: 2026-12-06\n"),
     CITE, CMAKE, "without the other"),
    ("a release block naming another commit", RELEASED, with_block(CITE, VERSION, "2026-12-06", "0123456789ab"), CMAKE,
     "does not name version"),
    ("no arXiv identifier", CFF.replace("2402.04084", "2402.0408"), CITE, CMAKE, "does not name 2402.04084"),
    ("no STOC pages", CFF, CITE.replace("1744", "1743"), CMAKE, "pages 1744–1754"),
]


def main():
    failures = 0
    if c.check(CFF, CITE, CMAKE):
        print("FAIL the committed files: " + "; ".join(c.check(CFF, CITE, CMAKE)))
        failures += 1
    if c.check(RELEASED, with_block(CITE, VERSION, "2026-12-06", "abcdef123456"), CMAKE):
        print("FAIL a consistent release is reported: " +
              "; ".join(c.check(RELEASED, with_block(CITE, VERSION, "2026-12-06", "abcdef123456"), CMAKE)))
        failures += 1
    for what, cff, cite, cmake, phrase in CASES:
        found = [p for p in c.check(cff, cite, cmake) if phrase in p]
        print(("ok   " if found else "FAIL ") + what + ": " + (found[0] if found else "not reported"))
        failures += not found
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
