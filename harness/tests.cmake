# tests.cmake -- tests of the adaload command (the libraries' unit tests live beside them):
#   tests_verify.cmake  `adaload verify` and `adaload gate` end to end
#   tests_bench.cmake   `adaload bench`, `compare` and `report` end to end
#   tests_results.cmake `adaload results` and `adaload dashboard` (the browser test is
#                       dashboard/test_browser.py, registered in dashboard/)
#   tests_plugin.cmake  `--plugin` (plug-in kernels) on the CPU
#   cli_opts            the option parser (test_cli_opts.c)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_verify.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_plugin.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_bench.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_results.cmake)
ada_test(cli_opts test_cli_opts.c adaload_cli)

# Every subcommand through every exit class it can produce (README.md, "Exit codes"); out
# of memory through an LD_PRELOAD allocation-failure library, outside the sanitizer build.
set(_failalloc "")
if(NOT ADALOAD_SANITIZE)
  add_library(test_failalloc MODULE test_failalloc.c)
  target_link_libraries(test_failalloc PRIVATE ${CMAKE_DL_LIBS})
  set(_failalloc $<TARGET_FILE:test_failalloc>)
endif()
add_test(NAME cli_exit_codes
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_exit_codes.sh $<TARGET_FILE:adaload>
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/exit_codes ${_failalloc})
set_tests_properties(cli_exit_codes PROPERTIES TIMEOUT 900)

# The CLI defects of issue 9, through the real program (harness/test_cli_defects.sh).
add_test(NAME cli_defects
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_defects.sh $<TARGET_FILE:adaload>
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli_defects)
set_tests_properties(cli_defects PROPERTIES TIMEOUT 600)

# The CLI's loud failures of issue 17 (harness/test_cli_defects17.sh).
add_test(NAME cli_defects17
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_cli_defects17.sh $<TARGET_FILE:adaload>
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli_defects17)
set_tests_properties(cli_defects17 PROPERTIES TIMEOUT 300)

# The layout rules (ci/layout_check.sh): folder shares, file and function lengths.
add_test(NAME layout_check COMMAND bash ${PROJECT_SOURCE_DIR}/ci/layout_check.sh ${PROJECT_SOURCE_DIR})

# compare and report on 20,000 benchmark names within 10 s each (harness/test_scale.sh).
add_test(NAME compare_report_scale
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_scale.sh $<TARGET_FILE:adaload>
                 ${CMAKE_CURRENT_BINARY_DIR}/scale)
set_tests_properties(compare_report_scale PROPERTIES TIMEOUT 300)

# `adaload plan --per-rank` at 1,024 ranks, the disk full (the write shim) or a target
# unwritable in the middle of the ranks (test_plan_per_rank.c).
ada_test(plan_per_rank test_plan_per_rank.c adaload_cli)
ada_failwrite(test_plan_per_rank)
target_link_libraries(test_plan_per_rank PRIVATE test_failwrite)
