# tests.cmake -- the planner's tests (included from planner/CMakeLists.txt):
#   planner_unit            Criterion unit and property tests (test_planner.c)
#   planner_golden_*        summary JSON + plan digest per dataset x policy x assignment,
#                           byte for byte against planner/golden/ (update: update_goldens.sh)
#   planner_bad_*           bad input and bad options: exit 2, a one-line message naming the
#                           file:line: column or the option, and no file written
#   planner_cli_*           the command's other paths (--policy both, --oversize=drop, help)
add_executable(test_planner test_planner.c test_plan_budget.c test_plan_assign.c test_plan_io.c
               test_plan_baselines.c test_plan_memory.c)
target_link_libraries(test_planner PRIVATE ada_planner ada_mangen PkgConfig::CRITERION)
target_compile_options(test_planner PRIVATE ${ADALOAD_C_WARNINGS})
target_compile_definitions(test_planner PRIVATE _POSIX_C_SOURCE=200809L
                           PLAN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_test(NAME planner_unit COMMAND test_planner)

set(_adaload $<TARGET_FILE:adaload>)
set(_td ${CMAKE_CURRENT_SOURCE_DIR}/testdata)

# planner_golden(NAME DATASET ARG...) -- the summary and the plan digest of
# `adaload plan --manifest datasets/DATASET.csv ARG...` against golden/NAME.*.
function(planner_golden name ds)
  string(REPLACE ";" "|" args "${ARGN}")
  add_test(NAME planner_golden_${name}
           COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DMANIFEST=${PROJECT_SOURCE_DIR}/datasets/${ds}.csv
                   "-DARGS=${args}" -DNAME=${name} -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/golden
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/golden_out
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/golden_check.cmake)
endfunction()

# Each dataset under both policies with the defaults (14B, sorted-window; compute binds in
# some buckets of default and longtail).
foreach(ds tiny default longtail)
  foreach(pol equal-token dual)
    planner_golden(${ds}-${pol} ${ds} --policy ${pol})
  endforeach()
endforeach()
# Every other assignment, the other presets, the power form, a step time, a profile.
foreach(as random same-bucket)
  planner_golden(default-dual-${as} default --assign ${as})
endforeach()
# lpt and kk accumulate without a sync: with zero3 their gradients stay unsharded, the 14B
# model's room drops to 110,816 tokens and the longest clips (17.4%) do not fit.
foreach(as lpt kk)
  planner_golden(default-dual-${as} default --assign ${as} --oversize drop)
endforeach()
planner_golden(longtail-dual-kk-1.3b longtail --assign kk --model wan2.1-1.3b --gpus 8)
planner_golden(default-dual-1.3b default --model wan2.1-1.3b)
planner_golden(default-dual-5b default --model wan2.2-5b)
planner_golden(default-dual-power default --comp-model power)
planner_golden(default-dual-step60 default --step-time 60)
planner_golden(default-dual-profile default --profile ${_td}/profiles/example_full.csv)
planner_golden(default-equal-token-mmem-random default --policy equal-token --assign random --tok-budget 142024)

# Exact resume: prefix (--steps N) + remainder (--start-step N) = the whole plan, byte for
# byte, for every policy and assignment.
foreach(pol equal-token dual)
  add_test(NAME planner_resume_${pol}
           COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DMANIFEST=${PROJECT_SOURCE_DIR}/datasets/longtail.csv
                   -DPOLICY=${pol} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/resume_${pol}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/resume_check.cmake)
endforeach()

# The library's link interface and its objects' symbol graph: no manifest generator, no
# cycles between the planner's translation units.
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/planner_link.txt
     CONTENT "$<TARGET_PROPERTY:ada_planner,INTERFACE_LINK_LIBRARIES>\n$<TARGET_PROPERTY:ada_planner,LINK_LIBRARIES>\n")
add_test(NAME planner_deps
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deps_check.sh $<TARGET_FILE:ada_planner>
                 ${CMAKE_CURRENT_BINARY_DIR}/planner_link.txt)

# planner_bad(NAME REGEX ARG...) -- adaload plan ARG... must fail with exit 2 and REGEX.
function(planner_bad name regex)
  string(REPLACE ";" "|" args "${ARGN}")
  add_test(NAME planner_bad_${name}
           COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/bad_${name}
                   "-DREGEX=${regex}" "-DARGS=${args}"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
endfunction()

# Manifests: the message names file:line: column (header name) and what is wrong.
planner_bad(missing_column "missing_column.csv:1: the header has no 'frames' column" --manifest ${_td}/missing_column.csv)
planner_bad(not_a_number "not_a_number.csv:3: column 3 \\(height\\): 'abc' is not a whole number" --manifest ${_td}/not_a_number.csv)
planner_bad(fraction "fraction.csv:2: column 3 \\(frames\\): '12.5' is not a whole number" --manifest ${_td}/fraction.csv)
planner_bad(zero_size "zero_size.csv:3: column 1 \\(width\\): '0' must be positive" --manifest ${_td}/zero_size.csv)
planner_bad(negative_size "negative_size.csv:4: column 3 \\(frames\\): '-5' must be positive" --manifest ${_td}/negative_size.csv)
planner_bad(absurd_size "absurd_size.csv:3: column 1 \\(width\\): '40000' is an absurd size" --manifest ${_td}/absurd_size.csv)
planner_bad(empty "empty.csv:1: empty manifest" --manifest ${_td}/empty.csv)
planner_bad(header_only "header_only.csv:2: empty manifest: no rows" --manifest ${_td}/header_only.csv)
planner_bad(short_row "short_row.csv:3: column 3: 2 fields, the header has 3" --manifest ${_td}/short_row.csv)
planner_bad(bad_quote "bad_quote.csv:3: column 1: unterminated quoted field" --manifest ${_td}/bad_quote.csv)
planner_bad(bad_fps "bad_fps.csv:3: column 4 \\(fps\\): 'fast' is not a number" --manifest ${_td}/bad_fps.csv)
planner_bad(negative_weight "negative_weight.csv:3: column 4 \\(weight\\): '-1' must not be negative" --manifest ${_td}/negative_weight.csv)
planner_bad(duplicate_column "duplicate_column.csv:1: column 4: 'width' appears twice" --manifest ${_td}/duplicate_column.csv)
planner_bad(oversize "oversize.csv:3: a sample of 435600 tokens .* exceeds the memory budget of 142024 tokens.*bf16-residual.*--oversize=drop" --manifest ${_td}/oversize.csv)
planner_bad(id_not_utf8 "id_not_utf8.csv:3: column 1 \\(id\\): not valid UTF-8" --manifest ${_td}/id_not_utf8.csv)
planner_bad(profile_unknown_column "bad_unknown_column.csv:1: column 3: unknown column 'gpu'" --manifest ${_td}/oversize.csv --profile ${_td}/profiles/bad_unknown_column.csv)
planner_bad(missing_file "no_such.csv: cannot open" --manifest ${_td}/no_such.csv)
planner_bad(profile_too_few "profile_too_few.csv:3: the profile needs at least 3 distinct token counts" --manifest ${_td}/oversize.csv --profile ${_td}/profile_too_few.csv)
# Options: the message names the option.
planner_bad(p_zero "--p 0: must be a number in \\(0, 3\\] or auto" --manifest ${_td}/oversize.csv --p 0)
planner_bad(p_above_3 "--p 3.5: must be a number in \\(0, 3\\]" --manifest ${_td}/oversize.csv --p 3.5)
planner_bad(p_negative "--p -1: must be a number in \\(0, 3\\]" --manifest ${_td}/oversize.csv --p=-1)
planner_bad(gpus_zero "--gpus 0: must be a whole number in \\[1, 1000000\\]" --manifest ${_td}/oversize.csv --gpus 0)
planner_bad(gpus_junk "--gpus 4x: must be a whole number" --manifest ${_td}/oversize.csv --gpus 4x)
planner_bad(unknown_option "unknown option '--bogus'" --manifest ${_td}/oversize.csv --bogus 1)
planner_bad(missing_value "--seed: missing value" --seed)
planner_bad(unknown_model "--model wan3: unknown" --model wan3)
planner_bad(unknown_policy "--policy fast: equal-token, dual or both" --policy fast)
planner_bad(both_with_json "--policy both prints a table only" --policy both)
planner_bad(no_memory "--gpu-mem-gib 8: no room for activations" --manifest ${_td}/oversize.csv --gpu-mem-gib 8)
planner_bad(unknown_assign "--assign best: random, same-bucket, sorted-window, lpt, kk, verl-kk or sort-by-length" --assign best)
planner_bad(unknown_gpu "--gpu h300: unknown \\(h200, h100-80gb" --gpu h300)
planner_bad(gpu_and_gib "--gpu and --gpu-mem-gib: give one of them" --gpu h200 --gpu-mem-gib 80)
planner_bad(unknown_act "--act fp8: wan2.1-14b has no such activation setup \\(it has fp32-residual, bf16-residual, fp32-offload\\)" --manifest ${PROJECT_SOURCE_DIR}/datasets/tiny.csv --act fp8)
planner_bad(mem_tokens_above "--mem-tokens 200000: above the 142024 tokens the memory model allows.*--force" --manifest ${PROJECT_SOURCE_DIR}/datasets/tiny.csv --mem-tokens 200000)
planner_bad(flops_tiny "--flops 1e-300: the FLOP model's cost at" --manifest ${PROJECT_SOURCE_DIR}/datasets/tiny.csv --flops 1e-300)
planner_bad(step_time_power "--step-time is in seconds: it needs --comp-model cost" --comp-model power --step-time 10)
planner_bad(step_and_budget "--step-time and --comp-budget: give one of them" --step-time 10 --comp-budget 5)
planner_bad(start_beyond "--start-step 99: the plan has 1 steps" --manifest ${PROJECT_SOURCE_DIR}/datasets/tiny.csv --start-step 99)
planner_bad(window_zero "--window 0: must be a whole number in \\[1, 1000000\\]" --window 0)
planner_bad(window_huge "--window 1000000 x --gpus 1000: above 2\\^28 micro-batches per window" --window 1000000 --gpus 1000)
planner_bad(margin_high "--mem-margin 0.95: must be a number in \\[0, 0.9\\]" --mem-margin 0.95)

# The other paths of the command.
add_test(NAME planner_cli_oversize_drop
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_drop -DEXPECT=0
                 "-DREGEX=^$" "-DSTDOUT_REGEX=3 samples in 3 buckets; 2 planned, 1 dropped"
                 "-DARGS=--manifest|${_td}/oversize.csv|--oversize=drop"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
add_test(NAME planner_cli_both
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_both -DEXPECT=0
                 -DNO_OUTPUTS=1 "-DREGEX=^$" "-DSTDOUT_REGEX=equal-token +dual +change.*epoch idle fraction"
                 "-DARGS=--manifest|${PROJECT_SOURCE_DIR}/datasets/tiny.csv|--policy|both"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
add_test(NAME planner_cli_start_without_plan
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_start -DNO_OUTPUTS=1
                 "-DREGEX=--start-step: selects steps of --plan-out or --per-rank, which are missing" "-DARGS=--start-step|3"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
add_test(NAME planner_cli_forced_mem_warns
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_force -DEXPECT=0
                 -DNO_OUTPUTS=1 "-DREGEX=warning: --mem-tokens is above what the memory model allows"
                 "-DSTDOUT_REGEX=M_mem 200000 tokens \\(given\\)"
                 "-DARGS=--manifest|${PROJECT_SOURCE_DIR}/datasets/tiny.csv|--mem-tokens|200000|--force"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
add_test(NAME planner_cli_one_shape_warns
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_one -DEXPECT=0
                 -DNO_OUTPUTS=1 -DMULTILINE=1 "-DREGEX=warning: the manifest has one shape.*warning: p was fitted over a token range of zero width"
                 "-DSTDOUT_REGEX=binding    memory 1, compute 0"
                 "-DARGS=--manifest|${_td}/one_shape.csv"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
add_test(NAME planner_cli_profile_bom
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_bom -DEXPECT=0
                 -DNO_OUTPUTS=1 "-DREGEX=^$" "-DSTDOUT_REGEX=measured profile \\(4 points"
                 "-DARGS=--manifest|${PROJECT_SOURCE_DIR}/datasets/tiny.csv|--profile|${_td}/profiles/example_bom.csv"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
add_test(NAME planner_cli_help
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_help -DEXPECT=0
                 -DNO_OUTPUTS=1 "-DREGEX=^$" "-DSTDOUT_REGEX=usage: adaload plan" "-DARGS=--help"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)

# adaload calibrate: 77 and nothing written without PyTorch/GPU; a usable profile with them.
add_test(NAME planner_calibrate
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DTINY=${PROJECT_SOURCE_DIR}/datasets/tiny.csv
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/calibrate -P ${CMAKE_CURRENT_SOURCE_DIR}/calibrate_check.cmake)
add_test(NAME planner_calibrate_needs_out COMMAND ${_adaload} calibrate)
set_tests_properties(planner_calibrate_needs_out PROPERTIES WILL_FAIL TRUE)
# calibrate.py's torch-free arithmetic and its profile read back by adaload plan.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME planner_calibrate_fit COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/calibrate/test_calibrate.py)
  set_tests_properties(planner_calibrate_fit PROPERTIES ENVIRONMENT "ADALOAD_BIN=$<TARGET_FILE:adaload>")
endif()
