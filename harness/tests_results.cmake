# tests_results.cmake -- `adaload results` and `adaload dashboard`:
#   results_index      the committed results/index.jsonl agrees with the committed run folders
#   results_cli        the subcommands on a synthetic tree (catalog/test_results_cli.cmake)
#   nightly_plan, nightly_nogpu  ci/nightly.sh without a GPU (ci/test_nightly.cmake)
#   nightly_kill       its planner step killed mid-plan (ci/test_nightly_kill.sh)
#   device_tree        ci/device_tree.sh lean/restore/status in a throw-away repository
#                      (ci/test_device_tree.sh; git only, no build)
#   land_patch         ci/land_patch.sh prepare's refusals and its commit in a throw-away
#                      repository (ci/test_land_patch.sh; git and cmake only)
#   pack_runs          ci/pack_runs.sh's packs of a device call's new run folders
#                      (ci/test_pack_runs.sh; tar only)
#   ptx_entries        ci/ptx_entries.py's kernel-by-kernel PTX verdicts (ptx_same.sh
#                      --kernels) on hand-written PTX (ci/test_ptx_entries.sh; python3, c++filt)
#   kernel_barriers    ci/kernel_barriers.sh's verdicts over a stand-in cuobjdump
#                      (ci/test_kernel_barriers.sh; no CUDA toolkit)
add_test(NAME results_index COMMAND adaload results check)
add_test(NAME results_cli
         COMMAND ${CMAKE_COMMAND} -DADALOAD=$<TARGET_FILE:adaload>
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/results_cli
                 -P ${PROJECT_SOURCE_DIR}/catalog/test_results_cli.cmake)
# ci/nightly.sh's logic without a GPU: the plan (--dry-run) and the no-GPU exit (77).
foreach(mode plan nogpu)
  add_test(NAME nightly_${mode}
           COMMAND ${CMAKE_COMMAND} -DNIGHTLY=${PROJECT_SOURCE_DIR}/ci/nightly.sh -DBUILD=${PROJECT_BINARY_DIR}
                   -DRESULTS=${PROJECT_SOURCE_DIR}/results -DMODE=${mode}
                   -P ${PROJECT_SOURCE_DIR}/ci/test_nightly.cmake)
endforeach()
set_tests_properties(nightly_nogpu PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: a GPU is here")
# The planner step killed with SIGKILL mid-plan leaves results/ consistent (ci/test_nightly_kill.sh).
add_test(NAME nightly_kill
         COMMAND bash ${PROJECT_SOURCE_DIR}/ci/test_nightly_kill.sh $<TARGET_FILE:adaload>
                 ${CMAKE_CURRENT_BINARY_DIR}/nightly_kill)
# ci/device_tree.sh: results/ untracked for a device call and given back exactly (ci/test_device_tree.sh).
add_test(NAME device_tree
         COMMAND bash ${PROJECT_SOURCE_DIR}/ci/test_device_tree.sh ${CMAKE_CURRENT_BINARY_DIR}/device_tree)
# ci/land_patch.sh: a kernel patch committed only when its sources hash as named (ci/test_land_patch.sh).
add_test(NAME land_patch
         COMMAND bash ${PROJECT_SOURCE_DIR}/ci/test_land_patch.sh ${CMAKE_CURRENT_BINARY_DIR}/land_patch)
# ci/pack_runs.sh: a device call's new run folders packed as each step ends, a failed pack
# leaving the last one whole (ci/test_pack_runs.sh; tar only).
add_test(NAME pack_runs
         COMMAND bash ${PROJECT_SOURCE_DIR}/ci/test_pack_runs.sh ${CMAKE_CURRENT_BINARY_DIR}/pack_runs)
# ci/ptx_entries.py: which kernels of a file a change moved, renumbering aside (ci/test_ptx_entries.sh).
add_test(NAME ptx_entries
         COMMAND bash ${PROJECT_SOURCE_DIR}/ci/test_ptx_entries.sh ${CMAKE_CURRENT_BINARY_DIR}/ptx_entries)
# ci/kernel_barriers.sh: a kernel reserving barriers the allow file does not name is caught.
add_test(NAME kernel_barriers
         COMMAND bash ${PROJECT_SOURCE_DIR}/ci/test_kernel_barriers.sh ${CMAKE_CURRENT_BINARY_DIR}/kernel_barriers)
