# tests_bench.cmake -- tests of `adaload bench`, `compare` and `report` (included by tests.cmake).
#   test_compare     Mann-Whitney U and the verdict rule, compare on synthetic JSON files
#   bench_cli        the quick set through the real program (GPU parts skipped by name
#                    without a device), run-folder contents, usage errors, report
#   test_bench_shim  the Google Benchmark C shim on fake benchmarks
#   bench_quick_gpu  (label gpu) the quick set's GPU benchmarks only: exit 77 without a device
add_executable(test_compare test_compare.c bench_stats.c bench_json.c cmd_compare.c cli.c)
target_include_directories(test_compare PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR})
target_compile_options(test_compare PRIVATE ${ADALOAD_C_WARNINGS})
target_compile_definitions(test_compare PRIVATE _POSIX_C_SOURCE=200809L)
target_link_libraries(test_compare PRIVATE ada_common PkgConfig::CRITERION PkgConfig::JANSSON m)
add_test(NAME test_compare COMMAND test_compare)

add_executable(test_bench_cli test_bench_cli.c)
target_compile_options(test_bench_cli PRIVATE ${ADALOAD_C_WARNINGS})
target_compile_definitions(test_bench_cli PRIVATE _POSIX_C_SOURCE=200809L
                           ADALOAD_EXE="$<TARGET_FILE:adaload>")
target_link_libraries(test_bench_cli PRIVATE PkgConfig::CRITERION PkgConfig::JANSSON m)
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

# The Google Benchmark shim on fake benchmarks (manual time, names, strict JSON, filter).
add_executable(test_bench_shim test_bench_shim.c bench_shim.cc)
target_include_directories(test_bench_shim PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(test_bench_shim PRIVATE
  $<$<COMPILE_LANGUAGE:C>:${ADALOAD_C_WARNINGS}> $<$<COMPILE_LANGUAGE:CXX>:${ADALOAD_CXX_WARNINGS}>)
target_compile_definitions(test_bench_shim PRIVATE _POSIX_C_SOURCE=200809L)
target_link_libraries(test_bench_shim PRIVATE PkgConfig::CRITERION PkgConfig::JANSSON benchmark::benchmark m)
add_test(NAME test_bench_shim COMMAND test_bench_shim)
