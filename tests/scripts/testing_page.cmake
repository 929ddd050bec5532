# The counts on the page "How this book is tested" (docs/testing.md) are the repository's own:
# every table row there that ends in a count names, in the cell before it, how that count is
# made, and this script makes it again. A test added or removed without the page changing
# fails here, with the row, the page's count and the real one. Called by the test
# book.testing_page (tests/CMakeLists.txt):
#   cmake -DSOURCE=<repository> -DBUILD=<build folder> -DCTEST=<ctest> -P testing_page.cmake
#
# The counting cell is a code span, one of:
#   `ctest -L REGEX`       the tests of this build whose label matches REGEX (`ctest -N -L`);
#   `GLOB`                 the files matching GLOB, relative to the repository;
#   `REGEX in GLOB`        the lines matching REGEX in those files.
cmake_minimum_required(VERSION 3.25)

file(STRINGS "${SOURCE}/docs/testing.md" rows REGEX "^\\|.*\\| `[^`]+` \\| [0-9]+ \\|$")
if(NOT rows)
  message(FATAL_ERROR "docs/testing.md has no table row with a count")
endif()
set(problems "")
foreach(row IN LISTS rows)
  string(REGEX MATCH "\\| `([^`]+)` \\| ([0-9]+) \\|$" _ "${row}")
  set(how "${CMAKE_MATCH_1}")
  set(page "${CMAKE_MATCH_2}")
  if(how MATCHES "^ctest -L (.+)$")
    execute_process(COMMAND "${CTEST}" --test-dir "${BUILD}" -N -L "${CMAKE_MATCH_1}"
      OUTPUT_VARIABLE listing RESULT_VARIABLE code)
    if(NOT code EQUAL 0 OR NOT listing MATCHES "Total Tests: ([0-9]+)")
      message(FATAL_ERROR "`${how}` failed in ${BUILD}:\n${listing}")
    endif()
    set(real "${CMAKE_MATCH_1}")
  elseif(how MATCHES "^(.+) in (.+)$")
    set(regex "${CMAKE_MATCH_1}")
    file(GLOB files "${SOURCE}/${CMAKE_MATCH_2}")
    set(real 0)
    foreach(f IN LISTS files)
      file(STRINGS "${f}" hits REGEX "${regex}")
      list(LENGTH hits n)
      math(EXPR real "${real} + ${n}")
    endforeach()
  else()
    file(GLOB files LIST_DIRECTORIES false "${SOURCE}/${how}")
    list(LENGTH files real)
  endif()
  if(NOT real EQUAL page)
    string(APPEND problems "  ${row}\n    the page says ${page}; `${how}` counts ${real}\n")
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "docs/testing.md's counts are out of date:\n${problems}")
endif()
list(LENGTH rows count)
message(STATUS "docs/testing.md: all ${count} counts are the repository's")
