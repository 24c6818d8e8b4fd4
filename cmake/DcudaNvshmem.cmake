# Finds NVSHMEM for the reference program that measures it
# (bench/ref_nvshmem.cu): DCUDA_NVSHMEM_HOME (a folder with include/ and
# lib/), else the nvidia-nvshmem Python package of python3. Nothing of
# dcuda itself needs NVSHMEM.
#   dcuda_find_nvshmem(<found-variable>) sets DCUDA_NVSHMEM_INCLUDE,
#   DCUDA_NVSHMEM_LIB, DCUDA_NVSHMEM_DEVICE_LIB and DCUDA_NVSHMEM_HOST_LIB.
set(DCUDA_NVSHMEM_HOME "" CACHE PATH
    "NVSHMEM's folder (include/, lib/) for the reference program dcuda_ref_nvshmem")

function(dcuda_nvshmem_home out)
  set(home "${DCUDA_NVSHMEM_HOME}")
  if(NOT home)
    find_program(DCUDA_PYTHON3 python3)
    if(DCUDA_PYTHON3)
      execute_process(
        COMMAND ${DCUDA_PYTHON3} -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])"
        OUTPUT_VARIABLE home OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        set(home "")
      endif()
    endif()
  endif()
  set(${out} "${home}" PARENT_SCOPE)
endfunction()

function(dcuda_find_nvshmem found)
  dcuda_nvshmem_home(home)
  set(ok FALSE)
  if(home)
    file(GLOB host_libs "${home}/lib/libnvshmem_host.so*")
    list(SORT host_libs)
    if(EXISTS "${home}/include/nvshmem.h" AND EXISTS "${home}/lib/libnvshmem_device.a" AND host_libs)
      list(GET host_libs 0 host_lib)
      set(DCUDA_NVSHMEM_INCLUDE "${home}/include" PARENT_SCOPE)
      set(DCUDA_NVSHMEM_LIB "${home}/lib" PARENT_SCOPE)
      set(DCUDA_NVSHMEM_DEVICE_LIB "${home}/lib/libnvshmem_device.a" PARENT_SCOPE)
      set(DCUDA_NVSHMEM_HOST_LIB "${host_lib}" PARENT_SCOPE)
      set(ok TRUE)
    endif()
  endif()
  if(ok)
    message(STATUS "dcuda: NVSHMEM for dcuda_ref_nvshmem: ${home}")
  else()
    message(STATUS "dcuda: no NVSHMEM (DCUDA_NVSHMEM_HOME, or pip's nvidia-nvshmem-cu12): "
                   "dcuda_ref_nvshmem is not built")
  endif()
  set(${found} ${ok} PARENT_SCOPE)
endfunction()
