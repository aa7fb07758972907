# source_hash.cmake -- adaload_kernel_source_hash(DIR OUT_HASH OUT_FILES)
#
# The identity of the kernel sources: SHA-256 over lines "<file name> <sha256 of contents>\n"
# for every *.cu, *.cuh, *.h, *.c and *.cmake file directly in DIR (and CMakeLists.txt),
# sorted by name. Any edit to a file that decides kernel results changes it. The same
# function runs at configure time (embedded into the build) and in the gate's own test,
# which hashes an edited copy of the sources. Run as a script to print a hash:
#   cmake -DDIR=kernels -P kernels/source_hash.cmake
function(adaload_kernel_source_hash dir out_hash out_files)
  file(GLOB files RELATIVE ${dir} ${dir}/*.cu ${dir}/*.cuh ${dir}/*.h ${dir}/*.c
       ${dir}/*.cmake ${dir}/CMakeLists.txt)
  list(FILTER files EXCLUDE REGEX "^test_")
  list(SORT files)
  set(lines "")
  set(abs "")
  foreach(f IN LISTS files)
    file(SHA256 ${dir}/${f} h)
    string(APPEND lines "${f} ${h}\n")
    list(APPEND abs ${dir}/${f})
  endforeach()
  string(SHA256 total "${lines}")
  set(${out_hash} ${total} PARENT_SCOPE)
  set(${out_files} ${abs} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DIR)
  adaload_kernel_source_hash(${DIR} h f)
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${h}")
endif()
