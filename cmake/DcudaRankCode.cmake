# dcuda_add_rank_code(<target> [CPU_ONLY] [FAST_COMPILE] [MAX_REGISTERS <n>] <file.c>...)
#
# Rank code is written once and compiled twice: as C11 for CPU ranks, and as
# CUDA for GPU ranks (through a generated .cu file that includes the C
# source). DCUDA_KERNEL gives the two forms different symbols;
# DCUDA_KERNEL_REF on the host finds whichever exist.
#
# The GPU form is built when dcuda has the CUDA backend and the calling
# directory has the CUDA language (project(... LANGUAGES C CUDA) or
# enable_language(CUDA) there or in a directory above it). When dcuda has
# the CUDA backend and the caller has no CUDA language, this stops with an
# error: the program would run on CPU ranks alone, even on a GPU. CPU_ONLY,
# or DCUDA_RANK_CODE_CPU_ONLY=ON for every call of a project, asks for the
# CPU form alone on purpose.
#
# MAX_REGISTERS caps the registers of each thread of the GPU form (nvcc
# --maxrregcount, 16..255). The ranks a GPU holds follow from what one
# rank's block needs, and the rank calls take registers: capping them fits
# more ranks (more warps) on each multiprocessor, at the price of spills in
# the rank calls (longer latencies). Worth it for rank code that computes
# much between its calls; measure both.
#
# FAST_COMPILE builds the GPU form with ptxas's fast compile
# (--Ofast-compile=min, CUDA 12.8 and newer): a rank kernel that calls every
# collective took ptxas 165 s, 20 s so (one CPU core), where the last
# percent of its speed matters less than minutes of build (the project's
# test drivers take it; the benchmarks and applications do not).
#
# Whether dcuda has the CUDA backend comes from the global property
# DCUDA_HAVE_CUDA, which dcuda's own build and its installed package set.
# Programs with the GPU form use the shared CUDA runtime, the one libdcuda
# links: its kernels must be registered with the runtime that launches them.
function(dcuda_add_rank_code target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "CPU_ONLY;FAST_COMPILE" "MAX_REGISTERS" "")
  if(DEFINED arg_MAX_REGISTERS AND NOT arg_MAX_REGISTERS MATCHES "^[0-9]+$")
    message(FATAL_ERROR "dcuda_add_rank_code(${target}): MAX_REGISTERS ${arg_MAX_REGISTERS} is not a number")
  endif()
  if(DEFINED arg_MAX_REGISTERS AND (arg_MAX_REGISTERS LESS 16 OR arg_MAX_REGISTERS GREATER 255))
    message(FATAL_ERROR "dcuda_add_rank_code(${target}): MAX_REGISTERS ${arg_MAX_REGISTERS} not in 16..255")
  endif()
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dcuda_add_rank_code(${target}): no rank code files given")
  endif()
  get_property(dcuda_cuda GLOBAL PROPERTY DCUDA_HAVE_CUDA)
  set(gpu OFF)
  if(dcuda_cuda AND NOT arg_CPU_ONLY AND NOT DCUDA_RANK_CODE_CPU_ONLY)
    if(NOT CMAKE_CUDA_COMPILER_LOADED)
      dcuda_rank_code_no_cuda_(${target})
    endif()
    set(gpu ON)
  endif()
  foreach(src IN LISTS arg_UNPARSED_ARGUMENTS)
    get_filename_component(abs ${src} ABSOLUTE)
    target_sources(${target} PRIVATE ${abs})
    if(gpu)
      get_filename_component(name ${src} NAME)
      set(gen ${CMAKE_CURRENT_BINARY_DIR}/gpu/${target}/${name}.cu)
      file(GENERATE OUTPUT ${gen} CONTENT "/* GPU form of ${name} (generated). */\n#include \"${abs}\"\n")
      target_sources(${target} PRIVATE ${gen})
      set(options)
      if(DEFINED arg_MAX_REGISTERS)
        list(APPEND options "--maxrregcount=${arg_MAX_REGISTERS}")
      endif()
      if(arg_FAST_COMPILE AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.8)
        list(APPEND options "--Ofast-compile=min")
      endif()
      if(options)
        set_source_files_properties(${gen} PROPERTIES COMPILE_OPTIONS "${options}")
      endif()
    endif()
  endforeach()
  if(gpu)
    set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
    dcuda_rank_code_archs_(${target})
  endif()
endfunction()

# The GPU architectures of a target's rank code, checked: dcuda's rank
# engine needs compute capability 7.0 or newer (it was tested on 9.0,
# Hopper). An older one is an error; GPUs here that the list does not build
# for (CMake's CMAKE_CUDA_ARCHITECTURES_NATIVE) draw a warning; and once a
# project, a status line says what rank code is built for, so that CMake's
# default (sm_75 with CUDA 13) is never taken silently.
function(dcuda_rank_code_archs_ target)
  get_target_property(archs ${target} CUDA_ARCHITECTURES)
  if(NOT archs)
    set(archs "${CMAKE_CUDA_ARCHITECTURES}")
  endif()
  dcuda_rank_code_check_archs(${target} "${archs}" "${CMAKE_CUDA_ARCHITECTURES_NATIVE}" error
                              warning)
  if(error)
    message(FATAL_ERROR "${error}")
  endif()
  if(warning)
    message(WARNING "${warning}")
  endif()
  get_property(said GLOBAL PROPERTY DCUDA_RANK_CODE_ARCHS_SAID)
  if(NOT said)
    set_property(GLOBAL PROPERTY DCUDA_RANK_CODE_ARCHS_SAID ON)
    string(REPLACE ";" " " shown "${archs}")
    message(STATUS "dcuda: GPU rank code built for CUDA architectures ${shown} "
                   "(CMAKE_CUDA_ARCHITECTURES; dcuda needs 7.0 or newer, tested on 90)")
  endif()
endfunction()

# dcuda_rank_code_check_archs(<target> <archs> <native> <error var> <warning var>):
# the error (an architecture below 7.0) or warning (GPUs in <native> that
# <archs> has no code of their own for) about a list of CUDA architectures,
# or empty strings. <archs> as CMAKE_CUDA_ARCHITECTURES takes it: numbers
# with -real, -virtual or a, or all, all-major, native.
function(dcuda_rank_code_check_archs target archs native error_var warning_var)
  set(error "")
  set(warning "")
  set(numbers "")
  set(every OFF) # all, all-major, native: code for every GPU here
  foreach(a IN LISTS archs)
    if(a MATCHES "^(all|all-major|native)$")
      set(every ON)
      break()
    endif()
    if(NOT a MATCHES "^([0-9]+)")
      set(error "dcuda_add_rank_code(${target}): CUDA architecture '${a}' is not one CMake knows")
      break()
    endif()
    set(number ${CMAKE_MATCH_1})
    if(number LESS 70)
      set(error "dcuda_add_rank_code(${target}): CUDA architecture ${a} is below 7.0, the oldest "
                "dcuda's rank engine runs on (it was tested on 90, Hopper). Set "
                "CMAKE_CUDA_ARCHITECTURES (or the target's CUDA_ARCHITECTURES) to the GPUs' own, "
                "e.g. 90, or native.")
      break()
    endif()
    if(NOT a MATCHES "-virtual$") # PTX alone: no code of its own for a GPU
      list(APPEND numbers ${number})
    endif()
  endforeach()
  if(NOT error AND NOT every)
    set(missing "")
    foreach(gpu IN LISTS native)
      string(REGEX MATCH "^[0-9]+" gpu "${gpu}")
      if(gpu AND NOT gpu IN_LIST numbers)
        list(APPEND missing ${gpu})
      endif()
    endforeach()
    if(missing)
      string(REPLACE ";" " " missing "${missing}")
      string(REPLACE ";" " " shown "${archs}")
      set(warning "dcuda_add_rank_code(${target}): rank code is built for CUDA architectures "
                  "${shown}, not for the GPUs here (${missing}): they would run it compiled at "
                  "load time from PTX, if at all. Set CMAKE_CUDA_ARCHITECTURES to ${missing} "
                  "(or native).")
    endif()
  endif()
  string(JOIN "" error ${error})
  string(JOIN "" warning ${warning})
  set(${error_var} "${error}" PARENT_SCOPE)
  set(${warning_var} "${warning}" PARENT_SCOPE)
endfunction()

# The error for a caller without the CUDA language, naming the fix.
function(dcuda_rank_code_no_cuda_ target)
  get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(where "")
  if(CUDA IN_LIST langs)
    set(where " CUDA is enabled elsewhere in the build, but not in this directory or one above it.")
  endif()
  message(FATAL_ERROR
    "dcuda_add_rank_code(${target}): dcuda was built with the CUDA backend, but the CUDA "
    "language is not enabled here, so the rank code would get only its CPU form and run on "
    "CPU ranks even on a GPU.${where} Enable CUDA in this project: "
    "project(<name> LANGUAGES C CUDA), or enable_language(CUDA) in its top directory "
    "(and set CMAKE_CUDA_ARCHITECTURES, e.g. 90 for Hopper). To build CPU ranks only, "
    "call dcuda_add_rank_code(${target} CPU_ONLY <files>) or configure with "
    "-DDCUDA_RANK_CODE_CPU_ONLY=ON.")
endfunction()
