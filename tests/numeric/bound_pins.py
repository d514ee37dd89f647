#!/usr/bin/env python3
"""Every bound pinned: lists the functions of the tolerance and bound code
(src/numeric/tolerance.hpp, tests/support/test_tolerances.hpp) that have no
pinning test, and those with a +inf branch (no bound) that have no edge test;
exits 1 when any is listed.

A pinning test compares the function at a hand-computed value:
`check_value(tol::NAME(...), value)` or `CHECK(tol::NAME(...) == value)`; an edge
test asserts its +inf branch: `std::isinf(tol::NAME(...))`. Both are looked for
in the pinning files below (the values: tests/numeric/tolerance_values.py). A
bound guarded against NaN and ±inf arguments (`if (!finite(...)) return kInf;`)
must have its row in the NaN/±inf property's table (tests/numeric/test_nonfinite.cpp).
The accuracy targets (`*_target`: claims about a stage, not bounds) are not
bounds and are listed as such.

The checks' own bound pieces (the functions of the stages' check headers that
return a double or a `...Bound` of terms: a band, a shift, a bound's terms) are
held to the same rule: each is called in a test of tests/verify/ that compares
its result exactly — inside `CHECK(... == ...)`, or assigned and its terms then
compared — or it is listed.

  tests/numeric/bound_pins.py            (CTest runs this)
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECLARATIONS = ["src/numeric/tolerance.hpp", "tests/support/test_tolerances.hpp"]
DEFINITIONS = ["src/numeric/tolerance.cpp", "tests/support/test_tolerances.cpp"]
PINNING_FILES = ["tests/numeric/test_tolerance.cpp", "tests/verify/test_verify.cpp"]
NONFINITE = "tests/numeric/test_nonfinite.cpp"  # the table of bounds fed NaN and ±inf
CHECK_HEADERS = ["src/stages/stage2/body_check.hpp", "src/stages/stage3/check.hpp", "src/stages/stage5/check.hpp",
                 "src/stages/stage6/net_check.hpp", "src/stages/polish/check.hpp"]
CHECK_PINNING_DIR = "tests/verify"


def declared(text):
    """Function names declared in a header (`double NAME(`), in order."""
    return re.findall(r"^double\s+(\w+)\(", text, re.M)


def definitions_of(text):
    """{name: body} of the top-level `double NAME(...)` definitions of a source file."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^double\s+(\w+)\(", text, re.M)]
    return {name: text[start:(starts[i + 1][0] if i + 1 < len(starts) else len(text))]
            for i, (start, name) in enumerate(starts)}


GUARD = re.compile(r"^\s*if \(!finite\([^;]*\)\)\s*return kInf;\s*$", re.M)


def with_infinite_branch(text):
    """Function names whose definition returns +inf (kInf) other than by the guard
    against NaN and ±inf arguments (tested by tests/numeric/test_nonfinite.cpp)."""
    return {name for name, body in definitions_of(text).items() if "kInf" in GUARD.sub("", body)}


def with_guard(text):
    """Function names guarded against NaN and ±inf arguments."""
    return {name for name, body in definitions_of(text).items() if GUARD.search(body)}


def pinned(name, tests):
    return any(re.search(p, tests) for p in (r"check_value\(\s*tol::" + name + r"\(",
                                            r"CHECK\(\s*tol::" + name + r"\([^;]*==",
                                            r"tol::" + name + r"\([^;]*_exact\s*=\s*[0-9]"))


def edge_tested(name, tests):
    return re.search(r"std::isinf\(\s*tol::" + name + r"\(", tests) is not None


def unpinned(headers, definitions, tests, nonfinite=""):
    """(bounds, missing pins, missing edges, missing NaN/±inf rows, targets) for the given texts."""
    names = [n for h in headers for n in declared(h)]
    targets = [n for n in names if n.endswith("_target")]
    bounds = [n for n in names if not n.endswith("_target")]
    infinite = set().union(set(), *(with_infinite_branch(d) for d in definitions))
    guarded = set().union(set(), *(with_guard(d) for d in definitions))
    no_pin = [n for n in bounds if not pinned(n, tests)]
    no_edge = [n for n in bounds if n in infinite and not edge_tested(n, tests)]
    no_nonfinite = [n for n in bounds if n in guarded and f'{{"{n}",' not in nonfinite]
    return bounds, no_pin, no_edge, no_nonfinite, targets


def check_pieces(text):
    """Names of the functions a check header declares returning a double or a `...Bound` struct."""
    return re.findall(r"^(?:double|\w+Bound)\s+(\w+)\(", text, re.M)


def piece_pinned(name, tests):
    """Called inside CHECK(... == ...) on one statement, or assigned (its terms compared after)."""
    call = re.escape(name) + r"\("
    return any(re.search(p, tests) for p in (r"CHECK\((?:[^;]*\W)?" + call + r"[^;]*==",
                                            r"CHECK\([^;]*==\s*" + call,
                                            r"(?:Bound|double|auto)\s+\w+\s*=\s*" + call))


def unpinned_pieces(headers, tests):
    """(pieces, missing pins) of the checks' bound pieces."""
    pieces = [n for h in headers for n in check_pieces(h)]
    return pieces, [n for n in pieces if not piece_pinned(n, tests)]


def main():
    read = lambda paths: [(ROOT / p).read_text() for p in paths]
    bounds, no_pin, no_edge, no_nonfinite, targets = unpinned(
        read(DECLARATIONS), read(DEFINITIONS), "\n".join(read(PINNING_FILES)), (ROOT / NONFINITE).read_text())
    for n in no_pin:
        print(f"NOT PINNED {n}: no check_value(tol::{n}(...), value) in {', '.join(PINNING_FILES)}")
    for n in no_edge:
        print(f"NO EDGE    {n}: returns +inf somewhere, no std::isinf(tol::{n}(...)) test")
    for n in no_nonfinite:
        print(f"NO NaN ROW {n}: guarded against NaN and ±inf arguments, no row {{\"{n}\", ...}} in {NONFINITE}")
    verify_tests = "\n".join(p.read_text() for p in sorted((ROOT / CHECK_PINNING_DIR).glob("*.cpp")))
    pieces, no_piece_pin = unpinned_pieces(read(CHECK_HEADERS), verify_tests)
    for n in no_piece_pin:
        print(f"NOT PINNED {n} (a check's bound piece): no exact comparison of {n}(...) in {CHECK_PINNING_DIR}/")
    print(f"checks' bound pieces: {len(pieces)} ({', '.join(pieces)}), {len(no_piece_pin)} not pinned")
    print(f"bound pins: {len(bounds)} bound functions, {len(bounds) - len(no_pin)} pinned, "
          f"{len(no_pin)} not pinned, {len(no_edge)} +inf branches without an edge test, "
          f"{len(no_nonfinite)} guarded bounds without a NaN/±inf row; "
          f"{len(targets)} accuracy targets (claims, not bounds) not counted")
    return 1 if no_pin or no_edge or no_nonfinite or no_piece_pin else 0


if __name__ == "__main__":
    sys.exit(main())
