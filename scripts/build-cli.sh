#!/usr/bin/env bash
# Installs dependencies (quietly) and builds the release `mhalearn` tool; the
# docs-regenerating scripts call it first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh >/dev/null
cmake --preset release >/dev/null
cmake --build --preset release --target mhalearn >/dev/null
