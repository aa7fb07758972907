# calibrate_check.cmake -- CTest script: `adaload calibrate`. Where there is no PyTorch or no
# CUDA device it must exit 77 with "nothing can run here" and write nothing; where it runs,
# the profile it writes must be accepted by `adaload plan --profile`.
#   cmake -DADALOAD=adaload -DTINY=datasets/tiny.csv -DOUT=tmpdir -P calibrate_check.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${ADALOAD} calibrate --model wan2.1-1.3b --points 1x1560,1x3600,1x14040,2x3600
                        --repetitions 2 --out ${OUT}/profile.csv
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 77)
  if(NOT err MATCHES "adaload calibrate: nothing can run here: .*nothing written")
    message(FATAL_ERROR "exit 77 without the message: ${err}")
  endif()
  file(GLOB left ${OUT}/*)
  if(left)
    message(FATAL_ERROR "exit 77 but files were written: ${left}")
  endif()
  message(STATUS "no PyTorch/GPU here: exit 77, nothing written (${err})")
elseif(rc EQUAL 0)
  execute_process(COMMAND ${ADALOAD} plan --manifest ${TINY} --model wan2.1-1.3b --profile ${OUT}/profile.csv
                  RESULT_VARIABLE prc OUTPUT_VARIABLE pout ERROR_VARIABLE perr)
  if(NOT prc EQUAL 0 OR NOT pout MATCHES "measured profile")
    message(FATAL_ERROR "the calibrated profile is not accepted (exit ${prc}): ${perr}")
  endif()
else()
  message(FATAL_ERROR "adaload calibrate exited ${rc}: ${err}")
endif()
file(REMOVE_RECURSE ${OUT})
