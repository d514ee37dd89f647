# Cross-compiling for 64-bit ARM (aarch64) on Debian with its own packages:
# the cross compiler (crossbuild-essential-arm64) and the arm64 libraries
# installed through multiarch (NAME:arm64, under /usr/lib/aarch64-linux-gnu).
# The programs run here under qemu-aarch64 (scripts/platform_check.py).
#   cmake -S . -B build/platform/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Header-only dependencies (Eigen, Boost, CGAL, JSON, CLI11) are shared by all
# architectures under /usr/include; libraries and their pkg-config files are
# the arm64 ones.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
