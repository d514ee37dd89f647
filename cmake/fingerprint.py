#!/usr/bin/env python3
"""Writes the build's fingerprint header: what determines the bytes of this build's outputs.

The fingerprint is the first 16 hex digits of a SHA-256 over
  * every file under src/ (path and text, comments and trailing blanks removed, so a
    comment or a blank line does not make another learner), and
  * the build settings that reach the arithmetic (CMakeLists.txt passes them as one
    string: arithmetic, ISA, floating-point flags, build type, compiler and its
    version, target processor, header-only library versions).
Two builds with one fingerprint compute the same bytes on the same platform; the golden
outputs (tests/golden) are the test of that for the commands they run. The commit is
recorded beside it (provenance.git_commit): commits that change only docs, tests or
comments keep the fingerprint, so runs made at either stay one learner's.

Usage: fingerprint.py SOURCE_DIR OUTPUT_HEADER SETTINGS
The header is rewritten only when its text changes (so a rebuild recompiles nothing
when the fingerprint did not move).
"""
import hashlib
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".in")

# A C++ token stream reduced to what the compiler reads: comments removed, string and
# character literals (raw strings too) kept whole.
_LEXEME = re.compile(
    r'R"(?P<delim>[^()\\ \t\n]{0,16})\((?:.|\n)*?\)(?P=delim)"'  # raw string
    r'|"(?:\\.|[^"\\\n])*"'                                      # string literal
    r"|'(?:\\.|[^'\\\n])*'"                                      # character literal
    r"|//[^\n]*"                                                 # line comment
    r"|/\*(?:.|\n)*?\*/"                                          # block comment
    r"|[^\"'/R]+|.",
)


def strip_comments(text):
    out = []
    for m in _LEXEME.finditer(text):
        lexeme = m.group(0)
        if lexeme.startswith("//"):
            continue
        if lexeme.startswith("/*"):
            out.append(" ")
            continue
        out.append(lexeme)
    lines = (line.rstrip() for line in "".join(out).splitlines())
    return "\n".join(line for line in lines if line)


def source_digest(root):
    """SHA-256 over every source file under root/src (sorted paths, comments stripped)."""
    h = hashlib.sha256()
    src = os.path.join(root, "src")
    files = []
    for folder, _, names in os.walk(src):
        files += [os.path.join(folder, n) for n in names if n.endswith(SOURCE_SUFFIXES)]
    for path in sorted(files):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, encoding="utf-8") as f:
            text = strip_comments(f.read())
        h.update(rel.encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()


def fingerprint(root, settings):
    h = hashlib.sha256()
    h.update(b"sources " + source_digest(root).encode() + b"\nsettings " + settings.encode() + b"\n")
    return h.hexdigest()[:16]


def main():
    root, out, settings = sys.argv[1], sys.argv[2], sys.argv[3]
    text = ("// Generated at build time by cmake/fingerprint.py: what determines this build's bytes.\n"
            "#pragma once\n"
            "namespace mha {\n"
            f'inline constexpr const char* kFingerprint = "{fingerprint(root, settings)}";\n'
            f'inline constexpr const char* kFingerprintSettings = "{settings}";\n'
            "}  // namespace mha\n")
    old = None
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            old = f.read()
    if old != text:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
