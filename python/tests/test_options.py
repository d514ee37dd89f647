"""learn's options from one table (src/cli/learn_settings.hpp): Python takes
every option the CLI has, help() shows each with its default, and the same
options give the same run on both surfaces — the baselines, label noise and
checkpoint/resume included."""
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


def test_every_cli_option_is_a_keyword(inst):
    """Each row of the table is a keyword learn() recognises: a value of the
    wrong type is refused as such, not as an unknown option."""
    rows = _core.learn_option_table()
    assert len(rows) > 30
    for row in rows:
        with pytest.raises((ValueError, TypeError)) as e:
            mhalearn.learn(inst[1], **{row["keyword"]: object()})
        assert "unknown option" not in str(e.value), row


def test_unknown_keyword_is_refused(inst):
    with pytest.raises(ValueError, match="unknown option 'rounds_'"):
        mhalearn.learn(inst[1], rounds_=3)


def test_help_lists_every_option_with_its_default():
    doc = mhalearn.learn.__doc__
    for row in _core.learn_option_table():
        line = next((l for l in doc.splitlines() if l.strip().startswith(row["keyword"] + " (")), None)
        assert line is not None, row["keyword"]
        default = {"false": "True", "true": "False"}.get(row["default"]) if row["negated"] else row["default"]
        assert f"default {default}" in line, (line, row)


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


# The other subcommands: every CLI option has a Python argument of the same
# name, but those that only concern files and printing, which Python returns
# as values instead. A new CLI option fails this test until Python has it (or
# it is listed here with its reason).
CLI_ONLY = {
    "*": {"help": "CLI11's help", "quiet": "progress lines of the CLI", "json": "the CLI prints JSON; Python returns dicts",
          "output": "a file to write; Python returns the value", "report": "a file to write; Python returns the rows"},
    "sample": {"x": "files to write; Python returns (X, Y)", "y": "files to write; Python returns (X, Y)"},
    "check": {"strict": "an exit status; Python returns the report with each verdict"},
    "hard": {"study_data": "a file to write; Python returns the study's rows in its report"},
}
PYTHON_ONLY = {"verify": {"stages": "the CLI's positional stages"}, "generate": set(), "sample": {"instance": "the CLI's positional instance"},
               "forward": {"instance": "the CLI's positional instance"}, "check": {"instance": "the CLI's positional instance"},
               "stage1": {"instance": "the CLI's positional instance"}, "sculpt": {"instance": "the CLI's positional instance"}}
# Python's name of a subcommand: its name with '-' as '_'.
SUBCOMMANDS = ["generate", "check", "sample", "forward", "import", "verify", "stage1", "sculpt", "hard", "study-wsum"]


def python_name(subcommand):
    """mhalearn.import_attention for `import` (a Python keyword); the others with '-' as '_'."""
    return {"import": "import_attention"}.get(subcommand, subcommand.replace("-", "_"))


def python_arguments(name):
    import inspect
    name = python_name(name)
    fn = getattr(mhalearn, name)
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # a pybind11 function: its signature is the docstring's first line
        first = getattr(_core, name).__doc__.splitlines()[0]
        inner = first[first.index("(") + 1:first.rindex(") ->")]
        return {p.split(":")[0].strip() for p in mhalearn._split_top_level(inner) if p.strip() not in ("*", "/")}


def surface_difference(name, cli_only):
    """(CLI options without a Python argument, Python arguments without a CLI option)."""
    import re
    text = cli(name, "--help").stdout
    flags = set(re.findall(r"^  (?:-\w,)?--([a-z0-9-]+)", text, re.M))
    cli_names = {f.replace("-", "_") for f in flags} - set(cli_only["*"]) - set(cli_only.get(name, {}))
    py_names = python_arguments(name) - set(PYTHON_ONLY.get(python_name(name), {}))
    return sorted(cli_names - py_names), sorted(py_names - cli_names)


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_option_is_a_python_argument(name):
    assert surface_difference(name, CLI_ONLY) == ([], [])


def test_the_surface_check_sees_a_cli_option_python_lacks():
    """Its test of the tester: without check's --strict excused, check differs."""
    assert surface_difference("check", {"*": CLI_ONLY["*"]}) == (["strict"], [])


def python_defaults(name):
    """{argument: default} of the arguments that have one (None: "as the CLI's")."""
    import inspect
    name = python_name(name)
    fn = getattr(mhalearn, name)
    try:
        return {k: p.default for k, p in inspect.signature(fn).parameters.items()
                if p.default is not inspect.Parameter.empty and p.default is not None}
    except (TypeError, ValueError):
        first = getattr(_core, name).__doc__.splitlines()[0]
        inner = first[first.index("(") + 1:first.rindex(") ->")]
        out = {}
        for p in mhalearn._split_top_level(inner):
            if "=" in p:
                key, value = p.split("=", 1)
                if value.strip() != "None":  # None: "as the CLI's" (or not given)
                    out[key.split(":")[0].strip()] = value.strip().strip("'")
        return out


def same_default(cli_value, py_value):
    if isinstance(py_value, (list, str)) and str(py_value).startswith("["):  # a list: "[8,16,32]" on both sides
        return str(cli_value).replace(" ", "") == str(py_value).replace(" ", "")
    try:
        return float(cli_value) == float(py_value)
    except (TypeError, ValueError):
        return str(cli_value) == str(py_value)


def default_differences(name, py):
    """{argument: (CLI default, Python default)} where both have one and they differ."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "docs"))
    import options_table
    cli_defaults = {flag[2:].replace("-", "_"): default
                    for flag, (default, _) in options_table.parse_help(cli(name, "--help").stdout).items() if default}
    return {k: (cli_defaults[k], py[k]) for k in set(cli_defaults) & set(py) if not same_default(cli_defaults[k], py[k])}


@pytest.mark.parametrize("name", [n for n in SUBCOMMANDS if n != "check"])
def test_every_subcommand_default_is_python_s(name):
    """Where both surfaces have a default (Python's threads=None means the CLI's), it is the same."""
    assert default_differences(name, python_defaults(name)) == {}


def test_the_default_check_sees_a_changed_default():
    """Its test of the tester: generate's scale 7 in Python against the CLI's 6."""
    assert default_differences("generate", dict(python_defaults("generate"), scale=7.0)) == {"scale": ("6", 7.0)}


def test_verify_at_a_layer_from_python(inst):
    """verify's --layer from Python: polishing's objective at another layer, and
    refused without the polish stage."""
    instance = inst[1]
    rows = mhalearn.verify(instance, ["polish"], layer=instance)
    assert [r["stage"] for r in rows if r["verdict"] != "agree"] == []
    with pytest.raises(ValueError, match="layer applies to the polish stage"):
        mhalearn.verify(instance, ["forward"], layer=instance)
