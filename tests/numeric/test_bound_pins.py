#!/usr/bin/env python3
"""Test of the tester for tests/numeric/bound_pins.py: a bound without a pinning
test, and one whose +inf branch has no edge test, are listed; a pinned one and a
target are not."""
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bound_pins", ROOT / "tests" / "numeric" / "bound_pins.py")
bound_pins = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bound_pins)

header = """double pinned_bound(double x);
double unpinned_bound(double x);
double edgy_bound(double x);
double stage_target();
"""
definitions = """double pinned_bound(double x) {
  return 2 * x;
}

double unpinned_bound(double x) {
  return 3 * x;
}

double edgy_bound(double x) {
  if (!finite(x)) return kInf;
  if (!(x < 1)) return kInf;
  return x;
}
"""
tests = """check_value(tol::pinned_bound(2.0), 4.0);
CHECK(tol::edgy_bound(0.5) == 0.5);
"""
ok = True
bounds, no_pin, no_edge, no_nonfinite, targets = bound_pins.unpinned([header], [definitions], tests, "")
for name, got, want in [("bounds", bounds, ["pinned_bound", "unpinned_bound", "edgy_bound"]),
                        ("not pinned", no_pin, ["unpinned_bound"]),
                        ("no edge test", no_edge, ["edgy_bound"]),
                        ("no NaN row", no_nonfinite, ["edgy_bound"]),
                        ("targets", targets, ["stage_target"])]:
    good = got == want
    ok &= good
    print("ok  " if good else "FAIL", name, got)
_, _, no_edge, no_nonfinite, _ = bound_pins.unpinned(
    [header], [definitions], tests + "CHECK(std::isinf(tol::edgy_bound(2.0)));\n", '{"edgy_bound", {0.5}, ...},')
good = no_edge == [] and no_nonfinite == []
ok &= good
print("ok  " if good else "FAIL", "edge test and NaN row found", no_edge, no_nonfinite)
# The checks' bound pieces: one compared exactly, one assigned and its terms compared,
# one only called (listed), and a function returning neither a double nor a Bound (not a piece).
check_header = """double compared_band(double a, double b);
TermsBound assigned_terms(double a);
double called_only(double a);
bool decides(double a);
"""
check_tests = """CHECK(compared_band(0.25, 0.5) == 0.75);
const TermsBound b = assigned_terms(1.0);
CHECK(b.total() == 2.0);
const double x = 1.0 + 0.0 * called_only(3.0);
CHECK(x > 0);
"""
pieces, no_piece_pin = bound_pins.unpinned_pieces([check_header], check_tests)
good = pieces == ["compared_band", "assigned_terms", "called_only"] and no_piece_pin == ["called_only"]
ok &= good
print("ok  " if good else "FAIL", "check pieces", pieces, no_piece_pin)
sys.exit(0 if ok else 1)
