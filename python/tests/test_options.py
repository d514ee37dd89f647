"""learn's options from one table (src/commands/learn_settings.hpp), part of
learn's one declaration: Python takes every option the CLI has, help() shows
each with its default, and the same options give the same run on both
surfaces — the baselines, label noise and checkpoint/resume included. That
every subcommand's --help, Python signature and docs/options.md agree with the
declarations is tests/docs/options_table.py's."""
import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import mhalearn
from mhalearn import _core
from conftest import build_dir

BUDGET = dict(stage1_samples=50000, crude_sculpt_samples=100000, sculpt_samples=200000,
              final_sculpt_samples=200000, margin_samples=400000, rounds=2, net_tuples=500, threads=1,
              test_samples=1000, reference=False)


def flags(options):
    out = []
    for key, value in options.items():
        if key in ("polish", "reference"):
            out += [] if value else [f"--no-{key}"]
        else:
            out += [f"--{key.replace('_', '-')}", str(value)]
    return out


def cli(*args):
    tool = build_dir() / "mhalearn"
    assert tool.is_file(), f"{tool} missing: build the target mhalearn"
    p = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stderr[-2000:]
    return p


@pytest.fixture(scope="module")
def inst(tmp_path_factory):
    path = tmp_path_factory.mktemp("opts") / "inst.json"
    cli("generate", "--d", 6, "--k", 2, "--m", 2, "--seed", 3, "-o", path)
    return path, mhalearn.read_instance(str(path))


def learn_options():
    """The rows of learn's option table (those a method reads), as learn's declaration has them."""
    learn = next(c for c in _core.commands() if c["name"] == "learn")
    return [o for o in learn["options"] if o["python"] and o["methods"]]


def test_every_cli_option_is_a_keyword(inst):
    """Each option of learn's declaration is a keyword learn() recognises: a value of
    the wrong type is refused as such (TypeError naming it), not as an unknown argument."""
    options = learn_options()
    assert len(options) > 30
    for o in options:
        with pytest.raises(TypeError) as e:
            mhalearn.learn(inst[1], **{o["keyword"]: object()})
        assert f"argument '{o['keyword']}' must be" in str(e.value), o


def test_unknown_keyword_is_refused(inst):
    with pytest.raises(TypeError, match="unexpected keyword argument 'rounds_'"):
        mhalearn.learn(inst[1], rounds_=3)


def test_help_lists_every_option_with_its_default():
    doc = mhalearn.learn.__doc__
    for o in learn_options():
        line = next((l for l in doc.splitlines() if l.strip().startswith(o["keyword"] + " (")), None)
        assert line is not None, o["keyword"]
        if o["type"] == "flag":
            assert f"default {o['negated']!r}" in line, (line, o)
        elif o["default"] is not None:
            assert f"default {o['default']!r}" in line, (line, o)
        else:
            assert "default None" in line, (line, o)


def strip(report):
    """A report without clock readings and provenance (which names the surface)."""
    if isinstance(report, dict):
        return {k: strip(v) for k, v in report.items()
                if k not in ("provenance", "seconds", "table") and "seconds" not in k}
    if isinstance(report, list):
        return [strip(v) for v in report]
    return report


@pytest.mark.parametrize("method,options", [
    ("adam", dict(max_samples=20000, batch=64, threads=1, test_samples=1000)),
    ("random-polish", dict(starts=2, max_samples=5000, threads=1, test_samples=1000)),
    ("paper", dict(BUDGET, label_noise=0.01, polish=False)),
])
def test_same_run_from_cli_and_python(inst, tmp_path, method, options):
    path, instance = inst
    report = tmp_path / "report.json"
    layer = tmp_path / "layer.json"
    cli("learn", path, "--method", method, *flags(options), "--report", report, "-o", layer)
    learned, py_report = mhalearn.learn(instance, method=method, **options)
    cli_report = json.loads(report.read_text())
    assert strip(py_report) == strip(cli_report)
    cli_options = {k: v for k, v in cli_report["provenance"]["options"].items() if k not in ("instance", "x", "y")}
    py_options = {k: v for k, v in py_report["provenance"]["options"].items() if k != "source"}
    assert py_options == cli_options
    from_cli = mhalearn.read_instance(str(layer))
    for (t1, w1), (t2, w2) in zip(learned.heads, from_cli.heads):
        assert np.array_equal(t1, t2) and np.array_equal(w1, w2)


def test_checkpoint_and_resume(inst, tmp_path, monkeypatch):
    """Stopped at its third safe point, a run resumed from its checkpoint ends
    with the layer of the run never stopped."""
    instance = inst[1]
    whole, _ = mhalearn.learn(instance, **BUDGET, polish=False)
    ck = str(tmp_path / "ck")
    monkeypatch.setenv("MHALEARN_STOP_AT_SAFE_POINT", "3")
    with pytest.raises(mhalearn.LearnFailed, match="continue with the same command and --resume") as e:
        mhalearn.learn(instance, **BUDGET, polish=False, checkpoint=ck)
    assert e.value.report["interrupted"] and e.value.report["checkpoint"] == ck
    monkeypatch.delenv("MHALEARN_STOP_AT_SAFE_POINT")
    other = str(tmp_path / "other-build")  # the same checkpoint, as if another commit had written it
    shutil.copytree(ck, other)
    manifest = json.loads((tmp_path / "other-build" / "checkpoint.json").read_text())
    manifest["provenance"]["git_commit"] = "0000000"
    (tmp_path / "other-build" / "checkpoint.json").write_text(json.dumps(manifest))
    resumed, _ = mhalearn.learn(instance, **BUDGET, polish=False, resume=ck)
    for (t1, w1), (t2, w2) in zip(whole.heads, resumed.heads):
        assert np.array_equal(t1, t2) and np.array_equal(w1, w2)
    with pytest.raises(ValueError, match="checkpoint of another run"):
        mhalearn.learn(instance, **dict(BUDGET, rounds=3), polish=False, resume=ck)
    with pytest.raises(ValueError, match="another build of mhalearn .*resume_other_build accepts it"):
        mhalearn.learn(instance, **BUDGET, polish=False, resume=other)
    resumed, report = mhalearn.learn(instance, **BUDGET, polish=False, resume=other, resume_other_build=True)
    for (t1, w1), (t2, w2) in zip(whole.heads, resumed.heads):
        assert np.array_equal(t1, t2) and np.array_equal(w1, w2)
    for provenance in (report["provenance"], resumed.provenance):
        assert [(b["git_commit"], b["until"]) for b in provenance["earlier_builds"]] == \
            [("0000000", e.value.report["safe_point"])]


def test_verify_at_a_layer_from_python(inst):
    """verify's --layer from Python: polishing's objective at another layer, and
    refused without the polish stage."""
    instance = inst[1]
    rows = mhalearn.verify(instance, ["polish"], layer=instance)
    assert [r["stage"] for r in rows if r["verdict"] != "agree"] == []
    with pytest.raises(ValueError, match="layer applies to the polish stage"):
        mhalearn.verify(instance, ["forward"], layer=instance)
