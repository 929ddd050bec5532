# Runs one chapter executable and checks what it did. Called by the tests add_chapter() makes:
#   cmake -DEXE=... [-DARGS=a|b|c] [-DGOLDEN=file] [-DGOLDEN_START=file] [-DGOLDEN_LINES=file]
#         [-DGOLDEN_UNTIL=text] [-DEXPECT_EXIT=n]
#         [-DSTDOUT_REGEX=re] [-DSTDERR_REGEX=re]
#         [-DNO_GNUPLOT=ON] [-DCLEAN_STDERR=ON] [-DCOLOUR=ON] -DWORK_DIR=... -P run_chapter.cmake
# Figures go into WORK_DIR, never into the repository. On a golden mismatch the actual output
# is kept next to WORK_DIR and the difference is shown with `diff -u`.
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" args "${ARGS}")
# CMake trims trailing blanks from -D values, so an argument made only of blanks is written
# {space} in the test and restored here.
string(REPLACE "{space}" " " args "${args}")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/plots")
if(NOT args MATCHES "--help|--no-such-flag")
  list(APPEND args --plots "${WORK_DIR}/plots")
endif()

if(NO_GNUPLOT)
  # A PATH with nothing on it: the chapter cannot find gnuplot and must still check its numbers.
  file(MAKE_DIRECTORY "${WORK_DIR}/empty-path")
  set(ENV{PATH} "${WORK_DIR}/empty-path")
endif()

execute_process(COMMAND "${EXE}" ${args}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
file(WRITE "${WORK_DIR}/stdout.txt" "${out}")
file(WRITE "${WORK_DIR}/stderr.txt" "${err}")
message(STATUS "exit code ${code}; stderr:\n${err}")

if(NOT "${EXPECT_EXIT}" STREQUAL "" AND NOT code STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit code ${EXPECT_EXIT}, got ${code}\nstdout:\n${out}")
endif()
# What a reader sees: the text without the terminal's colour codes (ESC [ ... m), which differ
# between gnuplot versions.
string(ASCII 27 esc)
string(REGEX REPLACE "${esc}\\[[0-9;]*m" "" seen "${out}")
if(COLOUR AND seen STREQUAL out)
  message(FATAL_ERROR "stdout has no colour codes; the terminal view should be in colour")
endif()
if(NOT "${STDOUT_REGEX}" STREQUAL "" AND NOT seen MATCHES "${STDOUT_REGEX}")
  message(FATAL_ERROR "stdout does not match \"${STDOUT_REGEX}\"\nstdout:\n${seen}")
endif()
if(NOT "${STDERR_REGEX}" STREQUAL "" AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "stderr does not match \"${STDERR_REGEX}\"")
endif()
if(CLEAN_STDERR AND err MATCHES "[Ww]arning:|[Ee]rror:|line [0-9]+:|did not draw|pclose")
  message(FATAL_ERROR "stderr reports a problem (a figure not drawn?):\n${err}")
endif()
# GOLDEN_START: stdout begins with a reference another implementation wrote (for chapter 05:
# numpy, tests/data/generate_scaling_fixtures.py). Its leading lines starting with '#' are
# comments.
if(GOLDEN_START)
  file(READ "${GOLDEN_START}" expected)
  while(expected MATCHES "^#[^\n]*\n")
    string(REGEX REPLACE "^#[^\n]*\n" "" expected "${expected}")
  endwhile()
  string(LENGTH "${expected}" length)
  string(SUBSTRING "${out}" 0 ${length} start)
  if(NOT start STREQUAL expected)
    file(WRITE "${WORK_DIR}/reference.txt" "${expected}")
    file(WRITE "${WORK_DIR}/stdout-start.txt" "${start}")
    execute_process(COMMAND diff -u "${WORK_DIR}/reference.txt" "${WORK_DIR}/stdout-start.txt"
      OUTPUT_VARIABLE diff)
    message(FATAL_ERROR "stdout does not begin with ${GOLDEN_START} (- reference, + ours):\n${diff}")
  endif()
endif()
# GOLDEN_LINES: every line of a reference file another implementation wrote (for chapter 08 and
# chapter 12: PyTorch, tests/data/generate_torch_fixtures.py and generate_modern_fixtures.py) is
# a whole line of stdout, in the file's order; '#' lines are comments.
if(GOLDEN_LINES)
  file(STRINGS "${GOLDEN_LINES}" wanted REGEX "^[^#]")
  string(REPLACE "\n" ";" printed "${out}")
  foreach(line IN LISTS wanted)
    list(FIND printed "${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "stdout lacks a line of ${GOLDEN_LINES}, or prints it before the line "
        "the file has before it:\n${line}\nstdout:\n${out}")
    endif()
    math(EXPR after "${at} + 1")  # the next line must come after this one
    list(LENGTH printed count)
    if(after LESS count)
      list(SUBLIST printed ${after} -1 printed)
    else()
      set(printed "")
    endif()
  endforeach()
endif()
if(GOLDEN)
  file(READ "${GOLDEN}" expected)
  set(compared "${out}")
  # GOLDEN_UNTIL: the golden file is the book machine's whole output, but only its lines up to
  # the first one holding this text are the same on every machine (chapter 11: what comes after
  # depends on minutes of training, whose sums round as the CPU's BLAS kernel rounds them). The
  # rest is the chapter's own checks, which must all pass (the exit code).
  if(GOLDEN_UNTIL)
    string(FIND "${expected}" "${GOLDEN_UNTIL}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${GOLDEN} has no line holding \"${GOLDEN_UNTIL}\"")
    endif()
    string(SUBSTRING "${expected}" ${at} -1 rest)
    string(FIND "${rest}" "\n" end)
    math(EXPR length "${at} + ${end} + 1")
    string(SUBSTRING "${expected}" 0 ${length} expected)
    string(SUBSTRING "${out}" 0 ${length} compared)
    file(WRITE "${WORK_DIR}/golden-start.txt" "${expected}")
    file(WRITE "${WORK_DIR}/stdout-start.txt" "${compared}")
  endif()
  if(NOT compared STREQUAL expected)
    if(GOLDEN_UNTIL)
      execute_process(COMMAND diff -u "${WORK_DIR}/golden-start.txt" "${WORK_DIR}/stdout-start.txt"
        OUTPUT_VARIABLE diff)
    else()
      execute_process(COMMAND diff -u "${GOLDEN}" "${WORK_DIR}/stdout.txt" OUTPUT_VARIABLE diff)
    endif()
    message(FATAL_ERROR "stdout differs from ${GOLDEN} (- golden, + ours):\n${diff}\n"
      "If the change is intended, review it and copy ${WORK_DIR}/stdout.txt over the golden file.")
  endif()
endif()
