# No number typed twice: every decimal number a book page writes must be one a program printed
# or one an article printed. For chapters/NN_slug/chapter.md that is a number in the chapter's
# expected outputs (tests/golden/chNN_slug*.txt) or in its main.cpp between the markers
# //! [article-numbers] (the article's quotes, which the chapter checks). The front pages in
# docs/ may quote any chapter's. A number that drifts from the output fails this test.
#   cmake -DSOURCE=<repository> -P prose_numbers.cmake
cmake_minimum_required(VERSION 3.25)

set(number_regex "-?[0-9]+[.][0-9]+")

# The decimal numbers of a text, as written, with their signs (a minus sign U+2212 counts as
# '-', so −0.14 on a page is -0.14 in an output).
function(numbers_in text out)
  string(REPLACE "−" "-" text "${text}")
  string(REGEX MATCHALL "${number_regex}" found "${text}")
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# The numbers a chapter may quote: its expected outputs and its article-numbers region.
function(allowed_numbers chapter_dir out)
  get_filename_component(slug "${chapter_dir}" NAME)
  file(GLOB outputs "${SOURCE}/tests/golden/ch${slug}*.txt")
  if(NOT outputs)
    message(FATAL_ERROR "no expected output tests/golden/ch${slug}*.txt for ${chapter_dir}")
  endif()
  set(allowed "")
  foreach(file IN LISTS outputs)
    file(READ "${file}" text)
    numbers_in("${text}" found)
    list(APPEND allowed ${found})
  endforeach()
  file(READ "${chapter_dir}/main.cpp" source)
  set(marker "//! [article-numbers]")
  string(FIND "${source}" "${marker}" start)
  if(start EQUAL -1)
    message(FATAL_ERROR "${chapter_dir}/main.cpp has no ${marker} region")
  endif()
  string(SUBSTRING "${source}" ${start} -1 source)
  string(LENGTH "${marker}" skip)
  string(SUBSTRING "${source}" ${skip} -1 source)
  string(FIND "${source}" "${marker}" end)
  if(end EQUAL -1)
    message(FATAL_ERROR "${chapter_dir}/main.cpp opens ${marker} but never closes it")
  endif()
  string(SUBSTRING "${source}" 0 ${end} quotes)
  numbers_in("${quotes}" found)
  list(APPEND allowed ${found})
  set(${out} ${allowed} PARENT_SCOPE)
endfunction()

# Fails, naming the line, for every number of `page` not in `allowed`. Names that look like
# numbers are not quantities and are passed over: "Module 2.1" (the article's sections), a
# reference book's "formula 7.1.26",
# versions such as "numpy 1.24" and "torch 2.6", and exercises ("exercise 1.2", ctest's
# "ex1.2"). With ONLY_COMMENTS, only the page's `///` lines count: the
# statements and hints in a chapter's exercise header.
function(check_page page allowed where)
  cmake_parse_arguments(PARSE_ARGV 3 check "ONLY_COMMENTS" "" "")
  file(READ "${page}" text)
  string(REGEX REPLACE "(Module|numpy|torch|[Ee]xercises?|formula) [0-9]+[.][0-9]+" "\\1 <name>" text "${text}")
  string(REGEX REPLACE "(ex|solution)[0-9]+[.][0-9]+" "\\1<name>" text "${text}")
  string(REGEX REPLACE "[][;]" " " text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(line_number 0)
  set(bad "")
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    if(check_ONLY_COMMENTS AND NOT line MATCHES "^ *///")
      continue()
    endif()
    numbers_in("${line}" found)
    foreach(number IN LISTS found)
      if(NOT number IN_LIST allowed)
        file(RELATIVE_PATH name "${SOURCE}" "${page}")
        string(APPEND bad "  ${name}:${line_number}: ${number} is in neither ${where}\n")
      endif()
    endforeach()
  endforeach()
  set(problems "${problems}${bad}" PARENT_SCOPE)
endfunction()

set(problems "")
file(GLOB chapters LIST_DIRECTORIES true "${SOURCE}/chapters/[0-9][0-9]_*")
set(everything "")
foreach(chapter IN LISTS chapters)
  allowed_numbers("${chapter}" allowed)
  list(APPEND everything ${allowed})
  check_page("${chapter}/chapter.md" "${allowed}"
    "the chapter's expected output nor its article-numbers region")
  get_filename_component(slug "${chapter}" NAME)
  if(EXISTS "${SOURCE}/exercises/${slug}.hpp")
    check_page("${SOURCE}/exercises/${slug}.hpp" "${allowed}"
      "the chapter's expected output nor its article-numbers region" ONLY_COMMENTS)
  endif()
endforeach()
file(GLOB front_pages "${SOURCE}/docs/*.md")
foreach(page IN LISTS front_pages)
  check_page("${page}" "${everything}"
    "any chapter's expected output nor any article-numbers region")
endforeach()
if(problems)
  message(FATAL_ERROR "numbers typed into the book that no program or article printed:\n${problems}"
    "Quote the chapter's output (or the article) exactly, or pull it in with \\snippet / \\skipline.")
endif()
message(STATUS "every number on the book's pages is one a chapter or an article printed")
