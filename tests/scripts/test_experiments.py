#!/usr/bin/env python3
"""Tests of scripts/experiments.py, the experiment scripts' runner, with a fake tool.

The fake tool stands in for `mhalearn`: it writes a report to the path after
`--report` (holding its arguments and the environment's MHALEARN_INJECT_FAULT),
prints a line on stdout and one on stderr, and counts its calls in a file; with
`--fail S` it exits S without a report, with `--fail-with-report S` it exits S
after writing one, with `--sleep T` it sleeps first; `generate ... -o PATH`
writes an instance; its reports and `--version` name the fingerprint FAKE_FINGERPRINT
(sixteen 0s by default). No real learner runs.

  python3 tests/scripts/test_experiments.py      (or: pytest tests/scripts/)
"""
import json
import os
import shutil
import stat
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import experiments as ex  # noqa: E402

FAKE = r'''#!PYTHON
import json, os, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_CALLS"], "a") as f:
    f.write(" ".join(args) + "\n")
def value(option):
    return args[args.index(option) + 1] if option in args else None
if args[0] == "--version":
    print("mhalearn 0.1.0 (0123456789ab; fingerprint " + os.environ.get("FAKE_FINGERPRINT", "0" * 16) + "; arithmetic: x)")
    sys.exit(0)
if args[0] == "generate":
    with open(value("-o"), "w") as f:
        json.dump({"d": int(value("--d")), "seed": int(value("--seed"))}, f)
    sys.exit(0)
if value("--sleep"):
    time.sleep(float(value("--sleep")))
print("fake learn: stdout")
print("fake learn: stderr", file=sys.stderr)
if value("--fail"):
    sys.exit(int(value("--fail")))
with open(value("--report"), "w") as f:
    json.dump({"argv": args, "fault": os.environ.get("MHALEARN_INJECT_FAULT"),
               "errors": {"theta_max_rel": 2e-4, "w_max_rel": 3.5e-4},
               "provenance": {"git_commit": "0123456789ab",
                              "build": {"fingerprint": os.environ.get("FAKE_FINGERPRINT", "0" * 16)}}}, f)
sys.exit(int(value("--fail-with-report") or 0))
'''


class Sandbox:
    """A temporary folder with the fake tool (bin/mhalearn) and a runs folder."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="test-experiments-")
        self.tool = os.path.join(self.dir, "bin", "mhalearn")
        os.makedirs(os.path.dirname(self.tool))
        with open(self.tool, "w") as f:
            f.write(FAKE.replace("PYTHON", sys.executable))
        os.chmod(self.tool, os.stat(self.tool).st_mode | stat.S_IXUSR)
        self.runs = os.path.join(self.dir, "runs")
        self.calls_file = os.path.join(self.dir, "calls")
        os.environ["FAKE_CALLS"] = self.calls_file

    def calls(self):
        if not os.path.exists(self.calls_file):
            return 0
        with open(self.calls_file) as f:
            return len(f.read().splitlines())

    def spec(self, name, *extra, **options):
        report = os.path.join(self.runs, name + ".report.json")
        argv = [options.pop("tool", self.tool), "learn", "inst.json", "--seed", "1", "--report", report] + list(extra)
        return ex.Run(name, argv, self.runs, report=report, **options)

    def close(self):
        shutil.rmtree(self.dir)


def lines(path):
    with open(path) as f:
        return f.read().splitlines()


def with_sandbox(test):
    def wrapped():
        box = Sandbox()
        try:
            test(box)
        finally:
            box.close()
    wrapped.__name__ = test.__name__
    return wrapped


@with_sandbox
def test_a_run_writes_its_command_log_and_report(box):
    spec = box.spec("a", "--threads", "2")
    result = ex.run(spec, quiet=True)
    assert result.status == 0 and not result.failed and not result.reused, result
    assert result.report["argv"][-2:] == ["--threads", "2"]
    assert result.report == json.load(open(os.path.join(box.runs, "a.report.json")))
    log = lines(os.path.join(box.runs, "a.log"))
    assert log[0] == "$ " + " ".join(spec.argv), log[0]
    assert "fake learn: stdout" in log and "fake learn: stderr" in log, log
    assert log[-1].startswith("exit status 0 after ") and log[-1].endswith(" s"), log[-1]
    assert result.seconds is not None and result.seconds >= 0
    assert ex.error(result.report) == 3.5e-4
    assert box.calls() == 1


@with_sandbox
def test_a_finished_run_is_reused_not_rerun(box):
    first = ex.run(box.spec("a"), quiet=True)
    again = ex.run(box.spec("a"), reuse=True, quiet=True)
    assert again.reused and again.status == 0 and again.report == first.report, again
    assert box.calls() == 1, "a finished run with the same command was run again"
    # Without reuse it is made again.
    made = ex.run(box.spec("a"), reuse=False, quiet=True)
    assert not made.reused and box.calls() == 2
    # The tool's path is not part of the run: another path to the same tool names the same run.
    link = os.path.join(box.dir, "elsewhere", "mhalearn")
    os.makedirs(os.path.dirname(link))
    os.symlink(box.tool, link)
    assert ex.run(box.spec("a", tool=link), reuse=True, quiet=True).reused
    assert box.calls() == 2


@with_sandbox
def test_a_changed_command_is_rerun(box):
    ex.run(box.spec("a", "--rounds", "2"), quiet=True)
    changed = ex.run(box.spec("a", "--rounds", "3"), reuse=True, quiet=True)
    assert not changed.reused and box.calls() == 2
    assert changed.report["argv"][-2:] == ["--rounds", "3"]
    assert lines(os.path.join(box.runs, "a.log"))[0].endswith("--rounds 3")
    # A value the run declares as varying (a wall-clock budget copied from another run) is not a change.
    ex.run(box.spec("b", "--max-seconds", "28.28"), quiet=True)
    same = ex.run(box.spec("b", "--max-seconds", "180.39", vary=("--max-seconds",)), reuse=True, quiet=True)
    assert same.reused and box.calls() == 3
    other = ex.run(box.spec("b", "--max-seconds", "180.39"), reuse=True, quiet=True)
    assert not other.reused and box.calls() == 4


@with_sandbox
def test_a_failing_run_is_recorded_as_failed(box):
    result = ex.run(box.spec("f", "--fail", "3"), quiet=True)
    assert result.status == 3 and result.failed and result.report is None, result
    assert not os.path.exists(os.path.join(box.runs, "f.report.json"))
    log = lines(os.path.join(box.runs, "f.log"))
    assert log[-1].startswith("exit status 3 after "), log
    on_disk = ex.previous(box.spec("f", "--fail", "3"))
    assert on_disk.status == 3 and on_disk.failed and on_disk.report is None
    # A run without a report is not finished: reuse makes it again.
    again = ex.run(box.spec("f", "--fail", "3"), reuse=True, quiet=True)
    assert not again.reused and box.calls() == 2
    # A report and a non-zero exit status: failed too (e.g. exit 4, a verdict that disagrees).
    r4 = ex.run(box.spec("g", "--fail-with-report", "4"), quiet=True)
    assert r4.status == 4 and r4.failed and r4.report is not None
    assert ex.previous(box.spec("g", "--fail-with-report", "4")).status == 4
    # A stale report of an earlier success is removed before the run: a failure leaves none.
    ex.run(box.spec("h"), quiet=True)
    spec = box.spec("h")
    spec.argv += ["--fail", "2"]
    failed = ex.run(spec, quiet=True)
    assert failed.failed and failed.report is None and not os.path.exists(spec.report)


@with_sandbox
def test_a_run_whose_result_is_its_stdout(box):
    """`stdout=PATH`: the command's standard output is its result, written whole on exit 0;
    the log keeps the command and its stderr."""
    def spec(name, *extra):
        return ex.Run(name, [box.tool, "study", "--report", os.path.join(box.dir, "ignored.json")] + list(extra),
                      box.runs, report=None, stdout=os.path.join(box.runs, name + ".tsv"))
    result = ex.run(spec("s"), quiet=True)
    assert result.status == 0 and not result.failed and result.output == "fake learn: stdout\n", result.output
    log = lines(os.path.join(box.runs, "s.log"))
    assert "fake learn: stderr" in log and "fake learn: stdout" not in log, log
    again = ex.run(spec("s"), reuse=True, quiet=True)
    assert again.reused and again.output == result.output and box.calls() == 1
    # A failed command leaves no stdout file (not half a table), and is made again under reuse.
    failed = ex.run(spec("t", "--fail", "2"), quiet=True)
    assert failed.failed and failed.output is None and not os.path.exists(os.path.join(box.runs, "t.tsv"))
    assert not os.path.exists(os.path.join(box.runs, "t.tsv.tmp"))
    assert not ex.run(spec("t", "--fail", "2"), reuse=True, quiet=True).reused and box.calls() == 3


@with_sandbox
def test_a_run_past_its_timeout_is_killed(box):
    t0 = time.time()
    result = ex.run(box.spec("k", "--sleep", "30", timeout=0.5), quiet=True)
    assert time.time() - t0 < 10
    assert result.status == "killed" and result.failed, result
    assert lines(os.path.join(box.runs, "k.log"))[-1] == "killed after 0.5 s"
    # By default a killed run (no report) is made again; `keep` can keep it.
    keep = lambda prev: prev.report is not None or prev.status == "killed"
    kept = ex.run(box.spec("k", "--sleep", "30", timeout=0.5, keep=keep), reuse=True, quiet=True)
    assert kept.reused and kept.status == "killed" and box.calls() == 1


@with_sandbox
def test_committed_runs_without_an_end_line_are_read(box):
    """The layout of the committed run directories: the log's first line is the command,
    no end line; the report says the run ended."""
    spec = box.spec("old")
    os.makedirs(box.runs)
    with open(spec.log, "w") as f:
        f.write("$ " + spec.command().replace(box.tool, "./bin/../bin/mhalearn") + "\nsome output\n")
    with open(spec.report, "w") as f:
        json.dump({"errors": {"theta_max_rel": 1e-5, "w_max_rel": 2e-5}}, f)
    result = ex.run(spec, reuse=True, quiet=True)
    assert result.reused and result.status is None and not result.failed and box.calls() == 0
    assert ex.error(result.report) == 2e-5


@with_sandbox
def test_environment_parallel_jobs_and_instances(box):
    fault = ex.run(box.spec("e", env={"MHALEARN_INJECT_FAULT": "3"}), quiet=True)
    assert fault.report["fault"] == "3"
    assert lines(os.path.join(box.runs, "e.log"))[0].startswith("$ MHALEARN_INJECT_FAULT=3 " + box.tool)
    os.environ["MHALEARN_INJECT_FAULT"] = "5"
    try:
        clean = ex.run(box.spec("c", env={"MHALEARN_INJECT_FAULT": None}), quiet=True)
    finally:
        del os.environ["MHALEARN_INJECT_FAULT"]
    assert clean.report["fault"] is None and lines(os.path.join(box.runs, "c.log"))[0].startswith("$ " + box.tool)
    specs = [box.spec(f"p{i}", "--sleep", "0.5", "--index", str(i)) for i in range(4)]
    t0 = time.time()
    results = ex.run_all(specs, jobs=4, quiet=True)
    assert [r.report["argv"][-1] for r in results] == ["0", "1", "2", "3"]
    assert time.time() - t0 < 1.9, "four 0.5 s runs at 4 jobs took as long as one after another"
    assert all(r.reused for r in ex.run_all(specs, reuse=True, jobs=2, quiet=True))
    assert ex.parallel(lambda x: x * x, range(5), jobs=3) == [0, 1, 4, 9, 16]
    path = os.path.join(box.dir, "i.json")
    assert ex.generate(box.tool, path, 8, 2, 2, 6, 1) == path and json.load(open(path)) == {"d": 8, "seed": 1}
    calls = box.calls()
    ex.generate(box.tool, path, 8, 2, 2, 6, 1)
    assert box.calls() == calls, "an existing instance was generated again"


def test_table_writer_and_numbers():
    lines_ = ex.table(["(d,k,m)", "scale", "error", "note"],
                      [["(16,2,2)", 6, ex.fmt(3.46e-4), ""], ["(8,2,2)", 3, ex.fmt(None), ex.BLANK]], "lrrl")
    assert lines_ == [
        "| (d,k,m) | scale | error | note |",
        "|---|---:|---:|---|",
        "| (16,2,2) | 6 | 3.5e-04 |  |",
        "| (8,2,2) | 3 | – | |",
    ], lines_
    assert ex.table(["a", "b"], [], "lc") == ["| a | b |", "|---|:---:|"]
    try:
        ex.table(["a", "b"], [], "l")
        raise AssertionError("a table with fewer alignments than columns was written")
    except ValueError:
        pass
    assert [ex.fmt(x) for x in (1.25e-3, 0, 12345, float("nan"), float("inf"), None)] == \
        ["1.3e-03", "0.0e+00", "1.2e+04", "–", "–", "–"]
    assert ex.fmt(6.02e23, 2) == "6.02e+23" and ex.fmt(None, missing="—") == "—"
    assert [ex.fmt_int(x) for x in (512, 99999, 100000, 42192808, None)] == \
        ["512", "99,999", "1.00e+05", "4.22e+07", "–"]
    assert ex.error(None) is None and ex.error({"errors": None}) is None and ex.error({}, "errors_before_polish") is None
    assert ex.block_error({"theta_max_rel": 1.0, "w_max_rel": 0.5}) == 1.0


def test_pages_are_written_whole():
    folder = tempfile.mkdtemp(prefix="test-experiments-")
    try:
        page = os.path.join(folder, "page.md")
        ex.write_page(page, "# Title\n")
        assert open(page).read() == "# Title\n" and os.listdir(folder) == ["page.md"]
        assert ex.relative_link(os.path.join("docs", "diagnosis"), os.path.join("docs", "diagnosis.md")) == "diagnosis"
    finally:
        shutil.rmtree(folder)


def test_the_experiment_scripts_compile():
    """Every Python script of scripts/ compiles (the ported ones import the runner)."""
    folder = os.path.join(ROOT, "scripts")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name)) as f:
                compile(f.read(), os.path.join(folder, name), "exec")


# --------------------------------------------------------------------------- which learner made a run


def report_of(fingerprint=None, commit=None):
    build = {"fingerprint": fingerprint} if fingerprint else {}
    return {"provenance": {"git_commit": commit, "build": build}} if commit or fingerprint else {"provenance": {}}


def test_a_reports_learner_label_with_and_without_a_fingerprint():
    assert ex.learner_label(report_of("0123456789abcdef", "5d277a4aad33")) == "01234567"
    assert ex.learner_label(report_of(None, "5d277a4aad33")) == "commit 5d277a4"
    assert ex.learner_label(report_of(None, "unknown")) == ex.DASH and ex.learner_label(None) == ex.DASH
    # A run without a report: its runs directory's provenance.json entry.
    assert ex.provenance_label({"commit": "ba24c2d", "version": "mhalearn 0.1.0 (7be6f9ac3541; arithmetic: x)"}) \
        == "commit ba24c2d"
    assert ex.provenance_label({"commit": "ba24c2d (with uncommitted changes to src/)"}) == "commit ba24c2d"
    assert ex.provenance_label({"commit": "x", "version": "mhalearn 0.1.0 (c; fingerprint 00112233445566ff; a)"}) \
        == "00112233"
    assert ex.provenance_label({"fingerprint": "aabbccddeeff0011"}) == "aabbccdd"
    assert ex.provenance_label(None) == ex.NOT_RECORDED == ex.provenance_label({"commit": "unknown"})


def test_the_page_learner_is_the_majority_and_other_rows_are_marked():
    a, b, c = (report_of(None, h) for h in ("aaaaaaa1", "bbbbbbb2", "ccccccc3"))
    learners = ex.Learners([a, b, a, None, c, b, a], labels=[ex.NOT_RECORDED, "commit bbbbbbb"])
    assert learners.page == "commit aaaaaaa" and learners.others == ["commit bbbbbbb", "commit ccccccc"]
    assert learners.cell(a) == "commit aaaaaaa"
    assert learners.cell(b) == "commit bbbbbbb †" and learners.cell(None) == ex.DASH
    assert learners.label_cell(ex.NOT_RECORDED) == ex.NOT_RECORDED
    assert learners.cells([a, b, a, c]) == "commit aaaaaaa; commit bbbbbbb †; commit ccccccc †"
    note = learners.note()
    assert "This page's learner is commit aaaaaaa" in note and "rows marked †" in note and "commit ccccccc" in note
    # Under a table whose rows are all the page's learner's, its note names no other.
    assert learners.note(shown=["commit aaaaaaa"]).endswith(", and every row is its.")
    assert "commit ccccccc" not in learners.note(shown=["commit aaaaaaa", "commit bbbbbbb"])
    # A tie goes to the first label in sorted order, whatever the order of the runs.
    assert ex.Learners([b, a]).page == ex.Learners([a, b]).page == "commit aaaaaaa"
    fp = ex.Learners([report_of("f" * 16), report_of("f" * 16), a])
    assert fp.page == "ffffffff" and "`ffffffff`" in fp.note() and fp.cell(a) == "commit aaaaaaa †"
    assert ex.Learners([]).note() == "No learner run on this page."


@with_sandbox
def test_require_learner_refuses_a_run_of_another_fingerprint(box):
    os.environ["FAKE_FINGERPRINT"] = "1111111111111111"
    try:
        first = ex.run(box.spec("a"), quiet=True)
        assert ex.learner_label(first.report) == "11111111"
        ex.REQUIRE_LEARNER = "1111111111111111"
        assert ex.run(box.spec("a"), reuse=True, quiet=True).reused, "a run of the required build was made again"
        ex.REQUIRE_LEARNER = "2222222222222222"
        assert ex.reusable(box.spec("a")) is None
        os.environ["FAKE_FINGERPRINT"] = "2222222222222222"
        again = ex.run(box.spec("a"), reuse=True, quiet=True)
        assert not again.reused and ex.learner_label(again.report) == "22222222" and box.calls() == 2
        # A run without a report: the fingerprint its runs directory's provenance.json recorded.
        spec = ex.Run("t", [box.tool, "study", "--report", os.path.join(box.dir, "x.json")], box.runs, report=None,
                      stdout=os.path.join(box.runs, "t.tsv"))
        made = ex.run(spec, quiet=True)
        ex.record(box.runs, [made], ex.provenance_now(box.tool, box.dir))
        assert ex.recorded_label(box.runs, "t") == "22222222"
        assert ex.reusable(spec) is not None
        ex.REQUIRE_LEARNER = "1111111111111111"
        assert ex.reusable(spec) is None
        # The option: a tool that prints no fingerprint is refused.
        ex.REQUIRE_LEARNER = None
        ex.require_learner(type("A", (), {"remake_other_learners": True, "tool": box.tool})())
        assert ex.REQUIRE_LEARNER == "2222222222222222"
        try:
            ex.require_learner(type("A", (), {"remake_other_learners": True, "tool": "/nonexistent/mhalearn"})())
            raise AssertionError("a tool without a fingerprint was accepted")
        except SystemExit:
            pass
    finally:
        ex.REQUIRE_LEARNER = None
        del os.environ["FAKE_FINGERPRINT"]


@with_sandbox
def test_a_marked_row_on_a_page(box):
    """Two runs by one build and one by another: the page's table names each row's learner and marks
    the other's; the note under it says what the mark means."""
    reports = []
    for name, fingerprint in (("a", "1" * 16), ("b", "1" * 16), ("c", "3" * 16)):
        os.environ["FAKE_FINGERPRINT"] = fingerprint
        reports.append(ex.run(box.spec(name), quiet=True).report)
    del os.environ["FAKE_FINGERPRINT"]
    learners = ex.Learners(reports)
    rows = [[n, ex.fmt(ex.error(r)), learners.cell(r)] for n, r in zip("abc", reports)]
    lines = ex.table(["run", "error", "learner"], rows) + ["", learners.note()]
    assert lines[2:5] == ["| a | 3.5e-04 | 11111111 |", "| b | 3.5e-04 | 11111111 |", "| c | 3.5e-04 | 33333333 † |"]
    assert "This page's learner is `11111111`; rows marked † were made by another learner (`33333333`)" in lines[-1]


def test_facts_name_their_run_and_the_adam_rule():
    folder = tempfile.mkdtemp(prefix="test-experiments-")
    try:
        inst = os.path.join(folder, "a.json")
        with open(inst, "w") as f:
            json.dump({"heads": [1, 2], "provenance": {"git_commit": "a"}}, f)
        other = os.path.join(folder, "b.json")
        with open(other, "w") as f:
            json.dump({"heads": [1, 2], "provenance": {"git_commit": "b"}}, f)
        assert ex.instance_hash(inst) == ex.instance_hash(other), "the provenance of an instance file changed its hash"
        report = {"provenance": {"command": "learn", "git_commit": "5d277a4aad33",
                                 "options": {"instance": inst, "threads": 2, "seed": 1, "polish": False}}}
        run = ex.run_identity(report)
        assert run == {"command": "learn polish=false seed=1 threads=2", "instance": ex.instance_hash(inst),
                       "learner": "commit 5d277a4"}, run
        logged = ex.run_identity(command=f"nice -n 10 build/release/mhalearn hard --d 6 -o {folder}/x.json --quiet",
                                 label="commit 1234567")
        assert logged == {"command": "mhalearn hard --d 6 --quiet", "instance": "", "learner": "commit 1234567"}, logged
        facts = ex.Facts(os.path.join(ex.ROOT, "docs", "bench", "x.md"))
        facts.add(run, "samples", "4.2e+07", "(16,2,2)")
        facts.add(run, "final error", ex.DASH, "(16,2,2)")  # an absent number is no fact
        assert facts.facts == [[ex.run_key(run), "samples", "4.2e+07", "(16,2,2)"]] and list(facts.runs) == [ex.run_key(run)]
        assert facts.path().endswith(os.path.join("docs", "facts", "bench_x.json"))
        facts.page = os.path.relpath(os.path.join(folder, "x.md"), ex.ROOT)  # a page outside docs/: its facts beside it
        facts.write()
        written = json.load(open(os.path.join(folder, "x.facts.json")))
        assert written["facts"] == facts.facts and written["runs"] == facts.runs
        try:
            facts.add(run, "speed", "1", "r")
            raise AssertionError("a fact of an unknown quantity was recorded")
        except ValueError:
            pass
        spec = ex.adam_rule_run("build/release/mhalearn", "inst/d.json", "d_adam")
        assert spec.command() == ("build/release/mhalearn learn inst/d.json --method adam --seed 1 --threads 2 "
                                  f"--stop-at-error 0.001 --max-samples 20000000 --report {ex.ADAM_RULE_RUNS}/d_adam.report.json")
        trajectory = [{"samples": 512, "seconds": 0.1, "theta_max_rel": 0.5, "w_max_rel": 0.2},
                      {"samples": 1024, "seconds": 0.2, "theta_max_rel": 9e-4, "w_max_rel": 1.1e-3},
                      {"samples": 1536, "seconds": 0.3, "theta_max_rel": 9e-4, "w_max_rel": 1e-3}]
        assert ex.adam_reached({"trajectory": trajectory}) == (1536, 0.3) and ex.adam_reached(None) is None
    finally:
        shutil.rmtree(folder)


def test_a_committed_run_names_its_instance_alike_from_any_checkout():
    here = "docs/results/runs/regime_base.instance.json"
    assert os.path.exists(os.path.join(ex.ROOT, here))
    # The path another checkout (a worktree, a clone elsewhere) recorded, read from this one.
    assert ex.instance_hash("/no/such/checkout/" + here) == ex.instance_hash(here)
    assert not ex.instance_hash(here).startswith("path:")
    # A file that is not in this checkout stays a path.
    assert ex.instance_hash("/no/such/checkout/docs/results/runs/absent.instance.json") == \
        "path:/no/such/checkout/docs/results/runs/absent.instance.json"


def main():
    tests = [(name, f) for name, f in sorted(globals().items()) if name.startswith("test_") and callable(f)]
    failed = 0
    for name, test in tests:
        try:
            test()
            print(f"ok    {name}")
        except Exception as e:  # noqa: BLE001  (report every test, then fail)
            failed += 1
            print(f"FAIL  {name}: {type(e).__name__}: {e}")
    print(f"{len(tests) - failed} of {len(tests)} tests passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

