/*
 * Shared by the rank code and the host driver of the host command test.
 */
#ifndef DCUDA_TESTS_HOSTCMD_H
#define DCUDA_TESTS_HOSTCMD_H

#include <stdint.h>

#define HOSTCMD_PINGS 100
/* The tag the other ranks of a device use to tell the laggard they are done. */
#define HOSTCMD_DONE_TAG 3

typedef struct hostcmd {
    int64_t *ok; /* [WORLD ranks]: pings answered DCUDA_OK */
    /* Device rank 0 pings once, then waits until every other rank of its
     * device has sent all its pings (the ring wraps many times) before it
     * pings again: its entries can no longer be known free from its last
     * reply, so it must wait for them. */
    int32_t laggard;
    int32_t reserved;
} hostcmd_t;

#endif /* DCUDA_TESTS_HOSTCMD_H */
