#!/usr/bin/env python3
"""Every subcommand is declared once (src/commands/schema.hpp: its options with
type, range, default, help and role); this checks the surfaces made from the
declarations against the declarations as the Python module reads them
(mhalearn._core.commands()):

- `mhalearn CMD --help` lists exactly the declared options, each with its
  type and range (or choices), its default, its help, and REQUIRED when required;
- Python's function of each command takes exactly the declared options but the
  files the CLI writes and its printing, at the declared positions, with the
  declared defaults (help() shows that signature);
- docs/options.md is the page rendered from the declarations (`--write`
  regenerates it);
- an option name means one thing: the same type (a list aside), range and
  choices in every command that declares it;
- the Python module includes nothing of the command line (src/cli/): not in
  python/module.cpp, not among the sources python/CMakeLists.txt compiles.

    python3 tests/docs/options_table.py --tool build/release/mhalearn --python build/release/python [--write]
"""
import argparse
import inspect
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_checks import ROOT, read, report  # noqa: E402

PAGE = os.path.join(ROOT, "docs", "options.md")
CLI_TYPES = {"integer": "INT", "integers": "INT", "seed": "UINT", "number": "FLOAT", "text": "TEXT", "words": "TEXT"}

# CLI11's line of an option: "  -o,--output TEXT:in 1..2^40=5 REQUIRED Needs: --x  help", the help
# on the next line when the flag and its spec are long.
FLAG = re.compile(r"^  (?:-\w,)?(--[\w-]+)(.*)$")
POSITIONAL = re.compile(r"^  ([a-z][\w-]*) ((?:TEXT|INT|UINT|FLOAT).*)$")
TYPE = re.compile(r"^(?:(TEXT|INT|UINT|FLOAT)(:(?:\{[^}]*\}|in [^\s=]+))?)?( \.\.\.)?")
ANNOTATION = re.compile(r"^\s*(REQUIRED|\.\.\.|(?:Needs|Excludes): \S+)")
TRAILING = re.compile(r"(\s+(?:REQUIRED|(?:Needs|Excludes): \S+))+$")


def split_spec(rest, help_below):
    """(type and check, default or None, required, help) of what follows a flag on its line:
    TYPE[:check][=default], annotations (REQUIRED, Needs: --x, Excludes: --y), then the help —
    on the next line when `help_below` (a default may then hold spaces)."""
    body = rest.strip()
    m = TYPE.match(body)
    spec, tail = (m.group(1) or "") + (m.group(2) or ""), body[m.end():]
    default = None
    if tail.startswith("="):
        if help_below:
            default = TRAILING.sub("", tail[1:])
            tail = tail[1 + len(default):]
        else:
            default, _, tail = tail[1:].partition(" ")
            tail = " " + tail
    required = False
    while (a := ANNOTATION.match(tail)):
        required = required or a.group(1) == "REQUIRED"
        tail = tail[a.end():]
    return spec, default, required, tail.strip()


def option_lines(text):
    """(name, what follows it, whether its help is on the next line, that line) of each option and positional."""
    lines = text.splitlines()
    section = ""
    for i, line in enumerate(lines):
        if line.endswith(":") and not line.startswith(" "):
            section = line
            continue
        below = lines[i + 1] if i + 1 < len(lines) else ""
        help_below = below.startswith(" " * 10) and not FLAG.match(below)
        m = FLAG.match(line) if section.startswith("Options") else POSITIONAL.match(line)
        if m and section.startswith(("Options", "Positionals")):
            name = m.group(1)[2:] if m.group(1).startswith("--") else m.group(1)
            yield name, m.group(2), help_below, below.strip()


def parse_help(text):
    """{name: (spec, default, required, help)} of every option and positional of a --help text."""
    options = {}
    for name, rest, help_below, below in option_lines(text):
        spec, default, required, help_text = split_spec(rest, help_below)
        options[name] = (spec, default, required, below if help_below and not help_text else help_text)
    return options


def cli_spec(option):
    """The spec --help must show for a declared option: "INT:in 1..256", "TEXT:{a,b}", "" for a flag."""
    if option["type"] == "flag":
        return ""
    kind = CLI_TYPES[option["type"]]
    if option["choices"]:
        return f"{kind}:{{{','.join(option['choices'])}}}"
    return f"{kind}:in {option['range']}" if option["range"] else kind


def help_problems(command, help_text):
    """Each difference between a command's --help and its declaration, one line each."""
    name, problems = command["name"], []
    listed = parse_help(help_text)
    declared = {o["name"]: o for o in command["options"]}
    for key, o in declared.items():
        if key not in listed:
            problems.append(f"{name} {o['flag']}: declared, not in --help")
            continue
        spec, default, required, text = listed[key]
        want_default = None if o["type"] == "flag" or not o["default_text"] else o["default_text"]
        if spec != cli_spec(o):
            problems.append(f"{name} {o['flag']}: --help's type {spec!r}, declared {cli_spec(o)!r}")
        if default != want_default:
            problems.append(f"{name} {o['flag']}: --help's default {default!r}, declared {want_default!r}")
        if required != o["required"]:
            problems.append(f"{name} {o['flag']}: --help says required {required}, declared {o['required']}")
        if " ".join(text.split()) != " ".join(o["help"].split()):
            problems.append(f"{name} {o['flag']}: --help says {text!r}, declared {o['help']!r}")
    for key in sorted(set(listed) - set(declared) - {"help"}):
        problems.append(f"{name} --{key}: in --help, not declared (src/commands/)")
    return problems


def python_default(option):
    """The default Python's signature must show for a declared option."""
    if option["type"] == "flag":
        return option["negated"]
    return option["default"]


def python_problems(command, function):
    """Each difference between a Python function's signature and the declaration, one line each."""
    name = command["python_name"]
    params = inspect.signature(function).parameters
    declared = {o["keyword"]: o for o in command["options"] if o["python"]}
    problems = []
    for key, o in declared.items():
        p = params.get(key)
        if p is None:
            problems.append(f"mhalearn.{name}: no argument '{key}' for {o['flag']}")
            continue
        positional = p.kind == p.POSITIONAL_OR_KEYWORD
        if positional != (o["python_position"] >= 0) or (positional and list(params).index(key) != o["python_position"]):
            problems.append(f"mhalearn.{name}({key}): at {list(params).index(key)}, declared {o['python_position']}")
        want = inspect.Parameter.empty if o["required"] else python_default(o)
        if p.default != want and not (isinstance(want, list) and list(p.default or []) == want):
            problems.append(f"mhalearn.{name}({key}): default {p.default!r}, declared {want!r}")
    for key in sorted(set(params) - set(declared)):
        problems.append(f"mhalearn.{name}: argument '{key}' is not declared (src/commands/)")
    return problems


def consistency_problems(commands):
    """An option name with another type, range or choices in another command, one line each."""
    problems, first = [], {}
    for c in commands:
        for o in c["options"]:
            kind = "integer" if o["type"] == "integers" else o["type"]
            seen = first.setdefault(o["name"], (c["name"], kind, o["range"], o["choices"]))
            if (kind, o["range"], o["choices"]) != seen[1:]:
                problems.append(f"--{o['name']}: {c['name']} declares it {kind} {o['range']} {o['choices']}, "
                                f"{seen[0]} {seen[1]} {seen[2]} {seen[3]}")
    return problems


def module_problems(root):
    """The Python module must include nothing of the command line."""
    problems = []
    for line in read(os.path.join(root, "python", "module.cpp")).splitlines():
        if re.match(r'\s*#\s*include\s+"cli/', line):
            problems.append(f"python/module.cpp includes the command line's {line.split()[-1]}")
    if re.search(r"src/cli/", re.sub(r"#.*", "", read(os.path.join(root, "python", "CMakeLists.txt")))):
        problems.append("python/CMakeLists.txt compiles a file of src/cli/")
    return problems


def cell(text):
    return str(text).replace("|", "\\|")


def render(commands):
    """docs/options.md: every command's options, as declared."""
    lines = ["# The options of every subcommand, on the command line and in Python", "",
             "Generated from the one declaration of each subcommand (`src/commands/`, `schema.hpp`) by",
             "`python3 tests/docs/options_table.py --tool build/release/mhalearn --python build/release/python --write`;",
             "the test command checks that this page, every `mhalearn CMD --help` and every Python function's",
             "signature (`help(mhalearn.learn)`) agree with the declarations. A Python argument is the flag without",
             "dashes, `-` as `_` (`--no-polish` and `--no-reference` are `polish=False` and `reference=False`); a",
             "Python function takes every option but the files the command line writes (it returns them) and its",
             "printing. An option given that the chosen `--method` does not read is refused. Roles: an *instance*",
             "is a file (Python: also an `mhalearn.Instance`), an *array* a `.npy` file (Python: also a numpy",
             "array); every path is checked before any work (README, \"Exit status\")."]
    for c in commands:
        python = f"Python: `mhalearn.{c['python_name']}`." if c["python_name"] else "No Python function."
        methods = c["name"] == "learn"
        head = ["flag", "Python", "type", "range", "default", "role"] + (["methods"] if methods else []) + ["what it sets"]
        lines += ["", f"## `mhalearn {c['name']}`", "", f"{c['summary']}. {python}", "",
                  "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for o in c["options"]:
            keyword = f"`{o['keyword']}`" + (" (negated)" if o["negated"] else "") if o["python"] else "—"
            if o["python"] and o["python_position"] >= 0:
                keyword += f" (position {o['python_position']})"
            default = "required" if o["required"] else o["default_text"]
            row = [f"`{o['flag']}`", keyword, o["type"], cell(o["range"]), cell(default), o["role"]]
            if methods:
                row.append(", ".join(m for bit, m in ((1, "paper"), (2, "adam"), (4, "random-polish")) if o["methods"] & bit)
                           or "all")
            lines.append("| " + " | ".join(row + [cell(o["help"])]) + " |")
    return "\n".join(lines) + "\n"


def page_problems(page_text, commands):
    if page_text == render(commands):
        return []
    return ["docs/options.md differs from the declarations: regenerate it with --write"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--python", required=True, help="the build's python directory (holds mhalearn/)")
    ap.add_argument("--write", action="store_true", help="regenerate docs/options.md")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.python))
    import mhalearn
    commands = mhalearn._core.commands()
    if args.write:
        with open(PAGE, "w") as f:
            f.write(render(commands))
    problems = []
    for c in commands:
        text = subprocess.run([args.tool, c["name"], "--help"], capture_output=True, text=True, check=True).stdout
        problems += help_problems(c, text)
        if c["python_name"]:
            problems += python_problems(c, getattr(mhalearn, c["python_name"]))
    problems += page_problems(read(PAGE) if os.path.exists(PAGE) else "", commands)
    problems += consistency_problems(commands)
    problems += module_problems(ROOT)
    options = sum(len(c["options"]) for c in commands)
    return report(problems, f"options: {len(commands)} commands, {options} options, {len(problems)} problems")


if __name__ == "__main__":
    sys.exit(main())
