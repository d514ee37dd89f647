#!/usr/bin/env python3
"""Every row of the README's exit-status table, run as written.

Reads the table after the marker `<!-- exit-status table` in README.md, takes
each row's first backticked command as its example, replaces INSTANCE, HUGE and
TWIN by fixture instances, `mhalearn` by --tool and `mhalearn_faulty` by
--faulty, sets the row's leading VAR=value environment, runs it in a scratch
folder and requires the row's exit status. The row "128 + n" is run with
SIGTERM sent once the output's temporary file exists (the status is then 143),
with MHALEARN_TEST_HOLD_WHILE_CREATING=2 so that the signal lands before the
bulk of the data is written: the row then needs no free disk beyond the space
check (its example asks for 1.4 GB; 14.4 GB was more than a CI machine had).

  tests/cli/exit_codes.py --tool build/release/mhalearn --faulty build/release/mhalearn_faulty
"""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from cli_fixtures import generate, overflowing_instance, report

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))


def table_rows():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    start = text.index("<!-- exit-status table")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("exit", "---"):
            continue
        example = re.search(r"`([^`]*)`", cells[2])
        rows.append((cells[0], example.group(1) if example else None))
    return rows


def fixtures(tool, d):
    generate(tool, d, "inst.json")
    inst = json.load(open(os.path.join(d, "inst.json")))
    twin = dict(inst, heads=[inst["heads"][0], inst["heads"][0]])
    json.dump(twin, open(os.path.join(d, "twin.json"), "w"))
    overflowing_instance(d, "inst.json", "huge.json")
    return {"INSTANCE": "inst.json", "TWIN": "twin.json", "HUGE": "huge.json"}


def run_row(status, example, tool, faulty, d, names):
    words = example.split()
    env = dict(os.environ)
    while words and re.match(r"^[A-Z_]+=", words[0]):
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    binaries = {"mhalearn": tool, "mhalearn_faulty": faulty}
    argv = [binaries.get(words[0], words[0])] + [names.get(w, w) for w in words[1:]]
    if status.startswith("128"):
        env["MHALEARN_TEST_HOLD_WHILE_CREATING"] = "2"
        p = subprocess.Popen(argv, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        deadline = time.time() + 60
        while not glob.glob(os.path.join(d, "*.tmp.*")) and time.time() < deadline and p.poll() is None:
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        left = glob.glob(os.path.join(d, "*.tmp.*"))
        status = 128 + signal.SIGTERM if p.returncode == -signal.SIGTERM else p.returncode
        return status, (f"temporary files left: {left}" if left else "") + err.strip()[:300]
    r = subprocess.run(argv, cwd=d, capture_output=True, text=True, env=env, timeout=600)
    return r.returncode, r.stderr.strip()[:300]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True)
    p.add_argument("--faulty", required=True)
    args = p.parse_args()
    rows = table_rows()
    failures = []
    with tempfile.TemporaryDirectory() as d:
        names = fixtures(os.path.abspath(args.tool), d)
        for status, example in rows:
            if example is None:
                failures.append(f"row {status}: no example")
                continue
            expected = 128 + signal.SIGTERM if status.startswith("128") else int(status)
            got, detail = run_row(status, example, os.path.abspath(args.tool), os.path.abspath(args.faulty), d, names)
            print(f"exit {status}: `{example}` -> {got}")
            if got != expected or (status.startswith("128") and detail):
                failures.append(f"row {status}: `{example}` exited {got}, expected {expected}: {detail}")
    seen = {s for s, _ in rows}
    for needed in ("0", "1", "2", "3", "4", "5"):
        if needed not in seen:
            failures.append(f"the table has no row for exit {needed}")
    return report(failures, f"exit statuses: {len(rows)} rows, {len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
