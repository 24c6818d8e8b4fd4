# dcuda_bench's command line as a user meets it (ctest entry bench.cli):
# --help answers and exits 0; unknown options and missing values are named
# on stderr with exit status 2 and nothing run; a short run on CPU ranks
# with -f -r 3 --csv FILE (a space before the file) writes every row's
# statistics: min <= p50 <= max, min <= value <= max, p99 = max (3 runs:
# the nearest rank), 3 runs, and value (the average) = (min + p50 + max)
# / 3, in the table and in the CSV alike. Then nccl-tests' spellings
# (-b -e -n -w, sizes with K) and the multi-pair, message-rate rows
# between two forked processes: --pairs 2,all --rate gives bandwidth rows
# of 2 and of every rank a side, none of the default counts, and beside
# each a rate row whose messages a second times its bytes is its bandwidth.
#   cmake -DBENCH=<dcuda_bench> -DCSV=<file> -P bench_cli.cmake
cmake_policy(SET CMP0054 NEW) # "rate" in if() is a string, never a variable
function(fail what)
  message(FATAL_ERROR "FAIL bench.cli: ${what}")
endfunction()

execute_process(COMMAND ${BENCH} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "usage: dcuda_bench" OR NOT out MATCHES "-f ")
  fail("--help: exit ${rc}: ${out}${err}")
endif()
foreach(bad "-d;cuda" "--bogus" "--csv" "-r;0" "-r;x" "-i" "-m;64:8" "-b;8K;-e;4K" "-e;8M"
            "-n;x" "--pairs;1,,2" "--pairs=0" "--pairs;1,2,")
  execute_process(COMMAND ${BENCH} ${bad} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR err STREQUAL "")
    fail("'${bad}': exit ${rc} (want 2), stdout '${out}', stderr '${err}'")
  endif()
endforeach()

# Six decimals to an integer of millionths (no floating point in CMake).
function(millionths text out)
  if(NOT text MATCHES "^([0-9]+)\\.([0-9]+)$")
    fail("not a number with decimals: '${text}'")
  endif()
  set(whole "${CMAKE_MATCH_1}")
  set(frac "${CMAKE_MATCH_2}000000")
  string(SUBSTRING "${frac}" 0 6 frac)
  # "1" before the six digits keeps their leading zeros from reading as octal.
  math(EXPR v "${whole} * 1000000 + 1${frac} - 1000000")
  set(${out} ${v} PARENT_SCOPE)
endfunction()

# A row's value (the average), min, max, p50, p99 (millionths) and runs;
# ARGN: how far 3 x value may be from the sum of the three (rounding).
function(check_stats where value min max p50 p99 runs)
  if(NOT runs EQUAL 3)
    fail("${where}: ${runs} runs, want 3")
  endif()
  if(min GREATER p50 OR p50 GREATER max OR min GREATER value OR value GREATER max)
    fail("${where}: not min <= p50, value <= max: ${min} ${p50} ${value} ${max}")
  endif()
  if(NOT p99 EQUAL max)
    fail("${where}: p99 ${p99} is not the largest of 3 runs (${max})")
  endif()
  math(EXPR diff "3 * ${value} - (${min} + ${p50} + ${max})")
  if(diff GREATER ${ARGN} OR diff LESS -${ARGN})
    fail("${where}: the average ${value} is not (min + p50 + max) / 3 (${min} ${p50} ${max})")
  endif()
endfunction()

file(REMOVE ${CSV})
execute_process(COMMAND ${BENCH} --quick --latency -m 4:8 -i 200 -x 20 -f -r 3 --csv ${CSV}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  fail("the run: exit ${rc}: ${err}")
endif()
if(NOT EXISTS ${CSV})
  fail("--csv ${CSV} (with a space) wrote nothing")
endif()
file(STRINGS ${CSV} lines)
list(POP_FRONT lines head)
if(NOT head STREQUAL "kind,what,ranks,bytes,unit,value,min,max,p50,p99,runs")
  fail("CSV head '${head}'")
endif()
list(LENGTH lines rows)
if(rows LESS 8)
  fail("${rows} CSV rows")
endif()
# One row's fields (a list): value .. p99 in fields 5 to 9, runs in 10.
function(check_row where fields tolerance)
  list(GET fields 1 what)
  set(n "")
  foreach(i 5 6 7 8 9)
    list(GET fields ${i} x)
    millionths(${x} v)
    list(APPEND n ${v})
  endforeach()
  list(GET fields 10 runs)
  check_stats("${where} ${what}" ${n} ${runs} ${tolerance})
endfunction()

foreach(line IN LISTS lines)
  string(REPLACE "," ";" f "${line}")
  check_row(CSV "${f}" 3)
endforeach()
# The table: the same rows, three decimals.
string(REGEX MATCHALL "\n[a-z]+ +[a-zA-Z0-9_]+ +[0-9]+ +[0-9]+ +[a-z_]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+"
       table "${out}")
list(LENGTH table trows)
if(NOT trows EQUAL rows)
  fail("${trows} table rows, ${rows} CSV rows:\n${out}")
endif()
foreach(line IN LISTS table)
  string(STRIP "${line}" line)
  string(REGEX REPLACE " +" ";" f "${line}")
  check_row(table "${f}" 3000)
endforeach()

set(PAIRS_CSV "${CSV}.pairs")
file(REMOVE ${PAIRS_CSV})
execute_process(COMMAND ${CMAKE_COMMAND} -E env DCUDA_PROCESSES=2
                        ${BENCH} --peer --quick -b 4 -e 8 -n 150 -w 15 --pairs 2,all --rate
                        --csv=${PAIRS_CSV}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${PAIRS_CSV})
  fail("the multi-pair run: exit ${rc}: ${err}")
endif()
if(NOT out MATCHES "150 rounds \\(15 warm-up\\) a latency case, sizes 4\\.\\.8")
  fail("-n 150 -w 15 -b 4 -e 8 not in the head:\n${out}")
endif()
file(STRINGS ${PAIRS_CSV} lines)
list(POP_FRONT lines head)
set(sizes "")
set(named "")
set(checked 0)
foreach(line IN LISTS lines)
  string(REPLACE "," ";" f "${line}")
  list(GET f 0 kind)
  list(GET f 1 what)
  list(GET f 3 bytes)
  list(GET f 5 value)
  if(what STREQUAL "peer_notified_put")
    list(APPEND sizes ${bytes})
  endif()
  if(kind STREQUAL "bandwidth")
    list(APPEND named ${what})
    millionths(${value} gbps_${what}_${bytes})
  elseif(kind STREQUAL "rate")
    millionths(${value} msgs)
    if(NOT DEFINED gbps_${what}_${bytes})
      fail("a rate row without its bandwidth row: ${line}")
    endif()
    # GB/s = Mmsg/s x bytes / 1000, each side rounded to six decimals.
    math(EXPR diff "1000 * ${gbps_${what}_${bytes}} - ${msgs} * ${bytes}")
    math(EXPR slack "500 + ${bytes}")
    if(diff GREATER slack OR diff LESS -${slack})
      fail("${what} ${bytes} B: ${value} Mmsg/s is not its bandwidth / size")
    endif()
    math(EXPR checked "${checked} + 1")
  endif()
endforeach()
if(NOT sizes STREQUAL "4;8")
  fail("latency sizes '${sizes}', want 4;8 (-b 4 -e 8)")
endif()
list(REMOVE_DUPLICATES named)
if(NOT named STREQUAL "peer_put_2_ranks;peer_put_all_ranks")
  fail("multi-pair rows '${named}', want peer_put_2_ranks;peer_put_all_ranks")
endif()
if(checked LESS 10)
  fail("${checked} rate rows checked")
endif()
message("PASSED bench.cli: ${rows} rows with their statistics; ${checked} rate rows")
