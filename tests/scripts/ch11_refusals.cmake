# Chapter 11's checkpoints and prompts, as a reader meets them: a run saves a checkpoint, a
# later run reads it back and prints the same story, and a checkpoint that is truncated,
# corrupted, empty, not a checkpoint at all or made for another run is refused with exit code 2
# and a message naming what is wrong, before anything is trained, and the file is left as it
# was. An empty --prompt is refused the same way, and a prompt of any bytes (invalid UTF-8, a
# control character, a tab) is encoded, continued and printed escaped. (CMake can pass neither
# an empty argument nor raw bytes through add_chapter_run's ARGS, so they are run here.)
#   cmake -DEXE=<ch11_small_gpt> -DWORK_DIR=<folder> -P ch11_refusals.cmake
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(saved "${WORK_DIR}/run.checkpoint")

# run(<name> <expected exit> <stderr regex> args...): runs the chapter, checks its exit code and
# stderr, and leaves its stdout in <name>_out.
function(run name expected_exit stderr_regex)
  execute_process(COMMAND "${EXE}" --no-plots ${ARGN}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
  if(NOT code STREQUAL expected_exit)
    message(FATAL_ERROR "${name}: expected exit code ${expected_exit}, got ${code}\nstderr:\n${err}")
  endif()
  if(NOT err MATCHES "${stderr_regex}")
    message(FATAL_ERROR "${name}: stderr does not match \"${stderr_regex}\":\n${err}")
  endif()
  set(${name}_out "${out}" PARENT_SCOPE)
  message(STATUS "${name}: exit ${code} as expected")
endfunction()

# refused(<name> <file> <stderr regex> args...): the run exits 2 and the file is unchanged.
function(refused name file stderr_regex)
  file(SHA256 "${file}" before)
  run(${name} 2 "${stderr_regex}" --checkpoint "${file}" ${ARGN})
  file(SHA256 "${file}" after)
  if(NOT before STREQUAL after)
    message(FATAL_ERROR "${name}: the refused checkpoint ${file} was changed")
  endif()
  if(EXISTS "${file}.partial")
    message(FATAL_ERROR "${name}: a refused run started writing ${file}.partial")
  endif()
endfunction()

run(first 0 "" --quick --checkpoint "${saved}")
if(NOT EXISTS "${saved}" OR EXISTS "${saved}.partial")
  message(FATAL_ERROR "the run left no checkpoint at ${saved}, or left a .partial file")
endif()
run(again 0 "" --quick --checkpoint "${saved}")
if(NOT again_out STREQUAL first_out)
  file(WRITE "${WORK_DIR}/first.txt" "${first_out}")
  file(WRITE "${WORK_DIR}/again.txt" "${again_out}")
  message(FATAL_ERROR "read back from its checkpoint, the run printed another story: "
    "diff ${WORK_DIR}/first.txt ${WORK_DIR}/again.txt")
endif()
if(again_out MATCHES "steps took")
  message(FATAL_ERROR "the second run trained again instead of reading the checkpoint")
endif()

# Another run's checkpoint: the full run's settings are not --quick's.
refused(another_run "${saved}" "made for another run: it has \"steps 8\", this run \"steps [0-9]+\"")

file(SIZE "${saved}" size)
math(EXPR half "${size} / 2")
# CMake has no way to write raw bytes; dd (coreutils) is in every Debian.
execute_process(COMMAND dd if=${saved} of=${WORK_DIR}/truncated.checkpoint bs=${half} count=1
  status=none RESULT_VARIABLE dd_code)
if(NOT dd_code EQUAL 0)
  message(FATAL_ERROR "dd could not cut ${saved}")
endif()
refused(truncated "${WORK_DIR}/truncated.checkpoint" "corrupted or truncated" --quick)

file(COPY_FILE "${saved}" "${WORK_DIR}/corrupted.checkpoint")
file(READ "${saved}" byte OFFSET ${half} LIMIT 1 HEX)
if(byte STREQUAL "55")
  set(other "aa")
else()
  set(other "55")
endif()
execute_process(COMMAND bash -c
  "printf '\\x${other}' | dd of='${WORK_DIR}/corrupted.checkpoint' bs=1 seek=${half} conv=notrunc status=none")
refused(corrupted "${WORK_DIR}/corrupted.checkpoint" "checksum does not match" --quick)

file(WRITE "${WORK_DIR}/empty.checkpoint" "")
refused(empty "${WORK_DIR}/empty.checkpoint" "not a checkpoint" --quick)
file(WRITE "${WORK_DIR}/text.checkpoint" "In the beginning\n")
refused(not_a_checkpoint "${WORK_DIR}/text.checkpoint" "not a checkpoint" --quick)

# A folder given as the checkpoint, and a checkpoint in a folder that does not exist: refused
# before training, not after it when the save fails.
run(a_folder 2 "--checkpoint: [^\n]* is not a file, so not a checkpoint" --quick --checkpoint "${WORK_DIR}")
run(no_folder 2 "--checkpoint: the folder [^\n]*/no-such-folder of the checkpoint [^\n]* does not exist"
  --quick --checkpoint "${WORK_DIR}/no-such-folder/run.checkpoint")

execute_process(COMMAND "${EXE}" --no-plots --quick --prompt ""
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 2 OR NOT err MATCHES "--prompt: the prompt is empty")
  message(FATAL_ERROR "an empty --prompt: expected exit code 2 and \"the prompt is empty\", got "
    "${code}:\n${err}")
endif()
message(STATUS "empty prompt: exit 2 as expected")

# The bytes c a f 0xE9 0x01 TAB e n d, made by the shell's printf.
execute_process(COMMAND bash -c "\"$0\" --no-plots --quick --prompt \"$(printf 'caf\\351\\001\\tend')\"" "${EXE}"
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 0 OR NOT out MATCHES "Your prompt, 9 bytes in [0-9]+ tokens, continued[^\n]*\n    caf[\\]xe9[\\]x01[\\]tend [|] ")
  message(FATAL_ERROR "a prompt of odd bytes: expected exit code 0 and the bytes escaped, got "
    "${code}:\n${out}\n${err}")
endif()
message(STATUS "a prompt of odd bytes: continued and printed escaped")

# A reader's text (--text): a file that is not there, a folder, an empty file and a text too
# short for the windows are refused with exit 2, before anything is trained or written.
run(text_missing 2 "--text: there is no file [^\n]*/no-such-text[.]txt; nothing was trained"
  --quick --text "${WORK_DIR}/no-such-text.txt")
run(text_folder 2 "--text: [^\n]* is a folder, not a text file" --quick --text "${WORK_DIR}")
file(WRITE "${WORK_DIR}/empty.txt" "")
run(text_empty 2 "--text: [^\n]*/empty[.]txt is empty: there is nothing to learn from"
  --quick --text "${WORK_DIR}/empty.txt")
file(READ "${TEXT}" whole)
string(SUBSTRING "${whole}" 0 2000 beginning)
file(WRITE "${WORK_DIR}/short.txt" "${beginning}")
run(text_too_short 2
  "--text: [^\n]*/short[.]txt is too short: its validation part [(]189 of its 2000 bytes[^\n]* encodes to [0-9]+ tokens, and each part needs at least 129.*Usage:"
  --quick --text "${WORK_DIR}/short.txt")
if(EXISTS "${WORK_DIR}/short.txt.checkpoint")
  message(FATAL_ERROR "a refused text left a checkpoint")
endif()

# Its checkpoint: read back with the same story; refused for the King James Bible's run, and
# for another text, which its fingerprint names.
set(text_saved "${WORK_DIR}/notes.checkpoint")
run(text_first 0 "" --quick --text "${TEXT}" --checkpoint "${text_saved}")
run(text_again 0 "" --quick --text "${TEXT}" --checkpoint "${text_saved}")
if(NOT text_again_out STREQUAL text_first_out OR text_again_out MATCHES "steps took")
  message(FATAL_ERROR "read back from its checkpoint, the run on ${TEXT} printed another story")
endif()
refused(text_for_the_bible "${text_saved}" "made for another run" --quick)
file(WRITE "${WORK_DIR}/more.txt" "${whole}One more line.\n")
refused(another_text "${text_saved}" "made for another run" --quick --text "${WORK_DIR}/more.txt")

# Without --checkpoint, a run on a text keeps its checkpoint in the build folder, named after the
# file: here one that is not a checkpoint is there already, and is refused by that name (exit 2)
# before anything is trained.
string(RANDOM LENGTH 12 unique)
set(named "${WORK_DIR}/notes-${unique}.txt")
file(COPY_FILE "${TEXT}" "${named}")
set(derived "${CHECKPOINT_DIR}/ch11_small_gpt.text-notes-${unique}.txt.checkpoint")
file(WRITE "${derived}" "not a checkpoint\n")
run(text_default_checkpoint 2 "--checkpoint: [^\n]*ch11_small_gpt[.]text-notes-${unique}[.]txt[.]checkpoint[^\n]*not a checkpoint"
  --text "${named}")
file(REMOVE "${derived}")
