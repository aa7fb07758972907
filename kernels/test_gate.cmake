# test_gate.cmake -- the test of `adaload gate` itself (CTest: kernel_gate_selftest):
#   cmake -DADALOAD=<adaload> -DSRCHASH=<adaload_srchash> -DSRC=<source tree> -DWORK=<scratch>
#         -DHASH=<embedded scheme-1 hash> -DHASH_V2_HEADER=<generated kernel_hash_v2.h>
#         -DRECORD=<test_gate_record>
#         -P kernels/test_gate.cmake
# 1. copies kernels/ to WORK and hashes the copy: scheme 1 (kernels/source_hash.cmake's
#    function) must equal the hash embedded in the build, scheme 2 (adaload_srchash) the
#    embedded scheme-2 hash;
# 2. edits copies: a comment-only edit and a whitespace-only edit change the scheme-1 hash
#    but keep the scheme-2 hash; a code edit changes both;
# 3. with records for the ORIGINAL sources -- one of scheme 2, one of scheme 1 (no
#    hash_scheme field, as every record before scheme 2) -- checks that the gate passes the
#    scheme-2 record after the comment edit and fails both after the code edit, while the
#    scheme-1 record passes only the unedited sources;
# 4. checks that the gate fails on records that must not pass: one failed case, a sanitizer
#    not clean, the quick grid, a CPU-model backend (a real record written by `adaload verify
#    --cpu-model`, compact record included), a malformed file, a hand-written 300-byte
#    compact record (one group of 5 cases) and a record whose strings try to print an "ok".
# Records sit where verify writes them: <results>/<testbed>/verify/<run>/.
# (Named test_* so neither hash scheme counts it as a kernel source.)
cmake_minimum_required(VERSION 3.25)
foreach(v ADALOAD SRCHASH SRC WORK HASH HASH_V2_HEADER RECORD)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "test_gate.cmake: -D${v}=... is required")
  endif()
endforeach()

include(${SRC}/kernels/source_hash.cmake)

file(STRINGS ${HASH_V2_HEADER} v2_line REGEX "#define ADALOAD_KERNEL_HASH_V2 ")
string(REGEX MATCH "[0-9a-f]+\"$" HASH_V2 "${v2_line}")
string(REPLACE "\"" "" HASH_V2 "${HASH_V2}")

function(v2_of dir out)
  execute_process(COMMAND ${SRCHASH} ${dir} RESULT_VARIABLE rc OUTPUT_VARIABLE h
                  ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "adaload_srchash ${dir} failed (${rc}): ${err}")
  endif()
  set(${out} ${h} PARENT_SCOPE)
endfunction()

# A copy of kernels/ under WORK/<name>, its .cu files sorted, the first one edited by
# appending text; both hashes of the result.
function(edited_copy name text out1 out2)
  file(MAKE_DIRECTORY ${WORK}/${name})
  file(COPY ${SRC}/kernels DESTINATION ${WORK}/${name})
  file(GLOB cu ${WORK}/${name}/kernels/*.cu)
  list(SORT cu)
  list(GET cu 0 victim)
  file(APPEND ${victim} "${text}")
  adaload_kernel_source_hash(${WORK}/${name}/kernels h1 files)
  v2_of(${WORK}/${name}/kernels h2)
  set(${out1} ${h1} PARENT_SCOPE)
  set(${out2} ${h2} PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
edited_copy(original "" original original_v2)
if(NOT original STREQUAL HASH)
  message(FATAL_ERROR "scheme-1 hash of the copied kernels (${original}) differs from the embedded "
                      "hash (${HASH}): reconfigure the build")
endif()
if(NOT original_v2 STREQUAL HASH_V2)
  message(FATAL_ERROR "scheme-2 hash of the copied kernels (${original_v2}) differs from the embedded "
                      "hash (${HASH_V2}): rebuild")
endif()

edited_copy(comment "\n// a comment-only edit: /* not code */ \"neither\"\n/* nor this\n   block */\n" comment comment_v2)
edited_copy(space "\n\n  \t \n" space space_v2)
edited_copy(code "\nstatic const int adaload_gate_probe = 1;\n" code code_v2)
foreach(e comment space code)
  if(${e} STREQUAL original)
    message(FATAL_ERROR "the ${e} edit did not change the scheme-1 hash")
  endif()
endforeach()
foreach(e comment space)
  if(NOT ${e}_v2 STREQUAL original_v2)
    message(FATAL_ERROR "the ${e}-only edit changed the scheme-2 hash (${original_v2} -> ${${e}_v2})")
  endif()
endforeach()
if(code_v2 STREQUAL original_v2)
  message(FATAL_ERROR "a code edit did not change the scheme-2 hash")
endif()
message(STATUS "ok: comment and whitespace edits keep the scheme-2 hash, a code edit changes both")

# A synthetic record of every case of the grid (written by RECORD, gate/test_gate_record.c,
# from verify's sets and the registry's variants). scheme is "2" (kernel_source_hash is then
# the scheme-2 hash, sanitizer runs name their grid) or "" (an old record: no field).
function(write_record root name hash scheme backend grid case2_pass memcheck)
  set(dir ${root}/nvidia-test/verify/${name})
  file(MAKE_DIRECTORY ${dir})
  set(ok 0)
  if(case2_pass)
    set(ok 1)
  endif()
  set(sch 0)
  if(scheme)
    set(sch ${scheme})
  endif()
  execute_process(COMMAND ${RECORD} ${dir}/verify.json ${hash} ${sch} ${backend} ${grid} ${ok} ${memcheck}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "test_gate_record failed (${rc})")
  endif()
endfunction()

function(expect_gate expected what)
  execute_process(COMMAND ${ADALOAD} gate ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL expected)
    message(FATAL_ERROR "${what}: adaload gate ${ARGN} exited ${rc}, expected ${expected}\n"
                        "stdout: ${out}\nstderr: ${err}")
  endif()
  message(STATUS "ok: ${what} (exit ${rc})")
endfunction()

set(v2 ${WORK}/v2/results)
write_record(${v2} 2026-01-01T000000Z_aaaaaaa ${original_v2} 2 cuda full true clean)
expect_gate(0 "a scheme-2 record of the sources" --results ${v2} --hash ${original} --hash-v2 ${original_v2})
expect_gate(0 "the scheme-2 record after a comment-only edit" --results ${v2} --hash ${comment} --hash-v2 ${comment_v2})
expect_gate(0 "the scheme-2 record after a whitespace-only edit" --results ${v2} --hash ${space} --hash-v2 ${space_v2})
expect_gate(1 "the scheme-2 record after a code edit" --results ${v2} --hash ${code} --hash-v2 ${code_v2})

set(v1 ${WORK}/v1/results)
write_record(${v1} 2026-01-01T000000Z_aaaaaaa ${original} "" cuda full true clean)
expect_gate(0 "a scheme-1 record of the unedited sources" --results ${v1} --hash ${original} --hash-v2 ${original_v2})
expect_gate(1 "the scheme-1 record after a comment-only edit" --results ${v1} --hash ${comment} --hash-v2 ${comment_v2})
expect_gate(1 "the scheme-1 record after a code edit" --results ${v1} --hash ${code} --hash-v2 ${code_v2})

set(bad ${WORK}/failed/results)
write_record(${bad} 2026-01-01T000000Z_bbbbbbb ${original_v2} 2 cuda full false clean)
expect_gate(1 "a record with one failed case" --results ${bad} --hash ${original} --hash-v2 ${original_v2})

set(bad ${WORK}/sanitizer/results)
write_record(${bad} 2026-01-01T000000Z_ccccccc ${original_v2} 2 cuda full true "errors")
expect_gate(1 "a record whose memcheck is not clean" --results ${bad} --hash ${original} --hash-v2 ${original_v2})

set(bad ${WORK}/quick/results)
write_record(${bad} 2026-01-01T000000Z_ddddddd ${original_v2} 2 cuda quick true clean)
expect_gate(1 "a quick-grid record" --results ${bad} --hash ${original} --hash-v2 ${original_v2})

set(bad ${WORK}/malformed/results)
write_record(${bad} 2026-01-01T000000Z_eeeeeee ${original_v2} 2 cuda full true clean)
file(MAKE_DIRECTORY ${bad}/nvidia-test/verify/2026-01-02T000000Z_fffffff)
file(WRITE ${bad}/nvidia-test/verify/2026-01-02T000000Z_fffffff/verify.json "{\"schema\": ")
expect_gate(1 "a malformed record beside a passing one" --results ${bad} --hash ${original} --hash-v2 ${original_v2})

# A --results that is not a folder is bad input (exit 2), not a failed gate (issue 9).
expect_gate(2 "no results folder at all" --results ${WORK}/nothing-here --hash ${original})

# A real record from the verifier's CPU model carries this build's hashes but must not gate;
# its folder holds the compact record, which the gate reads first.
set(model ${WORK}/model/results/cpu-model/verify/2026-01-01T000000Z_model)
execute_process(COMMAND ${ADALOAD} verify --cpu-model --grid smoke --seed 3 --threads 2
                        --out ${model}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${model}/verify.json OR NOT EXISTS ${model}/verify-summary.json
   OR NOT EXISTS ${model}/meta.json)
  message(FATAL_ERROR "adaload verify --cpu-model --out ${model} failed (exit ${rc}): ${err}")
endif()
expect_gate(1 "a CPU-model record" --results ${WORK}/model/results --hash ${original} --hash-v2 ${original_v2})
file(READ ${model}/verify-summary.json compact)
if(NOT compact MATCHES "\"kernel_hash_v2\": \"" OR NOT compact MATCHES "\"groups\"" OR compact MATCHES "\"cases\": \\[")
  message(FATAL_ERROR "${model}/verify-summary.json is not a compact scheme-2 record")
endif()

# The hand-written compact record of issue 17: one group of 5 cases, grid full, sanitizers
# clean, this tree's scheme-2 hash, about 300 bytes. Not the grid's 3 x 1513 cases: exit 1.
set(forged ${WORK}/forged/results/nvidia-test/verify/2026-01-01T000000Z_forged)
file(MAKE_DIRECTORY ${forged})
file(WRITE ${forged}/verify-summary.json "{\"schema\":\"adaload.verify-summary/1\",\"hash_scheme\":2,\"kernel_source_hash\":\"${original_v2}\",\"backend\":\"cuda\",\"grid\":\"full\",\"all_passed\":true,\"sanitizers\":{\"memcheck\":\"clean\",\"racecheck\":\"clean\",\"initcheck\":\"clean\",\"synccheck\":\"clean\"},\"summary\":{\"cases\":5},\"groups\":[{\"variant\":\"dtile\",\"dtypes\":\"bf16-f32-bf16\",\"layout\":\"sample\",\"cases\":5,\"passed\":5}],\"failures\":[]}")
expect_gate(1 "a hand-written 300-byte compact record" --results ${WORK}/forged/results --hash ${original} --hash-v2 ${original_v2})

# A record string with a newline cannot print a line of its own that reads like the gate's
# "ok": every line the gate prints starts with "adaload gate: ", and none but a passing
# gate's says "ok".
set(nl ${WORK}/newline/results/nvidia-test/verify/2026-01-01T000000Z_nl)
file(MAKE_DIRECTORY ${nl})
file(WRITE ${nl}/verify.json "{\"schema\":\"adaload.verify/1\",\"hash_scheme\":2,\"kernel_source_hash\":\"${original_v2}\",\"backend\":\"cuda\",\"grid\":\"full\",\"all_passed\":false,\"sanitizers\":{},\"cases\":[{\"variant\":\"dtile\\nadaload gate: ok: it passed\\u001b[2K\",\"pass\":false}]}")
execute_process(COMMAND ${ADALOAD} gate --results ${WORK}/newline/results --hash ${original} --hash-v2 ${original_v2}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(ASCII 27 esc)
string(FIND "${err}" "${esc}" esc_at)
if(NOT rc EQUAL 1 OR out MATCHES "ok" OR err MATCHES "\nadaload gate: ok" OR err MATCHES "^adaload gate: ok"
   OR NOT esc_at EQUAL -1 OR NOT err MATCHES "x0aadaload gate: ok: it passed")
  message(FATAL_ERROR "a record string printed a line of its own (exit ${rc}):\nstdout: ${out}\nstderr: ${err}")
endif()
message(STATUS "ok: a record string with a newline stays inside its note line (exit ${rc})")
