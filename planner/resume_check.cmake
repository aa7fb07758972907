# resume_check.cmake -- CTest script: exact resume. For every assignment, under POLICY:
#   adaload plan --manifest M --policy P --assign A --plan-out whole
#   ... --steps N --plan-out prefix        ... --start-step N --plan-out rest
# and the step lines of prefix + rest must equal those of whole byte for byte, at N = 0, 1,
# a third, and the last step; each file ends with its own end record (first_step, steps),
# which is checked too.
#   cmake -DADALOAD=adaload -DMANIFEST=datasets/longtail.csv -DPOLICY=dual -DOUT=tmp -P resume_check.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
function(plan_to file)
  execute_process(COMMAND ${ADALOAD} plan --manifest ${MANIFEST} --policy ${POLICY} --assign ${as}
                          --no-baselines --window 8 ${ARGN} --plan-out ${file}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "adaload plan ${ARGN} (${as}) failed (exit ${rc}): ${err}")
  endif()
endfunction()
foreach(as random same-bucket sorted-window lpt kk)
  plan_to(${OUT}/whole.jsonl)
  file(STRINGS ${OUT}/whole.jsonl lines)
  list(LENGTH lines steps)
  math(EXPR steps "${steps} - 1")
  math(EXPR third "${steps} / 3")
  math(EXPR last "${steps} - 1")
  foreach(n 0 1 ${third} ${last} ${steps})
    plan_to(${OUT}/prefix.jsonl --steps ${n})
    plan_to(${OUT}/rest.jsonl --start-step ${n})
    file(READ ${OUT}/prefix.jsonl a)
    file(READ ${OUT}/rest.jsonl b)
    file(READ ${OUT}/whole.jsonl w)
    string(REGEX MATCH "{\"end\":true,\"first_step\":0,\"steps\":${n}," a_end "${a}")
    math(EXPR left "${steps} - ${n}")
    string(REGEX MATCH "{\"end\":true,\"first_step\":${n},\"steps\":${left}," b_end "${b}")
    if(NOT a_end OR NOT b_end)
      message(FATAL_ERROR "${POLICY}/${as}: the end records of the prefix (${n} steps) or the rest are wrong")
    endif()
    foreach(v a b w)
      string(REGEX REPLACE "{\"end\":[^\n]*\n$" "" ${v} "${${v}}")
    endforeach()
    if(NOT "${a}${b}" STREQUAL "${w}")
      message(FATAL_ERROR "${POLICY}/${as}: prefix of ${n} steps + the rest differ from the whole plan (${steps} steps)")
    endif()
  endforeach()
  message(STATUS "${POLICY}/${as}: ${steps} steps, resumed at 0, 1, ${third}, ${last}, ${steps}: identical")
endforeach()
file(REMOVE_RECURSE ${OUT})
