"""Ctrl-C in Python's long calls: sample, forward (both paths) and learn run on
a thread of their own without the GIL, while the calling thread asks Python's
signal handlers every 50 ms, and answer SIGINT with KeyboardInterrupt within
half a second; the command stops at its next check (util/progress.hpp). Each
call runs again and again in a child interpreter; SIGINT comes 1.5 s in (a retry: later); the
child prints the moment KeyboardInterrupt reached it, and whether it was inside
a call.
Also: learn with checkpoint= leaves the checkpoint of a safe point it reached,
and no temporary file."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import mhalearn

CHILD = r"""
import sys, time
import mhalearn as mh
import numpy as np
inst = mh.generate(16, 2, 2, seed=1)
# 64 heads: several seconds of CPU per call of sample and forward (about 6 s
# each here), so that SIGINT at 1.5 s lands inside the first call and a module
# that answers only when the call returns is late by seconds, not by chance
# (random heads: generate's condition checks would add a second to each child)
rng = np.random.default_rng(1)
big = mh.Instance([(rng.standard_normal((16, 16)) / 4, rng.standard_normal((16, 16)) / 4) for _ in range(64)], 2)
X, _ = mh.sample(inst, 20000, seed=1)
many = np.repeat(X, 75, axis=0)
call = {
    "sample": lambda: mh.sample(big, 1500000, threads=1),
    "forward fast": lambda: mh.forward(big, many, threads=1),
    "forward reference": lambda: mh.forward(inst, X, path="reference"),
    "learn": lambda: mh.learn(inst, crude_sculpt_samples=2**36, threads=1, checkpoint=sys.argv[2]),
}[sys.argv[1]]
inside = False
print("ready", flush=True)
try:
    while True:  # the call again and again, so that SIGINT lands in one
        inside = True
        call()
        inside = False
except KeyboardInterrupt:
    print("interrupted" if inside else "between", time.time(), flush=True)
"""

# The budget of an answer (issue 52): half a second.
ANSWER_SECONDS = 0.5


def interrupt(name, tmp_path):
    """(outcome, seconds from SIGINT to KeyboardInterrupt); outcome "interrupted" when it
    reached the child inside a call ("between": between two, which is sent again)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for attempt in range(5):
        with open(tmp_path / "stderr", "w+") as stderr:
            # SIGINT back to its default in the child: a child started with SIGINT ignored
            # (a background job of a shell without job control) gets no Python handler,
            # never raises KeyboardInterrupt and would run its loop for ever
            child = subprocess.Popen([sys.executable, "-c", CHILD, name, str(tmp_path / "ck")], stdout=subprocess.PIPE,
                                     stderr=stderr, text=True, env=env,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            assert child.stdout.readline().strip() == "ready"
            # deep in the calls (learn: past its first safe points); each attempt a
            # little later, so that no attempt falls at the same point between two calls
            time.sleep(1.5 + 0.37 * attempt)
            sent = time.time()
            child.send_signal(signal.SIGINT)
            try:  # bounded: a lost SIGINT fails here in a minute instead of hanging the suite
                line = child.communicate(timeout=60)[0].split()
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()
                pytest.fail(f"{name}: the child still ran 60 s after SIGINT")
            stderr.seek(0)
            last = (stderr.read().strip().splitlines() or ["(nothing on stderr)"])[-1]
        # no KeyboardInterrupt at all: the child ended otherwise (its last line says how)
        assert len(line) == 2, f"{name}: SIGINT did not raise KeyboardInterrupt; the child ended with: {last}"
        outcome, at = line
        if outcome == "interrupted":
            break
    return outcome, float(at) - sent


@pytest.mark.parametrize("name", ["sample", "forward fast", "forward reference", "learn"])
def test_ctrl_c_is_answered_within_half_a_second(name, tmp_path):
    outcome, seconds = interrupt(name, tmp_path)
    print(f"{name}: {outcome} {seconds:.3f} s after SIGINT")
    assert outcome == "interrupted" and seconds < ANSWER_SECONDS, (name, outcome, seconds)


def test_an_interrupted_learn_keeps_its_last_checkpoint(tmp_path):
    """Ctrl-C in a learn with checkpoint=: once the interpreter is done (the command,
    asked to stop, ends at its next check), the folder holds the checkpoint of a safe
    point the run reached, and no temporary file."""
    outcome, _ = interrupt("learn", tmp_path)
    assert outcome == "interrupted"
    manifest = json.loads((tmp_path / "ck" / "checkpoint.json").read_text())
    assert manifest["format"] == "mhalearn.learn-checkpoint" and manifest["safe_point"].startswith("before ")
    assert not [f for f in os.listdir(tmp_path / "ck") if ".tmp." in f]
