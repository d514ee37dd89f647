#!/usr/bin/env python3
"""Tests of the tester for options_table.py: a --help and a Python function
that match a declaration pass, and each kind of drift is reported (a flag
missing or added, a type, default, required or help changed, a Python argument
missing, moved or with another default, a stale page, the module including the
command line)."""
import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import options_table  # noqa: E402
from doc_checks import expected, tree  # noqa: E402


def option(name, type_, help_text, **more):
    o = {"name": name, "flag": "--" + name, "keyword": name.replace("-", "_"), "type": type_, "role": "setting",
         "range": "", "choices": [], "default": None, "default_text": "", "help": help_text, "required": False,
         "positional": False, "python": True, "python_position": -1, "negated": False, "needs": [], "excludes": [],
         "sidecar": False, "methods": 0}
    o.update(more)
    return o


COMMAND = {"name": "learn", "python_name": "learn", "summary": "Learn a layer", "options": [
    option("instance", "text", "instance file (JSON)", flag="instance", positional=True, role="instance file",
           python_position=0, required=True),
    option("rounds", "integer", "most rounds", range="1..20", default=5, default_text="5", methods=1),
    option("no-polish", "flag", "stop before polishing", keyword="polish", negated=True, methods=1),
    option("init", "text", "adam: starting point with a rather long help text that CLI11 puts on its own line",
           choices=["random", "symmetric"], default="random", default_text="random", methods=2),
    option("output", "text", "file to write", flag="-o,--output", role="output file", python=False),
]}
HELP = """Learn a layer
Usage: mhalearn learn [OPTIONS] instance

Positionals:
  instance TEXT REQUIRED      instance file (JSON)

Options:
  -h,--help                   Print this help message and exit
  --rounds INT:in 1..20=5     most rounds
  --no-polish                 stop before polishing
  --init TEXT:{random,symmetric}=random
                              adam: starting point with a rather long help text that CLI11 puts on its own line
  -o,--output TEXT            file to write
"""


def learn(instance, *, rounds=5, polish=True, init="random"):
    return instance, rounds, polish, init


def python(**changes):
    """learn's signature with some parameters changed ({name: new default}, or None to drop it)."""
    params = [p for p in inspect.signature(learn).parameters.values() if changes.get(p.name, 0) is not None]
    params = [p.replace(default=changes[p.name]) if p.name in changes else p for p in params]
    fn = lambda *a, **k: None  # noqa: E731
    fn.__signature__ = inspect.Signature(params)
    return fn


def main():
    help_ok = options_table.help_problems
    results = [expected("matching help", help_ok(COMMAND, HELP), None)]
    for label, old, new, fragment in [
            ("a flag missing", "  --no-polish ", "  --no-polishing ", "--no-polish: declared, not in --help"),
            ("a default changed", "1..20=5", "1..20=6", "--help's default '6', declared '5'"),
            ("a range changed", "in 1..20=5", "in 1..30=5", "--help's type 'INT:in 1..30'"),
            ("a help changed", "most rounds", "most of the rounds", "--rounds: --help says"),
            ("a help on its own line changed", "on its own line", "on a line", "--init: --help says"),
            ("required dropped", "TEXT REQUIRED", "TEXT", "instance: --help says required False"),
            ("a flag not declared", "  -o,--output", "  --extra INT=1  more\n  -o,--output", "--extra: in --help, not declared")]:
        results.append(expected(label, help_ok(COMMAND, HELP.replace(old, new)), fragment))
    results.append(expected("matching signature", options_table.python_problems(COMMAND, learn), None))
    results.append(expected("a Python argument missing", options_table.python_problems(COMMAND, python(init=None)),
                            "no argument 'init'"))
    results.append(expected("a Python default changed", options_table.python_problems(COMMAND, python(rounds=6)),
                            "mhalearn.learn(rounds): default 6, declared 5"))
    results.append(expected("a negated default wrong", options_table.python_problems(COMMAND, python(polish=False)),
                            "mhalearn.learn(polish): default False, declared True"))
    page = options_table.render([COMMAND])
    results.append(expected("page matches", options_table.page_problems(page, [COMMAND]), None))
    results.append(expected("stale page", options_table.page_problems(page.replace("most rounds", "rounds"), [COMMAND]),
                            "docs/options.md differs"))
    row = "| `--rounds` | `rounds` | integer | 1..20 | 5 | setting | paper | most rounds |"
    results.append(expected("a row rendered", [] if row in page.splitlines() else ["row missing"], None))
    other = {"name": "stage1", "python_name": "stage1", "summary": "", "options": [
        option("rounds", "integer", "rounds", range="1..20")]}
    results.append(expected("one name, one range", options_table.consistency_problems([COMMAND, other]), None))
    other["options"][0]["range"] = "1..30"
    results.append(expected("one name, two ranges", options_table.consistency_problems([COMMAND, other]),
                            "--rounds: stage1 declares it integer 1..30"))
    clean = {"python/module.cpp": '#include "commands/schema.hpp"\n', "python/CMakeLists.txt": "module.cpp\n"}
    results.append(expected("a module free of the command line", options_table.module_problems(tree(clean)), None))
    results.append(expected("a module including the command line", options_table.module_problems(
        tree(dict(clean, **{"python/module.cpp": '#include "cli/app.hpp"\n'}))), "includes the command line's"))
    results.append(expected("a module compiling the command line", options_table.module_problems(
        tree(dict(clean, **{"python/CMakeLists.txt": "${ROOT}/src/cli/app.cpp\n"}))), "compiles a file of src/cli/"))
    print(f"options-table tester: {sum(results)} of {len(results)} cases as expected")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
