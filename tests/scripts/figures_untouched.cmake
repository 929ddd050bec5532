# A reader's commands never touch the repository: every chapter runs, from the repository's
# root, with each of its options. Afterwards the committed figures' bytes, the tree's files and
# `git status` must be exactly what they were before. Each chapter also runs once with a
# gnuplot that dies half-way while drawing over a copy of the committed figures, which must
# come out byte for byte unchanged (a copy, so that a broken build cannot damage a
# maintainer's work in plots/). Called by the test repo.figures_untouched:
#   cmake -DSOURCE=<repository> -DBUILD=<build folder> -DBOOK_PLOTS=<the build's figures folder>
#         -DCHAPTERS=<chapter executables' folder>
#         -DFAKE_GNUPLOT=<folder with the failing gnuplot> -P figures_untouched.cmake
# The runs with default options draw into the build's figures folder, where the book's build left
# the full runs' figures; chapters 11 and 12 run --quick here (QUICK_ARGS), so their figures
# would be a few steps' after the tests. The folder is kept aside and put back, byte for byte and
# with its times, so that after `ctest` a reader still finds the book's figures there.
cmake_minimum_required(VERSION 3.25)

# What a reader's command could change: the figures' bytes in `folder`, the files in the tree
# (build folders aside), and what git sees.
function(snapshot out folder)
  file(GLOB figures "${folder}/*")
  set(state "")
  foreach(figure IN LISTS figures)
    file(SHA256 "${figure}" hash)
    string(APPEND state "${figure} ${hash}\n")
  endforeach()
  file(GLOB_RECURSE files RELATIVE "${SOURCE}" "${SOURCE}/*")
  list(FILTER files EXCLUDE REGEX "^(build[^/]*|\\.git)/")
  file(RELATIVE_PATH build "${SOURCE}" "${BUILD}")
  if(NOT build MATCHES "^[.][.]")  # a build folder inside the tree, whatever its name
    list(FILTER files EXCLUDE REGEX "^${build}/")
  endif()
  list(SORT files)
  string(APPEND state "files: ${files}\n")
  if(EXISTS "${SOURCE}/.git")
    execute_process(COMMAND git -C "${SOURCE}" status --porcelain --untracked-files=all
      OUTPUT_VARIABLE status RESULT_VARIABLE code)
    if(NOT code EQUAL 0)
      message(FATAL_ERROR "git status failed in ${SOURCE}")
    endif()
    string(APPEND state "git status:\n${status}")
  endif()
  set(${out} "${state}" PARENT_SCOPE)
endfunction()

# run(<name> <executable> [args...]): runs a chapter from the repository's root, as the README
# does; it must exit 0. Its stderr is left in `stderr` for the caller.
function(run name exe)
  # A chapter's QUICK_ARGS (add_chapter), for runs that only watch files (-DQUICK_ARGS_<exe>=a|b).
  string(REPLACE "|" ";" own "${QUICK_ARGS_${exe}}")
  execute_process(COMMAND "${CHAPTERS}/${exe}" ${ARGN} ${own} WORKING_DIRECTORY "${SOURCE}"
    OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE code)
  message(STATUS "${exe} ${ARGN}: exit ${code}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${exe} ${ARGN} exited ${code}:\n${err}")
  endif()
  set(stderr "${err}" PARENT_SCOPE)
endfunction()

snapshot(before "${SOURCE}/plots")
set(book_plots_kept "${CMAKE_CURRENT_BINARY_DIR}/book-figures-kept")
file(REMOVE_RECURSE "${book_plots_kept}")
if(BOOK_PLOTS AND IS_DIRECTORY "${BOOK_PLOTS}")
  file(COPY "${BOOK_PLOTS}/" DESTINATION "${book_plots_kept}")
endif()
set(copy "${CMAKE_CURRENT_BINARY_DIR}/committed-figures-copy")
file(REMOVE_RECURSE "${copy}")
file(COPY "${SOURCE}/plots/" DESTINATION "${copy}")
snapshot(copy_before "${copy}")
file(GLOB chapters RELATIVE "${CHAPTERS}" "${CHAPTERS}/ch[0-9][0-9]_*")
list(FILTER chapters EXCLUDE REGEX "[.]")
if(NOT chapters)
  message(FATAL_ERROR "no chapter executables in ${CHAPTERS}")
endif()
foreach(exe IN LISTS chapters)
  run(default ${exe})
  run(no_plots ${exe} --no-plots)
  run(terminal ${exe} --plots-in-terminal)
  # The harshest case: a gnuplot that fails half-way, drawing over (a copy of) the figures.
  set(path "$ENV{PATH}")
  set(ENV{PATH} "${FAKE_GNUPLOT}:${path}")
  run(failing_gnuplot ${exe} --plots "${copy}")
  set(ENV{PATH} "${path}")
  if(NOT stderr MATCHES "warning: gnuplot did not draw [^\n]+; the previous figure is kept")
    message(FATAL_ERROR "${exe}: the failing gnuplot was not noticed, or found no figure:\n${stderr}")
  endif()
endforeach()
run(token ch03_qkv_projections --token fail)
run(token_terminal ch03_qkv_projections --token did --plots-in-terminal)
run(seed ch04_self_attention --seed 7)
run(sentence ch04_self_attention --sentence "the dog chased the ball")
if(IS_DIRECTORY "${book_plots_kept}")
  file(REMOVE_RECURSE "${BOOK_PLOTS}")
  file(COPY "${book_plots_kept}/" DESTINATION "${BOOK_PLOTS}")
  file(REMOVE_RECURSE "${book_plots_kept}")
endif()
snapshot(after "${SOURCE}/plots")
snapshot(copy_after "${copy}")
# unchanged(<name> <before> <after> <what changed>): fails, with the difference, when the two
# snapshots differ.
function(unchanged name before after what)
  if(NOT "${before}" STREQUAL "${after}")
    file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/${name}-before.txt" "${before}")
    file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/${name}-after.txt" "${after}")
    execute_process(COMMAND diff -u ${name}-before.txt ${name}-after.txt OUTPUT_VARIABLE diff
      WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
    message(FATAL_ERROR "${what} (- before, + after):\n${diff}")
  endif()
endfunction()
unchanged(copy "${copy_before}" "${copy_after}"
  "a gnuplot failing half-way changed the figures it was drawing over")
unchanged(repository "${before}" "${after}" "a chapter changed the repository")
list(LENGTH chapters count)
message(STATUS "${count} chapters, every option: the committed figures and the tree are unchanged")
