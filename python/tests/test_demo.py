"""mhalearn.demo runs the CLI's demo (src/cli/demo_run.hpp): the same options,
the same files, the same report; its options are learn's table for the paper's
learner, less the method, the oracle and checkpoints."""
import json
import re

import numpy as np
import pytest

import mhalearn
from mhalearn import _core
from test_options import CLI_ONLY, cli, default_differences, flags, python_defaults, strip

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


def demo_surfaces():
    """(the CLI's demo flags as keywords, Python's demo arguments and option-table keywords)."""
    text = cli("demo", "--help").stdout
    flags = set(re.findall(r"^  (?:-\w,)?--([a-z0-9-]+)", text, re.M)) - set(CLI_ONLY["*"])
    cli_names = {"polish" if f == "no-polish" else "reference" if f == "no-reference" else f.replace("-", "_")
                 for f in flags}
    explicit = python_defaults("demo").keys() | {"out"}
    return cli_names, set(explicit) | {row["keyword"] for row in _core.demo_option_table()}


def test_demo_options_are_the_cli_s():
    cli_names, py_names = demo_surfaces()
    assert sorted(cli_names - py_names) == [] and sorted(py_names - cli_names) == []
    assert default_differences("demo", python_defaults("demo")) == {}
    # Its tester: the table's rows that demo leaves out are not demo's on either surface.
    assert {"method", "oracle", "checkpoint", "resume"} & (cli_names | py_names) == set()


def test_options_demo_does_not_take_are_refused(tmp_path):
    for key, value in [("method", "adam"), ("oracle", "hull"), ("checkpoint", "ck"), ("rounds_", 3)]:
        with pytest.raises(ValueError, match=f"demo: unknown option '{key}'"):
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
