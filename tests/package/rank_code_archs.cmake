# package.rank_code_archs: dcuda_rank_code_check_archs (cmake/DcudaRankCode.cmake)
# on architecture lists against the GPUs a machine has, without a GPU:
# below 7.0 is an error naming CMAKE_CUDA_ARCHITECTURES, GPUs the list has
# no code of their own for draw a warning naming them, and lists that build
# for them (or all, native) pass.
#   cmake -DSOURCE_DIR=<tree> -P rank_code_archs.cmake
cmake_minimum_required(VERSION 3.20)
include(${SOURCE_DIR}/cmake/DcudaRankCode.cmake)

# expect(<archs> <native> <error regex or ""> <warning regex or "">)
function(expect archs native want_error want_warning)
  dcuda_rank_code_check_archs(app "${archs}" "${native}" error warning)
  foreach(kind error warning)
    set(got "${${kind}}")
    set(want "${want_${kind}}")
    if(want STREQUAL "" AND NOT got STREQUAL "")
      message(FATAL_ERROR "FAILED: archs '${archs}', GPUs '${native}': unexpected ${kind}: ${got}")
    elseif(NOT want STREQUAL "" AND NOT got MATCHES "${want}")
      message(FATAL_ERROR
              "FAILED: archs '${archs}', GPUs '${native}': ${kind} '${got}' does not match '${want}'")
    endif()
  endforeach()
endfunction()

expect("90" "90" "" "")
expect("90" "" "" "")
expect("75" "" "" "")
expect("80;90" "90;90" "" "")
expect("90-real" "90" "" "")
expect("90a" "90" "" "")
expect("native" "90" "" "")
expect("all-major" "90" "" "")
expect("75" "90" "" "built for CUDA architectures 75, not for the GPUs here \\(90\\).*CMAKE_CUDA_ARCHITECTURES to 90")
expect("90-virtual" "90" "" "not for the GPUs here \\(90\\)")
expect("80;86" "90;80" "" "not for the GPUs here \\(90\\)")
expect("60" "90" "below 7.0.*CMAKE_CUDA_ARCHITECTURES" "")
expect("90;52" "" "architecture 52 is below 7.0" "")
expect("sm_90" "" "'sm_90' is not one CMake knows" "")
message("PASSED package.rank_code_archs")
