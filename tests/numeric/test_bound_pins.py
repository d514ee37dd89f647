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
sys.exit(0 if ok else 1)
