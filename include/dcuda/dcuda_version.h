/*
 * dcuda version: the numbers of the headers in hand, and dcuda_version() for
 * those of the library a program runs with. This header is the one place the
 * version is written; CMake reads it for the project, the package and the
 * library's SONAME. Self-contained: compiles as C11, C++ and with nvcc.
 */
#ifndef DCUDA_VERSION_H
#define DCUDA_VERSION_H

#include "dcuda_status.h"

/* The version of these headers: major, minor and patch. */
#define DCUDA_VERSION_MAJOR 0
#define DCUDA_VERSION_MINOR 2
#define DCUDA_VERSION_PATCH 0

/* One number that grows with every release: major * 10000 + minor * 100 +
 * patch (minor and patch stay below 100), so that code can test
 * `#if DCUDA_VERSION >= DCUDA_VERSION_NUMBER(0, 2, 0)`. */
#define DCUDA_VERSION_NUMBER(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
#define DCUDA_VERSION                                                                              \
    DCUDA_VERSION_NUMBER(DCUDA_VERSION_MAJOR, DCUDA_VERSION_MINOR, DCUDA_VERSION_PATCH)

/* "0.2.0" */
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

/* The same with what it was built from: "0.2.0 (DESCRIBE)", DESCRIBE being
 * dcuda_build_info("describe"). A static string. */
DCUDA_API const char *dcuda_version_string(void);

/* What the library linked in was built from and with: the value of `key`,
 * a static string, or NULL for a key it does not know. The keys:
 *   version             "0.2.0", as dcuda_version
 *   commit              the git commit of the sources ("unknown" outside a
 *                       git checkout)
 *   describe            `git describe --tags --always --dirty` of them (a
 *                       tag, commits since and the short hash; "-dirty":
 *                       files differed from the commit), or what the
 *                       packager named with DCUDA_GIT_DESCRIBE, or "unknown"
 *   build_type          CMAKE_BUILD_TYPE ("none" when empty)
 *   compiler            the C compiler and its version
 *   backends            "cpu" or "cpu cuda"
 *   managers            the network managers: "mpi", "ucx", "mpi ucx", "none"
 *   cuda                the CUDA toolkit's version, or "none"
 *   cuda_architectures  what dcuda's own programs' rank code was built for
 *                       (CMAKE_CUDA_ARCHITECTURES), or "none"
 *   mpi                 the MPI implementation and standard of mpi.h the MPI
 *                       plugin was built with, or "none"
 *   ucx                 UCX's version (pkg-config) the UCX plugin was built
 *                       with, or "none"
 *   sanitizer           "none", "address" or "thread"
 *   proxy_trace         "on" in a DCUDA_PROXY_TRACE build, else "off"
 * dcuda_build_info_key(i) names them in this order for i = 0, 1, ..., and
 * NULL past the last. */
DCUDA_API const char *dcuda_build_info(const char *key);
DCUDA_API const char *dcuda_build_info_key(int index);

/* The plugins: MPI's and UCX's network managers (and MPI's bootstrap),
 * and PMIx's start, are modules loaded at run time, libdcuda_mpi.so,
 * libdcuda_ucx.so and libdcuda_pmix.so, from
 * the directories of DCUDA_PLUGIN_PATH (colon-separated) when it is set,
 * else from beside the library, its install directory and its build
 * directory; the library itself links neither MPI nor UCX.
 * dcuda_plugin_name(i) names them for i = 0, 1, ... ("mpi", "ucx", "pmix"; NULL
 * past the last). dcuda_plugin_status(name) loads one if it was not yet
 * and says "loaded from <path> (<library and version>)" or "not loaded:
 * <why>" (not built, not found, another contract version, its own library
 * missing); NULL for another name. The text stays valid until the
 * calling thread's next call. */
DCUDA_API const char *dcuda_plugin_name(int index);
DCUDA_API const char *dcuda_plugin_status(const char *name);
#if defined(__cplusplus)
}
#endif

#endif /* DCUDA_VERSION_H */
