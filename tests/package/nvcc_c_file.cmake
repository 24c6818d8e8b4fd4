# package.nvcc_c_file: nvcc hands a .c file to the host compiler, so rank
# code compiled by nvcc without -x cu would get only its CPU form. dcuda_rank.h
# refuses that with a message; DCUDA_CPU_RANK_CODE asks for the CPU form on
# purpose and compiles.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

if(NOT NVCC)
  message("SKIP: no nvcc (not installed, or configured with DCUDA_WITH_CUDA=OFF)")
  return()
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(src ${SOURCE_DIR}/examples/installed/ring_kernel.c)

execute_process(COMMAND ${NVCC} -I${SOURCE_DIR}/include -c ${src} -o ${WORK}/refused.o
                RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
message("---- nvcc -c ring_kernel.c (no -x cu; must fail)\n${text}")
if(rc EQUAL 0)
  message(FATAL_ERROR "FAILED: nvcc built rank code from a .c file without -x cu")
endif()
if(NOT text MATCHES "nvcc is compiling this file as host code" OR NOT text MATCHES "-x cu")
  message(FATAL_ERROR "FAILED: nvcc failed, but not with dcuda's message")
endif()

pkg_run("nvcc -c -DDCUDA_CPU_RANK_CODE ring_kernel.c (the CPU form on purpose)" text
        COMMAND ${NVCC} -DDCUDA_CPU_RANK_CODE -I${SOURCE_DIR}/include -c ${src}
                -o ${WORK}/cpu_form.o)
pkg_expect_symbol(${WORK}/cpu_form.o dcuda_cpu_kernel_ring "T")
message("PASSED package.nvcc_c_file")
