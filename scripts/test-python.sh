#!/usr/bin/env bash
# Builds the Python module, its fault-switch copy and the CLI (release build:
# targets mhalearn_python, mhalearn_python_faulty, mhalearn) and runs its
# pytest suite (python/tests) with PYTHONPATH=build/release/python, the same
# route the README gives for `import mhalearn`.
# Uses the system interpreter /usr/bin/python3: Debian's numpy, torch and
# pytest are installed for it (install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
python=${MHALEARN_PYTHON_EXECUTABLE:-/usr/bin/python3}

echo "== build: release (Python module)"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target mhalearn_python mhalearn_python_faulty mhalearn

echo "== pytest"
export PYTHONPATH="$PWD/build/release/python${PYTHONPATH:+:$PYTHONPATH}"
"$python" -c "import mhalearn; print('mhalearn', mhalearn.__version__, mhalearn.git_commit, 'from', mhalearn.__file__)"
exec "$python" -m pytest -q -p no:cacheprovider python/tests "$@"
