"""stage1, sculpt, hard and study_wsum from Python run the CLI's code
(src/commands/stage_runs.hpp, src/commands/hard_run.hpp, src/stages/stage1/wsum_study.hpp):
the same arguments give the CLI's report (clock readings and provenance aside)
and the CLI's output document, byte for byte in every number; failures raise
as the CLI exits."""
import json
import subprocess

import numpy as np
import pytest

import mhalearn
from conftest import build_dir


def cli(*args, status=0):
    tool = build_dir() / "mhalearn"
    assert tool.is_file(), f"{tool} missing: build the target mhalearn"
    p = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert p.returncode == status, p.stderr[-2000:]
    return p


def strip(report):
    """A report without clock readings and provenance (which names the surface)."""
    if isinstance(report, dict):
        return {k: strip(v) for k, v in report.items() if k != "provenance" and "second" not in k}
    if isinstance(report, list):
        return [strip(v) for v in report]
    return report


def same_options(cli_report, py_report):
    """The provenance's options but where the samples come from (paths or arrays)."""
    cli_options = {k: v for k, v in cli_report["provenance"]["options"].items() if k not in ("instance", "x", "y")}
    py_options = {k: v for k, v in py_report["provenance"]["options"].items() if k not in ("source", "n")}
    return cli_options == py_options


@pytest.fixture(scope="module")
def inst(tmp_path_factory):
    path = tmp_path_factory.mktemp("stages") / "inst.json"
    cli("generate", "--d", 6, "--k", 2, "--m", 2, "--seed", 3, "-o", path)
    return path, mhalearn.read_instance(str(path))


def test_stage1_from_python_is_the_cli_s(inst, tmp_path):
    path, instance = inst
    report, out = tmp_path / "r.json", tmp_path / "w.json"
    cli("stage1", path, "--samples", 30000, "--seed", 5, "--threads", 1, "--reference", "--reference-samples", 50,
        "--report", report, "-o", out)
    w_hat, se, py_report = mhalearn.stage1(instance, samples=30000, seed=5, threads=1, reference=True, reference_samples=50)
    cli_report, cli_out = json.loads(report.read_text()), json.loads(out.read_text())
    assert strip(py_report) == strip(cli_report)
    assert same_options(cli_report, py_report)
    assert np.array_equal(w_hat, np.array(cli_out["matrix"])) and np.array_equal(se, np.array(cli_out["standard_error"]))
    assert "reference_max_z" in py_report["stages"][0]  # k·d = 12: the exact enumeration ran too


def test_stage1_reference_enumerates_boolean_instances_only(tmp_path):
    """The exact enumeration is over {±1}^{k×d}: on a Gaussian instance (k·d = 12, small enough to
    enumerate) it must not run, or the report would give the Boolean population as this one's."""
    path = tmp_path / "gauss.json"
    cli("generate", "--d", 6, "--k", 2, "--m", 2, "--seed", 3, "--inputs", "gaussian", "-o", path)
    _, _, report = mhalearn.stage1(mhalearn.read_instance(str(path)), samples=20000, seed=5, threads=1,
                                   reference=True, reference_samples=50)
    assert "reference_max_z" not in report["stages"][0]


def test_stage1_on_arrays_and_with_label_noise(inst, tmp_path):
    """x, y arrays as the CLI's --x/--y files; label noise drawn from the seed's stream on both surfaces."""
    path, instance = inst
    x, y = mhalearn.sample(instance, 4000, seed=2)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    report = tmp_path / "r.json"
    cli("stage1", "--x", tmp_path / "x.npy", "--y", tmp_path / "y.npy", "--label-noise", 0.1, "--seed", 4,
        "--threads", 1, "--report", report)
    _, _, py_report = mhalearn.stage1(x=x, y=y, label_noise=0.1, seed=4, threads=1)
    assert strip(py_report) == strip(json.loads(report.read_text()))
    assert py_report["stages"][0]["samples"] == 4000


def test_sculpt_from_python_is_the_cli_s(inst, tmp_path):
    path, instance = inst
    report, out = tmp_path / "r.json", tmp_path / "body.json"
    cli("sculpt", path, "--stage1-samples", 40000, "--max-samples", 60000, "--threads", 1, "--seed", 2,
        "--report", report, "-o", out)
    body, py_report = mhalearn.sculpt(instance, stage1_samples=40000, max_samples=60000, threads=1, seed=2)
    cli_report, cli_body = json.loads(report.read_text()), json.loads(out.read_text())
    assert strip(py_report) == strip(cli_report)
    assert same_options(cli_report, py_report)
    assert strip(body) == strip(cli_body) and len(body["slabs"]) > 0


def test_sculpt_options_refused_as_in_the_cli(inst):
    instance = inst[1]
    with pytest.raises(ValueError, match="tau does not apply to selection best"):
        mhalearn.sculpt(instance, tau=0.1, selection="best")
    with pytest.raises(ValueError, match="selection: 'fancy' is not one of threshold, best"):
        mhalearn.sculpt(instance, selection="fancy")
    with pytest.raises(ValueError, match="sculpt: radius must be in"):
        mhalearn.sculpt(instance, radius=0.0)
    with pytest.raises(ValueError, match="give either an instance or both x and y"):
        mhalearn.sculpt()


def test_sculpt_that_certifies_nothing_raises_with_its_report(inst):
    """The CLI's exit 1 (no row certified within the budget) is RunFailed with the report."""
    with pytest.raises(mhalearn.RunFailed, match="no row was certified") as e:
        mhalearn.sculpt(inst[1], stage1_samples=2000, max_samples=10, tau=1e-12, threads=1)
    assert e.value.report["stages"][-1]["constraints"] == 0


def test_hard_from_python_is_the_cli_s(tmp_path):
    out = tmp_path / "f.json"
    cli_report = json.loads(cli("hard", "--d", 6, "--m", 2, "--json", "--threads", 1, "-o", out).stdout)
    instance, py_report = mhalearn.hard(6, 2, threads=1)
    assert strip(py_report) == strip({k: v for k, v in cli_report.items() if k != "output"})
    written = mhalearn.read_instance(str(out))
    for (t1, w1), (t2, w2) in zip(instance.heads, written.heads):
        assert np.array_equal(t1, t2) and np.array_equal(w1, w2)
    assert instance.provenance["options"] == written.provenance["options"]


def test_hard_study_from_python_is_the_cli_s():
    cli_report = json.loads(cli("hard", "--study", "--study-max-m", 2, "--d", 8, "--json", "--threads", 1).stdout)
    assert mhalearn.hard(d=8, study=True, study_max_m=2, threads=1) == cli_report


def test_hard_refuses_as_the_cli():
    with pytest.raises(ValueError, match="hard: d and m are required"):
        mhalearn.hard(6)
    with pytest.raises(ValueError, match="hard: --q: 'x' is not a rational number"):
        mhalearn.hard(6, 2, q="1,x,3")


def test_study_wsum_from_python_is_the_cli_s():
    text = cli("study-wsum", "--d", "4,12", "--k", 2, "--points", 3, "--samples", 20000, "--threads", 1).stdout
    header, *lines = text.strip().split("\n")
    rows = mhalearn.study_wsum([4, 12], points=3, samples=20000, threads=1)
    assert [r["method"] for r in rows] == ["enumeration"] * 3 + ["monte_carlo"] * 3
    formatted = [f"{r['d']}\t{r['k']}\t{r['alpha']:.3f}\t{r['stable_rank']:.4f}\t{r['m_minus_i_op']:.6g}\t"
                 f"{r['m_minus_i_fro_rel']:.6g}\t{r['standard_error_op']:.3g}\t{r['method']}\t{r['samples']}" for r in rows]
    assert formatted == lines and header.startswith("d\tk\talpha")


def test_the_comparison_sees_another_run(inst, tmp_path):
    """Its test of the tester: another seed's stage 1 is not the CLI's run."""
    path, instance = inst
    report = tmp_path / "r.json"
    cli("stage1", path, "--samples", 3000, "--seed", 5, "--threads", 1, "--report", report)
    cli_report = json.loads(report.read_text())
    _, _, other = mhalearn.stage1(instance, samples=3000, seed=6, threads=1)
    _, _, same = mhalearn.stage1(instance, samples=3000, seed=5, threads=1)
    assert strip(same) == strip(cli_report) and strip(other) != strip(cli_report)
