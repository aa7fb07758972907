# tests.cmake -- tests of the adaload command (the libraries' unit tests live beside them):
#   tests_verify.cmake  `adaload verify` and `adaload gate` end to end
#   tests_bench.cmake   `adaload bench`, `compare` and `report` end to end
#   tests_results.cmake `adaload results` and `adaload dashboard` (the browser test is
#                       dashboard/test_browser.py, registered in dashboard/)
#   cli_opts            the option parser (test_cli_opts.c)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_verify.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_bench.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/tests_results.cmake)
ada_test(cli_opts test_cli_opts.c adaload_cli)
