# test_gate.cmake -- the test of `adaload gate` itself (CTest: kernel_gate_selftest):
#   cmake -DADALOAD=<adaload> -DSRCHASH=<adaload_srchash> -DSRC=<source tree> -DWORK=<scratch>
#         -DHASH=<embedded scheme-1 hash> -DHASH_V2_HEADER=<generated kernel_hash_v2.h>
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
#    --cpu-model`, compact record included), a malformed file.
# Records sit where verify writes them: <results>/<testbed>/verify/<run>/.
# (Named test_* so neither hash scheme counts it as a kernel source.)
cmake_minimum_required(VERSION 3.25)
foreach(v ADALOAD SRCHASH SRC WORK HASH HASH_V2_HEADER)
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

# A synthetic record: the fields the gate reads, two cases, sanitizer verdicts. scheme is
# "2" (kernel_source_hash is then the scheme-2 hash) or "" (an old record: no field).
function(write_record root name hash scheme backend grid case2_pass memcheck)
  set(dir ${root}/nvidia-test/verify/${name})
  file(MAKE_DIRECTORY ${dir})
  if(case2_pass)
    set(all true)
  else()
    set(all false)
  endif()
  set(sch "")
  if(scheme)
    set(sch "\"hash_scheme\": ${scheme},")
  endif()
  file(WRITE ${dir}/verify.json "{
  \"schema\": \"adaload.verify/1\", ${sch}
  \"kernel_source_hash\": \"${hash}\",
  \"backend\": \"${backend}\",
  \"gpu\": {\"name\": \"NVIDIA Test\"},
  \"seed\": 1,
  \"grid\": \"${grid}\",
  \"cases\": [
    {\"variant\": \"naive\", \"x\": \"bf16\", \"mod\": \"f32\", \"y\": \"bf16\", \"layout\": \"sample\",
     \"D\": 5120, \"rows\": 3, \"pass\": true},
    {\"variant\": \"dtile\", \"x\": \"f32\", \"mod\": \"f32\", \"y\": \"f32\", \"layout\": \"token\",
     \"D\": 7, \"rows\": 1560, \"pass\": ${case2_pass}}
  ],
  \"sanitizers\": {\"memcheck\": \"${memcheck}\", \"racecheck\": \"clean\",
                   \"initcheck\": \"clean\", \"synccheck\": \"clean\"},
  \"summary\": {\"cases\": 2},
  \"all_passed\": ${all}
}
")
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
