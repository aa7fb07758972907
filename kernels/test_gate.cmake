# test_gate.cmake -- the test of `adaload gate` itself (CTest: kernel_gate_selftest):
#   cmake -DADALOAD=<adaload> -DSRC=<source tree> -DWORK=<scratch dir> -DHASH=<embedded hash>
#         -P kernels/test_gate.cmake
# 1. copies kernels/ to WORK and hashes the copy with kernels/source_hash.cmake's function:
#    it must equal the hash embedded in the build (the gate's default key);
# 2. appends a comment to one .cu file of the copy and hashes again: the hash must change;
# 3. writes a synthetic passing GPU record for the ORIGINAL hash and checks that
#    `adaload gate --hash <original>` passes (0) while `--hash <edited>` fails (1), i.e. an
#    edited kernel cannot land on the old record;
# 4. checks that the gate fails on records that must not pass: one failed case, a sanitizer
#    not clean, the quick grid, a CPU-model backend (a real record written by `adaload verify
#    --cpu-model`), a malformed file.
# (Named test_* so source_hash.cmake leaves it out of the kernel hash.)
cmake_minimum_required(VERSION 3.25)
foreach(v ADALOAD SRC WORK HASH)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "test_gate.cmake: -D${v}=... is required")
  endif()
endforeach()

include(${SRC}/kernels/source_hash.cmake)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${SRC}/kernels DESTINATION ${WORK})

adaload_kernel_source_hash(${WORK}/kernels original files)
if(NOT original STREQUAL HASH)
  message(FATAL_ERROR "hash of the copied kernels (${original}) differs from the embedded "
                      "hash (${HASH}): reconfigure the build")
endif()

file(GLOB cu_files ${WORK}/kernels/*.cu)
list(SORT cu_files)
list(GET cu_files 0 victim)
file(APPEND ${victim} "\n// an edit that must invalidate the verification record\n")
adaload_kernel_source_hash(${WORK}/kernels edited files)
if(edited STREQUAL original)
  message(FATAL_ERROR "editing ${victim} did not change the kernel source hash")
endif()

# A synthetic record: the fields the gate reads, two cases, sanitizer verdicts.
function(write_record root name hash backend grid case2_pass memcheck)
  set(dir ${root}/nvidia-test/${name})
  file(MAKE_DIRECTORY ${dir})
  if(case2_pass)
    set(all true)
  else()
    set(all false)
  endif()
  file(WRITE ${dir}/verify.json "{
  \"schema\": \"adaload.verify/1\",
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

set(good ${WORK}/good/results)
write_record(${good} 2026-01-01T000000Z_aaaaaaa ${original} cuda full true clean)
expect_gate(0 "a passing record for the kernel sources" --results ${good} --hash ${original})
expect_gate(1 "kernel edited without a new record" --results ${good} --hash ${edited})

set(bad ${WORK}/failed/results)
write_record(${bad} 2026-01-01T000000Z_bbbbbbb ${original} cuda full false clean)
expect_gate(1 "a record with one failed case" --results ${bad} --hash ${original})

set(bad ${WORK}/sanitizer/results)
write_record(${bad} 2026-01-01T000000Z_ccccccc ${original} cuda full true "errors")
expect_gate(1 "a record whose memcheck is not clean" --results ${bad} --hash ${original})

set(bad ${WORK}/quick/results)
write_record(${bad} 2026-01-01T000000Z_ddddddd ${original} cuda quick true clean)
expect_gate(1 "a quick-grid record" --results ${bad} --hash ${original})

set(bad ${WORK}/malformed/results)
write_record(${bad} 2026-01-01T000000Z_eeeeeee ${original} cuda full true clean)
file(MAKE_DIRECTORY ${bad}/nvidia-test/2026-01-02T000000Z_fffffff)
file(WRITE ${bad}/nvidia-test/2026-01-02T000000Z_fffffff/verify.json "{\"schema\": ")
expect_gate(1 "a malformed record beside a passing one" --results ${bad} --hash ${original})

expect_gate(1 "no results folder at all" --results ${WORK}/nothing-here --hash ${original})

# A real record from the verifier's CPU model carries this build's hash but must not gate.
set(model ${WORK}/model/results/cpu-model/run)
execute_process(COMMAND ${ADALOAD} verify --cpu-model --grid smoke --seed 3 --threads 2
                        --out ${model}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${model}/verify.json OR NOT EXISTS ${model}/meta.json)
  message(FATAL_ERROR "adaload verify --cpu-model --out ${model} failed (exit ${rc}): ${err}")
endif()
expect_gate(1 "a CPU-model record" --results ${WORK}/model/results --hash ${original})
