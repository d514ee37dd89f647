#!/usr/bin/env python3
"""Tests of scripts/run-d128.sh's carried checkpoint, with a fake tool.

The (128,2,2) run outlasts the machine it starts on through CARRY, a folder in
the repository: the script copies there each checkpoint taken before a sculpt
(stage 2 or 4: no slabs, 1.6 MB at d = 128), never one holding slabs (up to 8.6 GB),
and a run on a new machine (a DIR with no checkpoint) resumes from it, with
the instance kept beside CARRY (--resume checks the instance's bytes) and its
segments numbered on from the highest copied beside CARRY; flags after CARRY
reach `learn`.

The fake tool stands in for `mhalearn`: `generate ... -o PATH` writes an
instance; `learn` records its arguments, then writes into the checkpoint folder
(after --checkpoint or --resume) each safe point of FAKE_SAFE_POINTS in turn (a
manifest naming one array file), sleeping FAKE_SLEEP seconds after each. No
real learner runs; about a minute.

  python3 tests/scripts/test_run_d128.py
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "run-d128.sh")

FAKE = r'''#!PYTHON
import json, os, sys, time
args = sys.argv[1:]
if args[0] == "generate":  # a new instance's bytes differ: they name the machine
    open(args[args.index("-o") + 1], "w").write(json.dumps({"machine": os.urandom(8).hex()}))
    sys.exit(0)
folder = args[args.index("--checkpoint" if "--checkpoint" in args else "--resume") + 1]
with open(os.environ["FAKE_CALLS"], "a") as f:
    f.write(json.dumps({"argv": args, "found": sorted(os.listdir(folder)) if os.path.isdir(folder) else []}) + "\n")
os.makedirs(folder, exist_ok=True)
time.sleep(1.5)  # the script looks the process up a second after starting it
for i, point in enumerate(json.loads(os.environ["FAKE_SAFE_POINTS"])):
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    array = "array-%016x.npy" % (i + 1)
    open(os.path.join(folder, array), "w").write("slabs" * (i + 1))
    manifest = {"safe_point": point, "state": {"a": array}}
    open(os.path.join(folder, "checkpoint.json"), "w").write(json.dumps(manifest, indent=1))
    time.sleep(float(os.environ["FAKE_SLEEP"]))
'''

BEFORE_SCULPT = "before round 3's sculpt (stage 4)"
WITH_SLABS = "before round 3's span (stage 5)"
BEFORE_POLISH = "before polishing"


def machine(root, name):
    """A run folder with the fake tool, as a new machine would have it."""
    run = os.path.join(root, name)
    os.makedirs(run)
    tool = os.path.join(run, "mhalearn")
    with open(tool, "w") as f:
        f.write(FAKE.replace("PYTHON", sys.executable))
    os.chmod(tool, os.stat(tool).st_mode | stat.S_IXUSR)
    return run


def run_script(run, carry, points, sleep, calls, flags=()):
    env = dict(os.environ, FAKE_SAFE_POINTS=json.dumps(points), FAKE_SLEEP=str(sleep), FAKE_CALLS=calls)
    done = subprocess.run(["bash", SCRIPT, run, carry, *flags], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def last_call(calls):
    with open(calls) as f:
        return json.loads(f.read().splitlines()[-1])


def main():
    root = tempfile.mkdtemp(prefix="test-run-d128-")
    try:
        carry = os.path.join(root, "repository", "carried")
        calls = os.path.join(root, "calls")
        # First machine: a checkpoint before a sculpt, then one with slabs, 12 s apart
        # (the script looks every 10 s and once more at the end).
        first = machine(root, "first")
        out = run_script(first, carry, [BEFORE_SCULPT, WITH_SLABS], 12, calls)
        assert "--checkpoint" in last_call(calls)["argv"], last_call(calls)
        with open(os.path.join(carry, "checkpoint.json")) as f:
            carried = json.load(f)
        assert carried["safe_point"] == BEFORE_SCULPT, ("a checkpoint with slabs was carried", carried)
        assert sorted(os.listdir(carry)) == ["array-0000000000000001.npy", "checkpoint.json"], os.listdir(carry)
        assert "carried:" in out, out
        with open(os.path.join(os.path.dirname(carry), "d128_k2_m2_scale6_seed1.instance.json")) as f:
            first_instance = f.read()
        # Its tester: a run whose only checkpoint holds slabs carries nothing new.
        out = run_script(machine(root, "slabs-only"), carry, [WITH_SLABS], 0.1, calls)
        with open(os.path.join(carry, "checkpoint.json")) as f:
            assert json.load(f)["safe_point"] == BEFORE_SCULPT, "the slabs' checkpoint replaced the carried one"
        # Second machine: no checkpoint of its own, so it resumes from the carried one,
        # numbering its segment after those copied into the repository beside CARRY.
        for name in ("segment1.time", "segment1.command"):
            shutil.copy(os.path.join(first, name), os.path.dirname(carry))
        second = machine(root, "second")
        run_script(second, carry, [], 0.1, calls)
        assert os.path.exists(os.path.join(second, "segment2.time")), sorted(os.listdir(second))
        call = last_call(calls)
        assert "--resume" in call["argv"] and "--checkpoint" not in call["argv"], call
        assert call["found"] == ["array-0000000000000001.npy", "checkpoint.json"], call
        instance = os.path.join(os.path.dirname(carry), "d128_k2_m2_scale6_seed1.instance.json")
        assert call["argv"][1] == instance, ("the instance is not the one beside CARRY", call)
        with open(instance) as f:
            assert f.read() == first_instance, "the instance was generated again"
        # The checkpoint before polishing holds no slabs either: it is carried. The
        # segments beside CARRY are 1 and 4 (a dropped segment 3 left a gap): the
        # third machine's is 5, not a reused number. Flags after CARRY reach learn.
        for name in ("segment4.time", "segment4.command"):
            shutil.copy(os.path.join(second, name.replace("4", "2")), os.path.join(os.path.dirname(carry), name))
        third = machine(root, "third")
        run_script(third, carry, [BEFORE_POLISH], 0.1, calls, flags=["--resume-other-build"])
        with open(os.path.join(carry, "checkpoint.json")) as f:
            assert json.load(f)["safe_point"] == BEFORE_POLISH, "the checkpoint before polishing was not carried"
        assert os.path.exists(os.path.join(third, "segment5.time")), sorted(os.listdir(third))
        assert last_call(calls)["argv"][-1] == "--resume-other-build", last_call(calls)
        print("run-d128.sh carries checkpoints before a sculpt or polishing, not those with slabs, and resumes from them "
              "with the same instance, numbering segments on from the highest kept and passing flags to learn")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
