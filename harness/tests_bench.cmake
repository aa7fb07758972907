# tests_bench.cmake -- tests of `adaload bench`, `compare` and `report` (included by tests.cmake).
#   test_compare     the compare subcommand on synthetic JSON files (its statistics:
#                    runfiles/test_run_stats.c)
#   test_compare_history  compare --history (the nightly's verdict) on synthetic results trees
#   bench_cli        the quick set through the real program (GPU parts skipped by name
#                    without a device), run-folder contents, usage errors, report
#   bench_quick_gpu  (label gpu) the quick set's GPU benchmarks only: exit 77 without a device
ada_test(test_compare test_compare.c adaload_cli)
ada_test(test_compare_history test_compare_history.c adaload_cli)

add_executable(test_bench_cli test_bench_cli.c)
target_compile_options(test_bench_cli PRIVATE ${ADALOAD_C_WARNINGS})
target_compile_definitions(test_bench_cli PRIVATE _POSIX_C_SOURCE=200809L
                           ADALOAD_EXE="$<TARGET_FILE:adaload>")
target_link_libraries(test_bench_cli PRIVATE PkgConfig::CRITERION PkgConfig::JANSSON m)
target_include_directories(test_bench_cli PRIVATE ${PROJECT_SOURCE_DIR}/common)
add_dependencies(test_bench_cli adaload)
add_test(NAME bench_cli COMMAND test_bench_cli)
# The quick run is a few seconds; under the sanitizers and on a loaded machine, more.
set_tests_properties(bench_cli PROPERTIES TIMEOUT 900)

# GPU benchmarks of the quick set only (the filter drops the CPU ones), into a fresh folder.
add_test(NAME bench_quick_gpu
         COMMAND ${CMAKE_COMMAND} -E env --unset=ADALOAD_UNUSED
                 sh -c "rm -rf \"$1\" && exec \"$0\" bench --set quick --filter '^(lnmod_fwd|copy)/' --out \"$1\""
                 $<TARGET_FILE:adaload> ${CMAKE_CURRENT_BINARY_DIR}/bench_quick_gpu_run)
set_tests_properties(bench_quick_gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900)

# ci/device_run.sh bench-bwd's plan without a GPU: --dry-run's steps, and that their filters
# select exactly issue 18's bar shapes in both directions with their copy ceilings.
add_test(NAME device_run_plan COMMAND ${PROJECT_SOURCE_DIR}/ci/test_device_run.sh $<TARGET_FILE:adaload>)
set_tests_properties(device_run_plan PROPERTIES TIMEOUT 300)
