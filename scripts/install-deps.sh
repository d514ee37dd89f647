#!/usr/bin/env bash
# Installs mhalearn's build and test dependencies from Debian packages.
# Idempotent: installs only what is missing, so a second run does nothing.
#   scripts/install-deps.sh               what the build and the test command need
#   scripts/install-deps.sh --platforms   and what scripts/platform_check.py needs
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git pkg-config
  libeigen3-dev libboost-dev libgmp-dev libmpfr-dev
  catch2 librapidcheck-dev nlohmann-json3-dev libcli11-dev librandom123-dev
  libcgal-dev coinor-libclp-dev libbenchmark-dev libomp-dev
  gnuplot-nox python3
  # MPI for `mpirun -np N mhalearn learn` (stage 6 shared between ranks) and its test.
  openmpi-bin libopenmpi-dev
  # GNU time: the peak RSS of a child (tests/cli/bounded_rss.py, scripts/bench_streaming.py).
  time
  # The sanitizer build (clang) and scripts/fuzz.sh (libFuzzer harnesses).
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  # The Python module (python/, scripts/test-python.sh): pybind11, numpy,
  # pytest; PyTorch for the nn.MultiheadAttention tests, with an optimised
  # BLAS behind it.
  pybind11-dev python3-pybind11 python3-dev python3-numpy python3-pytest
  python3-torch libopenblas0-pthread
  # `pip install .` into a fresh virtual environment (scripts/test-python.sh).
  python3-venv python3-pip python3-setuptools
  # tests/docs/function_length.py measures functions with universal-ctags.
  universal-ctags
  # qemu's user-mode emulators: the test command runs the golden outputs on an
  # emulated Intel CPU (scripts/platform_check.py --fast skylake).
  qemu-user
  # scripts/mutation_check.py finds its mutation sites with libclang; the exact
  # values of the pinned bounds (tests/numeric/tolerance_values.py) use mpmath.
  python3-clang-14 python3-mpmath
)

# scripts/platform_check.py (other CPUs, clang, aarch64): the arm64 cross
# compiler and the arm64 builds of the libraries (Debian multiarch). Only with
# --platforms: the test command does not need them.
if [[ " $* " == *" --platforms "* ]]; then
  packages+=(crossbuild-essential-arm64 libgmp-dev:arm64 libmpfr-dev:arm64 coinor-libclp-dev:arm64
             zlib1g-dev:arm64 libgomp1:arm64)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "install-deps: adding the arm64 architecture (multiarch)"
    $([ "$(id -u)" -ne 0 ] && echo sudo) dpkg --add-architecture arm64
    # The package lists must then be read again, whatever is missing.
    force_update=1
  fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ] && [ -z "${force_update:-}" ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
