# tests_results.cmake -- `adaload results` and `adaload dashboard`:
#   results_index      the committed results/index.jsonl agrees with the committed run folders
#   results_cli        the subcommands on a synthetic tree (catalog/test_results_cli.cmake)
add_test(NAME results_index COMMAND adaload results check)
add_test(NAME results_cli
         COMMAND ${CMAKE_COMMAND} -DADALOAD=$<TARGET_FILE:adaload>
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/results_cli
                 -P ${PROJECT_SOURCE_DIR}/catalog/test_results_cli.cmake)
