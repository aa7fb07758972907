# tests.cmake -- tests of the adaload command, one file per area (included when present).
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_verify.cmake OPTIONAL)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_bench.cmake OPTIONAL)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_cli.cmake OPTIONAL)
