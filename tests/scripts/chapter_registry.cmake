# The chapters registered with add_chapter() in chapters/CMakeLists.txt are the book's chapters;
# everything a person writes by hand about each chapter agrees with that list:
#   - its folder holds its page, chapters/NN_slug/chapter.md, whose anchor is {#chNN_slug};
#   - its expected output is tests/golden/chNN_slug.txt;
#   - README.md's "Reading order" table and docs/chapters.md's table have its row,
#     "| NN | `chNN_slug` | ... |", in reading order, and docs/chapters.md has its
#     "- \subpage chNN_slug", in reading order;
#   - docs/code_organisation.md's table of chapters' own material has its row "| NN | ... |" if
#     the chapter has material (a .cpp file in its folder besides main.cpp), and only then;
#   - its exercises are exercises/NN_slug.hpp, exercises/stubs/NN_slug.cpp,
#     exercises/solutions/NN_slug.cpp and tests/exercises/NN_slug_test.cpp, with its line
#     attn_exercises(NN_slug ...) in exercises/CMakeLists.txt (which gives the exercises' numbers
#     and functions, and so cannot be derived from the registry; repo.exercise_catalogue checks
#     that each exercise is whole).
# And the other way: no chapter folder, table, golden file or exercise names a chapter that is
# not registered. Each problem names the chapter and the file. Called by the test
# repo.chapter_registry (chapters/CMakeLists.txt):
#   cmake "-DCHAPTERS=<NN_slug>;..." -DSOURCE=<repository> -P chapter_registry.cmake
cmake_minimum_required(VERSION 3.25)

set(problems "")
function(problem)  # its arguments, joined, are one problem's text
  string(JOIN "" text ${ARGV})
  list(APPEND problems "${text}")
  set(problems "${problems}" PARENT_SCOPE)
endfunction()

# agree(<where> <what> EXPECTED <chapter>... FOUND <chapter>... [IN_ORDER]): the chapters
# found in a table or among files, compared with those expected there; IN_ORDER, for a table,
# also requires them in the order expected. <what> describes one chapter's entry, with @NN@ and
# @CHAPTER@ standing for its number and its NN_slug.
function(agree where what)
  cmake_parse_arguments(A "IN_ORDER" "" "EXPECTED;FOUND" ${ARGN})
  set(missing "")
  foreach(chapter IN LISTS A_EXPECTED)
    if(NOT chapter IN_LIST A_FOUND)
      list(APPEND missing ${chapter})
      string(SUBSTRING "${chapter}" 0 2 nn)
      string(REPLACE "@NN@" "${nn}" entry "${what}")
      string(REPLACE "@CHAPTER@" "${chapter}" entry "${entry}")
      problem("chapter ${chapter}: ${where} has no ${entry}")
    endif()
  endforeach()
  set(extra ${A_FOUND})
  list(REMOVE_DUPLICATES extra)
  list(REMOVE_ITEM extra ${A_EXPECTED})
  foreach(chapter IN LISTS extra)
    if(chapter IN_LIST CHAPTERS)  # registered, but not expected here
      problem("chapter ${chapter}: ${where} lists it, but it has no .cpp besides main.cpp")
    elseif(chapter MATCHES "^[0-9][0-9]$")  # a table row that gives only the number
      problem("chapter ${chapter}: ${where} names it, but chapters/CMakeLists.txt registers no "
        "chapter ${chapter}")
    else()
      problem("chapter ${chapter}: ${where} names it, but chapters/CMakeLists.txt has no "
        "add_chapter(${chapter})")
    endif()
  endforeach()
  if(A_IN_ORDER)
    set(listed ${A_FOUND})
    list(REMOVE_ITEM listed ${extra})
    set(wanted ${A_EXPECTED})
    list(REMOVE_ITEM wanted ${missing})
    if(NOT "${listed}" STREQUAL "${wanted}")
      list(JOIN A_FOUND ", " order)
      problem("${where} lists the chapters out of reading order, which is the order of their "
        "add_chapter lines in chapters/CMakeLists.txt: ${order}")
    endif()
  endif()
  set(problems "${problems}" PARENT_SCOPE)
endfunction()

# The text of `file` under the heading `heading` (a line "## Title"), up to the next "## ".
function(section file heading out)
  file(READ "${SOURCE}/${file}" text)
  string(FIND "${text}" "\n${heading}\n" start)
  if(start EQUAL -1)
    problem("${file} has no heading \"${heading}\"")
    set(text "")
  else()
    math(EXPR start "${start} + 1")
    string(SUBSTRING "${text}" ${start} -1 text)
    string(FIND "${text}" "\n## " end)
    string(SUBSTRING "${text}" 0 ${end} text)  # to the end of the file if end is -1
  endif()
  set(${out} "${text}" PARENT_SCOPE)
  set(problems "${problems}" PARENT_SCOPE)
endfunction()

# The chapters a table of programs names, "| NN | `chNN_slug` | ...", in its order; a row whose
# number is not its program's is a problem.
function(program_rows file text out)
  string(REGEX MATCHALL "\n[|] [0-9][0-9] [|] `ch[0-9a-z_]+` [|]" rows "${text}")
  set(found "")
  foreach(row IN LISTS rows)
    string(REGEX MATCH "[|] ([0-9][0-9]) [|] `ch([0-9a-z_]+)`" _ "${row}")
    list(APPEND found "${CMAKE_MATCH_2}")
    string(SUBSTRING "${CMAKE_MATCH_2}" 0 2 nn)
    if(NOT nn STREQUAL CMAKE_MATCH_1)
      problem("chapter ${CMAKE_MATCH_2}: ${file} numbers its row ${CMAKE_MATCH_1}, not ${nn}")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
  set(problems "${problems}" PARENT_SCOPE)
endfunction()

# Each registered chapter's page, expected output and exercise files; and which chapters have
# material of their own.
set(exercise_files exercises/@CHAPTER@.hpp exercises/stubs/@CHAPTER@.cpp
  exercises/solutions/@CHAPTER@.cpp tests/exercises/@CHAPTER@_test.cpp)
set(with_material "")
foreach(chapter IN LISTS CHAPTERS)
  set(page "chapters/${chapter}/chapter.md")
  if(NOT EXISTS "${SOURCE}/${page}")
    problem("chapter ${chapter}: no page ${page}")
  else()
    file(STRINGS "${SOURCE}/${page}" title LIMIT_COUNT 1 ENCODING UTF-8)
    if(NOT title MATCHES "^# .* [{]#ch${chapter}[}]$")
      problem("chapter ${chapter}: ${page} does not begin with \"# <title> {#ch${chapter}}\"")
    endif()
  endif()
  if(NOT EXISTS "${SOURCE}/tests/golden/ch${chapter}.txt")
    problem("chapter ${chapter}: no expected output tests/golden/ch${chapter}.txt")
  endif()
  foreach(pattern IN LISTS exercise_files)
    string(REPLACE "@CHAPTER@" "${chapter}" file "${pattern}")
    if(NOT EXISTS "${SOURCE}/${file}")
      problem("chapter ${chapter}: no exercise file ${file}")
    endif()
  endforeach()
  file(GLOB material "${SOURCE}/chapters/${chapter}/*.cpp")
  list(FILTER material EXCLUDE REGEX "/main[.]cpp$")
  if(material)
    list(APPEND with_material ${chapter})
  endif()
endforeach()

# No folder, expected output or exercise file belongs to a chapter that is not registered.
set(chapter_files chapters/@CHAPTER@ tests/golden/ch@CHAPTER@.* ${exercise_files})
foreach(pattern IN LISTS chapter_files)
  string(REPLACE "@CHAPTER@" "[0-9][0-9]_*" glob "${pattern}")
  string(REPLACE "." "[.]" regex "${pattern}")
  string(REPLACE "*" ".*" regex "${regex}")
  string(REPLACE "@CHAPTER@" "([0-9][0-9]_[a-z0-9_]+)" regex "${regex}")
  file(GLOB paths LIST_DIRECTORIES true RELATIVE "${SOURCE}" "${SOURCE}/${glob}")
  foreach(path IN LISTS paths)
    if(path MATCHES "^${regex}$" AND NOT CMAKE_MATCH_1 IN_LIST CHAPTERS)
      problem("chapter ${CMAKE_MATCH_1}: ${path} belongs to it, but chapters/CMakeLists.txt has "
        "no add_chapter(${CMAKE_MATCH_1})")
    endif()
  endforeach()
endforeach()

# The tables a person writes.
section(README.md "## Reading order" text)
program_rows(README.md "${text}" found)
agree("README.md's \"Reading order\" table" "row \"| @NN@ | `ch@CHAPTER@` | ... |\""
  EXPECTED ${CHAPTERS} FOUND ${found} IN_ORDER)

file(READ "${SOURCE}/docs/chapters.md" text)
program_rows(docs/chapters.md "${text}" found)
agree("docs/chapters.md's table" "row \"| @NN@ | `ch@CHAPTER@` | ... |\""
  EXPECTED ${CHAPTERS} FOUND ${found} IN_ORDER)
string(REGEX MATCHALL "\n- \\\\subpage ch[0-9][0-9]_[a-z0-9_]+" subpages "${text}")
list(TRANSFORM subpages REPLACE ".*subpage ch" "")
agree("docs/chapters.md's list of pages" "line \"- \\subpage ch@CHAPTER@\""
  EXPECTED ${CHAPTERS} FOUND ${subpages} IN_ORDER)

section(docs/code_organisation.md "## A chapter's own material" text)
string(REGEX MATCHALL "\n[|] [0-9][0-9] [|]" rows "${text}")
set(found "")
foreach(row IN LISTS rows)
  string(REGEX MATCH "[0-9][0-9]" nn "${row}")
  set(name "${nn}")  # a number no chapter has is reported as it stands
  foreach(chapter IN LISTS CHAPTERS)
    if(chapter MATCHES "^${nn}_")
      set(name ${chapter})
    endif()
  endforeach()
  list(APPEND found ${name})
endforeach()
agree("docs/code_organisation.md's table of chapters' own material" "row \"| @NN@ | ... |\""
  EXPECTED ${with_material} FOUND ${found} IN_ORDER)

# The exercises' line, which gives their numbers and functions.
file(STRINGS "${SOURCE}/exercises/CMakeLists.txt" lines REGEX "^attn_exercises[(]")
list(TRANSFORM lines REPLACE "^attn_exercises[(]([^ )]+).*" "\\1")
agree("exercises/CMakeLists.txt" "line \"attn_exercises(@CHAPTER@ <id> <function>...)\""
  EXPECTED ${CHAPTERS} FOUND ${lines})

list(LENGTH CHAPTERS count)
if(problems)
  list(JOIN problems "\n  " report)
  message(FATAL_ERROR "the chapters registered in chapters/CMakeLists.txt and the files about "
    "them disagree:\n  ${report}")
endif()
message(STATUS "${count} chapters registered, each with its page, its expected output, its rows "
  "in the README's and the book's tables, and its exercises")
