#!/usr/bin/env python3
"""The edges a user meets that are not bad input (issue 52), through the command line:

- nothing replaced: an output that is a character device or a named pipe is
  written through and stays what it was (no temporary file, no sidecar beside
  it); a symbolic link keeps pointing at its file, which is replaced; a name of
  255 bytes works (its temporary file's name is cut to fit);
- nothing published half: on a small file system (a 1 MiB tmpfs, as root), a
  sample whose X and Y fit but not with their sidecars publishes nothing (not
  X and Y without the sidecars that say what they are), and the space check
  names sizes in the units they have (MB, not "0.0 GB");
- results before stdout can end the process: `learn … | head -1` writes -o and
  --report, then ends as SIGPIPE would; a failed write to stdout (> /dev/full,
  stdout closed) is one line and exit 1, after the files are written;
- the words a user reads: at d = 2 a learn that cannot certify says that no
  budget would help; `--help` shows no default "none" for folders; a healthy
  run prints no warning (its diagnostics with --verbose).

  tests/cli/edges.py --tool build/release/mhalearn
"""
import argparse
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading

from cli_fixtures import generate, report

TINY = ["--stage1-samples", "20000", "--crude-sculpt-samples", "40000", "--sculpt-samples", "100000",
        "--final-sculpt-samples", "100000", "--margin-samples", "200000", "--rounds", "2", "--net-tuples", "500",
        "--test-samples", "1000", "--threads", "2"]
failures = []
skipped = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
    return ok


def run(tool, args, cwd, **kw):
    return subprocess.run([tool, *args], cwd=cwd, capture_output=True, text=True, timeout=300, **kw)


def reader(path, into):
    """A thread that reads the named pipe `path` to its end into `into` (a list of bytes)."""
    def read():
        with open(path, "rb") as f:
            into.append(f.read())
    t = threading.Thread(target=read, daemon=True)  # a writer that replaced the pipe never opens it
    t.start()
    return t


def write_through(tool, d):
    os.mkfifo(os.path.join(d, "fifo"))
    got = []
    t = reader(os.path.join(d, "fifo"), got)
    r = run(tool, ["generate", "--d", "8", "-o", "fifo"], d)
    t.join(10)
    check(r.returncode == 0 and stat.S_ISFIFO(os.lstat(os.path.join(d, "fifo")).st_mode) and got and
          json.loads(got[0])["format"] == "mhalearn.instance",
          f"generate -o FIFO: written through, the pipe still a pipe (exit {r.returncode})")
    got = []
    t = reader(os.path.join(d, "fifo"), got)
    r = run(tool, ["sample", "inst.json", "--n", "50", "--x", "fifo", "--y", "Y.npy"], d)
    t.join(10)
    run(tool, ["sample", "inst.json", "--n", "50", "--x", "X.npy", "--y", "Y2.npy"], d)
    with open(os.path.join(d, "X.npy"), "rb") as f:
        same = got and got[0] == f.read()
    check(r.returncode == 0 and same and not os.path.exists(os.path.join(d, "fifo.json")) and
          os.path.exists(os.path.join(d, "Y.npy.json")),
          "sample --x FIFO: X's bytes through the pipe, Y and its sidecar written, no sidecar beside the pipe")
    try:
        os.mknod(os.path.join(d, "node"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        skipped.append("a device node (root only)")
        return
    before = set(os.listdir(d))
    r = run(tool, ["forward", "inst.json", "--x", "X.npy", "-o", "node"], d)
    check(r.returncode == 0 and stat.S_ISCHR(os.lstat(os.path.join(d, "node")).st_mode) and set(os.listdir(d)) == before,
          f"forward -o a character device (as /dev/null): written through, still the device, nothing beside it "
          f"(exit {r.returncode})")


def links_and_names(tool, d):
    with open(os.path.join(d, "target.json"), "w") as f:
        f.write("{}\n")
    os.symlink("target.json", os.path.join(d, "link.json"))
    r = run(tool, ["generate", "--d", "8", "-o", "link.json"], d)
    with open(os.path.join(d, "target.json")) as f:
        replaced = json.load(f).get("format") == "mhalearn.instance"
    check(r.returncode == 0 and os.path.islink(os.path.join(d, "link.json")) and replaced,
          "generate -o a symbolic link: the link kept, the file it names replaced")
    name = "n" * 250 + ".json"
    r = run(tool, ["generate", "--d", "8", "-o", name], d)
    check(r.returncode == 0 and os.path.isfile(os.path.join(d, name)), f"a 255-byte name works (exit {r.returncode})")


def mounted_tmpfs(d, size):
    """A tmpfs of `size` at d/t as root, else None."""
    t = os.path.join(d, "t")
    os.mkdir(t)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", t], capture_output=True)
    return t if r.returncode == 0 else None


def published_together(tool, d):
    t = mounted_tmpfs(d, "1m")
    if not t:
        skipped.append("a full file system (root only)")
        return
    try:
        # n whose X and Y fit the file system's free pages but not with their two sidecars:
        # the space check (the arrays' bytes) passes, and a write fails once X and Y are complete.
        page, free = os.statvfs(t).f_frsize, os.statvfs(t).f_bavail
        pages = lambda n: -(-(128 + 16 * n) // page) - (-(128 + 128 * n) // page)  # X and Y, (8,2,2) Boolean
        n = max(n for n in range(1, free * page // 144 + 1) if pages(n) <= free)
        r = run(tool, ["sample", "inst.json", "--n", str(n), "--x", "t/X.npy", "--y", "t/Y.npy"], d)
        check(r.returncode == 1 and os.listdir(t) == [],
              f"a sample whose sidecars do not fit (n = {n}, exit {r.returncode}: {r.stderr.strip()[:100]}) publishes "
              f"nothing, not X and Y without them: {sorted(os.listdir(t))}")
        run(tool, ["sample", "inst.json", "--n", "10", "--x", "t/X.npy", "--y", "t/Y.npy"], d)
        r = run(tool, ["sample", "inst.json", "--n", "100000", "--x", "t/X.npy", "--y", "t/Y.npy"], d)
        line = r.stderr.strip()
        check(r.returncode == 2 and "14.4 MB" in line and "MB free" in line and "0.0 GB" not in line,
              f"the space check in the units sizes have: {line}")
    finally:
        subprocess.run(["umount", t], capture_output=True)


def sigpipe(tool, d):
    p = subprocess.Popen([tool, "learn", "inst.json", "--no-reference", "--report", "r.json", "-o", "l.json"] + TINY,
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()  # as `| head -1` does
    err = p.stderr.read().decode()
    status = p.wait()
    complete = all(os.path.exists(os.path.join(d, f)) for f in ("r.json", "l.json"))
    if complete:
        json.load(open(os.path.join(d, "r.json")))
        json.load(open(os.path.join(d, "l.json")))
    check(complete and status == -signal.SIGPIPE and "error" not in err,
          f"learn | head -1: -o and --report written, then ended by SIGPIPE (status {status}, stderr {err.strip()[:80]!r})")


def stdout_errors(tool, d):
    with open("/dev/full", "w") as full:
        for args in (["check", "inst.json"], ["verify", "forward", "--instance", "inst.json"],
                     ["generate", "--d", "8", "-o", "g.json"]):
            r = subprocess.run([tool, *args], cwd=d, stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
            lines = r.stderr.strip().splitlines()
            written = args[0] != "generate" or os.path.exists(os.path.join(d, "g.json"))
            check(r.returncode == 1 and len(lines) == 1 and "cannot write to stdout" in lines[0] and written,
                  f"{args[0]} > /dev/full: exit {r.returncode}, {lines}")
    r = subprocess.run([tool, "check", "inst.json"], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       preexec_fn=lambda: os.close(1))
    check(r.returncode == 1 and "stdout: it is closed" in r.stderr, f"check with stdout closed: exit {r.returncode}, {r.stderr.strip()}")


def words(tool, d):
    subprocess.run([tool, "generate", "--d", "2", "--k", "2", "--m", "1", "-o", "d2.json"], cwd=d, capture_output=True)
    r = run(tool, ["learn", "d2.json", "--no-reference", "--threads", "1"], d)
    check(r.returncode == 1 and "no sample budget would help" in r.stderr and "raise the sculpt budget" not in r.stderr,
          f"learn at d = 2: {r.stderr.strip()[:160]}")
    text = run(tool, ["learn", "--help"], d).stdout
    check("=none" not in text, "learn --help shows no default 'none' for --checkpoint, --resume, --oracle")
    r = run(tool, ["learn", "inst.json", "--seed", "1"] + TINY, d)
    check(r.returncode == 0 and "warning" not in r.stderr, f"a healthy learn prints no warning: {r.stderr.strip()[:200]}")
    r = run(tool, ["learn", "inst.json", "--seed", "1", "--verbose"] + TINY, d)
    check(r.returncode == 0 and "diagnostic:" in r.stderr, "with --verbose it prints its diagnostics")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True)
    args = p.parse_args()
    tool = os.path.abspath(args.tool)
    for case in (write_through, links_and_names, published_together, sigpipe, stdout_errors, words):
        with tempfile.TemporaryDirectory() as d:
            generate(tool, d, "inst.json")
            case(tool, d)
    for s in skipped:
        print("skipped: " + s)
    return report(failures, f"edges: {len(failures)} failures, {len(skipped)} skipped")


if __name__ == "__main__":
    sys.exit(main())
