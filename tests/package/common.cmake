# Helpers of the package tests' scripts (run with cmake -P).

# pkg_run(<what> <output variable> COMMAND <command>...): runs the command,
# prints its output, and stops the test when it fails.
function(pkg_run what out)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "COMMAND")
  execute_process(COMMAND ${arg_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE text
                  ERROR_VARIABLE text)
  message("---- ${what}\n${text}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAILED: ${what} (exit ${rc})")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# pkg_install(<prefix>): installs the build under test into prefix.
function(pkg_install prefix)
  file(REMOVE_RECURSE ${prefix})
  pkg_run("install into ${prefix}" text COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR}
          --prefix ${prefix})
endfunction()

# pkg_run_ring(<what> <executable>): runs the ring (CPU ranks, from the
# test's environment) and checks its verdict as well as its exit status.
function(pkg_run_ring what exe)
  pkg_run("${what}" text COMMAND ${exe})
  if(NOT text MATCHES "ring: 7 ranks on cpu: every rank got its left neighbour's number")
    message(FATAL_ERROR "FAILED: ${what}: the ring did not report 7 CPU ranks that passed")
  endif()
endfunction()

# pkg_expect_symbol(<executable> <symbol> <kind letters>): nm lists the symbol
# with one of the kinds (e.g. "D" for defined data, "U" for undefined).
function(pkg_expect_symbol exe symbol kinds)
  execute_process(COMMAND ${NM} ${exe} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT syms MATCHES " [${kinds}] ${symbol}(\n|@)")
    message(FATAL_ERROR "FAILED: ${exe}: nm does not list ${symbol} as [${kinds}]")
  endif()
endfunction()
