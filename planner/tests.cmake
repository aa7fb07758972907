# tests.cmake -- the planner's tests (included from planner/CMakeLists.txt):
#   planner_unit            Criterion unit and property tests (test_planner.c)
#   planner_golden_*        summary JSON + plan digest per dataset x policy x assignment,
#                           byte for byte against planner/golden/ (update: update_goldens.sh)
#   planner_bad_*           bad input and bad options: exit 2, a one-line message naming the
#                           file:line: column or the option, and no file written
#   planner_cli_*           the command's other paths (--policy both, --oversize=drop, help)
add_executable(test_planner test_planner.c test_plan_budget.c test_plan_assign.c test_plan_io.c)
target_link_libraries(test_planner PRIVATE ada_planner ada_mangen PkgConfig::CRITERION)
target_compile_options(test_planner PRIVATE ${ADALOAD_C_WARNINGS})
target_compile_definitions(test_planner PRIVATE _POSIX_C_SOURCE=200809L
                           PLAN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_test(NAME planner_unit COMMAND test_planner)

set(_adaload $<TARGET_FILE:adaload>)
set(_td ${CMAKE_CURRENT_SOURCE_DIR}/testdata)

foreach(ds tiny default longtail)
  foreach(pol equal-token dual)
    foreach(as random same-bucket)
      set(n ${ds}-${pol}-${as})
      add_test(NAME planner_golden_${n}
               COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload}
                       -DMANIFEST=${PROJECT_SOURCE_DIR}/datasets/${ds}.csv -DPOLICY=${pol}
                       -DASSIGN=${as} -DNAME=${n} -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/golden
                       -DOUT=${CMAKE_CURRENT_BINARY_DIR}/golden_out
                       -P ${CMAKE_CURRENT_SOURCE_DIR}/golden_check.cmake)
    endforeach()
  endforeach()
endforeach()

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
planner_bad(oversize "oversize.csv:3: a sample of 435600 tokens .* exceeds the memory budget of 118816 tokens.*--oversize=drop" --manifest ${_td}/oversize.csv)
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
add_test(NAME planner_cli_help
         COMMAND ${CMAKE_COMMAND} -DADALOAD=${_adaload} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_help -DEXPECT=0
                 -DNO_OUTPUTS=1 "-DREGEX=^$" "-DSTDOUT_REGEX=usage: adaload plan" "-DARGS=--help"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_check.cmake)
