"""One verdict in Python: with each stage's fast path swapped for its wrong copy
(the test copy of the module, build/<preset>/python_faulty, reads
MHALEARN_INJECT_FAULT as `mhalearn_faulty` does), `mhalearn.learn` and
`mhalearn.verify` raise ReferenceDisagreement naming that stage, on the runs
tests/cli/fault_injection.py makes through the CLI; without a fault they return.

The faulty module runs in a child interpreter: this one has the release module
imported."""
import json
import os
import pathlib
import subprocess
import sys

import mhalearn
from conftest import build_dir

STAGES = ["forward", "1", "2", "3", "4", "5", "6", "polish"]
# 2 and 4 share the certification fast path: a fault in either may be named by either.
NAMED = {s: {s} for s in STAGES}
NAMED["2"] = NAMED["4"] = {"2", "4"}
# The CLI test's instance and learn budget (tests/cli/fault_injection.py).
LEARN = dict(stage1_samples=100000, crude_sculpt_samples=200000, sculpt_samples=400000,
             final_sculpt_samples=400000, margin_samples=1000000, rounds=2, net_tuples=2000, threads=1,
             test_samples=1000)

CHILD = r"""
import json, os, sys, warnings
import mhalearn
warnings.simplefilter("ignore", mhalearn.LearnerDiagnostic)
stages, learn_options = json.loads(sys.argv[1])
inst = mhalearn.generate(10, 2, 2, scale=3, seed=12)
out = {}
for stage in [None] + stages:
    if stage is None:
        os.environ.pop("MHALEARN_INJECT_FAULT", None)
    else:
        os.environ["MHALEARN_INJECT_FAULT"] = stage
    result = {}
    for call in ("verify", "learn"):
        try:
            if call == "verify":
                mhalearn.verify(inst, ["all"] if stage is None else [stage])
            else:
                mhalearn.learn(inst, **learn_options)
            result[call] = {"raised": False}
        except mhalearn.ReferenceDisagreement as e:
            result[call] = {"raised": True, "stages": sorted({r["stage"] for r in e.rows}), "message": str(e),
                            "rows_disagree": all(r["verdict"] == "DISAGREE" for r in e.rows)}
    out[stage or "none"] = result
print(json.dumps(out))
"""


def faulty_package():
    build = build_dir()
    path = build / "python_faulty"
    assert (path / "mhalearn").is_dir(), f"{path} missing: build the target mhalearn_python_faulty"
    return path


def run_child(stages):
    env = dict(os.environ, PYTHONPATH=str(faulty_package()))
    env.pop("MHALEARN_INJECT_FAULT", None)
    p = subprocess.run([sys.executable, "-c", CHILD, json.dumps([stages, LEARN])], env=env, capture_output=True,
                       text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.splitlines()[-1]), p.stderr


def test_each_stage_fault_raises_in_learn_and_verify_and_none_without():
    results, stderr = run_child(STAGES)
    assert results["none"] == {"verify": {"raised": False}, "learn": {"raised": False}}
    for stage in STAGES:
        for call in ("verify", "learn"):
            r = results[stage][call]
            assert r["raised"], f"fault in {stage}: mhalearn.{call} returned normally"
            assert r["rows_disagree"]
            assert set(r["stages"]) <= NAMED[stage] and r["stages"], (stage, call, r)
        assert f"fault injected into stage {stage}" in stderr


def test_the_release_module_ignores_the_switch(monkeypatch):
    monkeypatch.setenv("MHALEARN_INJECT_FAULT", "forward")
    inst = mhalearn.generate(10, 2, 2, scale=3, seed=12)
    rows = mhalearn.verify(inst, ["forward"])
    assert rows[0]["verdict"] == "agree"


def test_the_child_can_fail():
    """The test of the test: the child's verdicts come from the faulty module, so
    a stage name the switch does not know is bad input there (ValueError)."""
    env = dict(os.environ, PYTHONPATH=str(faulty_package()), MHALEARN_INJECT_FAULT="7")
    p = subprocess.run([sys.executable, "-c", "import mhalearn; mhalearn.verify(mhalearn.generate(8, 2, 2), ['1'])"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode != 0 and "MHALEARN_INJECT_FAULT=7 is not a stage" in p.stderr
