# attn_warnings(<target>): the warning set every target of this project compiles with.
function(attn_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow)
  if(ATTN_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # On arm64 GCC notes, once per build, that GCC 10.1 changed how a std::pair<double, double>
  # argument is passed (gnuplot-iostream passes them): a fact about binaries built by GCC 9 or
  # older, none of which this build links, so the note is turned off.
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-psabi)
  endif()
endfunction()
