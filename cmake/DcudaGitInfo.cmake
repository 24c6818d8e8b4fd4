# Run at every build (cmake -P): writes OUTPUT, a header naming the commit
# the sources were built from, only when it changed (so that only the
# library's build-information object is compiled again).
#   -DSOURCE_DIR=<tree> -DOUTPUT=<header> [-DGIT_EXECUTABLE=<git>] [-DDESCRIBE=<text>]
# Outside a git checkout (a release tarball) both names are "unknown";
# the configure step's cache entry DCUDA_GIT_DESCRIBE (a packager's record
# of what the tarball was) is passed as DESCRIBE.
set(commit "unknown")
set(describe "unknown")
if(DEFINED DESCRIBE AND NOT DESCRIBE STREQUAL "")
  set(describe "${DESCRIBE}")
endif()
if(GIT_EXECUTABLE AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse HEAD
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND out MATCHES "^[0-9a-f]+$")
    set(commit "${out}")
    # A tag when there is one (v0.1.0-12-g1a2b3c4), else the short hash;
    # -dirty when tracked files differ from the commit.
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" describe --tags --always --dirty
                    OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND NOT out STREQUAL "")
      set(describe "${out}")
    endif()
  endif()
endif()
set(text "/* Generated at build time by cmake/DcudaGitInfo.cmake. */\n"
         "#define DCUDA_BUILD_COMMIT \"${commit}\"\n"
         "#define DCUDA_BUILD_DESCRIBE \"${describe}\"\n")
string(JOIN "" text ${text})
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
