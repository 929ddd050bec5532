# Runs one exercise's tests (one GoogleTest suite of a chapter's program), and fails, saying
# why, when the program is missing because that chapter's file does not compile: ctest would
# otherwise report "not run", which JUnit counts as skipped rather than failed.
#   cmake -DPROGRAM=<exercises_NN> -DSUITE=<ExerciseN_M> -P run_exercise.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT EXISTS "${PROGRAM}")
  get_filename_component(name "${PROGRAM}" NAME)
  message(FATAL_ERROR "${name} was not built: this chapter's exercises do not compile "
    "(./scripts/exercises or cmake --build --preset exercises shows the compiler's messages)")
endif()
execute_process(COMMAND "${PROGRAM}" "--gtest_filter=${SUITE}.*" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${SUITE}: some tests failed (exit ${result})")
endif()
