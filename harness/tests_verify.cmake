# tests_verify.cmake -- tests of `adaload verify` and `adaload gate` (included by tests.cmake);
# the verifier's unit tests are verify/test_verify.c, the run folders' runs/test_runs.c.
#
#   verify_model_smoke          the whole verifier on the fp32 CPU model: must pass (exit 0)
#   verify_model_reuse_buffers  the quick grid with --reuse-buffers (buffers grow, never shrink):
#                               passes; the out-of-bounds model is still caught by the bands
#   verify_model_catches_<bug>  the same with a deliberately wrong model: must exit 1
#   verify_model_catches_bwd_<bug>  a wrong backward: --direction bwd exits 1, fwd 0
#   verify_res_model_smoke      --op lnmod_res (the fused residual op) on its fp32 CPU model
#   verify_res_catches_<bug>    a wrong model of it: its direction exits 1, the other 0
#   verify_res_record           the fused op's cases in verify's record on the CPU models, in
#                               shards and failing (harness/test_verify_res_record.cmake)
#   verify_gate_usage_errors    bad options exit 2
#   verify_sanitizer_plumbing   --sanitizers with a fake compute-sanitizer: clean, errors and
#                               timeout verdicts and logs (harness/test_verify_sanitizers.cmake)
#   kernel_gate_selftest        the gate passes a record for the kernel sources' hash and
#                               fails after a kernel source edit (kernels/test_gate.cmake)
#   gpu_verify_quick_<variant>  label gpu: the quick grid on the GPU; skipped (exit 77) by
#                               name on machines without one
#   kernel_gate                 CI's gate over the committed results/

# The verifier end to end without a GPU: the right model passes, each wrong one is caught.
add_test(NAME verify_model_smoke
         COMMAND adaload verify --cpu-model --grid smoke --no-record --seed 12345 --threads 2)
# --reuse-buffers: the buffers of one input set are the leftovers of a larger one (the model
# backend grows them as the GPU's do); the right model passes, the one writing past its rows
# is still caught by the guard bands.
add_test(NAME verify_model_reuse_buffers
         COMMAND sh -c "\"$1\" verify --cpu-model --grid quick --no-record --seed 5 --threads 2 --reuse-buffers --direction fwd >/dev/null || exit 1; \"$1\" verify --cpu-model --grid smoke --no-record --seed 5 --threads 2 --reuse-buffers --variant model_oob >/dev/null; test $? -eq 1"
                 sh $<TARGET_FILE:adaload>)
add_test(NAME verify_model_pivot_smoke
         COMMAND adaload verify --cpu-model --grid smoke --no-record --seed 12345 --threads 2
                 --variant model_pivot)
foreach(bug onepass eps oob lazy)
  add_test(NAME verify_model_catches_${bug}
           COMMAND sh -c "\"$1\" verify --cpu-model --grid smoke --no-record --seed 12345 --threads 2 --variant model_${bug} >/dev/null; test $? -eq 1"
                   sh $<TARGET_FILE:adaload>)
endforeach()

# The backward: each planted bug is caught by the backward's checks (--direction bwd exits 1)
# while its forward, the correct one, passes (--direction fwd exits 0).
foreach(bug drop gap accum ws)
  add_test(NAME verify_model_catches_bwd_${bug}
           COMMAND sh -c "\"$1\" verify --cpu-model --grid smoke --no-record --seed 12345 --threads 2 --variant model_bwd_${bug} --direction bwd >/dev/null; test $? -eq 1 || exit 1; \"$1\" verify --cpu-model --grid smoke --no-record --seed 12345 --threads 2 --variant model_bwd_${bug} --direction fwd >/dev/null"
                   sh $<TARGET_FILE:adaload>)
endforeach()

# The fused residual op's cases (--op lnmod_res, verify/verify_res.h) on its CPU models: the
# right model passes; each planted bug is caught in its own direction and only there.
add_test(NAME verify_res_model_smoke
         COMMAND adaload verify --op lnmod_res --cpu-model --grid smoke --seed 12345 --threads 2)
foreach(case no_gate:fwd:bwd no_h:fwd:bwd bwd_no_dh:bwd:fwd bwd_dgate_dh:bwd:fwd)
  string(REPLACE ":" ";" parts ${case})
  list(GET parts 0 bug)
  list(GET parts 1 bad)
  list(GET parts 2 good)
  add_test(NAME verify_res_catches_${bug}
           COMMAND sh -c "\"$1\" verify --op lnmod_res --cpu-model --grid smoke --seed 12345 --threads 2 --variant res_${bug} --direction ${bad} >/dev/null; test $? -eq 1 || exit 1; \"$1\" verify --op lnmod_res --cpu-model --grid smoke --seed 12345 --threads 2 --variant res_${bug} --direction ${good} >/dev/null"
                   sh $<TARGET_FILE:adaload>)
endforeach()

# Bad usage is exit 2, with a one-line message. A GPU variant without the fused op
# (--op lnmod_res --variant row_per_warp) is a usage error where the registry is built (CUDA);
# a build without CUDA (the sanitizer build) skips every GPU run of --op lnmod_res first (77).
if(ADALOAD_HAVE_CUDA)
  set(ada_res_variant_rc 2)
else()
  set(ada_res_variant_rc 77)
endif()
add_test(NAME verify_gate_usage_errors
         COMMAND sh -c "for a in '--grid huge' '--threads 0' '--seed -1' '--bogus' '--out x --no-record' '--direction up' '--op nope' '--res-grid huge' '--op lnmod_res --shard 1/2' '--op lnmod_res --cpu-model --variant model'; do \"$1\" verify $a 2>/dev/null; test $? -eq 2 || exit 1; done; \"$1\" verify --op lnmod_res --variant row_per_warp 2>/dev/null; test $? -eq ${ada_res_variant_rc} || exit 1; \"$1\" gate --hash nothex 2>/dev/null; test $? -eq 2"
                 sh $<TARGET_FILE:adaload>)

# The fused op's cases in the record (--op all, the default): present, sharded, failing.
add_test(NAME verify_res_record
         COMMAND ${CMAKE_COMMAND} -DADALOAD=$<TARGET_FILE:adaload>
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/verify_res_record
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/test_verify_res_record.cmake)

# --sanitizers: spawning compute-sanitizer, verdicts, logs, timeout (a fake sanitizer).
add_test(NAME verify_sanitizer_plumbing
         COMMAND ${CMAKE_COMMAND} -DADALOAD=$<TARGET_FILE:adaload>
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/verify_sanitizers
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/test_verify_sanitizers.cmake)

# The gate's own test: it can pass; a code edit fails it under both hash schemes, a comment
# or whitespace edit keeps a scheme-2 record passing.
add_test(NAME kernel_gate_selftest
         COMMAND ${CMAKE_COMMAND} -DADALOAD=$<TARGET_FILE:adaload>
                 -DSRCHASH=$<TARGET_FILE:adaload_srchash>
                 -DSRC=${PROJECT_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/gate_selftest
                 -DHASH=${ADALOAD_KERNEL_HASH} -DHASH_V2_HEADER=${ADALOAD_KERNEL_HASH_V2_HEADER}
                 -DRECORD=$<TARGET_FILE:test_gate_record>
                 -P ${PROJECT_SOURCE_DIR}/kernels/test_gate.cmake)

# GPU tests: the quick grid per shipped variant. Exit 77 (no CUDA build or no device) is
# CTest's "skipped", reported by name.
foreach(v naive row_per_warp dtile)
  add_test(NAME gpu_verify_quick_${v}
           COMMAND adaload verify --grid quick --variant ${v} --no-record)
  set_tests_properties(gpu_verify_quick_${v} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                       TIMEOUT 600)
endforeach()

# CI's gate over the committed records: fails unless results/ holds a passing full-grid GPU
# verification (sanitizers clean) of exactly these kernel sources. Make one on a GPU machine:
# ci/device_bundle.sh here, then ci/device_run.sh verify there, and commit the run folder.
add_test(NAME kernel_gate COMMAND adaload gate)
