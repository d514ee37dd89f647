#!/usr/bin/env bash
# Installs dependencies, builds the release and sanitizer (ASan + UBSan)
# configurations, and runs every unit and property test in both.
# Property tests are deterministic; MHALEARN_PROPERTY_SCALE=20 runs them longer.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
jobs=$(nproc)

# Only what the tests need (the benchmarks build with scripts/bench-*.sh).
# The sanitizer preset uses -g1 (line tables, no variable info): it compiles
# ~30% faster than -g and ASan reports still carry file:line.
for preset in release asan; do
  echo "== build: $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs" --target mhalearn unit_tests property_tests
done

status=0
for preset in release asan; do
  echo "== test: $preset"
  ctest --preset "$preset" -j "$jobs" || status=1
done
echo "== test: installed C++ package"
./scripts/test-package.sh || status=1
echo "== test: Python module"
./scripts/test-python.sh || status=1
echo "== fuzz: every reader of user files, 10 s each (docs/fuzzing.md)"
./scripts/fuzz.sh 10 || status=1
exit $status
