# test_verify_res_record.cmake -- the fused residual op's cases in verify's record, on the CPU
# models (CTest: verify_res_record):
#   cmake -DADALOAD=<adaload> -DWORK=<scratch> -P harness/test_verify_res_record.cmake
# 1. `verify --cpu-model --grid smoke --out` records "op": "lnmod_res" cases (42: the smoke
#    grid's 21 sets x 2 directions of res_model) beside lnmod's ("op": "lnmod"), lists "ops",
#    and its compact record holds lnmod_res groups;
# 2. --shard 1/2 and 2/2: each holds some of the fused op's cases, together all of them, and
#    together all of lnmod's;
# 3. a planted backward bug (--variant res_bwd_no_dh) exits 1 with failed lnmod_res cases in
#    the record.
cmake_minimum_required(VERSION 3.25)
foreach(v ADALOAD WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "-D${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})

# Runs verify into WORK/name with the extra arguments; the exit code into rc_var.
function(run name rc_var)
  execute_process(COMMAND ${ADALOAD} verify --cpu-model --grid smoke --seed 7 --threads 2 --out ${WORK}/${name} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE so ERROR_VARIABLE se)
  if(NOT EXISTS ${WORK}/${name}/verify.json)
    message(FATAL_ERROR "verify ${ARGN} wrote no record (exit ${rc}):\n${so}\n${se}")
  endif()
  set(${rc_var} ${rc} PARENT_SCOPE)
endfunction()

# The number of matches of regex re in the file.
function(count file re out)
  file(READ ${file} text)
  string(REGEX MATCHALL "${re}" m "${text}")
  list(LENGTH m n)
  set(${out} ${n} PARENT_SCOPE)
endfunction()

set(res_re "\"op\": \"lnmod_res\"")
set(lnmod_re "\"op\": \"lnmod\"")
run(all rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verify --cpu-model --grid smoke exited ${rc}")
endif()
count(${WORK}/all/verify.json "${res_re}" nres)
count(${WORK}/all/verify.json "${lnmod_re}" nlnmod)
if(NOT nres EQUAL 42 OR nlnmod LESS 1)
  message(FATAL_ERROR "the record holds ${nres} lnmod_res cases (expected 42) and ${nlnmod} lnmod cases")
endif()
file(READ ${WORK}/all/verify.json rec)
string(JSON ops GET "${rec}" ops)
string(JSON rv GET "${rec}" res_variants 0)
if(NOT ops MATCHES "lnmod_res" OR NOT rv STREQUAL "res_model")
  message(FATAL_ERROR "the record's ops are ${ops}, its res variant ${rv}")
endif()
count(${WORK}/all/verify-summary.json "${res_re}" ngroups)
if(ngroups LESS 1)
  message(FATAL_ERROR "the compact record has no lnmod_res group")
endif()
message(STATUS "ok: ${nres} lnmod_res cases beside ${nlnmod} lnmod cases, in both records")

set(sres 0)
set(slnmod 0)
foreach(k 1 2)
  run(shard${k} rc --shard ${k}/2)
  count(${WORK}/shard${k}/verify.json "${res_re}" r)
  count(${WORK}/shard${k}/verify.json "${lnmod_re}" l)
  if(NOT rc EQUAL 0 OR r LESS 1)
    message(FATAL_ERROR "shard ${k}/2: exit ${rc}, ${r} lnmod_res cases")
  endif()
  math(EXPR sres "${sres} + ${r}")
  math(EXPR slnmod "${slnmod} + ${l}")
endforeach()
if(NOT sres EQUAL nres OR NOT slnmod EQUAL nlnmod)
  message(FATAL_ERROR "shards 1 and 2 of 2 hold ${sres} lnmod_res and ${slnmod} lnmod cases, the whole grid ${nres} and ${nlnmod}")
endif()
message(STATUS "ok: the two shards hold the grid's cases, the fused op's included")

run(planted rc --variant res_bwd_no_dh)
count(${WORK}/planted/verify.json "\"op\": \"lnmod_res\"[^}]*\"pass\": false" nfail)
if(NOT rc EQUAL 1 OR nfail LESS 1)
  message(FATAL_ERROR "a planted backward bug: exit ${rc}, ${nfail} failed lnmod_res cases in the record")
endif()
message(STATUS "ok: a planted bug of the fused op fails verify (exit 1) and its record")
