# The library links neither MPI nor UCX (their plugins do): the NEEDED
# entries of libdcuda.so name none of libmpi, libucp, libucs, libuct.
#   cmake -DLIB=<libdcuda.so> -DREADELF=<readelf> -P links_check.cmake
execute_process(COMMAND ${READELF} -d ${LIB} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${LIB} failed")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${out}")
message(STATUS "libdcuda.so needs: ${needed}")
foreach(line IN LISTS needed)
  if(line MATCHES "libmpi|libucp|libucs|libuct|libopen-|libpmix")
    message(FATAL_ERROR "libdcuda.so links ${line}")
  endif()
endforeach()
if(NOT needed)
  message(FATAL_ERROR "readelf found no NEEDED entries in ${LIB}")
endif()
