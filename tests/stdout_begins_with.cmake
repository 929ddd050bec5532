# Runs a chapter and checks that its stdout begins with the lines of a reference file that
# another implementation wrote (for chapter 05: numpy, tests/data/generate_scaling_fixtures.py).
#   cmake -DEXE=... -DEXPECTED=file -DWORK_DIR=... -P stdout_begins_with.cmake
# Lines of EXPECTED that start with '#' are comments. No Python is needed at test time.
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND "${EXE}" --no-plots OUTPUT_VARIABLE out RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${code}")
endif()
file(READ "${EXPECTED}" expected)
string(REGEX REPLACE "^#[^\n]*\n" "" expected "${expected}")
string(LENGTH "${expected}" length)
string(SUBSTRING "${out}" 0 ${length} start)
if(NOT start STREQUAL expected)
  file(WRITE "${WORK_DIR}/expected.txt" "${expected}")
  file(WRITE "${WORK_DIR}/stdout-start.txt" "${start}")
  execute_process(COMMAND diff -u "${WORK_DIR}/expected.txt" "${WORK_DIR}/stdout-start.txt"
    OUTPUT_VARIABLE diff)
  message(FATAL_ERROR "stdout does not begin with ${EXPECTED} (- reference, + ours):\n${diff}")
endif()
