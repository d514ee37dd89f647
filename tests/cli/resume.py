#!/usr/bin/env python3
"""Interrupted learns resume to the same bytes, through the command line.

On a (10,2,2) instance with small budgets (three rounds and the extended
variant's final one, the reference paths, polishing: 17 safe points), `learn`
runs once uninterrupted; then

  * MHALEARN_STOP_AT_SAFE_POINT=N (the request a signal makes, at the N-th safe
    point) stops runs with --checkpoint before round 1's net, before the final
    round, before the reference paths and before the final evaluation: exit 5, one line on
    stderr, a report marked "interrupted" with the safe point, no learned
    layer; `--resume` then writes the uninterrupted run's learned layer byte for
    byte and its report but for clock keys and "resumed_at";
  * a real SIGTERM once the first checkpoint exists does the same (wherever it
    lands), and a resume with --threads 1 gives the same layer;
  * two SIGINTs: the first asks for the safe point, the second kills the
    process at once, and the directory still holds the last checkpoint;
  * --resume refuses (exit 2, one line) other options, another seed, label
    noise or instance, another build, a damaged checkpoint; --checkpoint
    refuses a directory that holds one or cannot be made;
  * --resume-other-build takes the checkpoint of another build and names that
    build in the report's, the learned layer's and later checkpoints'
    provenance (check_other_build).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

failures = []

BUDGETS = ["--stage1-samples", "50000", "--crude-sculpt-samples", "100000", "--sculpt-samples", "300000",
           "--final-sculpt-samples", "300000", "--margin-samples", "800000", "--rounds", "3", "--net-tuples", "1000", "--test-samples", "500",
           "--threads", "2"]
NAMES = {7: "before round 1's net (stage 6)", 12: "before round 3's sculpt (stage 4, the final round)",
         15: "before the reference paths", 17: "before the final evaluation"}


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message)
    if not ok:
        failures.append(message)


def default_signals():
    # A child of a non-interactive shell's background job inherits SIGINT
    # ignored, and learn leaves ignored signals alone: start from the defaults.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run(tool, args, stop_at=None):
    env = dict(os.environ)
    env.pop("MHALEARN_STOP_AT_SAFE_POINT", None)
    if stop_at is not None:
        env["MHALEARN_STOP_AT_SAFE_POINT"] = str(stop_at)
    return subprocess.run([tool] + args, env=env, capture_output=True, text=True, timeout=600,
                          preexec_fn=default_signals)


def comparable(value):
    """A report without wall-clock readings, provenance and the resumed marks."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()
                if "seconds" not in k and k not in ("provenance", "resumed_at")}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def load(path):
    with open(path) as f:
        return json.load(f)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def one_line(stderr):
    return stderr.count("\n") == 1 and stderr.endswith("\n")


def check_interrupted(result, report_path, learned_path, checkpoint, name, label):
    check(result.returncode == 5, f"{label}: exit 5 (got {result.returncode}; {result.stderr.strip()})")
    check(result.stderr == f"mhalearn learn: interrupted {name}; continue with the same command and --resume {checkpoint}\n",
          f"{label}: one line on stderr names the safe point and the directory ({result.stderr.strip()!r})")
    report = load(report_path)
    check(report["ok"] is False and report.get("interrupted") is True and report.get("safe_point") == name
          and report.get("checkpoint") == checkpoint,
          f"{label}: the report is marked interrupted {name}")
    check(not os.path.exists(learned_path), f"{label}: no learned layer is written")
    check(os.path.exists(os.path.join(checkpoint, "checkpoint.json")), f"{label}: the checkpoint exists")


def check_resumed(tool, common, checkpoint, name, baseline, label, extra=()):
    report, learned = checkpoint + ".report.json", checkpoint + ".learned.json"
    r = run(tool, common + ["--resume", checkpoint, "--report", report, "-o", learned] + list(extra))
    check(r.returncode == 0, f"{label}: the resumed run exits 0 (got {r.returncode}; {r.stderr.strip()})")
    if r.returncode != 0:
        return
    check(read_bytes(learned) == baseline["learned"], f"{label}: the learned layer has the uninterrupted bytes")
    rep = load(report)
    check(comparable(rep) == baseline["report"], f"{label}: the report is the uninterrupted one")
    check(rep.get("resumed_at") == [name], f"{label}: resumed_at = {[name]} (got {rep.get('resumed_at')})")


def refused(tool, args, needle, label):
    r = run(tool, args)
    check(r.returncode == 2 and one_line(r.stderr) and needle in r.stderr,
          f"{label}: exit 2 with one line naming {needle!r} (got {r.returncode}: {r.stderr.strip()!r})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True, help="mhalearn")
    args = parser.parse_args()
    tool = args.tool

    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        g = run(tool, ["generate", "--d", "10", "--k", "2", "--m", "2", "--scale", "3", "--seed", "12", "-o", "inst.json"])
        g2 = run(tool, ["generate", "--d", "10", "--k", "2", "--m", "2", "--scale", "3", "--seed", "13", "-o", "other.json"])
        if g.returncode != 0 or g2.returncode != 0:
            print(g.stderr, g2.stderr)
            sys.exit(1)
        common = ["learn", "inst.json", "--quiet"] + BUDGETS  # stderr holds only what is checked

        base = run(tool, common + ["--report", "r0.json", "-o", "l0.json"])
        check(base.returncode == 0, f"uninterrupted run exits 0 (got {base.returncode}; {base.stderr.strip()})")
        if base.returncode != 0:
            sys.exit(1)
        baseline = {"learned": read_bytes("l0.json"), "report": comparable(load("r0.json"))}
        check(load("r0.json")["best_round"] == 3 and "interrupted" not in load("r0.json"),
              "the uninterrupted run selects round 3 (the final round) and has no interrupted key")

        # Deterministic stops at chosen safe points.
        for n, name in NAMES.items():
            ck = f"ck{n}"
            r = run(tool, common + ["--checkpoint", ck, "--report", f"{ck}.stop.json", "-o", f"{ck}.never.json"], stop_at=n)
            check_interrupted(r, f"{ck}.stop.json", f"{ck}.never.json", ck, name, f"stop at safe point {n}")
            check(load(os.path.join(ck, "checkpoint.json"))["safe_point"] == name,
                  f"stop at safe point {n}: the manifest names it")
            check_resumed(tool, common, ck, name, baseline, f"resume from safe point {n}")

        # A real SIGTERM once the first checkpoint is there.
        p = subprocess.Popen([tool] + common + ["--checkpoint", "cks", "--report", "cks.stop.json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
        deadline = time.time() + 300
        while not os.path.exists("cks/checkpoint.json") and p.poll() is None and time.time() < deadline:
            time.sleep(0.005)
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=600)[1]
        check(p.returncode == 5 and "stopping at the next safe point" in err,
              f"SIGTERM: exit 5 after saying it stops at the next safe point (got {p.returncode}; {err.strip()!r})")
        if p.returncode == 5:
            name = load("cks.stop.json")["safe_point"]
            check(load("cks/checkpoint.json")["safe_point"] == name, f"SIGTERM: stopped {name}, checkpoint there")
            # --threads may differ: the same layer (the provenance records the threads).
            report, learned = "cks.report.json", "cks.learned.json"
            one_thread = list(common)
            one_thread[one_thread.index("--threads") + 1] = "1"
            r = run(tool, one_thread + ["--resume", "cks", "--report", report, "-o", learned])
            check(r.returncode == 0, f"SIGTERM: resumed with --threads 1, exit 0 (got {r.returncode}; {r.stderr.strip()})")
            if r.returncode == 0:
                check(load(learned)["heads"] == json.loads(baseline["learned"])["heads"],
                      "SIGTERM: the resumed layer's weights are the uninterrupted ones")
                check(comparable(load(report)) == baseline["report"], "SIGTERM: the resumed report is the same")

        # Two SIGINTs during round 0's net, made long (2e6 tuples, about a minute): the
        # first asks for the next safe point, the second ends the process at once.
        long_budgets = list(BUDGETS)
        long_budgets[long_budgets.index("--net-tuples") + 1] = "2000000"
        p = subprocess.Popen([tool, "learn", "inst.json"] + long_budgets + ["--checkpoint", "ck2sig"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
        deadline = time.time() + 300
        while p.poll() is None and time.time() < deadline and safe_point_in("ck2sig") != "before round 0's net (stage 6)":
            time.sleep(0.005)
        # The manifest appears just before the safe point checks for a stop
        # request: let the process get into the net first.
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        first = p.stderr.readline()
        p.send_signal(signal.SIGINT)
        started = time.time()
        p.communicate(timeout=600)
        check("stopping at the next safe point" in first, f"two SIGINTs: the first is acknowledged ({first.strip()!r})")
        check(p.returncode == -signal.SIGINT, f"two SIGINTs: the second ends the process (got {p.returncode})")
        check(time.time() - started < 5, "two SIGINTs: at once, not at the end of the long net")
        check(safe_point_in("ck2sig") == "before round 0's net (stage 6)", "two SIGINTs: the last checkpoint is intact")

        # Refusals.
        ck = "ck7"  # a checkpoint before round 1's net, resumed above: still there, still valid
        rounds4 = list(common)
        rounds4[rounds4.index("--rounds") + 1] = "4"
        refused(tool, rounds4 + ["--resume", ck], "'rounds' is 3 in the checkpoint, 4 in this run", "other --rounds")
        refused(tool, common + ["--seed", "2", "--resume", ck], "'seed' is 1 in the checkpoint, 2 in this run", "other --seed")
        refused(tool, common + ["--label-noise", "1e-6", "--resume", ck], "label_noise' is 0.0 in the checkpoint", "label noise")
        other = ["learn", "other.json"] + BUDGETS
        refused(tool, other + ["--resume", ck], "is the checkpoint of another run: 'input.instance_", "another instance")
        refused(tool, common + ["--checkpoint", ck], "already holds a checkpoint", "--checkpoint over a checkpoint")
        refused(tool, common + ["--checkpoint", "inst.json/ck"], "--checkpoint inst.json/ck: cannot be created",
                "a directory that cannot be made")
        refused(tool, common + ["--resume", "nothing-here"], "--resume nothing-here: no such directory", "no checkpoint")
        refused(tool, common + ["--resume", ck, "--checkpoint", "elsewhere"], "different directories", "two directories")
        refused(tool, ["learn", "inst.json", "--method", "adam", "--resume", ck], "--resume does not apply to --method adam", "adam")
        refused(tool, common + ["--method", "adam"], "does not apply to --method adam", "the learner's budgets with adam")
        for label, damage, needle in [
            ("truncated manifest", lambda d: open(os.path.join(d, "checkpoint.json"), "r+").truncate(500),
             "malformed or truncated JSON"),
            ("missing array", lambda d: os.remove(os.path.join(d, sorted(f for f in os.listdir(d) if f.endswith(".npy"))[0])),
             "is missing"),
            ("another build", lambda d: rewrite(os.path.join(d, "checkpoint.json"),
                                                lambda m: m["provenance"].update(git_commit="0000000")),
             "written by another build of mhalearn (git_commit \"0000000\""),
        ]:
            broken = f"broken-{label.replace(' ', '-')}"
            shutil.copytree(ck, broken)
            damage(broken)
            refused(tool, common + ["--resume", broken], needle, label)
        check_other_build(tool, common, baseline)

    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


def check_other_build(tool, common, baseline):
    """--resume-other-build takes a checkpoint that names another build (here
    this one under another commit, so the numbers must stay the uninterrupted
    run's) and says so: a header line, and provenance.earlier_builds in the
    report, the learned layer and every later checkpoint, so that a same-build
    resume of those keeps it."""
    refused(tool, common + ["--resume-other-build"], "--resume-other-build applies only with --resume",
            "--resume-other-build without --resume")
    until = NAMES[7]
    for ck in ("other-build", "other-build-2"):  # stopped at safe point 7 and marked as another build's
        run(tool, common + ["--checkpoint", ck], stop_at=7)
        rewrite(f"{ck}/checkpoint.json", lambda m: m["provenance"].update(git_commit="0000000"))
    loud = [a for a in common if a != "--quiet"]
    r = run(tool, loud + ["--resume", "other-build", "--resume-other-build", "--report", "ob.json", "-o", "ob.learned.json"])
    check(r.returncode == 0, f"--resume-other-build: exit 0 (got {r.returncode}; {r.stderr.strip()!r})")
    if r.returncode != 0:
        return
    line = f'steps until {until} taken by another build: git commit "0000000"'
    check(line in r.stdout, f"--resume-other-build: the header says {line!r}")
    report, learned = load("ob.json"), load("ob.learned.json")
    for label, provenance in [("report", report["provenance"]), ("learned layer", learned["provenance"]),
                              ("last checkpoint", load("other-build/checkpoint.json")["provenance"])]:
        earlier = provenance.get("earlier_builds")
        check(isinstance(earlier, list) and len(earlier) == 1 and earlier[0].get("git_commit") == "0000000"
              and earlier[0].get("until") == until and "build" in earlier[0],
              f"--resume-other-build: the {label}'s provenance names the other build until {until} (got {earlier})")
    check(comparable(report) == baseline["report"], "--resume-other-build: the report's numbers are the uninterrupted ones")
    check(learned["heads"] == json.loads(baseline["learned"])["heads"], "--resume-other-build: so are the learned weights")

    # Stopped after that resume and resumed by this build: the earlier build stays named.
    r = run(tool, common + ["--resume", "other-build-2", "--resume-other-build"], stop_at=1)
    check(r.returncode == 5, f"--resume-other-build, stopped again: exit 5 (got {r.returncode}; {r.stderr.strip()!r})")
    r = run(tool, common + ["--resume", "other-build-2", "--report", "ob2.json"])
    earlier = load("ob2.json")["provenance"].get("earlier_builds") if r.returncode == 0 else None
    check(r.returncode == 0 and earlier is not None and [b["git_commit"] for b in earlier] == ["0000000"],
          f"--resume-other-build, then a same-build resume: exit 0, the earlier build still named (got {r.returncode}, {earlier})")


def safe_point_in(directory):
    """The safe point of the checkpoint in `directory` (None when there is none yet)."""
    try:
        return load(os.path.join(directory, "checkpoint.json"))["safe_point"]
    except (OSError, ValueError, KeyError):
        return None


def rewrite(path, edit):
    manifest = load(path)
    edit(manifest)
    with open(path, "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main()
