# A CMake toolchain file for cross-building the book for arm64 on Debian (.ci/arm64-cross):
# Debian's cross compiler (crossbuild-essential-arm64) and the arm64 libraries installed beside
# the host's by multiarch (`apt-get install libarmadillo-dev:arm64 ...`).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Libraries and CMake packages: the arm64 ones; programs: the host's.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config (OpenBLAS) reads the arm64 .pc files.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
