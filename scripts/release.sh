#!/usr/bin/env bash
# Cuts a citable release of mhalearn: a tag, a source archive and its SHA-256.
#
# Usage: scripts/release.sh VERSION        e.g. scripts/release.sh 0.2.0
#
# It refuses (exit 1, one line) unless, at the commit checked out:
#   - the working tree is clean and CMakeLists.txt's project version is VERSION
#     (the one place the version lives; Python reads it from there), and no tag
#     vVERSION exists yet;
#   - the golden outputs regenerate to their committed bytes (every CTest
#     "golden: …": tests/golden, the committed result runs re-run);
#   - every generated page regenerates to its committed text from its committed
#     runs (tests/scripts/regenerate_pages.py).
# Then it writes the release fields of CITATION.cff (version, date-released, and
# commit: the source commit C it checked) and docs/cite.md's "This release"
# block, commits them as "Release VERSION (the source of C)", tags that commit
# vVERSION (annotated), writes dist/mhalearn-VERSION.tar.gz with `git archive`
# (gzip -n: no timestamp, so the archive is a function of the tagged tree and
# git's version) and records its SHA-256 in docs/cite.md in one more commit
# (an archive cannot contain its own hash). The archive is not committed
# (dist/ is ignored). About 6 minutes on 2 cores when the build is current.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "release: $*" >&2; exit 1; }

version=${1:-}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "give the version as MAJOR.MINOR.PATCH (e.g. 0.2.0), not '${version}'"
[[ -z "$(git status --porcelain --untracked-files=no)" ]] || die "the working tree has uncommitted changes"
declared=$(sed -n 's/^project(mhalearn VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
[[ "$declared" == "$version" ]] || die "CMakeLists.txt declares version $declared, not $version: raise it in its own commit first"
! git rev-parse -q --verify "refs/tags/v$version" >/dev/null || die "tag v$version exists already"

source_commit=$(git rev-parse --short=12 HEAD)
today=$(date -u +%Y-%m-%d)
echo "release $version from $source_commit ($today): checking the golden outputs and the generated pages"

./scripts/install-deps.sh >/dev/null
cmake --preset release >/dev/null
cmake --build --preset release --target mhalearn >/dev/null
ctest --preset release -R '^golden' >build/release-golden.log 2>&1 ||
  die "the golden outputs do not regenerate to their committed bytes (build/release-golden.log)"
python3 tests/scripts/regenerate_pages.py --tool build/release/mhalearn >build/release-pages.log 2>&1 ||
  die "a generated page does not regenerate to its committed text (build/release-pages.log)"

python3 scripts/release_fields.py fields --version "$version" --date "$today" --commit "$source_commit"
git commit -q -m "Release $version (the source of $source_commit)" CITATION.cff docs/cite.md
git tag -a "v$version" -m "mhalearn $version (the source of $source_commit)"

mkdir -p dist
archive="dist/mhalearn-$version.tar.gz"
git archive --format=tar --prefix="mhalearn-$version/" "v$version" | gzip -n -9 >"$archive"
sha=$(sha256sum "$archive" | cut -d' ' -f1)
python3 scripts/release_fields.py archive --version "$version" --sha256 "$sha"
git commit -q -m "cite.md: the SHA-256 of the $version source archive" docs/cite.md
echo "tagged v$version ($(git rev-parse --short=12 "v$version^{commit}")), source $source_commit"
echo "$archive  sha256 $sha"
