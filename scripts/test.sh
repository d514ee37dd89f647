#!/usr/bin/env bash
# Installs dependencies, builds the release (GCC) and sanitizer (clang, ASan +
# UBSan) configurations, runs every unit and property test in both, then the
# installed C++ package's example, the Python module's pytest suite and a short
# run of every fuzz harness. Each phase prints its wall time, so a CI log shows
# where the time goes. Property tests are deterministic;
# MHALEARN_PROPERTY_SCALE=20 runs them longer.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
phase_start=$SECONDS
phase() {  # phase NAME: closes the previous phase's timing and opens the next
  echo "   ($((SECONDS - phase_start)) s; $((SECONDS - start)) s in all)"
  phase_start=$SECONDS
  echo "== $1"
}

./scripts/install-deps.sh
jobs=$(nproc)

# Only what the tests need (the benchmarks build with scripts/bench-*.sh).
# The sanitizer preset compiles without debug information (-O1, no -g: ~10%
# faster than line tables alone, measured on the heaviest files); ASan and
# UBSan reports then name functions, not lines — for file:line, configure it
# with -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1".
# A quiet build: a compiler warning in either preset fails the test command
# (after the tests have run, so that one warning does not hide their results).
quiet=0
for preset in release asan; do
  phase "build: $preset"
  cmake --preset "$preset" >/dev/null
  mkdir -p build
  cmake --build --preset "$preset" -j "$jobs" --target mhalearn unit_tests property_tests 2>&1 | tee "build/$preset-build.log"
  if grep -n "warning:" "build/$preset-build.log"; then
    echo "the $preset build printed the compiler warnings above: the build must be quiet"
    quiet=1
  fi
done

status=$quiet
for preset in release asan; do
  phase "test: $preset"
  ctest --preset "$preset" -j "$jobs" || status=1
done
phase "test: installed C++ package"
./scripts/test-package.sh || status=1
phase "test: Python module"
./scripts/test-python.sh || status=1
phase "fuzz: every reader of user files, 10 s each (docs/fuzzing.md)"
./scripts/fuzz.sh 10 || status=1
phase "done: exit status $status"
exit $status
