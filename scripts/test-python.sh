#!/usr/bin/env bash
# Builds the release tree's Python module, its fault-switch copy and the CLI
# (targets mhalearn_python, mhalearn_python_faulty, mhalearn), installs the
# module the Python way — `pip install --no-build-isolation .` (pyproject.toml,
# setup.py) into a fresh virtual environment that sees Debian's numpy, torch and
# pytest — and runs the pytest suite (python/tests) against the installed copy.
# MHALEARN_BUILD_DIR tells setup.py to reuse build/release (nothing compiles
# twice) and tells the tests where the CLI and the fault-switch copy are.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
python=${MHALEARN_PYTHON_EXECUTABLE:-/usr/bin/python3}

echo "== build: release (Python module, its fault-switch copy, the CLI)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target mhalearn_python mhalearn_python_faulty mhalearn

echo "== pip install . into a fresh virtual environment"
venv="$PWD/build/release/venv"
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
export MHALEARN_BUILD_DIR="$PWD/build/release" MHALEARN_INSTALLED=1
"$venv/bin/pip" install --no-build-isolation --no-index --quiet .

echo "== pytest (the installed copy)"
cd "$venv"  # not the checkout: `import mhalearn` must find the installed package
"$venv/bin/python" -c "import mhalearn; print('mhalearn', mhalearn.__version__, mhalearn.git_commit, 'from', mhalearn.__file__)"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" "$@"
