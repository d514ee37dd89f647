"""mhalearn.demo runs the CLI's demo (src/commands/demo_run.hpp): the same
options, the same files, the same report; its options are learn's table for the
paper's learner, less the method, the oracle and checkpoints."""
import inspect
import json

import numpy as np
import pytest

import mhalearn
from mhalearn import _core
from test_options import cli, flags, strip

# A small instance and budget: the demo's steps in a few seconds.
SHAPE = dict(d=6, k=2, m=2, seed=3)
BUDGET = dict(stage1_samples=50000, crude_sculpt_samples=100000, sculpt_samples=200000,
              final_sculpt_samples=200000, margin_samples=400000, rounds=2, net_tuples=500, threads=1,
              test_samples=1000, reference=False, polish=False)


def heads(path):
    return mhalearn.read_instance(str(path)).heads


def same_layer(a, b):
    return all(np.array_equal(t1, t2) and np.array_equal(w1, w2) for (t1, w1), (t2, w2) in zip(a, b))


def test_same_demo_from_cli_and_python(tmp_path):
    options = dict(SHAPE, write_samples=100, cross_check=32, **BUDGET)
    cli("demo", "--out", tmp_path / "cli", *flags(options))
    report, text = mhalearn.demo(str(tmp_path / "py"), **options)
    assert strip(report) == strip(json.loads((tmp_path / "cli" / "report.json").read_text()))
    assert report == json.loads((tmp_path / "py" / "report.json").read_text())
    for name in ("instance.json", "learned.json"):
        assert same_layer(heads(tmp_path / "cli" / name), heads(tmp_path / "py" / name)), name
    for name in ("X.npy", "Y.npy"):
        assert np.array_equal(np.load(tmp_path / "cli" / name), np.load(tmp_path / "py" / name)), name
    assert text.startswith("mhalearn demo: (d,k,m) = (6,2,2)") and "[report] wrote" in text
    # Its tester: another sample seed is another run.
    other, _ = mhalearn.demo(str(tmp_path / "other"), sample_seed=2, **options)
    assert strip(other) != strip(report)


def test_demo_takes_the_paper_learner_s_options():
    """Its declaration: learn's options for the paper's learner, less the method, the
    oracle, the validation set and checkpoints (tests/docs/options_table.py checks that
    --help and the signature are the declaration)."""
    params = set(inspect.signature(mhalearn.demo).parameters)
    learn = next(c for c in _core.commands() if c["name"] == "learn")
    paper = {o["keyword"] for o in learn["options"] if o["methods"] & 1 and o["python"]}
    excluded = {"method", "oracle", "checkpoint", "resume", "validation_samples"}
    assert paper - excluded - {"source", "x", "y", "seed", "m", "label_noise"} <= params
    assert excluded & params == set()


def test_options_demo_does_not_take_are_refused(tmp_path):
    for key, value in [("method", "adam"), ("oracle", "hull"), ("checkpoint", "ck"), ("rounds_", 3)]:
        with pytest.raises(TypeError, match=f"mhalearn.demo: unexpected keyword argument '{key}'"):
            mhalearn.demo(str(tmp_path / "x"), **{key: value})
    with pytest.raises(ValueError, match="demo: "):
        mhalearn.demo(str(tmp_path / "x"), d=4, k=8)
    assert not (tmp_path / "x").exists()


def test_a_learner_that_stops_raises_with_the_report(tmp_path):
    """Too few samples for stage 2 to certify anything: LearnFailed, the report written."""
    with pytest.raises(mhalearn.LearnFailed) as e:
        mhalearn.demo(str(tmp_path / "f"), **SHAPE, **dict(BUDGET, crude_sculpt_samples=10, sculpt_samples=10))
    assert e.value.report == json.loads((tmp_path / "f" / "report.json").read_text())
    assert not e.value.report["learn"]["ok"]
