/*
 * What the programs of apps/ share for the test suite: when DCUDA_BACKEND
 * names a backend that cannot run here (cuda on a machine without a GPU),
 * the program says why and returns 77, which ctest counts as skipped.
 */
#ifndef DCUDA_APPS_APP_SKIP_H
#define DCUDA_APPS_APP_SKIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"

#define APP_SKIP 77

/* APP_SKIP, after a line naming the program and the reason; else 0. */
static inline int app_backend_missing(const char *program)
{
    const char *backend = getenv("DCUDA_BACKEND");
    char why[256];
    if (!backend || strcmp(backend, "auto") == 0 ||
        dcuda_host_backend_available(backend, why, sizeof why))
        return 0;
    printf("%s: SKIP: backend %s cannot run here: %s\n", program, backend, why);
    return APP_SKIP;
}

#endif /* DCUDA_APPS_APP_SKIP_H */
