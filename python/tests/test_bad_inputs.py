"""The Python module's part of the bad-input suite: every `py` line of
tests/cli/bad_inputs.txt raises its exception with one line holding its
fragment (the CLI's lines are run by tests/cli/bad_inputs.py)."""
import pathlib

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


@pytest.fixture(scope="module")
def namespace():
    inst = mh.generate(8, 2, 2, seed=1)
    X, Y = mh.sample(inst, 64, seed=1)
    W = np.eye(8)
    return {"mh": mh, "np": np, "inst": inst, "X": X, "Y": Y, "W": W}


def test_the_suite_has_python_cases():
    assert len(py_cases()) >= 30


@pytest.mark.parametrize("exception,fragment,expression", py_cases())
def test_bad_input(namespace, exception, fragment, expression):
    with pytest.raises(Exception) as info:
        eval(expression, dict(namespace))
    message = str(info.value)
    assert type(info.value).__name__ == exception, f"{expression}: {type(info.value).__name__}: {message}"
    assert "\n" not in message, f"{expression}: a multi-line message: {message}"
    assert fragment.lower() in message.lower(), f"{expression}: '{fragment}' not in: {message}"
