/*
 * Shared between the benchmark's host side and its rank code.
 */
#ifndef DCUDA_BENCH_H
#define DCUDA_BENCH_H

#include <stddef.h>

enum bench_mode {
    BENCH_PINGPONG_PUT = 0,    /* rank 0 <-> peer: 4-byte notified put each way */
    BENCH_PINGPONG_NOTIFY = 1, /* rank 0 <-> peer: notification only */
    BENCH_BW_ONE = 2,          /* rank 0 -> rank 1: back-to-back notified puts */
    BENCH_BW_ALL = 3,          /* every rank r -> r+1: back-to-back notified puts */
    BENCH_HOST_PING = 4        /* rank 0 <-> host runtime: command queue round trips */
};

typedef struct bench_args {
    int mode;
    int iters;
    int peer;      /* device rank answering rank 0 in ping-pong */
    int reserved;
    size_t size;   /* bytes per put */
    size_t stride; /* bytes per rank in src and dst */
    char *src;     /* [ranks * stride] */
    char *dst;     /* [ranks * stride] */
} bench_args_t;

#endif
