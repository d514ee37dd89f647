#!/usr/bin/env python3
"""Checks that the reproducible build's compile commands pin the arithmetic.

Reads compile_commands.json of a build folder and requires, for every source
of the library, the CLI and the tests: the pinned ISA level, no FP contraction,
Eigen's fixed blocking (no CPUID, no threads inside Eigen), and no flag that
reads the build machine (-march=native, -mtune=native) or relaxes IEEE
semantics (-ffast-math and its parts). What a compiler makes from such a
command does not depend on the CPU it runs on, so neither do the bytes of the
outputs (the golden-output test checks those).

  build_flags.py BUILD_DIR
"""
import json
import os
import shlex
import sys

REQUIRED = ["-march=x86-64-v3", "-ffp-contract=off", "-DEIGEN_NO_CPUID", "-DEIGEN_DONT_PARALLELIZE"]
FORBIDDEN = ["-march=native", "-mtune=native", "-ffast-math", "-Ofast", "-funsafe-math-optimizations",
             "-fassociative-math", "-freciprocal-math", "-ffp-contract=fast"]


def main(build_dir):
    commands = json.load(open(os.path.join(build_dir, "compile_commands.json")))
    problems, checked = [], 0
    for c in commands:
        if "/src/" not in c["file"] and "/tests/" not in c["file"] and "/property_tests/" not in c["file"]:
            continue
        args = c.get("arguments") or shlex.split(c["command"])
        checked += 1
        missing = [f for f in REQUIRED if f not in args]
        bad = [f for f in FORBIDDEN if f in args]
        if missing or bad:
            problems.append(f"  {os.path.relpath(c['file'])}: missing {missing}, forbidden {bad}")
    print(f"build flags: {checked - len(problems)} of {checked} compile commands pin the arithmetic")
    if checked == 0:
        print("  no compile command found")
        return 1
    print("\n".join(problems[:20]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
