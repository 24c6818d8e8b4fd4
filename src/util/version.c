/*
 * dcuda_version: the version this library was built as (public).
 */
#include <stddef.h>

#include "dcuda/dcuda_version.h"

int dcuda_version(int *major, int *minor, int *patch)
{
    if (major != NULL)
        *major = DCUDA_VERSION_MAJOR;
    if (minor != NULL)
        *minor = DCUDA_VERSION_MINOR;
    if (patch != NULL)
        *patch = DCUDA_VERSION_PATCH;
    return DCUDA_VERSION;
}
