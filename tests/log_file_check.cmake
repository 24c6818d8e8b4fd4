# LOG_FILE and LOG_LEVEL: a run that deadlocks on purpose, its messages
# at level info into a log file of its own ("%p": the process's index).
# The file must hold the info line that names the version, the deadlock's
# report and the run's error; stderr must still carry the error (errors
# are never only in the file).
#   cmake -DPROGRAM=<dcuda_test_deadlock> -DDIR=<scratch dir> -P log_file_check.cmake
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
set(ENV{DCUDA_BACKEND} cpu)
set(ENV{DCUDA_RANKS} 2)
set(ENV{DCUDA_LOG_LEVEL} info)
set(ENV{DCUDA_LOG_FILE} ${DIR}/dcuda.%p.log)
execute_process(COMMAND ${PROGRAM} wrong_tag RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT EXISTS ${DIR}/dcuda.0.log)
  message(FATAL_ERROR "no log file ${DIR}/dcuda.0.log (rc ${rc}): ${out}${err}")
endif()
file(READ ${DIR}/dcuda.0.log log)
foreach(want IN ITEMS "dcuda: dcuda [0-9]+\\.[0-9]+\\.[0-9]+" "dcuda: deadlock:   rank 0 waits"
                      "dcuda: error: deadlock: every rank")
  if(NOT log MATCHES "${want}")
    message(FATAL_ERROR "the log file lacks '${want}':\n${log}")
  endif()
endforeach()
if(NOT "${out}${err}" MATCHES "dcuda: error: deadlock: every rank")
  message(FATAL_ERROR "the error did not reach stderr too:\n${out}${err}")
endif()
message(STATUS "log file: ${log}")
