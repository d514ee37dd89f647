#!/usr/bin/env bash
# The main job: installs dependencies, builds the tool, and runs `mhalearn demo`
# on the default instance. Extra arguments go to `mhalearn demo`.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target mhalearn -j "$(nproc)"
exec ./build/release/mhalearn demo "$@"
