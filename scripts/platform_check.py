#!/usr/bin/env python3
"""Same bytes on other platforms: builds mhalearn for each platform this
machine can build or emulate with Debian's packages, runs the golden outputs
(tests/golden/golden.py's commands) and one committed learner run
(docs/results/runs/, as scripts/check_runs.py re-runs it), and compares their
bytes with the committed ones.

Platforms (each a part that runs on its own):
  host      the release build (build/release) on this machine
  skylake   the release build under `qemu-x86_64 -cpu Skylake-Client-v4`
            (an Intel client CPU with AVX2 and FMA, no AVX-512)
  avx512    the release build under `qemu-x86_64 -cpu Icelake-Server-v5`, when
            qemu offers AVX-512 there; qemu 7.2 (Debian 12) does not, and the
            part then says so instead of running
  clang     the release configuration built with clang++-14 (build/platform/clang)
  aarch64-neon  the release configuration cross-built for aarch64
            (cmake/toolchains/aarch64-linux-gnu.cmake, build/platform/aarch64-neon:
            Eigen's NEON packets) under qemu-aarch64, against the committed bytes
  aarch64   the portable preset's configuration cross-built for aarch64
            (build/platform/aarch64: Eigen without packets) under qemu-aarch64,
            against what the x86-64 portable build (--portable) writes here: the
            bytes promised on aarch64 (docs/reproducibility.md)
  libm      not a build: the libm functions src/ calls, the correctly rounded
            hypot and cbrt that replace two of them (src/numeric/correctly_rounded.cpp)
            and Eigen's vectorised exp/log on 2e5 arguments each
            (scripts/platform_libm.cpp), x86-64-v3 against aarch64 (qemu), value
            by value; its row counts functions. It also prints the time of one
            call of glibc's hypot and cbrt and of the correctly rounded ones here

  scripts/platform_check.py [--fast] [--markdown FILE] [PART ...]   (default: every part)
      [--reference TOOL]   compare with what TOOL writes here, not with the committed bytes
      [--portable TOOL]    the x86-64 portable build (default build/portable/mhalearn) for the aarch64 part
      [--build-lock FILE]  build under `flock FILE nice -n 5` (a machine shared with other builds)
      [--keep DIR]         keep each part's golden outputs in DIR/PART

--fast runs the golden commands without the two learner runs and no committed
run (the test command's part: CTest "platform: ..."). Needs
`scripts/install-deps.sh --platforms` (qemu-user, the arm64 cross compiler and
libraries). Exit 0 when every part that ran gave the committed bytes, 1 when
one differed, 2 when a part could not run. Each part prints its wall time, its
CPU time (user+sys of its children) and the load average before and after.
"""
import argparse
import datetime
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests/golden"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402
import check_runs  # noqa: E402

LEARNER_RUN = "phase_paper_scale12_coh0.5"  # 3 s natively; CTest re-runs it too
SKYLAKE, ICELAKE = "Skylake-Client-v4", "Icelake-Server-v5"
# Features of the Skylake model that qemu's TCG cannot give (it warns about each
# on every start); none of them is arithmetic.
TCG_LACKS = "-pcid,-x2apic,-tsc-deadline,-invpcid,-rdseed,-spec-ctrl,-3dnowprefetch,-xsavec,-xsaves"
# What a platform build leaves out: tests, benchmarks, MPI, the Python module.
LEAN = ["-DBUILD_TESTING=OFF", "-DMHALEARN_BENCH=OFF", "-DMHALEARN_MPI=OFF", "-DMHALEARN_PYTHON=OFF",
        "-DCMAKE_DISABLE_FIND_PACKAGE_pybind11=ON", "-DCMAKE_BUILD_TYPE=Release"]
AARCH64 = ["-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(ROOT, "cmake/toolchains/aarch64-linux-gnu.cmake")]
# Each build's configuration, in full (a build folder's cache would otherwise keep an earlier one).
BUILDS = {
    "clang": ["-DCMAKE_CXX_COMPILER=clang++-14", "-DMHALEARN_EIGEN_VECTORS=ON"],
    "aarch64-neon": AARCH64 + ["-DMHALEARN_EIGEN_VECTORS=ON"],
    "aarch64": AARCH64 + ["-DMHALEARN_EIGEN_VECTORS=OFF"],
}
PARTS = ["host", "skylake", "avx512", "clang", "aarch64-neon", "aarch64", "libm"]


class CannotRun(Exception):
    pass


def run(argv, **kw):
    done = subprocess.run(argv, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        raise CannotRun(f"`{' '.join(argv)}` exited {done.returncode}: {(done.stderr or done.stdout).strip()[-600:]}")
    return done.stdout


def build(part, options):
    """Configures and builds build/platform/PART's mhalearn; returns its path."""
    folder = os.path.join(ROOT, "build/platform", part)
    run(["cmake", "-S", ROOT, "-B", folder, "-G", "Ninja"] + LEAN + BUILDS[part])
    lock = ["flock", options.build_lock, "nice", "-n", "5"] if options.build_lock else []
    run(lock + ["cmake", "--build", folder, "-j", str(os.cpu_count() or 2), "--target", "mhalearn"])
    return os.path.join(folder, "mhalearn")


def wrapper(folder, name, prefix, tool):
    """An executable that runs TOOL under PREFIX (golden.py and check_runs.py run one path)."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec " + " ".join(prefix) + f" '{tool}' \"$@\"\n")
    os.chmod(path, 0o755)
    return path


def qemu_x86_has(cpu, flag):
    """Whether qemu-x86_64 -cpu CPU gives the guest FLAG (asked through a guest program)."""
    probe = os.path.join(tempfile.mkdtemp(prefix="mhalearn-cpu-"), "has")
    src = probe + ".cpp"
    open(src, "w").write('int main(){return __builtin_cpu_supports("%s") ? 0 : 1;}\n' % flag)
    run(["g++", "-O1", src, "-o", probe])
    return subprocess.run(["qemu-x86_64", "-cpu", cpu, probe], capture_output=True).returncode == 0


def tool_for(part, scratch, options):
    release = os.path.abspath(options.release)
    if part in ("host", "skylake", "avx512") and not os.path.exists(release):
        raise CannotRun(f"no {release}: cmake --preset release && cmake --build --preset release")
    if part == "host":
        return release
    if part == "skylake":
        return wrapper(scratch, "skylake", ["qemu-x86_64", "-cpu", SKYLAKE + "," + TCG_LACKS], release)
    if part == "avx512":
        if not qemu_x86_has(ICELAKE, "avx512f"):
            raise CannotRun(f"qemu-x86_64 -cpu {ICELAKE} gives no AVX-512 (qemu's TCG lacks it); "
                            "the host row is this machine's AVX-512 CPU")
        return wrapper(scratch, "icelake", ["qemu-x86_64", "-cpu", ICELAKE], release)
    if part == "clang":
        return build("clang", options)
    if part in ("aarch64", "aarch64-neon"):
        return wrapper(scratch, part, ["qemu-aarch64"], build(part, options))
    raise ValueError(part)


def first_value(problem):
    """The first differing value of golden.describe_difference's text, on one line."""
    lines = problem.strip().splitlines()
    detail = next((l.strip() for l in lines[1:] if l.strip()), lines[0].strip())
    return lines[0].strip().split(":")[0] + ": " + detail.replace("first difference: ", "")


def numbers(path):
    """{where: value} of every number of a golden output (JSON leaves by key path, .npy elements by index)."""
    data = golden.normalise(path)
    if path.endswith(".npy"):
        start = golden.npy_data_offset(data)
        return dict(enumerate(struct.unpack(f"<{(len(data) - start) // 8}d", data[start:start + (len(data) - start) // 8 * 8])))
    leaves = {}

    def walk(value, where):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            leaves[where] = float(value)
    walk(json.loads(data), "$")
    return leaves


def largest_relative_difference(expected, got):
    """max |a − b| / max(|a|, |b|) over the numbers two outputs share (inf where one is not finite)."""
    a, b = numbers(expected), numbers(got)
    worst = 0.0
    for k in set(a) & set(b):
        x, y = a[k], b[k]
        if x == y or (x != x and y != y):
            continue
        scale = max(abs(x), abs(y))
        worst = max(worst, abs(x - y) / scale if scale > 0 and scale != float("inf") else float("inf"))
    return worst


def golden_outputs(tool, fast, scratch):
    """Runs the golden commands with TOOL; (the folder of their outputs, the output names)."""
    commands = [c for c in golden.COMMANDS if not (fast and c[1][0] == "learn")]
    folder = tempfile.mkdtemp(prefix="golden-", dir=scratch)
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    for argv in golden.SETUP:
        run([tool] + argv, cwd=folder, env=env)
    for name, argv, _ in commands:
        run([tool] + argv, cwd=folder, env=env)
    return folder, [f for _, _, files in commands for f in files]


def reference_tool(part, options):
    """The mhalearn whose bytes, written here, PART is compared with; None: the committed bytes."""
    if part == "aarch64":
        portable = os.path.abspath(options.portable)
        if not os.path.exists(portable):
            raise CannotRun(f"no {portable}: cmake --preset portable && cmake --build --preset portable --target mhalearn")
        return portable
    return os.path.abspath(options.reference) if options.reference else None


REFERENCE_FOLDERS = {}  # reference tool → the folder of its normalised golden outputs (made once)


def reference_outputs(reference, options, scratch):
    """The folder of normalised outputs to compare with: tests/golden/expected/, or
    those REFERENCE writes here."""
    if not reference:
        return golden.EXPECTED
    if reference not in REFERENCE_FOLDERS:
        folder, outputs = golden_outputs(reference, options.fast, scratch)
        REFERENCE_FOLDERS[reference] = tempfile.mkdtemp(prefix="reference-", dir=scratch)
        for f in outputs:
            open(os.path.join(REFERENCE_FOLDERS[reference], f), "wb").write(golden.normalise(os.path.join(folder, f)))
    return REFERENCE_FOLDERS[reference]


def golden_part(tool, reference, options, scratch):
    """(output names, problems, largest relative difference) over the golden outputs."""
    expected_dir = reference_outputs(reference, options, scratch)
    folder, outputs = golden_outputs(tool, options.fast, scratch)
    if options.keep:
        shutil.copytree(folder, os.path.join(options.keep, options.part), dirs_exist_ok=True)
    bad = golden.compare(expected_dir, outputs, folder)
    sizes = {}
    for f in outputs:
        if open(os.path.join(expected_dir, f), "rb").read() != golden.normalise(os.path.join(folder, f)):
            expected = os.path.join(scratch, "expected-" + f)
            # The reference file is already normalised; numbers() normalises again (a no-op).
            shutil.copy(os.path.join(expected_dir, f), expected)
            sizes[f] = largest_relative_difference(expected, os.path.join(folder, f))
    if sizes:
        print("  differing files, largest relative difference: "
              + "; ".join(f"{f} {v:.1e}" for f, v in sizes.items()), flush=True)
    return outputs, bad, max(sizes.values(), default=0.0)


def learner_run_difference(tool, reference, scratch, keep=None):
    """(None when the committed learner run re-run with TOOL gives the committed report's bytes, or
    the REFERENCE tool's re-run's, else the difference; the largest relative difference of the
    reports' numbers, 0 when the bytes agree or are unknown). keep: a folder to copy both reports to."""
    if not reference:
        return check_runs.check(LEARNER_RUN, scratch, tool), 0.0
    reports = []
    for name, t in (("reference", reference), ("platform", tool)):
        folder = os.path.join(scratch, f"run-{name}-{len(os.listdir(scratch))}")
        os.makedirs(folder)
        check_runs.check(LEARNER_RUN, folder, t)
        reports.append(os.path.join(folder, LEARNER_RUN + ".report.json"))
    if not all(os.path.exists(r) for r in reports):
        return f"{LEARNER_RUN}: a re-run wrote no report", 0.0
    if keep:  # both reports, for check_runs.py --compare: the first differing value is all the table shows
        os.makedirs(os.path.join(keep, "learner-run"), exist_ok=True)
        for name, r in zip(("reference", "platform"), reports):
            shutil.copy(r, os.path.join(keep, "learner-run", f"{name}.report.json"))
    problem = check_runs.report_difference(*reports)
    if problem is None:
        return None, 0.0
    return (f"{LEARNER_RUN}: {problem}" + check_runs.provenance_note(*reports),
            largest_relative_difference(*reports))


def platform_part(part, options, scratch):
    fast = options.fast
    tool = tool_for(part, scratch, options)
    reference = reference_tool(part, options)
    outputs, bad, worst = golden_part(tool, reference, options, scratch)
    names = [f"tests/golden/expected/{f}" for f in outputs]
    problems = [first_value(b) for b in bad]
    if not fast:
        problem, size = learner_run_difference(tool, reference, scratch, options.keep)
        worst = max(worst, size)
        names.append(f"docs/results/runs/{LEARNER_RUN}.report.json")
        if problem:
            print("  " + problem, flush=True)
            problems.append(problem.splitlines()[0])
    return len(names) - len(problems), len(problems), problems[0] if problems else "—", worst


LIBM_PROBE = os.path.join(ROOT, "scripts/platform_libm.cpp")
LIBM_NAMES = ["exp", "log", "pow", "sin", "cos", "acos", "cbrt", "exp2", "expm1", "log1p", "log2", "hypot", "tanh",
              "correctly rounded hypot", "correctly rounded cbrt", "Eigen exp", "Eigen log"]


def libm_part(scratch):
    """Value by value: the probe's output built for x86-64-v3 (run here) and for aarch64 (qemu)."""
    flags = ["-O2", "-ffp-contract=off", "-isystem", "/usr/include/eigen3", "-DEIGEN_NO_CPUID", "-I" + os.path.join(ROOT, "src")]
    sources = [LIBM_PROBE, os.path.join(ROOT, "src/numeric/correctly_rounded.cpp")]
    values = {}
    for arch, compiler, march, prefix in (("x86-64", "g++", "x86-64-v3", []),
                                          ("aarch64", "aarch64-linux-gnu-g++", "armv8-a", ["qemu-aarch64"])):
        binary, data = os.path.join(scratch, "libm_" + arch), os.path.join(scratch, "libm_" + arch + ".bin")
        run([compiler] + flags + ["-march=" + march] + sources + ["-o", binary, "-lmpfr", "-lgmp"])
        run(prefix + [binary, data])
        raw = open(data, "rb").read()
        values[arch] = struct.unpack(f"<{len(raw) // 8}q", raw)
    a, b = values["x86-64"], values["aarch64"]
    n = len(a) // len(LIBM_NAMES)
    same, differ, first, per_function, worst = 0, 0, "—", [], 0.0
    for k, name in enumerate(LIBM_NAMES):
        pairs = list(zip(a[k * n:(k + 1) * n], b[k * n:(k + 1) * n]))
        bad = [i for i, (x, y) in enumerate(pairs) if x != y]
        if bad:
            differ += 1
            ulps = max(abs(pairs[i][0] - pairs[i][1]) for i in bad)
            per_function.append(f"{name} {len(bad)} of {n} (up to {ulps} ulp)")
            for i in bad:
                x, y = (struct.unpack("<d", struct.pack("<q", v))[0] for v in pairs[i])
                worst = max(worst, abs(x - y) / max(abs(x), abs(y)))
            if first == "—":
                x, y = (struct.unpack("<d", struct.pack("<q", v))[0] for v in pairs[bad[0]])
                first = f"{name}, argument {bad[0]}: x86-64 {x!r}, aarch64 {y!r}"
        else:
            same += 1
    print("  libm: values differing on aarch64: " + ("; ".join(per_function) or "none"), flush=True)
    speed = run([os.path.join(scratch, "libm_x86-64"), "--speed"]).strip().replace("\n", "; ")
    print(f"  x86-64, one call: {speed}", flush=True)
    return same, differ, first, worst


LABELS = {
    "host": "x86-64 host ({cpu}), GCC 12, release build",
    "skylake": f"x86-64 under qemu-x86_64 -cpu {SKYLAKE} (AVX2, FMA, no AVX-512), release build",
    "avx512": f"x86-64 under qemu-x86_64 -cpu {ICELAKE} (AVX-512), release build",
    "clang": "x86-64 host, clang 14 (release configuration)",
    "aarch64-neon": "aarch64 (armv8-a) under qemu-aarch64, GCC 12 cross build, release configuration (Eigen's NEON packets)",
    "aarch64": "aarch64 (armv8-a) under qemu-aarch64, GCC 12 cross build, portable configuration, against x86-64's portable build",
    "libm": "libm alone (not files: 13 libm functions, the correctly rounded hypot and cbrt, Eigen's exp, log), aarch64 against x86-64",
}


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("parts", nargs="*", metavar="PART", help=" ".join(PARTS))
    ap.add_argument("--fast", action="store_true", help="the golden commands without the learner, no committed run")
    ap.add_argument("--release", default=os.path.join(ROOT, "build/release/mhalearn"),
                    help="the release build's mhalearn (host, skylake, avx512)")
    ap.add_argument("--markdown", help="also write the table (with the command and date) to this file")
    ap.add_argument("--reference", metavar="TOOL",
                    help="compare with the bytes this mhalearn writes here (e.g. build/portable/mhalearn) instead of "
                         "the committed ones")
    ap.add_argument("--keep", metavar="DIR", help="keep each part's golden outputs in DIR/PART")
    ap.add_argument("--portable", default=os.path.join(ROOT, "build/portable/mhalearn"),
                    help="the x86-64 portable build's mhalearn, whose bytes the aarch64 part is compared with")
    ap.add_argument("--build-lock", metavar="FILE",
                    help="build the clang and aarch64 binaries under `flock FILE nice -n 5` (a shared machine)")
    a = ap.parse_args()
    parts = a.parts or PARTS
    if any(p not in PARTS for p in parts):
        ap.error(f"parts are {' '.join(PARTS)}")
    rows, status = [], 0
    with tempfile.TemporaryDirectory(prefix="mhalearn-platform-") as scratch:
        for part in parts:
            print(f"== {part}", flush=True)
            a.part = part
            load0, t0, c0 = open("/proc/loadavg").read().split()[:3], time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
            try:
                same, differ, first, worst = libm_part(scratch) if part == "libm" else platform_part(part, a, scratch)
                result = [str(same), str(differ), first.replace("|", "\\|"), f"{worst:.1e}" if differ else "—"]
                status = max(status, 1 if differ else 0)
            except CannotRun as e:
                result = ["not run", "", str(e).replace("|", "\\|"), ""]
                status = 2
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
            load1 = open("/proc/loadavg").read().split()[:3]
            timing = f"{time.time() - t0:.0f} s wall, {cpu:.0f} s CPU, load {' '.join(load0)} → {' '.join(load1)}"
            print(f"   {' | '.join(result)}\n   ({timing})", flush=True)
            rows.append([LABELS[part].format(cpu=cpu_model())] + result + [timing])
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    command = " ".join(["scripts/platform_check.py"] + sys.argv[1:])
    against = (f"the bytes `{os.path.relpath(os.path.abspath(a.reference), ROOT)}` writes on this machine"
               if a.reference else "the committed bytes (tests/golden/expected/, docs/results/runs/)")
    if "aarch64" in parts:
        against += f"; the aarch64 part with the bytes `{os.path.relpath(os.path.abspath(a.portable), ROOT)}` writes here"
    lines = [f"`{command}` at commit {commit}, {datetime.date.today()}, on {cpu_model()} ({os.cpu_count()} cores); "
             f"compared with {against}:",
             "", "| platform | files identical | files differing | first differing value "
             "| largest relative difference | time |",
             "|---|---:|---:|---|---:|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    print("\n".join(lines))
    if a.markdown:
        open(a.markdown, "w").write("\n".join(lines) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
