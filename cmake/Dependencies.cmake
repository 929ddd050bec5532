# Every dependency is a Debian package (scripts/install-deps lists them); nothing is downloaded.

# Armadillo: CMake's own FindArmadillo module, wrapped in the target Armadillo::Armadillo.
find_package(Armadillo REQUIRED)
include(ArmadilloTarget)

find_package(fmt REQUIRED)      # libfmt-dev: Python-style format specs ({:8.2f})
find_package(CLI11 REQUIRED)    # libcli11-dev: command-line options of every chapter
find_package(GTest REQUIRED)    # libgtest-dev: the unit tests
find_package(rapidcheck CONFIG REQUIRED)  # librapidcheck-dev: property-based tests, with GoogleTest
find_package(OpenMP REQUIRED COMPONENTS CXX)  # g++'s libgomp: streaming attention's query blocks in parallel
find_package(Threads REQUIRED)  # std::thread: chapter 10 trains its comparison models side by side
# OpenBLAS itself (libopenblas-dev, found by pkgconf), the BLAS under Armadillo: streaming
# attention calls its GEMM on blocks in place and sets its thread count around the parallel loop.
find_package(PkgConfig REQUIRED)
pkg_check_modules(OpenBLAS REQUIRED IMPORTED_TARGET openblas)
find_package(nlohmann_json 3.11 REQUIRED)  # nlohmann-json3-dev: the data of the book's interactive page

# gnuplot-iostream is one header (libgnuplot-iostream-dev) on top of Boost.Iostreams.
find_path(GNUPLOT_IOSTREAM_INCLUDE_DIR gnuplot-iostream.h REQUIRED)
# Boost's own CMake package (BoostConfig.cmake, in Debian 12 and 13 alike), not CMake's
# FindBoost module, which CMake 3.30 and later (Debian 13) warn about and will remove.
find_package(Boost REQUIRED CONFIG COMPONENTS iostreams filesystem system)
add_library(attn_gnuplot_iostream INTERFACE)
add_library(GnuplotIostream::GnuplotIostream ALIAS attn_gnuplot_iostream)
target_include_directories(attn_gnuplot_iostream SYSTEM INTERFACE ${GNUPLOT_IOSTREAM_INCLUDE_DIR})
target_link_libraries(attn_gnuplot_iostream INTERFACE
  Boost::iostreams Boost::filesystem Boost::system)
