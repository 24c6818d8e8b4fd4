# package.pkg_config: the install used by hand, as docs/install.md says,
# moved to another prefix after its install, with pkg-config seeing only
# dcuda.pc (no ucx.pc or other package of the optional dependencies):
# pkg-config for the flags, the C compiler for host code and the CPU form,
# and, with nvcc, `nvcc -x cu` for the GPU form (linked by the C++ compiler,
# which brings the C++ runtime that nvcc's objects call). Each program runs
# on CPU ranks and checks the ring's verdict.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

if(NOT PKG_CONFIG)
  message("SKIP: no pkg-config on this machine")
  return()
endif()
set(prefix ${WORK}/prefix)
set(example ${SOURCE_DIR}/examples/installed)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
pkg_install(${WORK}/installed)
file(RENAME ${WORK}/installed ${prefix})
set(ENV{PKG_CONFIG_LIBDIR} ${prefix}/${LIBDIR}/pkgconfig)
unset(ENV{PKG_CONFIG_PATH})

pkg_run("pkg-config --modversion dcuda" modversion COMMAND ${PKG_CONFIG} --modversion dcuda)
string(STRIP "${modversion}" modversion)
if(NOT modversion STREQUAL VERSION)
  message(FATAL_ERROR "FAILED: pkg-config says version ${modversion}, the project ${VERSION}")
endif()
pkg_run("pkg-config --cflags dcuda" cflags COMMAND ${PKG_CONFIG} --cflags dcuda)
pkg_run("pkg-config --libs dcuda" libs COMMAND ${PKG_CONFIG} --libs dcuda)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
separate_arguments(libs UNIX_COMMAND "${libs}")
# The prefix comes from the file's own place, not from where the build
# meant to install.
list(FILTER cflags INCLUDE REGEX "^-I")
list(GET cflags 0 include_dir)
string(SUBSTRING "${include_dir}" 2 -1 include_dir)
file(REAL_PATH "${include_dir}" include_dir)
file(REAL_PATH "${prefix}/include" want)
if(NOT include_dir STREQUAL want)
  message(FATAL_ERROR "FAILED: pkg-config's -I is ${include_dir}, not the install's ${want}")
endif()
set(rpath -Wl,-rpath,${prefix}/${LIBDIR})

# CPU ranks only: one command, host code and rank code alike.
pkg_run("gcc, CPU ranks only" text
        COMMAND ${C_COMPILER} -std=c11 ${cflags} ${example}/main.c ${example}/ring_kernel.c
                ${libs} ${rpath} -o ${WORK}/ring_cpu)
pkg_run_ring("run, CPU ranks only" ${WORK}/ring_cpu)

if(NOT HAVE_CUDA OR NOT NVCC)
  message("PASSED package.pkg_config, CPU form only: "
          "the GPU form is not tested here (no nvcc or no CUDA backend)")
  return()
endif()
# Both forms: the CPU form by the C compiler, the GPU form by nvcc -x cu;
# no -rdc, no device library.
pkg_run("cc -c, CPU form" text
        COMMAND ${C_COMPILER} -std=c11 ${cflags} -c ${example}/ring_kernel.c
                -o ${WORK}/ring_kernel_cpu.o)
pkg_run("cc -c, host code" text
        COMMAND ${C_COMPILER} -std=c11 ${cflags} -c ${example}/main.c -o ${WORK}/main.o)
pkg_run("nvcc -x cu -c, GPU form" text
        COMMAND ${NVCC} -x cu -arch=sm_90 -std=c++17 ${cflags} -c ${example}/ring_kernel.c
                -o ${WORK}/ring_kernel_gpu.o)
pkg_run("c++, link" text
        COMMAND ${CXX_COMPILER} ${WORK}/main.o ${WORK}/ring_kernel_cpu.o
                ${WORK}/ring_kernel_gpu.o ${libs} ${rpath} -o ${WORK}/ring_gpu)
pkg_expect_symbol(${WORK}/ring_gpu dcuda_gpu_kernel_ptr_ring "DR")
pkg_expect_symbol(${WORK}/ring_gpu __cudaRegisterFatBinary "U")
pkg_run_ring("run, GPU form built, on CPU ranks" ${WORK}/ring_gpu)
message("PASSED package.pkg_config")
