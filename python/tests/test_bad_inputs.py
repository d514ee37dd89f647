"""The Python module's part of the bad-input suite: every `py` line of
tests/cli/bad_inputs.txt raises its exception with one line holding its
fragment, in a folder of its own that the call leaves as it was (the CLI's
lines are run by tests/cli/bad_inputs.py)."""
import hashlib
import os
import pathlib
import re

import numpy as np
import pytest

import mhalearn as mh

CASES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "cli" / "bad_inputs.txt"


def py_cases():
    out = []
    for number, line in enumerate(CASES.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        kind, exception, fragment, expression = [x.strip() for x in line.split("|", 3)]
        if kind == "py":
            out.append(pytest.param(exception, fragment, expression, id=f"line{number}"))
    return out


# Every message names the call it came from, as the CLI's name their subcommand.
PREFIX = re.compile(r"^mhalearn(\.[A-Za-z_][A-Za-z0-9_]*)?: ")


def names_its_call(message):
    return bool(PREFIX.match(message))


def test_the_prefix_check_rejects_a_message_without_its_call():  # the tester of the check below
    assert names_its_call("mhalearn.sample: n must be in 1..2^40, got 0")
    assert not names_its_call("sample: n must be in 1..2^40, got 0")
    assert not names_its_call("cannot open missing.json: No such file or directory")


def snapshot(folder):
    """{relative path: sha256 or "dir"} of everything under folder."""
    out = {}
    for base, dirs, files in os.walk(folder):
        for name in dirs:
            out[os.path.relpath(os.path.join(base, name), folder) + "/"] = "dir"
        for name in files:
            path = os.path.join(base, name)
            out[os.path.relpath(path, folder)] = hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The cases' folder: inst.json, X.npy, Y.npy and a regular file, afile."""
    d = tmp_path_factory.mktemp("bad_inputs")
    inst = mh.generate(8, 2, 2, seed=1)
    mh.write_instance(str(d / "inst.json"), inst)
    X, Y = mh.sample(inst, 64, seed=1)
    np.save(d / "X.npy", X)
    np.save(d / "Y.npy", Y)
    (d / "afile").write_text("a regular file\n")
    return d, {"mh": mh, "np": np, "pathlib": pathlib, "inst": inst, "X": X, "Y": Y, "W": np.eye(8)}


def test_the_suite_has_python_cases():
    assert len(py_cases()) >= 130


@pytest.mark.parametrize("exception,fragment,expression", py_cases())
def test_bad_input(folder, monkeypatch, exception, fragment, expression):
    d, namespace = folder
    monkeypatch.chdir(d)
    before = snapshot(d)
    with pytest.raises(Exception) as info:
        eval(expression, dict(namespace))
    message = str(info.value)
    assert type(info.value).__name__ == exception, f"{expression}: {type(info.value).__name__}: {message}"
    assert "\n" not in message, f"{expression}: a multi-line message: {message}"
    assert fragment.lower() in message.lower(), f"{expression}: '{fragment}' not in: {message}"
    assert names_its_call(message), f"{expression}: the message does not begin with mhalearn.<call>: {message}"
    assert snapshot(d) == before, f"{expression}: the folder changed"
