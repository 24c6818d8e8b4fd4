/*
 * dcuda version: the numbers of the headers in hand, and dcuda_version() for
 * those of the library a program runs with. This header is the one place the
 * version is written; CMake reads it for the project, the package and the
 * library's SONAME. Self-contained: compiles as C11, C++ and with nvcc.
 */
#ifndef DCUDA_VERSION_H
#define DCUDA_VERSION_H

#include "dcuda_status.h"

#define DCUDA_VERSION_MAJOR 0
#define DCUDA_VERSION_MINOR 1
#define DCUDA_VERSION_PATCH 0

/* One number that grows with every release: major * 10000 + minor * 100 +
 * patch (minor and patch stay below 100), so that code can test
 * `#if DCUDA_VERSION >= DCUDA_VERSION_NUMBER(0, 2, 0)`. */
#define DCUDA_VERSION_NUMBER(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
#define DCUDA_VERSION                                                                              \
    DCUDA_VERSION_NUMBER(DCUDA_VERSION_MAJOR, DCUDA_VERSION_MINOR, DCUDA_VERSION_PATCH)

/* "0.1.0" */
#define DCUDA_VERSION_STR_(x) #x
#define DCUDA_VERSION_XSTR_(x) DCUDA_VERSION_STR_(x)
#define DCUDA_VERSION_STRING                                                                       \
    DCUDA_VERSION_XSTR_(DCUDA_VERSION_MAJOR)                                                       \
    "." DCUDA_VERSION_XSTR_(DCUDA_VERSION_MINOR) "." DCUDA_VERSION_XSTR_(DCUDA_VERSION_PATCH)

#if defined(__cplusplus)
extern "C" {
#endif
/* The version of the library linked in (which may differ from the headers'
 * DCUDA_VERSION when a shared library was replaced): stores its parts where
 * the pointers are not NULL and returns it as DCUDA_VERSION would. */
DCUDA_API int dcuda_version(int *major, int *minor, int *patch);
#if defined(__cplusplus)
}
#endif

#endif /* DCUDA_VERSION_H */
