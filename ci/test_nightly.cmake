# test_nightly.cmake -- ci/nightly.sh without a GPU (CTest: nightly_plan, nightly_no_gpu):
#   cmake -DNIGHTLY=<ci/nightly.sh> -DBUILD=<build dir> -DRESULTS=<results dir> -DMODE=plan|nogpu
#         -P ci/test_nightly.cmake
# plan:  --dry-run prints every step, in the nightly's order, and runs nothing (exit 0);
# nogpu: on a machine without a GPU the job stops before its first step with exit 77 and
#        writes nothing under results/ (on a machine with one this test says "skipped": it
#        would start the real nightly).
cmake_minimum_required(VERSION 3.25)
foreach(v NIGHTLY BUILD RESULTS MODE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "test_nightly.cmake: -D${v}=... is required")
  endif()
endforeach()
if(MODE STREQUAL "plan")
  execute_process(COMMAND bash ${NIGHTLY} --dry-run --no-setup --no-build --build ${BUILD}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--dry-run exited ${rc}: ${err}")
  endif()
  set(at -1)
  foreach(s "[(]verify[)]: .*verify --grid full --sanitizers" "[(]gate[)]: " "[(]bench-wan[)]: .*--set wan --with-peers"
            "[(]bench-sweep[)]: .*--set sweep" "[(]planner[)]: .*--kind planner" "[(]compare[)]: .* compare --history "
            "[(]index[)]: .*results check" "[(]dashboard[)]: .*dashboard --out ")
    string(REGEX MATCH "would run ${s}" m "${out}")
    if(NOT m)
      message(FATAL_ERROR "the plan has no step matching 'would run ${s}':\n${out}")
    endif()
    string(FIND "${out}" "${m}" pos)
    if(pos LESS_EQUAL at)
      message(FATAL_ERROR "step '${s}' is out of order:\n${out}")
    endif()
    set(at ${pos})
  endforeach()
  message(STATUS "ok: the nightly plan has every step in order")
elseif(MODE STREQUAL "nogpu")
  execute_process(COMMAND ${BUILD}/adaload results testbed OUTPUT_VARIABLE tb OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${BUILD}/adaload version OUTPUT_VARIABLE ver)
  if(NOT tb MATCHES "^cpu-" AND ver MATCHES "gpu kernels +built")
    message(STATUS "skipped: a GPU is here (testbed ${tb}); the real nightly is not started by a test")
    return()
  endif()
  file(GLOB_RECURSE before RELATIVE ${RESULTS} ${RESULTS}/*)
  execute_process(COMMAND bash ${NIGHTLY} --no-setup --no-build --build ${BUILD}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 77 OR NOT out MATCHES "no GPU here")
    message(FATAL_ERROR "without a GPU ci/nightly.sh exited ${rc} (want 77 and a line saying why)\n${out}\n${err}")
  endif()
  file(GLOB_RECURSE after RELATIVE ${RESULTS} ${RESULTS}/*)
  if(NOT before STREQUAL after)
    message(FATAL_ERROR "ci/nightly.sh without a GPU changed results/")
  endif()
  message(STATUS "ok: no GPU: exit 77, nothing written")
else()
  message(FATAL_ERROR "MODE must be plan or nogpu")
endif()
