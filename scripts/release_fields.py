#!/usr/bin/env python3
"""The release fields of CITATION.cff and docs/cite.md, written by scripts/release.sh.

  release_fields.py fields  --version V --date YYYY-MM-DD --commit C
      CITATION.cff: `version`, `date-released` and `commit` set (added when absent);
      docs/cite.md: the block between `<!-- release -->` and `<!-- /release -->`
      names the release, its date, its source commit and the archive it will have.
  release_fields.py archive --version V --sha256 H
      docs/cite.md: the release block gains the archive's SHA-256.

Standard library only (CITATION.cff is edited line by line: its top-level keys are
plain `key: value` lines).
"""
import argparse
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CFF = os.path.join(ROOT, "CITATION.cff")
CITE = os.path.join(ROOT, "docs/cite.md")
BLOCK = re.compile(r"<!-- release -->\n.*?<!-- /release -->", re.S)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def set_top_level(text, key, value, after):
    """`key: value` as a top-level line of a CFF file: replaced where it is, else inserted after `after:`."""
    line = f"{key}: {value}"
    pattern = re.compile(rf"^{re.escape(key)}:.*$", re.M)
    if pattern.search(text):
        return pattern.sub(line, text, count=1)
    anchor = re.compile(rf"^{re.escape(after)}:.*$", re.M)
    m = anchor.search(text)
    if not m:
        sys.exit(f"release_fields: CITATION.cff has no top-level '{after}:'")
    return text[:m.end()] + "\n" + line + text[m.end():]


def release_block(version, date, commit, sha=None):
    archive = f"`mhalearn-{version}.tar.gz`"
    digest = f"SHA-256 `{sha}`" if sha else "SHA-256 recorded in the commit after the tag"
    return ("<!-- release -->\n"
            f"**This release.** mhalearn {version}, released {date}: tag `v{version}`, made from the source of "
            f"commit `{commit}` (the tag's commit adds only these release fields). Source archive {archive} "
            f"(`git archive --format=tar --prefix=mhalearn-{version}/ v{version} | gzip -n -9`): {digest}.\n"
            "<!-- /release -->")


def fields(a):
    cff = read(CFF)
    cff = set_top_level(cff, "version", a.version, "authors")
    cff = set_top_level(cff, "date-released", a.date, "version")
    cff = set_top_level(cff, "commit", f'"{a.commit}"', "date-released")
    write(CFF, cff)
    cite = read(CITE)
    if not BLOCK.search(cite):
        sys.exit("release_fields: docs/cite.md has no release block")
    write(CITE, BLOCK.sub(lambda _: release_block(a.version, a.date, a.commit), cite, count=1))


def archive(a):
    cite = read(CITE)
    m = re.search(r"mhalearn (\S+), released (\S+): tag `v\S+`, made from the source of commit `([0-9a-f]+)`", cite)
    if not m or m.group(1) != a.version:
        sys.exit(f"release_fields: docs/cite.md's release block does not name {a.version}")
    write(CITE, BLOCK.sub(lambda _: release_block(a.version, m.group(2).rstrip(","), m.group(3), a.sha256), cite, count=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    f = sub.add_parser("fields")
    f.add_argument("--version", required=True)
    f.add_argument("--date", required=True)
    f.add_argument("--commit", required=True)
    r = sub.add_parser("archive")
    r.add_argument("--version", required=True)
    r.add_argument("--sha256", required=True)
    a = ap.parse_args()
    fields(a) if a.what == "fields" else archive(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
