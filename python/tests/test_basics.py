"""generate / check / sample / forward / instance files, and bad input."""
import json

import numpy as np
import pytest

import mhalearn


@pytest.fixture(scope="module")
def inst():
    return mhalearn.generate(8, 2, 2, scale=3, seed=21)


def test_generate_is_an_instance_with_its_provenance(inst):
    assert (inst.d, inst.k, inst.m, inst.inputs) == (8, 2, 2, "boolean")
    assert len(inst.heads) == 2
    theta, w = inst.heads[0]
    assert theta.shape == (8, 8) and w.shape == (8, 8) and theta.dtype == np.float64
    # ‖Θ_i‖_F = scale: the generator rescales to it, and the norm of d² entries is
    # computed twice (there and here) with relative error ≤ (d² + 2)·eps each.
    assert abs(np.linalg.norm(theta) - 3) <= 2 * (theta.size + 2) * np.finfo(float).eps * 3
    assert np.allclose(inst.w_sum, inst.heads[0][1] + inst.heads[1][1])
    assert inst.provenance["command"] == "generate" and inst.provenance["seed"] == 21
    # Same seed, same instance: bit for bit.
    again = mhalearn.generate(8, 2, 2, scale=3, seed=21)
    assert all(np.array_equal(a, b) for h, g in zip(inst.heads, again.heads) for a, b in zip(h, g))


def test_check_reports_the_conditions(inst):
    report = mhalearn.check(inst)
    assert len(report["checks"]) == 13
    names = {c["name"] for c in report["checks"]}
    assert "theta_incoherence" in names


def test_sample_and_forward_fast_and_reference_agree(inst):
    X, Y = mhalearn.sample(inst, 300, seed=4, threads=2)
    assert X.shape == (300, 2, 8) and X.dtype == np.int8 and set(np.unique(X)) == {-1, 1}
    assert Y.shape == (300, 2, 8) and Y.dtype == np.float64
    # Thread count does not change the bytes; the seed does.
    X1, Y1 = mhalearn.sample(inst, 300, seed=4, threads=1)
    assert np.array_equal(X, X1) and np.array_equal(Y, Y1)
    assert not np.array_equal(X, mhalearn.sample(inst, 300, seed=5)[0])
    fast = mhalearn.forward(inst, X)
    assert np.array_equal(fast, Y)  # the oracle's labels are the fast path
    ref = mhalearn.forward(inst, X, path="reference", precision=200)
    assert np.max(np.abs(fast - ref)) <= 1e-12 * max(1.0, np.max(np.abs(ref)))
    # float64 inputs and one sequence (k, d) give the same values.
    assert np.array_equal(mhalearn.forward(inst, X.astype(np.float64)), fast)
    assert np.array_equal(mhalearn.forward(inst, X[7].astype(np.float64)), fast[7])


def test_forward_matches_the_formula(inst):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 8))
    expected = np.zeros((3, 8))
    for theta, w in inst.heads:
        logits = x @ theta @ x.T
        a = np.exp(logits - logits.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        expected += a @ x @ w
    got = mhalearn.forward(inst, x)
    assert np.max(np.abs(got - expected)) <= 1e-12 * np.max(np.abs(expected))


def test_instance_files_round_trip(inst, tmp_path):
    path = str(tmp_path / "inst.json")
    mhalearn.write_instance(path, inst)
    back = mhalearn.read_instance(path)
    assert all(np.array_equal(a, b) for h, g in zip(inst.heads, back.heads) for a, b in zip(h, g))
    assert json.loads(back.to_json())["format"] == "mhalearn.instance"
    built = mhalearn.Instance(inst.heads, k=2)
    assert np.array_equal(mhalearn.forward(built, np.ones((2, 8))), mhalearn.forward(inst, np.ones((2, 8))))


def one_line(excinfo):
    message = str(excinfo.value)
    assert "\n" not in message and message
    return message


@pytest.mark.parametrize("call, needle", [
    (lambda i: mhalearn.generate(8, 2, 0), "m must be in 1..64, got 0"),
    (lambda i: mhalearn.generate(8, 2, 2, inputs="uniform"), "inputs: 'uniform' is not one of boolean, gaussian"),
    (lambda i: mhalearn.forward(i, np.ones((4, 2, 7))), "X: token dimension is 7, the instance has d = 8"),
    (lambda i: mhalearn.forward(i, np.full((4, 2, 8), 2, dtype=np.int8)), "X: int8 inputs must be ±1, found 2 at flat index 0"),
    (lambda i: mhalearn.forward(i, np.full((1, 2, 8), np.nan)), "X: non-finite input at flat index 0"),
    (lambda i: mhalearn.forward(i, np.ones((2, 8), dtype=np.float16)),
     "got dtype float16; inputs X: shape (N, k, d); int8 with entries ±1 (Boolean inputs), or float64 or float32"),
    (lambda i: mhalearn.forward(i, np.ones(8)), "expected a 3-D array (N, k, d) or one sequence (k, d)"),
    (lambda i: mhalearn.forward(i, np.ones((2, 8)), path="slow"), "path: 'slow' is not one of fast, reference"),
    (lambda i: mhalearn.forward(i, np.ones((2, 8)), path="reference", precision=10), "precision must be in 53..2^16, got 10"),
    (lambda i: mhalearn.sample(i, 0), "n must be in"),
    (lambda i: mhalearn.read_instance("/nonexistent/inst.json"), "/nonexistent/inst.json"),
    (lambda i: mhalearn.Instance([(np.eye(8), np.eye(7))], k=2), "head"),
    (lambda i: mhalearn.import_attention(np.eye(8), np.eye(8), np.eye(8), np.eye(8), 3),
     "cannot import attention weights: d = 8 is not divisible by the number of heads 3"),
    (lambda i: mhalearn.learn(i, rounds=0), "rounds must be in 1..20, got 0"),
    (lambda i: mhalearn.learn(np.ones((5, 1, 8), dtype=np.int8), np.zeros((5, 1, 8)), 1),
     "k = 1: the learners need k >= 2"),
    (lambda i: mhalearn.learn(np.ones((5, 2, 8), dtype=np.int8), np.zeros((4, 2, 8)), 1), "X has shape (5, 2, 8) but Y has shape (4, 2, 8)"),
])
def test_bad_input_raises_value_error_with_one_line(inst, call, needle):
    with pytest.raises(ValueError) as excinfo:
        call(inst)
    assert needle in one_line(excinfo)


def test_a_wrong_argument_is_a_type_error_naming_it(inst):
    with pytest.raises(TypeError) as excinfo:
        mhalearn.learn(inst, colour="blue")
    assert "mhalearn.learn: unexpected keyword argument 'colour'" in one_line(excinfo)


def test_paths_may_be_pathlike(inst, tmp_path):
    """Every path argument takes str, bytes or os.PathLike (pathlib.Path)."""
    import pathlib
    path = tmp_path / "inst.json"
    mhalearn.write_instance(path, inst)
    for p in (path, str(path), bytes(path)):
        assert mhalearn.read_instance(p).d == 8
    assert mhalearn.check(path)["all_pass"] == mhalearn.check(inst)["all_pass"]
    X, _ = mhalearn.sample(path, 20, seed=1)
    np.save(tmp_path / "X.npy", X)
    assert np.array_equal(mhalearn.forward(path, pathlib.Path(tmp_path / "X.npy")), mhalearn.forward(inst, X))


def test_bad_instance_file_gives_the_cli_message(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "mhalearn.instance", "schema_version": 1, "d": 2')
    with pytest.raises(ValueError) as excinfo:
        mhalearn.read_instance(str(path))
    assert one_line(excinfo).startswith(f"mhalearn.read_instance: {path}")


def test_a_learner_run_that_cannot_finish_raises_learn_failed_with_its_report():
    inst = mhalearn.generate(8, 2, 1, scale=3, seed=2)
    X, Y = mhalearn.sample(inst, 3000, seed=1)
    with pytest.raises(mhalearn.LearnFailed) as excinfo:
        mhalearn.learn(X, Y, 1, threads=1, polish=False)
    assert "the dataset ran out in round 0 after 3000 samples" in one_line(excinfo)
    assert excinfo.value.report["ok"] is False
    assert isinstance(excinfo.value, RuntimeError)


def test_fast_path_overflow_raises_instead_of_returning_nan():
    """Inputs of 1e154 overflow the fast path's logits (CLI exit 3); the reference path answers."""
    inst = mhalearn.generate(8, 2, 2, inputs="gaussian", seed=5)
    X = np.full((3, 2, 8), 1e154)
    with pytest.raises(OverflowError, match="overflows double on the fast path"):
        mhalearn.forward(inst, X)
    Y = mhalearn.forward(inst, X, path="reference", precision=200)
    assert np.isfinite(Y).all()


def test_verify_compares_fast_and_reference_paths(inst):
    rows = mhalearn.verify(inst, ["forward", "6"])
    assert [r["stage"] for r in rows] == ["forward", "6"]
    for r in rows:
        assert r["verdict"] == "agree" and r["compared"] > 0
        assert 0 <= r["max_difference"] <= r["bound"] and r["slack"] <= 1
    assert rows[0]["precision"] == "MPFR 128"
    with pytest.raises(ValueError, match="unknown stage 'seven'"):
        mhalearn.verify(inst, ["seven"])


def test_learn_with_oracle_stages_marks_them_and_refuses_arrays():
    inst = mhalearn.generate(10, 2, 2, scale=3, seed=2)
    layer, report = mhalearn.learn(inst, oracle="hull", polish=False, reference=False, net_tuples=2000,
                                   test_samples=1000, threads=2)
    supplied = [s for s in report["stages"] if s.get("oracle")]
    assert [s["stage"] for s in supplied] == ["2"]  # the true hull, in place of stages 2, 4 and 5
    assert not any(s["stage"] == "5" for s in report["stages"])
    # tolerance::learner_net_on_true_hull_target (src/numeric/tolerance.hpp): stage 6 alone on the true hull
    assert report["errors_before_polish"]["theta_max_rel"] < 1e-5
    with pytest.raises(ValueError, match="unknown oracle stage 'stage9'"):
        mhalearn.learn(inst, oracle="stage9")
    X, Y = mhalearn.sample(inst, 100, seed=1)
    with pytest.raises(ValueError, match="oracle needs the true instance"):
        mhalearn.learn(X, Y, 2, oracle="stage1")


def test_learn_variants_are_named_in_the_report():
    inst = mhalearn.generate(16, 2, 2, scale=3, seed=2)
    for variant in ("paper", "extended"):
        try:  # a failed learn's report names its variant too
            _, report = mhalearn.learn(inst, variant=variant, polish=False, reference=False, sculpt_samples=200000,
                                       final_sculpt_samples=-1, test_samples=1000, threads=2)
        except mhalearn.LearnFailed as failed:
            report = failed.report
        assert report["variant"] == variant
        assert "rows" in report["variant_choices"]
    with pytest.raises(ValueError, match="variant: 'fast' is not one of paper"):
        mhalearn.learn(inst, variant="fast")


def test_the_suite_runs_against_the_installed_copy_when_told_so():
    """scripts/test-python.sh installs with pip and sets MHALEARN_INSTALLED=1: the
    module imported must then be the installed one, not the build tree's."""
    import os
    if os.environ.get("MHALEARN_INSTALLED") == "1":
        assert "site-packages" in mhalearn.__file__, mhalearn.__file__


def test_float32_inputs_are_widened_exactly_as_the_cli_reads_them(inst):
    """The input contract (docs/formats.md): float32 X is the float64 X of its widened values."""
    x32 = (np.random.default_rng(3).standard_normal((5, 2, 8)) / 3).astype(np.float32)
    assert np.array_equal(mhalearn.forward(inst, x32), mhalearn.forward(inst, x32.astype(np.float64)))
