/*
 * What this library was built from and with (public): its version and
 * commit (dcuda_version_string), and the configuration as key and value
 * (dcuda_build_info), read by dcuda_info and by programs that log it.
 */
#include <stddef.h>
#include <string.h>

#include "dcuda/dcuda_version.h"

#include "build_commit.h"
#include "build_config.h"

#if defined(DCUDA_HAVE_MPI)
#include <mpi.h>
/* Numbers into text with dcuda_version.h's own macro. */
#define BUILD_MPI_STD                                                                              \
    "MPI " DCUDA_VERSION_XSTR_(MPI_VERSION) "." DCUDA_VERSION_XSTR_(MPI_SUBVERSION)
#if defined(OPEN_MPI)
#define BUILD_MPI                                                                                  \
    "Open MPI " DCUDA_VERSION_XSTR_(OMPI_MAJOR_VERSION) "." DCUDA_VERSION_XSTR_(                   \
        OMPI_MINOR_VERSION) "." DCUDA_VERSION_XSTR_(OMPI_RELEASE_VERSION) " (" BUILD_MPI_STD ")"
#elif defined(MPICH_VERSION)
#define BUILD_MPI "MPICH " MPICH_VERSION " (" BUILD_MPI_STD ")"
#else
#define BUILD_MPI BUILD_MPI_STD
#endif
#else
#define BUILD_MPI "none"
#endif

/* The keys in the order dcuda_info prints them. */
static const struct {
    const char *key, *value;
} build_info[] = {
    { "version", DCUDA_VERSION_STRING },
    { "commit", DCUDA_BUILD_COMMIT },
    { "describe", DCUDA_BUILD_DESCRIBE },
    { "build_type", DCUDA_BUILD_TYPE },
    { "compiler", DCUDA_BUILD_COMPILER },
    { "backends", DCUDA_BUILD_BACKENDS },
    { "managers", DCUDA_BUILD_MANAGERS },
    { "cuda", DCUDA_BUILD_CUDA },
    { "cuda_architectures", DCUDA_BUILD_CUDA_ARCHITECTURES },
    { "mpi", BUILD_MPI },
    { "ucx", DCUDA_BUILD_UCX },
    { "sanitizer", DCUDA_BUILD_SANITIZER },
    { "proxy_trace", DCUDA_BUILD_PROXY_TRACE },
};
#define BUILD_INFO_COUNT (sizeof build_info / sizeof build_info[0])

const char *dcuda_build_info_key(int index)
{
    if (index < 0 || (size_t)index >= BUILD_INFO_COUNT)
        return NULL;
    return build_info[index].key;
}

const char *dcuda_build_info(const char *key)
{
    for (size_t i = 0; key != NULL && i < BUILD_INFO_COUNT; i++)
        if (strcmp(build_info[i].key, key) == 0)
            return build_info[i].value;
    return NULL;
}

const char *dcuda_version_string(void)
{
    return DCUDA_VERSION_STRING " (" DCUDA_BUILD_DESCRIBE ")";
}
