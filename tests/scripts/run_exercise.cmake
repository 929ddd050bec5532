# Runs one exercise's tests (one GoogleTest suite of a chapter's program). It fails, saying why,
# when the program is missing because that chapter's file does not compile (ctest would report
# "not run", which JUnit counts as skipped rather than failed), and when a source changed after
# the program was built, so that an old build never passes or fails in place of the reader's code.
#   cmake -DPROGRAM=<exercises_NN> -DSUITE=<ExerciseN_M> "-DSOURCES=<file>|<file>..." -P run_exercise.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT EXISTS "${PROGRAM}")
  get_filename_component(name "${PROGRAM}" NAME)
  message(FATAL_ERROR "${name} was not built: this chapter's exercises do not compile "
    "(./scripts/exercises or cmake --build --preset exercises shows the compiler's messages)")
endif()
string(REPLACE "|" ";" sources "${SOURCES}")
foreach(source IN LISTS sources)
  if("${source}" IS_NEWER_THAN "${PROGRAM}")
    message(FATAL_ERROR "${source} changed after ${PROGRAM} was built: build first "
      "(./scripts/exercises does, or cmake --build --preset exercises)")
  endif()
endforeach()
execute_process(COMMAND "${PROGRAM}" "--gtest_filter=${SUITE}.*" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${SUITE}: some tests failed (exit ${result})")
endif()
