#!/usr/bin/env python3
"""The command line's bad-input suite: every `cli` line of tests/cli/bad_inputs.txt.

Each case must exit with its status, print exactly one line on stderr holding
its fragment, and leave the fixture folder as it was (no new file, no
temporary file, every file byte for byte). Also checked here: the input
contract of src/cli/file_kinds.hpp is word for word in docs/formats.md and in
the --help of forward, learn, stage1 and sculpt.

  tests/cli/bad_inputs.py --tool build/release/mhalearn
"""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cli_fixtures import generate, overflowing_instance, report

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
CASES = os.path.join(ROOT, "tests/cli/bad_inputs.txt")


def read_cases(kind):
    """[(line number, expected, fragment, text)] of the lines of this kind."""
    out = []
    with open(CASES, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [x.strip() for x in line.rstrip("\n").split("|", 3)]
            if len(fields) != 4:
                sys.exit(f"{CASES}:{number}: expected 4 fields separated by '|'")
            if fields[0] == kind:
                out.append((number, fields[1], fields[2], fields[3]))
    return out


def npy_header(dtype, shape):
    """A .npy version-1.0 header (standard library only: numpy is not needed here)."""
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, "".join(f"{s}," if len(shape) == 1 else f"{s}, " for s in shape).rstrip(" "))
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode()


def write_npy(path, dtype, shape, payload):
    with open(path, "wb") as f:
        f.write(npy_header(dtype, shape) + payload)


def make_fixtures(tool, d):
    """The placeholders' files in folder d; returns {name: path relative to d}."""
    def run(*args):
        subprocess.run([tool, *args, "--quiet"], cwd=d, check=True, capture_output=True)

    generate(tool, d, "inst.json")
    generate(tool, d, "ginst.json", seed=2, inputs="gaussian")
    generate(tool, d, "inst6.json", d=6)
    run("sample", "inst.json", "--n", "64", "--x", "X.npy", "--y", "Y.npy")
    run("sample", "ginst.json", "--n", "64", "--x", "GX.npy", "--y", "GY.npy")
    run("sample", "inst6.json", "--n", "64", "--x", "X6.npy", "--y", "Y6.npy")
    overflowing_instance(d, "inst.json", "huge.json")
    write_npy(os.path.join(d, "X16.npy"), "<f2", (64, 2, 8), b"\x00\x3c" * (64 * 16))
    write_npy(os.path.join(d, "Xi64.npy"), "<i8", (64, 2, 8), (1).to_bytes(8, "little", signed=True) * (64 * 16))
    write_npy(os.path.join(d, "X2d.npy"), "|i1", (64, 16), b"\x01" * (64 * 16))
    write_npy(os.path.join(d, "Xbad.npy"), "|i1", (4, 2, 8), b"\x01" * 63 + b"\x03")
    write_npy(os.path.join(d, "Y7.npy"), "<f8", (7, 2, 8), b"\x00" * (7 * 16 * 8))
    import struct
    write_npy(os.path.join(d, "W.npy"), "<f8", (8, 8), b"".join(struct.pack("<d", 0.1 * ((i * 7) % 11 - 5)) for i in range(64)))
    write_npy(os.path.join(d, "W5.npy"), "<f8", (5, 5), struct.pack("<d", 0.5) * 25)
    with open(os.path.join(d, "notes.txt"), "w") as f:
        f.write("not a dataset\n")
    with open(os.path.join(d, "bad.json"), "w") as f:
        f.write('{"d": 8, "heads": [')
    open(os.path.join(d, "empty.json"), "w").close()
    with open(os.path.join(d, "afile"), "w") as f:
        f.write("a regular file\n")
    os.mkdir(os.path.join(d, "adir"))
    os.mkdir(os.path.join(d, "side.npy.json"))  # where forward -o side.npy would put its sidecar
    with open(os.path.join(d, "existing.json"), "w") as f:
        f.write('{"keep": "these bytes"}\n')
    shutil.copy(os.path.join(d, "inst.json"), os.path.join(d, "layer.json"))
    return {"inst": "inst.json", "ginst": "ginst.json", "huge": "huge.json", "x": "X.npy", "y": "Y.npy",
            "gx": "GX.npy", "gy": "GY.npy", "x16": "X16.npy", "xi64": "Xi64.npy", "x2d": "X2d.npy",
            "x6": "X6.npy", "y7": "Y7.npy", "xbad": "Xbad.npy", "w": "W.npy", "w5": "W5.npy",
            "text": "notes.txt", "badjson": "bad.json", "empty": "empty.json", "file": "afile", "dir": "adir",
            "existing": "existing.json", "nodir": "nodir", "layer": "layer.json"}


def snapshot(d):
    """{relative path: sha256} of every file and folder under d."""
    out = {}
    for base, dirs, files in os.walk(d):
        for name in dirs:
            out[os.path.relpath(os.path.join(base, name), d) + "/"] = "dir"
        for name in files:
            with open(os.path.join(base, name), "rb") as f:
                out[os.path.relpath(os.path.join(base, name), d)] = hashlib.sha256(f.read()).hexdigest()
    return out


def check_contract(tool, failures):
    header = open(os.path.join(ROOT, "src/cli/file_kinds.hpp"), encoding="utf-8").read()
    contracts = re.findall(r'inline constexpr const char\* \w+ =\s*((?:"[^"]*"\s*)+);', header)
    texts = ["".join(re.findall(r'"([^"]*)"', c)) for c in contracts]
    formats = open(os.path.join(ROOT, "docs/formats.md"), encoding="utf-8").read()
    for t in texts:
        if t not in formats:
            failures.append(f"docs/formats.md lacks the contract text: {t}")
    helps = {c: subprocess.run([tool, c, "--help"], capture_output=True, text=True).stdout
             for c in ("forward", "learn", "stage1", "sculpt", "import")}
    squash = lambda s: " ".join(s.split())
    if squash(texts[0]) not in squash(helps["forward"]) or squash(texts[0]) not in squash(helps["learn"]):
        failures.append("--help of forward/learn does not state the inputs contract word for word")
    if squash(texts[1]) not in squash(helps["stage1"]) or squash(texts[1]) not in squash(helps["sculpt"]):
        failures.append("--help of stage1/sculpt does not state the labels contract word for word")
    if squash(texts[4]) not in squash(helps["import"]):
        failures.append("--help of import does not state the weights contract word for word")
    return len(texts)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True)
    args = p.parse_args()
    tool = os.path.abspath(args.tool)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        names = make_fixtures(tool, d)
        before = snapshot(d)
        cases = read_cases("cli")
        for number, expected, fragment, text in cases:
            argv = [a.format(**names) for a in text.split()]
            fragment = fragment.format(**names)
            try:
                r = subprocess.run([tool, *argv], cwd=d, capture_output=True, text=True, timeout=60)
            except subprocess.TimeoutExpired:
                failures.append(f"line {number}: `{text}` did not finish in 60 s")
                continue
            lines = [x for x in r.stderr.splitlines() if x.strip()]
            where = f"line {number}: mhalearn {' '.join(argv)}"
            if str(r.returncode) != expected:
                failures.append(f"{where}: exit {r.returncode}, expected {expected}; stderr: {r.stderr.strip()[:300]}")
            elif len(lines) != 1:
                failures.append(f"{where}: {len(lines)} lines on stderr, expected 1: {r.stderr.strip()[:300]}")
            elif fragment.lower() not in lines[0].lower():
                failures.append(f"{where}: stderr lacks '{fragment}': {lines[0]}")
            after = snapshot(d)
            if after != before:
                changed = sorted(set(after.items()) ^ set(before.items()))
                failures.append(f"{where}: the folder changed: {changed[:4]}")
                shutil.rmtree(d)
                os.mkdir(d)
                names = make_fixtures(tool, d)
                before = snapshot(d)
        contracts = check_contract(tool, failures)
    return report(failures, f"bad inputs: {len(cases)} command-line cases, {contracts} contract texts, "
                            f"{len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
