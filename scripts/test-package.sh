#!/usr/bin/env bash
# The installed C++ package works from another project: installs the release
# build into a temporary prefix, configures and builds examples/consumer with
# find_package(mhalearn) against it, runs the example and checks its output
# (fast and reference forward passes agree to 1e-12).
# Usage: scripts/test-package.sh   (after, or instead of, the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${JOBS:-$(nproc)}

echo "== build: release (library and CLI)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target mhalearn_core mhalearn

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mhalearn-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

echo "== install into $prefix"
cmake --install build/release --prefix "$prefix" >/dev/null
for f in include/mhalearn/mhalearn.hpp include/mhalearn/version.hpp include/mhalearn/model/layer.hpp \
         lib/libmhalearn_core.a lib/cmake/mhalearn/mhalearnConfig.cmake lib/cmake/mhalearn/mhalearnTargets.cmake bin/mhalearn; do
  [ -e "$prefix/$f" ] || { echo "test-package: FAIL: $f was not installed" >&2; exit 1; }
done
if [ -e "$prefix/include/mhalearn/cli" ]; then
  echo "test-package: FAIL: the CLI's private headers were installed" >&2; exit 1
fi
"$prefix/bin/mhalearn" --version

echo "== build examples/consumer against the installed package"
# ccache (when present) relativises paths under the temporary directory, so a
# second run reuses the first one's compilation.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="env;CCACHE_BASEDIR=$tmp;ccache")
cmake -S "$root/examples/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >/dev/null
cmake --build "$tmp/consumer" -j "$jobs"

echo "== run"
out=$("$tmp/consumer/app")
echo "$out"
max_diff=$(sed -n 's/^max |fast - reference| = \([^ ]*\).*/\1/p' <<<"$out")
if [ -z "$max_diff" ] || ! awk -v x="$max_diff" 'BEGIN { exit !(x < 1e-12) }'; then
  echo "test-package: FAIL: expected 'max |fast - reference| = <x>' with x < 1e-12" >&2
  exit 1
fi
echo "test-package: OK"
