"""What the docs checkers of this folder share: where the repository is, its
files, reading them, the summary line and exit status of a check, and, for
their tests of the tester, a small tree of files and the line of each case."""
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def tracked(root, kinds=None, untracked=False):
    """The repository's files (relative paths, sorted): tracked, and with `untracked` also new
    ones that are not ignored, present in the working tree; with `kinds` (suffixes) those only."""
    args = ["git", "ls-files"] + (["--cached", "--others", "--exclude-standard"] if untracked else [])
    out = subprocess.run(args, cwd=root, capture_output=True, text=True, check=True).stdout.split("\n")
    files = {f for f in out if f and os.path.exists(os.path.join(root, f))}
    if kinds:
        files = {f for f in files if f.endswith(kinds) or os.path.basename(f) == "CMakeLists.txt"}
    return sorted(files)


def report(problems, summary, prefix="PROBLEM "):
    """Prints each problem and the summary line; the exit status (1 when any)."""
    for p in problems:
        print(prefix + p)
    print(summary)
    return 1 if problems else 0


def tree(files, git=False):
    """A temporary folder holding `files` ({relative path: text}), a git repository when `git`."""
    d = tempfile.mkdtemp()
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, rel)) or d, exist_ok=True)
        with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
            f.write(text)
    if git:
        subprocess.run(["git", "init", "-q"], cwd=d, check=True)
        subprocess.run(["git", "add", "-A"], cwd=d, check=True)
    return d


def case(label, ok, detail=""):
    """Prints a tester's case as "ok" or "FAIL" (with the detail when it failed); returns ok."""
    print(("ok   " if ok else "FAIL ") + label + (f": {detail}" if detail and not ok else ""))
    return ok


def expected(label, problems, fragment):
    """A tester's case: `problems` hold a line with `fragment` (None: there are none)."""
    ok = any(fragment in p for p in problems) if fragment else not problems
    return case(label, ok, str(problems))
