# The library as a project of a reader's own uses it: `cmake --install` puts it in a fresh
# prefix, and tests/install/consumer, configured with nothing but that prefix
# (-DCMAKE_PREFIX_PATH), finds the package attn, builds, runs and prints what
# tests/install/expected_output.txt says. The consumer is compiled with the build's compiler,
# flags and build type, so that it links the installed libraries as they were compiled (under
# the sanitizer preset, with -fsanitize). No installed CMake file may name the source or the
# build folder. Called by the test repo.install (tests/CMakeLists.txt):
#   cmake -DSOURCE=<repository> -DBUILD=<build folder> -DWORK_DIR=<folder>
#         -DGENERATOR=... -DMAKE_PROGRAM=... -DCXX_COMPILER=... -DCXX_FLAGS=...
#         -DCXX_FLAGS_CONFIG=... -DEXE_LINKER_FLAGS=... -DBUILD_TYPE=... -P install.cmake
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(consumer "${WORK_DIR}/consumer")

# step(<what> <command>...): runs the command; it must exit 0.
function(step what)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what} failed (${code}):\n${out}${err}")
  endif()
  message(STATUS "${what}: done")
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The install needs the libraries built, as the default build builds them.
step("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${prefix}")

file(GLOB_RECURSE package_files "${prefix}/*.cmake")
if(NOT package_files)
  message(FATAL_ERROR "the install put no CMake package in ${prefix}")
endif()
foreach(f IN LISTS package_files)
  file(READ "${f}" text)
  foreach(tree IN ITEMS "${SOURCE}" "${BUILD}")
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${f} names ${tree}: the package would work only beside this build")
    endif()
  endforeach()
endforeach()

set(configure "${CMAKE_COMMAND}" -S "${SOURCE}/tests/install/consumer" -B "${consumer}"
  -G "${GENERATOR}" -Werror=dev -Werror=deprecated -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
  "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}")
if(BUILD_TYPE)
  string(TOUPPER "${BUILD_TYPE}" config)
  list(APPEND configure "-DCMAKE_CXX_FLAGS_${config}=${CXX_FLAGS_CONFIG}")
endif()
if(MAKE_PROGRAM)
  list(APPEND configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
step("configure the consumer" ${configure})

# The package came from the prefix, and the headers too: no include path into the tree.
file(STRINGS "${consumer}/CMakeCache.txt" found REGEX "^attn_DIR:")
string(FIND "${found}" "attn_DIR:PATH=${prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "the consumer found the package elsewhere than ${prefix}: ${found}")
endif()
file(READ "${consumer}/compile_commands.json" commands)
string(REGEX MATCHALL "(-I|-isystem )[^ \"]+" includes "${commands}")
string(FIND "${includes}" "${prefix}/include" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the consumer does not include the prefix's headers:\n${commands}")
endif()
foreach(include IN LISTS includes)
  string(REGEX REPLACE "^(-I|-isystem )" "" path "${include}")
  string(FIND "${path}/" "${prefix}/" in_prefix)
  string(FIND "${path}/" "${SOURCE}/" in_source)
  string(FIND "${path}/" "${BUILD}/" in_build)
  if(NOT in_prefix EQUAL 0 AND (in_source EQUAL 0 OR in_build EQUAL 0))
    message(FATAL_ERROR "the consumer compiles with ${include}, a folder of the book's")
  endif()
endforeach()

step("build the consumer" "${CMAKE_COMMAND}" --build "${consumer}")
step("run the consumer" "${consumer}/consumer")
file(READ "${SOURCE}/tests/install/expected_output.txt" expected)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "the consumer printed\n${out}\ninstead of\n${expected}")
endif()
message(STATUS "the installed package built and ran a project of its own:\n${out}")
