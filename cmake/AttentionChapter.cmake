# add_chapter(<NN_slug> [USES <NN_slug>...] [LINKS <target>...] [QUICK_ARGS args...]
#             [GOLDEN_UNTIL text]):
# registers chapter NN, whose story is chapters/NN_slug/main.cpp.
#
# The registry is the global property ATTN_CHAPTERS: each chapter's NN_slug, in the order of the
# add_chapter lines, which is the reading order. tests/fuzz/CMakeLists.txt makes the fuzzer's
# table of chapters from it, and the test repo.chapter_registry checks against it what a person
# writes about each chapter (chapters/CMakeLists.txt lists what that is).
#
# The chapter's own material, every other *.cpp in its folder (its examples, its experiment),
# is the library attn::chNN, which links attn::book, the LINKS targets and the libraries of the
# earlier chapters it USES. Its headers are included as <NN_slug/name.hpp> from elsewhere
# (tests, exercises, later chapters) and as "name.hpp" from the chapter itself; its tests are
# tests/chapters/NN_slug/*_test.cpp (tests/CMakeLists.txt).
#
# It builds the executable chNN_slug, adds the chapter to the `chapters` target (which runs
# every chapter in order and writes the figures into ATTN_PLOTS_DIR, in the build folder) and
# to the `refresh-plots` target (which redraws the committed snapshot in plots/), and adds its
# tests, labelled `chNN`:
#   chNN.golden      stdout equals tests/golden/chNN_slug.txt, byte for byte, exit 0, and
#                    stderr holds no gnuplot error or warning (every figure was drawn). With
#                    GOLDEN_UNTIL (chapter 11, whose trained numbers depend on the CPU's BLAS
#                    kernel), only up to the first line holding that text; its checks do the rest.
#   chNN.no_gnuplot  the same with gnuplot missing from PATH: numbers checked, plots skipped.
#                    A chapter with QUICK_ARGS (chapter 09: --quick, its long runs at smaller n)
#                    runs this with them and requires every check to match instead; so does
#                    repo.figures_untouched, which only watches files.
#   chNN.bad_flag    an unknown option exits 2 and prints the usage
#   chNN.help        --help exits 0 and prints the usage
# Further runs with their own golden file: add_chapter_run(<NN_slug> <name> ARGS ...).

# How the build runs a chapter: with OpenMP's idle threads asleep rather than spinning. Chapter
# 11 trains on OpenMP threads, one short parallel region after another; with libgomp's default,
# a thread that waits for the others spins, and when another process holds one of two cores (a
# compiler of the same build, a second test) the two threads take the core from each other: a
# two-thread float32 step ran about twice as slow as a one-thread step beside one busy loop, and
# some six times as slow beside a two-job compile. Passive threads sleep at once and cost a
# few percent on an idle machine. The test presets (CMakePresets.json) set the same for ctest.
set(ATTN_SHARED_CORES ${CMAKE_COMMAND} -E env OMP_WAIT_POLICY=PASSIVE)

set(ATTN_CHAPTER_RUNNER "${PROJECT_SOURCE_DIR}/tests/scripts/run_chapter.cmake")
set(ATTN_GOLDEN_DIR "${PROJECT_SOURCE_DIR}/tests/golden")

add_custom_target(chapters COMMENT "Every chapter has run; figures are in ${ATTN_PLOTS_DIR}")

# The figures committed in plots/ are a snapshot, so that the repository shows them without a
# build. Nothing else writes there: gnuplot versions draw different bytes (5.4 on Debian 12,
# 6.0 on Debian 13), and a reader's build must leave the clone clean. A maintainer redraws the
# snapshot on purpose with `cmake --build --preset default --target refresh-plots`, then
# reviews and commits it.
add_custom_target(refresh-plots
  COMMENT "Redrew the committed figures in ${PROJECT_SOURCE_DIR}/plots; review them with git diff")

function(_attn_chapter_test name exe label)
  cmake_parse_arguments(T "" "GOLDEN;GOLDEN_UNTIL;GOLDEN_START;GOLDEN_LINES;EXIT;STDOUT;STDERR;NO_GNUPLOT;CLEAN_STDERR;COLOUR"
    "ARGS" ${ARGN})
  string(REPLACE ";" "|" args "${T_ARGS}")
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND}
      -DEXE=$<TARGET_FILE:${exe}> "-DARGS=${args}" -DGOLDEN=${T_GOLDEN} "-DGOLDEN_UNTIL=${T_GOLDEN_UNTIL}"
      -DGOLDEN_START=${T_GOLDEN_START} -DGOLDEN_LINES=${T_GOLDEN_LINES}
      -DEXPECT_EXIT=${T_EXIT} "-DSTDOUT_REGEX=${T_STDOUT}" "-DSTDERR_REGEX=${T_STDERR}"
      -DNO_GNUPLOT=${T_NO_GNUPLOT} -DCLEAN_STDERR=${T_CLEAN_STDERR} -DCOLOUR=${T_COLOUR}
      -DWORK_DIR=${CMAKE_BINARY_DIR}/test-runs/${name}
      -P ${ATTN_CHAPTER_RUNNER})
  set_tests_properties(${name} PROPERTIES LABELS "chapters;${label}")
endfunction()

function(add_chapter folder)
  cmake_parse_arguments(C "" "GOLDEN_UNTIL" "USES;LINKS;QUICK_ARGS" ${ARGN})
  if(NOT folder MATCHES "^([0-9][0-9])_[a-z0-9_]+$")
    message(FATAL_ERROR "add_chapter(${folder}): a chapter's folder is NN_slug, such as 05_scaling")
  endif()
  set(nn ${CMAKE_MATCH_1})
  set(exe ch${folder})
  # The registry: the book's chapters in reading order, for the fuzzer's table of chapters and
  # for the check of the pages and exercises (repo.chapter_registry).
  set_property(GLOBAL APPEND PROPERTY ATTN_CHAPTERS ${folder})
  file(GLOB material CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/*.cpp)
  list(REMOVE_ITEM material ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/main.cpp)
  set(library attn::book)
  if(material OR C_USES)
    set(uses "")
    foreach(earlier IN LISTS C_USES)
      string(SUBSTRING ${earlier} 0 2 earlier_nn)
      list(APPEND uses attn::ch${earlier_nn})
    endforeach()
    if(material)
      add_library(attn_ch${nn} ${material})
      target_link_libraries(attn_ch${nn} PUBLIC attn::book ${uses} ${C_LINKS})
      target_include_directories(attn_ch${nn} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
      attn_warnings(attn_ch${nn})
      if(ATTN_FUZZ)  # a chapter's material reads the reader's text (chapter 10's prompt)
        target_compile_options(attn_ch${nn} PRIVATE -fsanitize=fuzzer-no-link)
      endif()
    else()  # nothing of its own: the earlier chapters' material it uses
      add_library(attn_ch${nn} INTERFACE)
      target_link_libraries(attn_ch${nn} INTERFACE attn::book ${uses} ${C_LINKS})
    endif()
    add_library(attn::ch${nn} ALIAS attn_ch${nn})
    set(library attn::ch${nn})
  endif()
  add_executable(${exe} ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/main.cpp)
  target_link_libraries(${exe} PRIVATE ${library})
  attn_warnings(${exe})

  # Chapters run in order: chapter NN waits for the one registered before it. They run with
  # ATTN_SHARED_CORES (below), since the build may still be compiling beside them.
  add_custom_target(run_${exe} COMMAND ${ATTN_SHARED_CORES} $<TARGET_FILE:${exe}>
    --plots ${ATTN_PLOTS_DIR} COMMENT "Chapter ${nn}: ${exe}" USES_TERMINAL VERBATIM)
  get_property(previous GLOBAL PROPERTY ATTN_LAST_CHAPTER_RUN)
  if(previous)
    add_dependencies(run_${exe} ${previous})
  endif()
  set_property(GLOBAL PROPERTY ATTN_LAST_CHAPTER_RUN run_${exe})
  add_dependencies(chapters run_${exe})
  add_custom_target(refresh_plots_${exe}
    COMMAND ${ATTN_SHARED_CORES} $<TARGET_FILE:${exe}> --plots ${PROJECT_SOURCE_DIR}/plots
    COMMENT "Chapter ${nn}: redrawing its committed figures" VERBATIM)
  add_dependencies(refresh-plots refresh_plots_${exe})

  set(label ch${nn})
  set(golden ${ATTN_GOLDEN_DIR}/${exe}.txt)
  _attn_chapter_test(${label}.golden ${exe} ${label} GOLDEN ${golden} EXIT 0 CLEAN_STDERR ON
    GOLDEN_UNTIL "${C_GOLDEN_UNTIL}")
  if(C_QUICK_ARGS)
    _attn_chapter_test(${label}.no_gnuplot ${exe} ${label} ARGS ${C_QUICK_ARGS} EXIT 0
      NO_GNUPLOT ON STDOUT "[0-9]+ of [0-9]+ checks pass" STDERR "plots skipped: gnuplot is not on the PATH")
    string(REPLACE ";" "|" quick "${C_QUICK_ARGS}")
    set_property(GLOBAL APPEND PROPERTY ATTN_QUICK_ARGS "-DQUICK_ARGS_${exe}=${quick}")
  else()
    _attn_chapter_test(${label}.no_gnuplot ${exe} ${label} GOLDEN ${golden} EXIT 0
      NO_GNUPLOT ON STDERR "plots skipped: gnuplot is not on the PATH")
  endif()
  _attn_chapter_test(${label}.bad_flag ${exe} ${label} ARGS --no-such-flag EXIT 2
    STDERR "Usage:")
  _attn_chapter_test(${label}.help ${exe} ${label} ARGS --help EXIT 0 STDOUT "^[^\n]+\nUsage: ${exe}")
endfunction()

# add_chapter_run(<NN_slug> <name> ARGS ... [EXIT code] [STDOUT regex] [STDERR regex]
#                 [COLOUR ON] [GOLDEN_START file] [GOLDEN_LINES file]): one more run of a
# chapter. With the default EXIT 0 and no STDOUT pattern, GOLDEN_START or GOLDEN_LINES its
# stdout must equal tests/golden/chNN_slug.<name>.txt; GOLDEN_START instead requires stdout to
# begin with a reference file another implementation wrote, and GOLDEN_LINES to hold each line, in order,
# of one; otherwise the exit code and the patterns are checked. STDOUT is matched against the text a reader sees, with terminal
# colour codes taken out; COLOUR ON also requires that there were colour codes.
function(add_chapter_run folder name)
  cmake_parse_arguments(R "" "EXIT;STDOUT;STDERR;COLOUR;GOLDEN_START;GOLDEN_LINES" "ARGS" ${ARGN})
  string(REGEX MATCH "^([0-9][0-9])_" _ ${folder})
  set(exe ch${folder})
  if(NOT DEFINED R_EXIT)
    set(R_EXIT 0)
  endif()
  set(golden "")
  if(R_EXIT EQUAL 0 AND NOT R_STDOUT AND NOT R_GOLDEN_START AND NOT R_GOLDEN_LINES)
    set(golden ${ATTN_GOLDEN_DIR}/${exe}.${name}.txt)
  endif()
  _attn_chapter_test(ch${CMAKE_MATCH_1}.${name} ${exe} ch${CMAKE_MATCH_1}
    ARGS ${R_ARGS} GOLDEN "${golden}" EXIT ${R_EXIT} STDOUT "${R_STDOUT}" STDERR "${R_STDERR}"
    COLOUR "${R_COLOUR}" GOLDEN_START "${R_GOLDEN_START}" GOLDEN_LINES "${R_GOLDEN_LINES}")
endfunction()
