#!/usr/bin/env python3
"""Test of the tester for `scripts/mutation_check.py --check-snippets`: a
mutation whose snippet is gone from its file, or occurs twice, is reported;
the real list is checked by CTest with --check-snippets itself."""
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("mutation_check", ROOT / "scripts" / "mutation_check.py")
mutation_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutation_check)

first = mutation_check.MUTATIONS[0]
cases = {
    "present once": ([first], 0),
    "snippet gone": ([(first[0], first[1], first[2] + " /* moved */", *first[3:])], 1),
    "snippet twice": ([(first[0], first[1], "(", *first[3:])], 1),
}
ok = True
for name, (mutations, want) in cases.items():
    mutation_check.MUTATIONS = mutations
    got = len(mutation_check.stale_snippets())
    good = got == want
    ok &= good
    print("ok  " if good else "FAIL", name, f"stale {got}, expected {want}")
sys.exit(0 if ok else 1)
