# tests.cmake -- the Python package's tests, run with the build's libadaload. CI has no
# PyTorch: tests that need it exit 77 and CTest reports them as skipped, by name
# (python_torch_cpu and python_torch_res_cpu without PyTorch; python_torch_gpu and
# python_torch_res_gpu without PyTorch, a GPU or the kernels). python_res_binding (the fused
# residual op's ctypes binding, issue 22) needs neither.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(WARNING "adaload: no python3 found -- the Python package's tests are not registered")
  return()
endif()
if(ADALOAD_HAVE_CUDA)
  set(ADALOAD_EXPECT_CUDA 1)
else()
  set(ADALOAD_EXPECT_CUDA 0)
endif()
set(ADALOAD_PY_ENV
  "PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}:${CMAKE_CURRENT_SOURCE_DIR}/tests"
  "ADALOAD_LIB=$<TARGET_FILE:adaload_shared>"
  "ADALOAD_BIN=$<TARGET_FILE:adaload>"
  "ADALOAD_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
  "ADALOAD_EXPECT_CUDA=${ADALOAD_EXPECT_CUDA}"
  "PYTHONDONTWRITEBYTECODE=1")
foreach(t sampler per_rank plan_fast plan_trainer readme_loop loader res_binding torch_cpu torch_res_cpu
          torch_gpu torch_res_gpu)
  add_test(NAME python_${t}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/test_${t}.py)
  set_tests_properties(python_${t} PROPERTIES ENVIRONMENT "${ADALOAD_PY_ENV}"
                       SKIP_RETURN_CODE 77 LABELS python)
endforeach()
set_tests_properties(python_torch_gpu python_torch_res_gpu PROPERTIES LABELS "python;gpu")

# The end-to-end harness's torch-free parts (harness/e2e/test_e2e.py): it needs the same
# interpreter and the adaload program, so it is registered here with the package's tests.
add_test(NAME e2e_unit
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/harness/e2e/test_e2e.py)
set_tests_properties(e2e_unit PROPERTIES ENVIRONMENT "${ADALOAD_PY_ENV}" LABELS python)
# The one-GPU experiment with replayed ranks (harness/e2e/replay.py), on its stand-in device.
add_test(NAME e2e_replay
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/harness/e2e/test_replay.py)
set_tests_properties(e2e_replay PROPERTIES ENVIRONMENT "${ADALOAD_PY_ENV}" LABELS python)
# The two-GPU experiment with real DDP (harness/e2e/ddp.py, issue 23): its torch-free parts,
# and its PyTorch path on the CPU (gloo DDP on 2 processes against the one-process replay),
# which exits 77 -- skipped by name -- where PyTorch is missing (CI).
add_test(NAME e2e_ddp
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/harness/e2e/test_ddp.py)
set_tests_properties(e2e_ddp PROPERTIES ENVIRONMENT "${ADALOAD_PY_ENV}" LABELS python)
add_test(NAME e2e_ddp_torch
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/harness/e2e/test_ddp_torch.py)
set_tests_properties(e2e_ddp_torch PROPERTIES ENVIRONMENT "${ADALOAD_PY_ENV}"
                     SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS python)
