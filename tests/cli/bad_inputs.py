#!/usr/bin/env python3
"""The command line's bad-input suite: every `cli` line of tests/cli/bad_inputs.txt.

Each case must exit with its status, print exactly one line on stderr holding
its fragment, and leave the fixture folder as it was (no new file, no
temporary file, every file byte for byte, every device, pipe and socket still
one). Also checked here: the input contract of src/commands/file_kinds.hpp is
word for word in docs/formats.md and in the --help of forward, learn, stage1
and sculpt.

Cases that need root (a device node, a block device, a read-only mount) are
counted as skipped without it.

  tests/cli/bad_inputs.py --tool build/release/mhalearn
"""
import argparse
import hashlib
import os
import re
import shutil
import socket
import stat
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


NOT_UTF8 = os.fsdecode(b"\xff") + ".json"  # a name whose bytes are not UTF-8
LONG = "a" * 295 + ".json"  # longer than a file system's 255 bytes
TINY = ["--stage1-samples", "20000", "--crude-sculpt-samples", "40000", "--sculpt-samples", "60000",
        "--final-sculpt-samples", "-1", "--margin-samples", "100000", "--rounds", "1", "--net-tuples", "200",
        "--test-samples", "200", "--no-reference", "--threads", "1"]


def special_fixtures(tool, d):
    """A named pipe, a socket, and as root a character and a block device node and a
    read-only folder holding a checkpoint: {placeholder: path}, with those that could not be made left out."""
    names = {}
    os.mkfifo(os.path.join(d, "fifo"))
    names["fifo"] = "fifo"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.path.join(d, "sock"))
    sock.close()
    names["sock"] = "sock"
    try:
        os.mknod(os.path.join(d, "node"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
        os.mknod(os.path.join(d, "blk"), 0o600 | stat.S_IFBLK, os.makedev(7, 200))
        names.update(node="node", blk="blk")
    except PermissionError:
        pass
    ro = os.path.join(d, "ro")
    env = dict(os.environ, MHALEARN_STOP_AT_SAFE_POINT="1")
    r = subprocess.run([tool, "learn", "inst.json", "--checkpoint", "ro", "--quiet"] + TINY, cwd=d, env=env,
                       capture_output=True)
    if r.returncode == 5 and read_only(ro):
        names["ro"] = "ro"
    return names


def read_only(folder):
    """`folder` made read-only: a read-only bind mount as root (whom file modes do not stop), else its modes."""
    if os.geteuid() != 0:
        os.chmod(folder, 0o555)
        return True
    mounted = subprocess.run(["mount", "--bind", folder, folder], capture_output=True).returncode == 0
    return mounted and subprocess.run(["mount", "-o", "remount,bind,ro", folder], capture_output=True).returncode == 0


def release(d):
    """Undoes read_only (the mount, or the modes) so that the folder can be removed."""
    ro = os.path.join(d, "ro")
    if os.path.isdir(ro):
        subprocess.run(["umount", ro], capture_output=True)
        os.chmod(ro, 0o755)


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
    shutil.copy(os.path.join(d, "inst.json"), os.path.join(d, NOT_UTF8))
    names = {"inst": "inst.json", "ginst": "ginst.json", "huge": "huge.json", "x": "X.npy", "y": "Y.npy",
             "gx": "GX.npy", "gy": "GY.npy", "x16": "X16.npy", "xi64": "Xi64.npy", "x2d": "X2d.npy",
             "x6": "X6.npy", "y7": "Y7.npy", "xbad": "Xbad.npy", "w": "W.npy", "w5": "W5.npy",
             "text": "notes.txt", "badjson": "bad.json", "empty": "empty.json", "file": "afile", "dir": "adir",
             "existing": "existing.json", "nodir": "nodir", "layer": "layer.json", "notutf8": NOT_UTF8, "long": LONG}
    names.update(special_fixtures(tool, d))
    return names


def snapshot(d):
    """{relative path: sha256} of every file under d; folders, devices, pipes and sockets by their kind."""
    out = {}
    for base, dirs, files in os.walk(d):
        for name in dirs:
            out[os.path.relpath(os.path.join(base, name), d) + "/"] = "dir"
        for name in files:
            path = os.path.join(base, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                with open(path, "rb") as f:
                    out[os.path.relpath(path, d)] = hashlib.sha256(f.read()).hexdigest()
            else:
                out[os.path.relpath(path, d)] = stat.S_IFMT(mode)
    return out


def check_contract(tool, failures):
    header = open(os.path.join(ROOT, "src/commands/file_kinds.hpp"), encoding="utf-8").read()
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


def run_case(tool, d, names, number, expected, fragment, text):
    """None when the case holds, else why not; "skip" when it needs a fixture this machine could not make."""
    placeholders = set(re.findall(r"\{(\w+)\}", text + fragment))
    if placeholders - set(names):
        return "skip"
    argv = [a.format(**names) for a in text.split()]
    fragment = fragment.format(**names)
    where = f"line {number}: mhalearn {' '.join(argv)}"
    try:
        r = subprocess.run([tool, *argv], cwd=d, capture_output=True, text=True, timeout=60, errors="replace")
    except subprocess.TimeoutExpired:
        return f"{where}: did not finish in 60 s"
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    if str(r.returncode) != expected:
        return f"{where}: exit {r.returncode}, expected {expected}; stderr: {r.stderr.strip()[:300]}"
    if len(lines) != 1:
        return f"{where}: {len(lines)} lines on stderr, expected 1: {r.stderr.strip()[:300]}"
    if fragment.lower() not in lines[0].lower():
        return f"{where}: stderr lacks '{fragment}': {lines[0]}"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True)
    args = p.parse_args()
    tool = os.path.abspath(args.tool)
    failures, skipped = [], 0
    d = tempfile.mkdtemp()
    try:
        names = make_fixtures(tool, d)
        before = snapshot(d)
        cases = read_cases("cli")
        for number, expected, fragment, text in cases:
            problem = run_case(tool, d, names, number, expected, fragment, text)
            skipped += problem == "skip"
            if problem and problem != "skip":
                failures.append(problem)
            after = snapshot(d)
            if after != before:
                changed = sorted(set(map(str, after.items())) ^ set(map(str, before.items())))
                failures.append(f"line {number}: {text}: the folder changed: {changed[:4]}")
                release(d)
                shutil.rmtree(d)
                os.mkdir(d)
                names = make_fixtures(tool, d)
                before = snapshot(d)
        contracts = check_contract(tool, failures)
    finally:
        release(d)
        shutil.rmtree(d, ignore_errors=True)
    return report(failures, f"bad inputs: {len(cases)} command-line cases ({skipped} skipped: they need root), "
                            f"{contracts} contract texts, {len(failures)} failures")


if __name__ == "__main__":
    sys.exit(main())
