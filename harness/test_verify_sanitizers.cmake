# test_verify_sanitizers.cmake -- tests `adaload verify --sanitizers` without a GPU (CTest:
# verify_sanitizer_plumbing): a fake compute-sanitizer (found through
# $ADALOAD_COMPUTE_SANITIZER) runs the child command as the real one would, or reports errors
# for the tools in $FAKE_SANITIZER_ERRORS, or hangs for those in $FAKE_SANITIZER_HANG. With
# the CPU model as the backend:
#   1. all four tools clean -> exit 0, verdicts "clean", one log per tool in the run folder;
#   2. racecheck reports errors, synccheck hangs past --sanitizer-timeout -> exit 1,
#      racecheck "errors", synccheck "not run: timed out ...", memcheck still "clean";
#   3. --reuse-buffers: the record says "reuse_buffers": true, and no sanitizer child is
#      given it (their device buffers stay exact-size, so memcheck sees past the bands).
#   cmake -DADALOAD=<adaload> -DWORK=<scratch dir> -P harness/test_verify_sanitizers.cmake
cmake_minimum_required(VERSION 3.25)
foreach(v ADALOAD WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "-D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

set(fake ${WORK}/fake-compute-sanitizer)
file(WRITE ${fake} [=[#!/bin/sh
# fake compute-sanitizer: --tool T --error-exitcode N PROGRAM ARGS...
tool=$2
shift 4
echo "fake compute-sanitizer: $tool"
echo "fake compute-sanitizer runs: $*"
case " $FAKE_SANITIZER_HANG " in *" $tool "*) exec sleep 60 ;; esac
case " $FAKE_SANITIZER_ERRORS " in
  *" $tool "*) echo "========= ERROR SUMMARY: 1 error"; exit 1 ;;
esac
"$@"
status=$?
echo "========= ERROR SUMMARY: 0 errors"
exit $status
]=])
file(CHMOD ${fake} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)

# run_verify(OUT EXPECTED_RC TIMEOUT_S [VAR=VALUE...]): the extra arguments go to the env.
function(run_verify out expected_rc timeout)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ADALOAD_COMPUTE_SANITIZER=${fake} ${ARGN}
                          ${ADALOAD} verify --cpu-model --grid smoke --seed 9 --threads 2
                          --sanitizers --sanitizer-timeout ${timeout} --out ${out} ${extra_args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE so ERROR_VARIABLE se)
  if(NOT rc EQUAL expected_rc)
    message(FATAL_ERROR "verify --sanitizers exited ${rc}, expected ${expected_rc}\n${so}\n${se}")
  endif()
endfunction()

function(verdict out tool var)
  file(READ ${out}/verify.json rec)
  string(JSON v GET "${rec}" sanitizers ${tool})
  set(${var} "${v}" PARENT_SCOPE)
endfunction()

# 1. all clean
set(extra_args "")
set(out ${WORK}/clean)
run_verify(${out} 0 300)
file(READ ${out}/verify.json rec)
string(JSON reuse GET "${rec}" reuse_buffers)
if(NOT reuse STREQUAL "OFF")
  message(FATAL_ERROR "reuse_buffers '${reuse}' without --reuse-buffers")
endif()
foreach(tool memcheck racecheck initcheck synccheck)
  verdict(${out} ${tool} v)
  if(NOT v STREQUAL "clean")
    message(FATAL_ERROR "${tool}: verdict '${v}', expected 'clean'")
  endif()
  file(READ ${out}/sanitizer_${tool}.log log)
  if(NOT log MATCHES "fake compute-sanitizer: ${tool}" OR NOT log MATCHES "cases passed")
    message(FATAL_ERROR "${tool}: the log does not show the child's run:\n${log}")
  endif()
endforeach()
message(STATUS "ok: four clean sanitizer runs recorded")

# 2. errors and a hang
set(out ${WORK}/bad)
run_verify(${out} 1 10 FAKE_SANITIZER_ERRORS=racecheck FAKE_SANITIZER_HANG=synccheck)
verdict(${out} racecheck v)
if(NOT v STREQUAL "errors")
  message(FATAL_ERROR "racecheck: verdict '${v}', expected 'errors'")
endif()
verdict(${out} synccheck v)
if(NOT v MATCHES "^not run: timed out")
  message(FATAL_ERROR "synccheck: verdict '${v}', expected 'not run: timed out ...'")
endif()
verdict(${out} memcheck v)
if(NOT v STREQUAL "clean")
  message(FATAL_ERROR "memcheck: verdict '${v}', expected 'clean'")
endif()
message(STATUS "ok: errors and a timeout recorded as such")

# 3. --reuse-buffers is the parent's alone
set(extra_args --reuse-buffers)
set(out ${WORK}/reuse)
run_verify(${out} 0 300)
file(READ ${out}/verify.json rec)
string(JSON reuse GET "${rec}" reuse_buffers)
if(NOT reuse STREQUAL "ON")
  message(FATAL_ERROR "reuse_buffers '${reuse}' with --reuse-buffers")
endif()
foreach(tool memcheck racecheck initcheck synccheck)
  file(READ ${out}/sanitizer_${tool}.log log)
  if(NOT log MATCHES "fake compute-sanitizer runs: [^\n]* verify ")
    message(FATAL_ERROR "${tool}: the log does not show the child's command:\n${log}")
  endif()
  if(log MATCHES "reuse-buffers")
    message(FATAL_ERROR "${tool}: the child was given --reuse-buffers:\n${log}")
  endif()
endforeach()
message(STATUS "ok: --reuse-buffers recorded, and no sanitizer child given it")
