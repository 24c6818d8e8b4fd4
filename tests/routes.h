/*
 * Shared by the host and rank code of the route test (dcuda_test_routes):
 * puts along a route the rank has already checked must still be refused
 * once a window on that route is freed or replaced, and a put with
 * DCUDA_WIN_NONE never takes the route a freed window left behind.
 */
#ifndef DCUDA_TESTS_ROUTES_H
#define DCUDA_TESTS_ROUTES_H

#include <stdint.h>

#define ROUTE_PART 64  /* bytes of each rank's target part (window A) */
#define ROUTE_SRC 64   /* bytes of each rank's source part (window B) */
#define ROUTE_SMALL 16 /* bytes of each rank's part of the replacement of A */
/* Windows created at once so that the last lands in slot 7, whose handle
 * and DCUDA_WIN_NONE share a route entry for target rank 1. */
#define ROUTE_SLOTS 8

enum route_result {
    ROUTE_FIRST,     /* put via A from B: DCUDA_OK */
    ROUTE_AFTER_SRC, /* same put after B was freed: DCUDA_ERR_SOURCE */
    ROUTE_STALE,     /* put with A's handle after A was freed: DCUDA_ERR_WIN */
    ROUTE_REPLACED,  /* put beyond the smaller part of A's replacement: DCUDA_ERR_BOUNDS */
    ROUTE_NONE,      /* put with DCUDA_WIN_NONE, whose route entry held a freed
                           window's route: DCUDA_ERR_WIN */
    ROUTE_SETUP,     /* first failing call outside the probes (0 if none) */
    ROUTE_RESULTS
};

typedef struct route_data {
    unsigned char *buf; /* [ranks][ROUTE_PART + ROUTE_SRC] */
    int64_t *res;       /* [ranks][ROUTE_RESULTS] */
} route_data_t;

#endif
