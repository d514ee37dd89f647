#!/usr/bin/env python3
"""Test of the tester for function_length.py: in a small tree of its own, a
function of 101 lines is reported (exit 1) and one of exactly 100 lines is not;
the tree without the long one passes (exit 0)."""
import os
import subprocess
import sys

from doc_checks import case, tree

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "function_length.py")
# The fixture's files, joined here so that the citation check does not read them as citations.
LONG_FILE = os.path.join("src", "a.cpp")
SHORT_FILE = os.path.join("src", "b.cpp")


def function(name, lines):
    """A C++ function of exactly `lines` lines, from its signature to its closing brace."""
    body = [f"  x += {i};" for i in range(lines - 3)]
    return "\n".join([f"int {name}(int x) {{", *body, "  return x;", "}"]) + "\n"


def run(root):
    r = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True, text=True)
    return r.returncode, r.stdout.splitlines()


def main():
    failures = []
    at_limit = function("at_limit", 100)
    over_limit = function("over_limit", 101)
    code, lines = run(tree({LONG_FILE: at_limit + "\n" + over_limit}))
    reported = [x for x in lines if not x.startswith("function length:")]
    ok = code == 1 and reported == [f"{LONG_FILE}:102: over_limit: 101 lines"] and \
        lines[-1] == "function length: 2 functions, longest 101 lines (over_limit), 1 over 100"
    if not case("a 101-line function is reported, a 100-line one is not", ok, f"exit {code}, {lines}"):
        failures.append("over the limit")
    code, lines = run(tree({SHORT_FILE: at_limit}))
    ok = code == 0 and lines == ["function length: 1 functions, longest 100 lines (at_limit), 0 over 100"]
    if not case("a tree with no function over 100 lines passes", ok, f"exit {code}, {lines}"):
        failures.append("at the limit")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
