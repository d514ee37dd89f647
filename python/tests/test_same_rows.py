"""One verdict everywhere: `mhalearn verify`, `mhalearn learn`, `mhalearn demo`
and the Python module report the same rows for the same inputs, because they
call the same comparison functions (src/stages/*/check.hpp,
model/forward_check.hpp). Every key of every row must match except `seconds`
(wall time). The CLI is the release binary next to this module's build."""
import json
import pathlib
import subprocess
import warnings

import pytest

import mhalearn
from conftest import build_dir

BUDGET = dict(stage1_samples=100000, crude_sculpt_samples=200000, sculpt_samples=400000,
              final_sculpt_samples=400000, margin_samples=1000000, rounds=2, net_tuples=2000, threads=1,
              test_samples=1000)
SEED = 5


def flags(options):
    return [a for key, value in options.items() for a in (f"--{key.replace('_', '-')}", str(value))]


def same(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tool = build_dir() / "mhalearn"
    assert tool.is_file(), f"{tool} missing: build the target mhalearn"
    tmp = tmp_path_factory.mktemp("rows")

    def cli(*args):
        p = subprocess.run([str(tool), *args], capture_output=True, text=True, timeout=1200)
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout

    demo = tmp / "demo"
    cli("demo", "--d", "10", "--k", "2", "--m", "2", "--scale", "3", "--seed", "12", "--out", str(demo),
        "--sample-seed", str(SEED), "--cross-check", "64", "--write-samples", "0", *flags(BUDGET))
    instance = demo / "instance.json"
    verify_rows = json.loads(cli("verify", "all", "--json", "--instance", str(instance), "--seed", str(SEED)))
    learn_report = tmp / "learn.json"
    cli("learn", str(instance), "--seed", str(SEED), "--report", str(learn_report), *flags(BUDGET))
    return {"instance": mhalearn.read_instance(str(instance)), "verify": verify_rows,
            "demo": json.loads((demo / "report.json").read_text()), "learn": json.loads(learn_report.read_text())}


def test_demo_cross_check_is_verify_forward(runs):
    forward = [r for r in runs["verify"] if r["stage"] == "forward"]
    assert same([runs["demo"]["cross_check"]]) == same(forward)


def test_python_verify_is_cli_verify(runs):
    assert [r["stage"] for r in runs["verify"]] == ["forward", "1", "2", "3", "4", "5", "6", "polish"]
    assert same(mhalearn.verify(runs["instance"], ["all"], seed=SEED)) == same(runs["verify"])


def test_learn_rows_are_the_same_in_cli_learn_demo_and_python(runs):
    cli_rows = runs["learn"]["reference"]
    assert {r["stage"] for r in cli_rows} >= {"forward", "1", "2", "3", "5", "6", "polish"}
    assert same(runs["demo"]["learn"]["reference"]) == same(cli_rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mhalearn.LearnerDiagnostic)
        _, report = mhalearn.learn(runs["instance"], seed=SEED, **BUDGET)
    assert same(report["reference"]) == same(cli_rows)
    assert report.get("diagnostics", []) == runs["learn"].get("diagnostics", [])


def test_a_changed_row_is_seen():
    """The test of the test: `same` keeps every key but wall time."""
    row = {"stage": "1", "bound": 1.0, "seconds": 0.1}
    assert same([row]) != same([dict(row, bound=1.0000000000000002)])
    assert same([row]) == same([dict(row, seconds=9.0)])
