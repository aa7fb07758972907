# check_fresh.cmake -- CTest script: regenerates a manifest and compares it byte for byte with
# the committed one (so datasets/*.csv cannot drift from their generator). On a difference it
# prints the first differing lines (diff -u, truncated) and fails.
#   cmake -DGEN=gen_manifest -DKIND=default -DCOMMITTED=datasets/default.csv -DOUT=tmp.csv -P check_fresh.cmake
execute_process(COMMAND ${GEN} --kind ${KIND} --out ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gen_manifest --kind ${KIND} failed (exit ${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${COMMITTED} ${OUT} RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  execute_process(COMMAND diff -u ${COMMITTED} ${OUT} OUTPUT_VARIABLE d)
  string(SUBSTRING "${d}" 0 4000 d)
  message(FATAL_ERROR "${COMMITTED} differs from a fresh `gen_manifest --kind ${KIND}`:\n${d}")
endif()
file(REMOVE ${OUT})
message(STATUS "${COMMITTED} equals a fresh generation")
