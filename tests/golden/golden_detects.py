#!/usr/bin/env python3
"""The golden check's own test: a one-ulp change in a .npy element and in a
report value must each be reported, with the element or key path and the
first differing byte; unchanged files must pass. The same for the committed
result runs' check (scripts/check_runs.py), which also must tell 0.0 from -0.0
and name the provenance build facts (architecture, ISA level) that differ."""
import json
import os
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import EXPECTED, compare, npy_data_offset  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from check_runs import build_differences, report_difference  # noqa: E402


def flip_last_bit_of_element(path, index):
    data = bytearray(open(path, "rb").read())
    at = npy_data_offset(bytes(data)) + 8 * index
    (v,) = struct.unpack("<d", data[at:at + 8])
    data[at:at + 8] = struct.pack("<q", struct.unpack("<q", data[at:at + 8])[0] ^ 1)
    open(path, "wb").write(bytes(data))
    return v


def check_runs_detects(out):
    """check_runs.py's comparison on a committed report: itself, one ulp off, and a zero's sign."""
    committed = os.path.join(EXPECTED, "learn.json")
    one_ulp, zeros = os.path.join(out, "ulp.json"), [os.path.join(out, f"zero{i}.json") for i in (0, 1)]
    text = open(committed).read()
    key = '"theta_max_rel": '
    i = text.index(key) + len(key)
    j = i + next(k for k, c in enumerate(text[i:]) if c in ",\n")
    open(one_ulp, "w").write(text[:i] + repr(float(text[i:j]) * (1 + 2**-52)) + text[j:])
    for path, zero in zip(zeros, ("0.0", "-0.0")):
        open(path, "w").write('{"x": %s}' % zero)
    found = [report_difference(committed, committed), report_difference(committed, one_ulp),
             report_difference(*zeros)]
    print("check_runs:", found)
    # Two reports from other platforms: the build facts that differ are named, the rest not.
    builds = [os.path.join(out, f"build{i}.json") for i in (0, 1)]
    for path, arch, isa in zip(builds, ("x86_64", "aarch64"), ("x86-64-v3", "armv8-a")):
        open(path, "w").write(json.dumps({"provenance": {"build": {"architecture": arch, "isa_level": isa,
                                                                   "compiler": "gcc 12", "threads_available": 2}}}))
    named = build_differences(*builds)
    print("check_runs build facts:", named)
    names_them = len(named) == 2 and "build.architecture" in named[0] and "build.isa_level" in named[1]
    return (found[0] is None and found[1] is not None and "theta_max_rel" in found[1] and found[2] is not None
            and names_them and build_differences(builds[0], builds[0]) == [])


def main():
    with tempfile.TemporaryDirectory() as out:
        runs_ok = check_runs_detects(out)
        for f in ("y_fast.npy", "learn.json"):
            shutil.copy(os.path.join(EXPECTED, f), out)
        assert compare(EXPECTED, ["y_fast.npy", "learn.json"], out) == [], "unchanged files must match"
        flip_last_bit_of_element(os.path.join(out, "y_fast.npy"), 5)
        text = open(os.path.join(out, "learn.json")).read()
        key = '"theta_max_rel": '
        i = text.index(key) + len(key)
        j = i + next(k for k, c in enumerate(text[i:]) if c in ",\n")
        open(os.path.join(out, "learn.json"), "w").write(text[:i] + repr(float(text[i:j]) * (1 + 2**-52)) + text[j:])
        problems = compare(EXPECTED, ["y_fast.npy", "learn.json"], out)
    report = "\n".join(problems)
    print(report)
    ok = len(problems) == 2 and "element 5 (float64)" in report and "theta_max_rel" in report
    print("golden check detects one-ulp changes:", "yes" if ok else "NO")
    print("committed-runs check detects one-ulp changes and a zero's sign, and names differing build facts:",
          "yes" if runs_ok else "NO")
    ok = ok and runs_ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
