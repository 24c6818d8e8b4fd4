# package.add_subdirectory: dcuda as part of another project's build
# (add_subdirectory), with the ring of examples/installed as that project's
# program, as the README's ring once ran: built from a parent without the
# CUDA language, the rank code got its CPU form alone, silently.
#  1. with dcuda's CUDA backend, a parent without the CUDA language is
#     refused at configure time, with the fix named;
#  2. the same parent with -DDCUDA_RANK_CODE_CPU_ONLY=ON builds CPU ranks:
#     run and checked;
#  3. with nvcc, a parent with LANGUAGES C CUDA gets the GPU form too (run on
#     CPU ranks: no GPU needed).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
unset(ENV{MAKEFLAGS})
unset(ENV{MFLAGS})

set(example ${SOURCE_DIR}/examples/installed)
file(REMOVE_RECURSE ${WORK})

# pkg_parent(<dir> <languages>): a project that adds dcuda and builds the ring.
function(pkg_parent dir languages)
  file(WRITE ${dir}/CMakeLists.txt
    "cmake_minimum_required(VERSION 3.20)\n"
    "project(parent LANGUAGES ${languages})\n"
    "add_subdirectory(${SOURCE_DIR} dcuda)\n"
    "add_executable(ring ${example}/main.c)\n"
    "dcuda_add_rank_code(ring ${example}/ring_kernel.c)\n"
    "target_link_libraries(ring PRIVATE dcuda::dcuda)\n")
endfunction()
# dcuda inside the parent has the CUDA backend exactly when the build under
# test has it.
set(configure ${CMAKE_COMMAND} -G ${GENERATOR} -DCMAKE_C_COMPILER=${C_COMPILER}
              -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release
              -DDCUDA_WITH_CUDA=${HAVE_CUDA})

pkg_parent(${WORK}/c "C")
if(HAVE_CUDA)
  # 1. Refused without the CUDA language.
  execute_process(COMMAND ${configure} -S ${WORK}/c -B ${WORK}/c/refused
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  message("---- configure a parent without the CUDA language (must fail)\n${text}")
  string(REGEX REPLACE "[ \n]+" " " flat "${text}")
  if(rc EQUAL 0 OR NOT flat MATCHES "the CUDA language is not enabled here"
     OR NOT flat MATCHES "enable_language\\(CUDA\\)")
    message(FATAL_ERROR "FAILED: a parent without the CUDA language was not refused")
  endif()
endif()

# 2. CPU ranks only.
pkg_run("configure a parent, CPU ranks only" text
        COMMAND ${configure} -S ${WORK}/c -B ${WORK}/c/cpu -DDCUDA_RANK_CODE_CPU_ONLY=ON)
pkg_run("build, CPU ranks only" text
        COMMAND ${CMAKE_COMMAND} --build ${WORK}/c/cpu --target ring --parallel 2)
pkg_run_ring("run, CPU ranks only" ${WORK}/c/cpu/ring)

if(NOT HAVE_CUDA OR NOT NVCC)
  message("PASSED package.add_subdirectory, CPU form only: "
          "the GPU form is not tested here (no nvcc or no CUDA backend)")
  return()
endif()
# 3. The GPU form.
pkg_parent(${WORK}/cuda "C CUDA")
pkg_run("configure a parent with CUDA" text
        COMMAND ${configure} -S ${WORK}/cuda -B ${WORK}/cuda/build
                -DCMAKE_CUDA_COMPILER=${NVCC} -DCMAKE_CUDA_ARCHITECTURES=90)
pkg_run("build, GPU form" text
        COMMAND ${CMAKE_COMMAND} --build ${WORK}/cuda/build --target ring --parallel 2)
pkg_expect_symbol(${WORK}/cuda/build/ring dcuda_gpu_kernel_ptr_ring "DR")
pkg_expect_symbol(${WORK}/cuda/build/ring __cudaRegisterFatBinary "U")
pkg_run_ring("run, GPU form built, on CPU ranks" ${WORK}/cuda/build/ring)
message("PASSED package.add_subdirectory")
