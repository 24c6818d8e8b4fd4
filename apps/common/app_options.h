/*
 * What the case studies' host programs share for their options: each takes
 * integer options of the form --<app>-<name>=<value>, read by one rule.
 */
#ifndef DCUDA_APPS_APP_OPTIONS_H
#define DCUDA_APPS_APP_OPTIONS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* If arg is one of names[0..count) (each with its '=', e.g. "--spmv-n=")
 * followed by an integer in [1, max], stores it in *fields[i] and returns 1;
 * returns 0 when arg is none of them, -1 (said on stderr, after `program`)
 * when it is one with a bad value. */
static inline int app_int_option(const char *program, const char *const *names, int *const *fields,
                                 int count, long max, const char *arg)
{
    for (int f = 0; f < count; f++) {
        size_t len = strlen(names[f]);
        if (strncmp(arg, names[f], len) != 0)
            continue;
        char *end;
        long v = strtol(arg + len, &end, 10);
        if (end == arg + len || *end || v < 1 || v > max) {
            fprintf(stderr, "%s: bad option %s (1..%ld)\n", program, arg, max);
            return -1;
        }
        *fields[f] = (int)v;
        return 1;
    }
    return 0;
}

#endif /* DCUDA_APPS_APP_OPTIONS_H */
