# Drives Debian's headless Chromium over chapter 03's built page and checks its interactive walk
# against the chapter program (docs/token_walk.js, attn::ch03::walk_page_data). Called by the tests
# in docs/CMakeLists.txt:
#   cmake -DCHAPTER=ch03_qkv_projections -DPAGE=.../ch03_qkv_projections.html -DWORK_DIR=...
#         -DMODE=token|no_script|unknown_token [-DTOKEN=name] -P token_walk_page.cmake
#
#   token          opens PAGE#token=TOKEN. The button TOKEN, and only it, is pressed, the static
#                  text is hidden, and every step shows the numbers `CHAPTER --token TOKEN`
#                  prints in that step, in the same order; the weights shown read Σ = 1.00 and
#                  add up to 1 within their rounding.
#   no_script      JavaScript off: the widget stays hidden and the static walk is the text (the
#                  page as written; no browser needed).
#   unknown_token  PAGE#token=bank: the page says "bank" is not a token, lists the valid ones
#                  and shows the default token's walk.
#
# Without Chromium the test says so and is reported as skipped (SKIP_REGULAR_EXPRESSION).
cmake_minimum_required(VERSION 3.25)

find_program(CHROMIUM NAMES chromium PATHS /usr/bin NO_CACHE)
if(NOT CHROMIUM)
  message("browser test skipped: Chromium is not installed "
          "(scripts/install-deps installs it, or: apt-get install chromium)")
  return()
endif()
if(NOT EXISTS "${PAGE}")
  message(FATAL_ERROR "the book is not built: ${PAGE} is missing. Build it with "
                      "`cmake --build --preset book` (scripts/build-book does).")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# The page as Chromium has it once its scripts ran: the DOM, serialised.
#   --no-sandbox: Chromium's sandbox cannot start as root (the fresh-Debian CI runs as root); the
#   page is our own, read from disk. --disable-dev-shm-usage: a chroot may have no /dev/shm.
# Chromium runs as it normally does, a browser process and the helpers it forks. In an arm64
# Debian emulated with qemu-user those helpers die of a segmentation fault within seconds; then
# the page is opened again with --no-zygote --single-process, one process and no helpers, which
# works there (about 90 s a page). Not first: Chromium calls single-process mode unsupported, and
# here it once hung in CI where the normal mode never has. The timeouts guard against a hang.
function(page_dom fragment out_var)
  string(REPLACE " " "%20" url "file://${PAGE}")
  set(failures "")
  foreach(mode "normal" "one process")
    if(mode STREQUAL "normal")
      set(mode_flags "")
      set(timeout 120)
    else()
      set(mode_flags --no-zygote --single-process)
      set(timeout 600)
    endif()
    file(REMOVE_RECURSE "${WORK_DIR}/profile")
    execute_process(COMMAND "${CHROMIUM}" --headless --no-sandbox --disable-gpu
        --disable-dev-shm-usage --no-first-run ${mode_flags}
        "--user-data-dir=${WORK_DIR}/profile"
        --virtual-time-budget=5000 ${ARGN} --dump-dom "${url}${fragment}"
      OUTPUT_VARIABLE dom ERROR_VARIABLE err RESULT_VARIABLE code TIMEOUT ${timeout})
    if(code EQUAL 0 AND NOT dom STREQUAL "")
      file(WRITE "${WORK_DIR}/page${fragment}.html" "${dom}")
      set(${out_var} "${dom}" PARENT_SCOPE)
      return()
    endif()
    string(APPEND failures "\n--- Chromium (${mode}) exit ${code}:\n${err}")
    message(STATUS "Chromium (${mode}) could not open the page (exit ${code})")
  endforeach()
  message(FATAL_ERROR "Chromium could not open ${url}${fragment}:${failures}")
endfunction()

# The visible text of some HTML: tags become spaces, the few entities Chromium writes are decoded.
function(text_of html out_var)
  string(REGEX REPLACE "<[^>]*>" " " text "${html}")
  string(REPLACE "&nbsp;" " " text "${text}")
  string(REPLACE "&lt;" "<" text "${text}")
  string(REPLACE "&gt;" ">" text "${text}")
  string(REPLACE "&amp;" "&" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Every decimal number in a text, with its sign, in order: "e^-0.47 / 4.548" gives -0.47;4.548.
function(numbers_in text out_var)
  string(REGEX MATCHALL "-?[0-9]+[.][0-9]+" numbers "${text}")
  set(${out_var} "${numbers}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "no_script")
  # A browser without JavaScript shows the page as Doxygen wrote it. (Chromium's --dump-dom
  # itself needs JavaScript, so the file is read as it is.)
  file(READ "${PAGE}" dom)
  if(NOT dom MATCHES "<div id=\"token-walk\"[^>]* hidden(=\"\")?>")
    message(FATAL_ERROR "with JavaScript off the widget should stay hidden")
  endif()
  string(REGEX MATCH "<div class=\"token-walk-static\"[^>]*>.*" static "${dom}")
  text_of("${static}" static)
  if(NOT static MATCHES "step 1 +project *: x\\(export\\)" OR NOT static MATCHES "Σ weights = 1[.]00")
    message(FATAL_ERROR "with JavaScript off the page should show the static walk for export")
  endif()
  message(STATUS "without JavaScript: the widget is hidden, the static walk for export is shown")
  return()
endif()

if(MODE STREQUAL "unknown_token")
  page_dom("#token=bank" dom)
  string(REGEX MATCH "<p class=\"tw-status\"[^>]*>.*" status "${dom}")
  string(REGEX REPLACE "</p>.*" "" status "${status}")
  text_of("${status}" status)
  string(REGEX REPLACE " +" " " status "${status}")
  if(NOT status MATCHES "“bank” is not a token of the sentence \\(the tokens are why, did, my, Nimbus, export, fail\\)")
    message(FATAL_ERROR "#token=bank should be refused with the list of tokens; the page says: ${status}")
  endif()
  set(TOKEN export)  # what the page shows instead: the default token, checked below
  message(STATUS "#token=bank: ${status}")
else()
  page_dom("#token=${TOKEN}" dom)
endif()

# The program's walk, step by step ("step 1" ... "step 4", then the row beside chapter 02's).
execute_process(COMMAND "${CHAPTER}" --token ${TOKEN} --no-plots
  OUTPUT_VARIABLE printed ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${CHAPTER} --token ${TOKEN} failed (exit ${code}):\n${err}")
endif()
set(program_steps)
foreach(step 1 2 3 4)
  math(EXPR next "${step} + 1")
  string(REGEX MATCH "\nstep ${step} [^\n]*\n([^\n]*\n)*" section "${printed}")
  string(REGEX REPLACE "\n(step ${next} |beside chapter 02).*" "\n" section "${section}")
  set(program_${step} "${section}")
endforeach()
string(REGEX MATCH "\nbeside chapter 02[^\n]*\n([^\n]+\n)*" program_raw "${printed}")

# The button pressed, and the static text hidden.
string(REGEX MATCHALL "<button [^>]*aria-pressed=\"true\"[^>]*>" pressed "${dom}")
list(LENGTH pressed pressed_count)
if(NOT pressed_count EQUAL 1 OR NOT pressed MATCHES "data-token=\"${TOKEN}\"")
  message(FATAL_ERROR "#token=${TOKEN}: expected the button ${TOKEN} alone pressed, found: ${pressed}")
endif()
if(NOT dom MATCHES "<div class=\"token-walk-static\" hidden=\"\"")
  message(FATAL_ERROR "the widget ran, so the static walk should be hidden")
endif()

# Each step of the page against the same step of the program, number by number.
set(compared 0)
foreach(step 1 2 3 4 raw)
  string(REGEX MATCH "<section class=\"tw-step\" data-step=\"${step}\">.*" html "${dom}")
  string(REGEX REPLACE "</section>.*" "" html "${html}")
  if(html STREQUAL "")
    message(FATAL_ERROR "#token=${TOKEN}: the page has no step ${step}")
  endif()
  text_of("${html}" shown)
  numbers_in("${shown}" page_numbers)
  numbers_in("${program_${step}}" program_numbers)
  list(LENGTH program_numbers count)
  if(count EQUAL 0)
    message(FATAL_ERROR "the program printed no numbers for step ${step}:\n${printed}")
  endif()
  list(LENGTH page_numbers page_count)
  if(NOT page_count EQUAL count)
    message(FATAL_ERROR "#token=${TOKEN}, step ${step}: the page shows ${page_count} numbers, "
      "the program printed ${count}.\npage: ${page_numbers}\nprogram: ${program_numbers}\n"
      "the program's step:${program_${step}}")
  endif()
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(GET page_numbers ${i} on_page)
    list(GET program_numbers ${i} in_program)
    if(NOT on_page STREQUAL in_program)
      math(EXPR position "${i} + 1")
      message(FATAL_ERROR "#token=${TOKEN}, step ${step}: number ${position} of ${count} is "
        "${on_page} on the page but ${in_program} in the program's output:${program_${step}}")
    endif()
  endforeach()
  math(EXPR compared "${compared} + ${count}")
  set(page_${step} "${shown}")
endforeach()

# The weights shown: Σ reads 1.00, and the six two-decimal weights add up to 1 within their
# rounding (each is off by at most 0.005). They are the last row of chapter 02's table.
if(NOT page_3 MATCHES "Σ weights = +1[.]00")
  message(FATAL_ERROR "#token=${TOKEN}: step 3 does not read \"Σ weights = 1.00\":\n${page_3}")
endif()
numbers_in("${page_raw}" raw_numbers)
list(LENGTH raw_numbers raw_count)
math(EXPR first "${raw_count} - 6")
math(EXPR last "${raw_count} - 1")
set(hundredths 0)
foreach(i RANGE ${first} ${last})
  list(GET raw_numbers ${i} weight)
  string(REPLACE "." "" weight "${weight}")
  string(REGEX REPLACE "^0+([0-9])" "\\1" weight "${weight}")
  math(EXPR hundredths "${hundredths} + ${weight}")
endforeach()
if(hundredths LESS 97 OR hundredths GREATER 103)
  message(FATAL_ERROR "#token=${TOKEN}: the weights shown add up to ${hundredths}/100")
endif()
message(STATUS "#token=${TOKEN}: ${compared} numbers on the page equal the program's; "
               "Σ weights = 1.00, the six shown add up to ${hundredths}/100")
