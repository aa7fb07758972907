# tests_plugin.cmake -- `--plugin` end to end on the CPU (included by tests.cmake; the
# loader's unit tests are plugin/test_plugin.c):
#   plugin_cli   listing, every refusal (exit 2, one line, nothing written), a crashing
#                plug-in reported by the supervising process, no GPU = 77; with CUDA the
#                example plug-in and its planted-bug build load and list
set(_plugdir "")
if(ADALOAD_HAVE_CUDA)
  set(_plugdir ${ADALOAD_PLUGIN_DIR})
endif()
add_test(NAME plugin_cli
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_plugin_cli.sh $<TARGET_FILE:adaload> ${ADALOAD_STUB_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/plugin_cli ${_plugdir})
add_custom_target(plugin_cli_deps ALL DEPENDS ${ADALOAD_STUB_TARGETS})
if(ADALOAD_HAVE_CUDA)
  add_dependencies(plugin_cli_deps adaload_example_rowblock adaload_example_rowblock_noeps)
endif()
