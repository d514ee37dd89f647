#!/usr/bin/env python3
"""The cross-page check's tester: a planted disagreement and a drifted fact are both reported, and
what is not a disagreement (one number at two precisions, a thread count that does not reach it,
two learners' runs) is not.

  python3 tests/docs/test_cross_page.py
"""
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cross_page  # noqa: E402


def run_of(learner="commit 1111111", threads=2, horizon=20000000, instance="d32"):
    return {"command": f"learn max_samples={horizon} method=adam seed=1 threads={threads}", "instance": instance,
            "learner": learner}


def write_docs(folder, pages, facts):
    """pages: {name: text}, written to FOLDER/pages/; facts: {page name: [(run, quantity, text, row)]}, to
    FOLDER/docs/facts/ (a page's path is the repository's, here FOLDER's)."""
    docs = os.path.join(folder, "docs")
    os.makedirs(os.path.join(docs, "facts"))
    os.makedirs(os.path.join(folder, "pages"))
    for name, text in pages.items():
        with open(os.path.join(folder, "pages", name), "w") as f:
            f.write(text)
    for name, items in facts.items():
        runs, rows = {}, []
        for n, (run, quantity, text, row) in enumerate(items):
            runs[f"k{n}"] = run
            rows.append([f"k{n}", quantity, text, row])
        with open(os.path.join(docs, "facts", name.replace(".md", ".json")), "w") as f:
            json.dump({"page": f"pages/{name}", "runs": runs, "facts": rows}, f)
    return docs


def check(docs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cross_page.main(["--docs", docs])
    return status, out.getvalue()


PAGE_A = "| (32,2,2) | 6 | 1.6e+07 | 450 |\n| (64,2,2) | 6 | not reached |\n"
PAGE_B = "| (32,2,2) | 1.64e+07 |\n| (64,2,2) | 1.81e+07 |\n| (8,2,2) | 2.4e+06 |\n"


def test_agreeing_facts_pass():
    folder = tempfile.mkdtemp(prefix="test-cross-page-")
    try:
        docs = write_docs(folder, {"a.md": PAGE_A, "b.md": PAGE_B}, {
            "a.md": [(run_of(), "Adam's samples to 1e-3", "1.6e+07", "(32,2,2) | 6"),
                     (run_of(), "wall seconds (report)", "450", "(32,2,2)")],
            # 1.64e+07 is 1.6e+07 at the coarser precision; 3 threads do not reach a sample count; the
            # (64,2,2) facts are two learners' runs, not one run's.
            "b.md": [(run_of(threads=3), "Adam's samples to 1e-3", "1.64e+07", "(32,2,2)"),
                     (run_of(learner="commit 2222222", instance="d64"), "Adam's samples to 1e-3", "1.81e+07",
                      "(64,2,2)")]})
        with open(os.path.join(docs, "facts", "a2.json"), "w") as f:
            json.dump({"page": "pages/a.md", "runs": {"k": run_of(instance="d64")}, "facts": [["k", "Adam's samples to 1e-3",
                                                                               "not reached", "(64,2,2)"]]}, f)
        status, out = check(docs)
        assert status == 0 and "0 problems" in out, out
    finally:
        shutil.rmtree(folder)


def test_a_planted_disagreement_and_a_drifted_fact_are_reported():
    folder = tempfile.mkdtemp(prefix="test-cross-page-")
    try:
        docs = write_docs(folder, {"a.md": PAGE_A, "b.md": PAGE_B.replace("1.64e+07", "3.41e+07")}, {
            "a.md": [(run_of(), "Adam's samples to 1e-3", "1.6e+07", "(32,2,2)"),
                     # drifted: the page says 450, the fact 449.68 (its page was written again, its facts not)
                     (run_of(), "wall seconds (report)", "449.68", "(32,2,2)")],
            "b.md": [(run_of(), "Adam's samples to 1e-3", "3.41e+07", "(32,2,2)"),
                     # the same run, text against a number: a disagreement too
                     (run_of(), "Adam's samples to 1e-3", "not reached", "(64,2,2)")]})
        status, out = check(docs)
        assert status == 1, out
        disagree = [line for line in out.splitlines() if line.startswith("DISAGREE")]
        drifted = [line for line in out.splitlines() if line.startswith("DRIFTED")]
        assert any("1.6e+07 on pages/a.md" in line and "3.41e+07 on pages/b.md" in line for line in disagree), out
        assert any("not reached" in line for line in disagree), out
        assert any("'449.68'" in line and "pages/a.md" in line for line in drifted), out
        # Another horizon is another run: no disagreement (the rule's horizon is part of the run).
        docs2 = write_docs(os.path.join(folder, "2"), {"a.md": PAGE_A, "b.md": PAGE_B.replace("1.64e+07", "3.41e+07")}, {
            "a.md": [(run_of(), "Adam's samples to 1e-3", "1.6e+07", "(32,2,2)")],
            "b.md": [(run_of(horizon=40000000), "Adam's samples to 1e-3", "3.41e+07", "(32,2,2)")]})
        assert check(docs2)[0] == 0
    finally:
        shutil.rmtree(folder)


def test_printed_precision():
    assert cross_page.printed_value("4.2e+07") == (4.2e7, 1e6)
    assert cross_page.printed_value("1,234") == (1234.0, 1.0) and cross_page.printed_value("449.68")[1] == 0.01
    assert cross_page.printed_value("not reached") is None
    assert cross_page.agree("4.22e+07", "4.2e+07") and not cross_page.agree("4.26e+07", "4.2e+07")
    assert cross_page.agree("450", "449.68") and not cross_page.agree("450", "449.4")
    assert cross_page.agree("not reached", "not reached") and not cross_page.agree("not reached", "2.0e+07")


def main():
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    failed = 0
    for name, test in tests:
        try:
            test()
            print(f"ok    {name}")
        except Exception as e:  # noqa: BLE001
            failed += 1
            print(f"FAIL  {name}: {type(e).__name__}: {e}")
    print(f"{len(tests) - failed} of {len(tests)} tests passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
