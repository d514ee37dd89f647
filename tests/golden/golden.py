#!/usr/bin/env python3
"""Golden outputs: fixed commands whose output bytes are committed.

Runs each command of COMMANDS in a fresh folder with the given `mhalearn`,
normalises what depends on the machine or the clock (see `normalise`), and
compares with the files committed under tests/golden/expected/. On a
difference it prints the file, the first differing JSON key path or .npy
element (with both values) and the first differing byte offset, and exits 1.

  golden.py --tool build/release/mhalearn             compare (the ctest test)
  golden.py --tool build/release/mhalearn --update    rewrite expected/ (after a deliberate change)
  golden.py ... --env GLIBC_TUNABLES=...              the same comparison under another environment

Only the reproducible build (CMake MHALEARN_ARCH=reproducible, the default) is
expected to match; a native build's bytes are the build machine's.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected")

# (name, arguments, files it writes). {tool} is the binary; paths are relative
# to the run folder. Small sizes: the whole set runs in a few seconds in release.
COMMANDS = [
    ("generate", ["generate", "--d", "8", "--k", "2", "--m", "2", "--scale", "3", "--seed", "7", "-o", "inst.json"],
     ["inst.json"]),
    ("generate_gaussian", ["generate", "--d", "8", "--k", "3", "--m", "2", "--inputs", "gaussian", "--seed", "5",
                           "-o", "inst_gauss.json"], ["inst_gauss.json"]),
    ("sample", ["sample", "inst.json", "--n", "64", "--seed", "3", "--threads", "1", "--x", "x.npy", "--y", "y.npy"],
     ["x.npy", "y.npy"]),
    ("sample_two_threads", ["sample", "inst.json", "--n", "64", "--seed", "3", "--threads", "2", "--x", "x2.npy",
                            "--y", "y2.npy"], ["x2.npy", "y2.npy"]),
    ("sample_gaussian", ["sample", "inst_gauss.json", "--n", "32", "--seed", "4", "--x", "xg.npy", "--y", "yg.npy"],
     ["xg.npy", "yg.npy"]),
    ("forward_fast", ["forward", "inst.json", "--x", "x.npy", "--path", "fast", "-o", "y_fast.npy"], ["y_fast.npy"]),
    ("forward_reference", ["forward", "inst.json", "--x", "x.npy", "--path", "reference", "--precision", "200",
                           "-o", "y_ref.npy"], ["y_ref.npy"]),
    ("forward_fast_gaussian", ["forward", "inst_gauss.json", "--x", "xg.npy", "-o", "yg_fast.npy"], ["yg_fast.npy"]),
    ("stage1", ["stage1", "inst.json", "--samples", "20000", "--threads", "2", "--report", "stage1.json",
                "-o", "w_hat.json"], ["stage1.json", "w_hat.json"]),
    ("learn_no_polish", ["learn", "inst16.json", "--seed", "1", "--threads", "2", "--rounds", "2",
                         "--final-sculpt-samples", "2000000", "--no-polish",
                         "--no-reference", "--report", "learn_np.json", "-o", "learned_np.json"],
     ["learn_np.json", "learned_np.json"]),
    ("learn", ["learn", "inst16.json", "--seed", "1", "--threads", "2", "--rounds", "2",
               "--final-sculpt-samples", "2000000", "--no-reference",
               "--report", "learn.json", "-o", "learned.json"], ["learn.json", "learned.json"]),
    ("hard", ["hard", "--d", "6", "--m", "2", "-o", "hard.json"], ["hard.json"]),
]
# The learner's instance: the default shape (16,2,2), logit scale 6.
SETUP = [["generate", "--d", "16", "--k", "2", "--m", "2", "--scale", "6", "--seed", "1", "-o", "inst16.json"]]


def is_clock_key(key):
    """Keys whose values are wall-clock measurements (not part of the result)."""
    return key != "max_seconds" and ("seconds" in key or key.endswith("_per_second") or key.startswith("_wall"))


def normalise_json(value):
    """Drops provenance (commit, CPU, compiler: recorded, not compared) and clock readings."""
    if isinstance(value, dict):
        return {k: normalise_json(v) for k, v in value.items()
                if k not in ("provenance", "instance_provenance") and not is_clock_key(k)}
    if isinstance(value, list):
        return [normalise_json(v) for v in value]
    return value


def normalise(path):
    """The bytes compared: JSON re-serialised without provenance and clock keys
    (doubles keep their shortest round-trip form); .npy files as they are."""
    data = open(path, "rb").read()
    if path.endswith(".json"):
        return (json.dumps(normalise_json(json.loads(data)), indent=1, sort_keys=True) + "\n").encode()
    return data


def first_json_difference(a, b, where="$"):
    if type(a) is not type(b):
        return f"{where}: expected {a!r}, got {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'expected' if k in a else 'output'}"
            d = first_json_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_json_difference(x, y, f"{where}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{where}: length {len(a)} expected, {len(b)} got"
    return None if a == b else f"{where}: expected {a!r}, got {b!r}"


def npy_data_offset(data):
    """Offset of the first element of a version-1 .npy file (its header is 10 + HEADER_LEN bytes)."""
    return 10 + struct.unpack("<H", data[8:10])[0]


def describe_difference(name, expected, got):
    pos = next((i for i, (x, y) in enumerate(zip(expected, got)) if x != y), min(len(expected), len(got)))
    lines = [f"  {name}: {len(expected)} bytes expected, {len(got)} got; first differing byte at offset {pos}"]
    if name.endswith(".json"):
        lines.append("  first difference: " + str(first_json_difference(json.loads(expected), json.loads(got))))
    elif name.endswith(".npy") and pos >= npy_data_offset(expected):
        i = (pos - npy_data_offset(expected)) // 8
        at = npy_data_offset(expected) + 8 * i
        if at + 8 <= len(expected) and at + 8 <= len(got):
            e, g = struct.unpack("<d", expected[at:at + 8])[0], struct.unpack("<d", got[at:at + 8])[0]
            lines.append(f"  element {i} (float64): expected {e!r}, got {g!r}")
    return "\n".join(lines)


def run_all(tool, folder, env):
    for argv in SETUP:
        subprocess.run([tool] + argv, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL)
    for name, argv, _ in COMMANDS:
        done = subprocess.run([tool] + argv, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:
            sys.exit(f"golden: `mhalearn {' '.join(argv)}` exited {done.returncode}: {done.stderr.strip()}")


def compare(expected_dir, outputs, output_dir):
    """Problems (one text block per differing file) between committed and fresh outputs."""
    bad = []
    for f in outputs:
        ref = os.path.join(expected_dir, f)
        if not os.path.exists(ref):
            bad.append(f"  {f}: no expected file (run with --update and commit it)")
            continue
        exp, got = open(ref, "rb").read(), normalise(os.path.join(output_dir, f))
        if exp != got:
            bad.append(describe_difference(f, exp, got))
    return bad


def cpu_has(flag):
    return any(line.startswith("flags") and f" {flag} " in line + " " for line in open("/proc/cpuinfo"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE added to the commands' environment")
    ap.add_argument("--needs-cpu-flag", help="exit 77 (ctest: skipped) when /proc/cpuinfo lacks this flag")
    a = ap.parse_args()
    if a.needs_cpu_flag and not cpu_has(a.needs_cpu_flag):
        print(f"golden: skipped, this CPU has no {a.needs_cpu_flag}")
        return 77
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    folder = tempfile.mkdtemp(prefix="mhalearn-golden-")
    try:
        run_all(os.path.abspath(a.tool), folder, env)
        outputs = [f for _, _, files in COMMANDS for f in files]
        if a.update:
            os.makedirs(EXPECTED, exist_ok=True)
            for f in outputs:
                open(os.path.join(EXPECTED, f), "wb").write(normalise(os.path.join(folder, f)))
            print(f"golden: wrote {len(outputs)} files to {os.path.relpath(EXPECTED)}")
            return 0
        bad = compare(EXPECTED, outputs, folder)
        print(f"golden: {len(outputs) - len(bad)} of {len(outputs)} output files match byte for byte"
              + (f" (environment: {' '.join(a.env)})" if a.env else ""))
        if bad:
            print("\n".join(bad))
            return 1
        return 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
