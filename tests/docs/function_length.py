#!/usr/bin/env python3
"""No function in src/ is longer than 100 lines.

Every function universal-ctags finds under src/ (`ctags --c++-kinds=f
--fields=+ne`: its first and last line), lambdas included (ctags names them
__anon…; they are reported with the function they are written in), is measured
from its first line to its last. Each one over the limit is printed as
file:line, name and length, longest first.

Test of the tester: test_function_length.py runs this check on a small tree
with a function one line over the limit and one at it, and requires exactly
the first to be reported.

  tests/docs/function_length.py [--root DIR]   exit 0 when no function is over 100 lines
"""
import argparse
import subprocess
import sys

from doc_checks import ROOT, report

LIMIT = 100


def functions(root):
    """[(length, "file:line", name)] of every function ctags finds under root/src."""
    out = subprocess.run(["ctags", "--c++-kinds=f", "--fields=+ne", "--excmd=number", "-o", "-", "-R", "src"],
                         cwd=root, capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) < 4 or parts[3] != "f":
            continue
        name, path = parts[0], parts[1]
        fields = dict(f.split(":", 1) for f in parts[4:] if ":" in f)
        if "line" not in fields or "end" not in fields:
            continue
        first, last = int(fields["line"]), int(fields["end"])
        if name.startswith("__anon"):
            scope = fields.get("function") or fields.get("class") or fields.get("namespace") or "file scope"
            name = f"a lambda in {scope}"
        found.append((last - first + 1, f"{path}:{first}", name))
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", default=ROOT)
    args = p.parse_args()
    found = functions(args.root)
    over = sorted((f for f in found if f[0] > LIMIT), key=lambda f: (-f[0], f[1]))
    if found:
        length, _, name = max(found, key=lambda f: f[0])
        longest = f"longest {length} lines ({name})"
    else:
        longest = "longest 0 lines"
    return report([f"{where}: {name}: {length} lines" for length, where, name in over],
                  f"function length: {len(found)} functions, {longest}, {len(over)} over {LIMIT}", prefix="")


if __name__ == "__main__":
    sys.exit(main())
