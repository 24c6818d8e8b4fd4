# package.find_package: installs the build under test into WORK/prefix and
# builds examples/installed against it as a user would, with
# find_package(dcuda):
#  1. the install holds headers, both libraries and the package files;
#  2. CPU ranks only (-DDCUDA_RANK_CODE_CPU_ONLY=ON, no CUDA language): build,
#     run, check the ring's verdict; then the same from the install moved
#     to another prefix, by a project that finds neither MPI nor UCX (the
#     shared library needs neither);
#  3. with the CUDA backend: a project that does not enable CUDA is refused
#     at configure time, with the fix named;
#  4. with nvcc: the GPU form too (CUDA enabled, sm_90), linked against the
#     shared CUDA runtime; run on CPU ranks (no GPU needed).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
unset(ENV{MAKEFLAGS})
unset(ENV{MFLAGS})

set(prefix ${WORK}/prefix)
set(example ${SOURCE_DIR}/examples/installed)
file(REMOVE_RECURSE ${WORK})
pkg_install(${prefix})

# 1. What a user's project needs is there.
foreach(f IN ITEMS
    include/dcuda/dcuda_host.h include/dcuda/dcuda_rank.h include/dcuda/dcuda_version.h
    include/dcuda/shared/layout.h include/dcuda/impl/engine.h include/dcuda/impl/cuda/rank.cuh
    ${LIBDIR}/libdcuda.a ${LIBDIR}/libdcuda.so ${LIBDIR}/libdcuda.so.${VERSION}
    ${LIBDIR}/cmake/dcuda/dcuda-config.cmake ${LIBDIR}/cmake/dcuda/dcuda-config-version.cmake
    ${LIBDIR}/cmake/dcuda/dcuda-targets.cmake ${LIBDIR}/cmake/dcuda/DcudaRankCode.cmake
    ${LIBDIR}/pkgconfig/dcuda.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "FAILED: the install lacks ${f}")
  endif()
endforeach()

set(configure ${CMAKE_COMMAND} -G ${GENERATOR} -S ${example} -DCMAKE_PREFIX_PATH=${prefix}
              -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=Release)

# 2. CPU ranks only.
pkg_run("configure, CPU ranks only" text
        COMMAND ${configure} -B ${WORK}/cpu -DDCUDA_RANK_CODE_CPU_ONLY=ON)
pkg_run("build, CPU ranks only" text COMMAND ${CMAKE_COMMAND} --build ${WORK}/cpu --parallel 2)
pkg_run_ring("run, CPU ranks only" ${WORK}/cpu/ring)
set(moved ${WORK}/moved)
file(RENAME ${prefix} ${moved})
pkg_run("configure, moved install, no MPI or UCX found" text
        COMMAND ${CMAKE_COMMAND} -G ${GENERATOR} -S ${example} -B ${WORK}/moved-cpu
                -DCMAKE_PREFIX_PATH=${moved} -DCMAKE_C_COMPILER=${C_COMPILER}
                -DCMAKE_BUILD_TYPE=Release -DDCUDA_RANK_CODE_CPU_ONLY=ON
                -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON)
pkg_run("build, moved install" text COMMAND ${CMAKE_COMMAND} --build ${WORK}/moved-cpu --parallel 2)
pkg_run_ring("run, moved install" ${WORK}/moved-cpu/ring)
file(RENAME ${moved} ${prefix})

if(NOT HAVE_CUDA)
  message("PASSED package.find_package, CPU form only: "
          "the GPU form is not tested here (no CUDA backend)")
  return()
endif()

# 3. Rank code of a project without the CUDA language is refused.
file(WRITE ${WORK}/no_cuda/CMakeLists.txt
  "cmake_minimum_required(VERSION 3.20)\n"
  "project(no_cuda LANGUAGES C)\n"
  "find_package(dcuda REQUIRED)\n"
  "add_executable(ring ${example}/main.c)\n"
  "dcuda_add_rank_code(ring ${example}/ring_kernel.c)\n"
  "target_link_libraries(ring PRIVATE dcuda::dcuda)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -G ${GENERATOR} -S ${WORK}/no_cuda
                        -B ${WORK}/no_cuda/build -DCMAKE_PREFIX_PATH=${prefix}
                        -DCMAKE_C_COMPILER=${C_COMPILER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
message("---- configure without the CUDA language (must fail)\n${text}")
string(REGEX REPLACE "[ \n]+" " " flat "${text}")
if(rc EQUAL 0 OR NOT flat MATCHES "the CUDA language is not enabled here"
   OR NOT flat MATCHES "enable_language\\(CUDA\\)" OR NOT flat MATCHES "CPU_ONLY")
  message(FATAL_ERROR
          "FAILED: rank code without the CUDA language was not refused with the fix named")
endif()

# 4. The GPU form.
if(NOT NVCC)
  message("PASSED package.find_package, CPU form only: "
          "the GPU form is not tested here (no nvcc)")
  return()
endif()
pkg_run("configure, GPU form" text
        COMMAND ${configure} -B ${WORK}/gpu -DCMAKE_CUDA_COMPILER=${NVCC}
                -DCMAKE_CUDA_ARCHITECTURES=90)
pkg_run("build, GPU form" text COMMAND ${CMAKE_COMMAND} --build ${WORK}/gpu --parallel 2)
pkg_expect_symbol(${WORK}/gpu/ring dcuda_gpu_kernel_ptr_ring "DR")
pkg_expect_symbol(${WORK}/gpu/ring dcuda_cpu_kernel_ring "T")
# The kernels register with the shared CUDA runtime, the one libdcuda uses.
pkg_expect_symbol(${WORK}/gpu/ring __cudaRegisterFatBinary "U")
pkg_run_ring("run, GPU form built, on CPU ranks" ${WORK}/gpu/ring)
message("PASSED package.find_package")
