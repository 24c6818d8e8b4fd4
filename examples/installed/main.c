/* The README's example, host side: runs the ring and checks what arrived. */
#include <stdio.h>

#include "dcuda/dcuda_host.h"
#include "ring.h"

DCUDA_KERNEL_DECLARE(ring);

int main(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    ring_t user = { 0 };
    double ms;
    if (dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(ring), 128, &h) != DCUDA_OK)
        return 1;
    dcuda_host_get_rank_info(h, &info);
    dcuda_host_alloc(h, (size_t)info.rank_count * sizeof(int), (void **)&user.slots);
    dcuda_status_t st = dcuda_host_run(h, &user, sizeof user, &ms); /* user copied in and out */
    printf("ring: %d ranks on %s: %s in %.3f ms\n", info.rank_count, info.backend,
           st == DCUDA_OK && !user.wrong ? "every rank got its left neighbour's number" : "FAILED",
           ms);
    dcuda_host_free(h, user.slots);
    dcuda_host_finish(h);
    return dcuda_host_exit_status(st == DCUDA_OK && !user.wrong ? 0 : 1);
}
