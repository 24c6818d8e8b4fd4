/*
 * Rank code of the integration suite (dcuda_test_integration): each rank
 * fills its scratch memory (dcuda_rank_shared) with a pattern of its own,
 * every thread a part of it, then reads all of it back after a rank-wide
 * sync and checks it; neighbouring ranks' memory must not overlap (a
 * WORLD barrier between writing and reading catches a shared buffer); then
 * a ring of notifications over WORLD, whose size the rank reports (on an
 * application's MPI communicator, WORLD is the ranks of its members).
 * With a gate, WORLD rank 0 first waits for the host to open it (the host
 * must be free while the ranks run); with `reg`, a ring of put_notify
 * through windows on memory the application allocated and registered.
 * Written once for CPU and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "integration.h"

/* Every thread writes its share of the pattern. */
TEST_RANK_FN void fill(unsigned char *p, uint64_t bytes, int rank)
{
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < bytes;
         i += (uint64_t)dcuda_thread_count())
        p[i] = test_byte((uint32_t)rank, 11u, i);
}

/* Thread 0 reads the whole of it back. */
TEST_RANK_FN int64_t checksum(const unsigned char *p, uint64_t bytes)
{
    int64_t sum = 0;
    for (uint64_t i = 0; i < bytes; i++)
        sum += (int64_t)p[i] * (int64_t)((i % 7u) + 1u);
    return sum;
}

/* A word the host stores while the ranks run. */
TEST_RANK_FN int64_t read_host_word(const int64_t *p)
{
#if defined(__CUDA_ARCH__)
    return *(const volatile int64_t *)p;
#else
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/* Every rank's part of `reg` (its process's registered memory) is a
 * window; each puts its value into its right neighbour's part and reports
 * what its left one put into its own. */
TEST_RANK_FN int64_t ring_of_puts(dcuda_state_t *st, int64_t *reg, int rank, int size)
{
    int local = 0;
    dcuda_comm_rank(st, DCUDA_COMM_DEVICE, &local);
    int64_t *part = reg + (size_t)local * INT_REG_WORDS;
    if (dcuda_thread_index() == 0)
        part[1] = integration_put_value(rank);
    dcuda_rank_sync();
    dcuda_win_t win;
    dcuda_status_t st_ =
        dcuda_win_create(st, DCUDA_COMM_WORLD, part, INT_REG_WORDS * sizeof *part, &win);
    if (st_ == DCUDA_OK)
        st_ = dcuda_put_notify(st, win, (rank + 1) % size, 0, sizeof *part, part + 1, INT_PUT_TAG);
    if (st_ == DCUDA_OK)
        st_ = dcuda_wait_notifications(st, INT_PUT_TAG, 1);
    int64_t got = st_ == DCUDA_OK ? read_host_word(part) : (int64_t)st_;
    dcuda_win_free(st, win);
    return got;
}

DCUDA_KERNEL(integration, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    integration_data_t *d = 0;
    void *scratch = 0;
    size_t bytes = 0;
    int rank = -1;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK || dcuda_get_data(&st, (void **)&d) != DCUDA_OK)
        return;
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    if (d->gate && rank == 0)
        while (read_host_word(d->gate) == 0) {
        }
    int64_t pre = d->pre ? read_host_word(d->pre) : 0;
    int64_t status = dcuda_rank_shared(&st, &scratch, &bytes);
    if (status == DCUDA_OK && scratch)
        fill((unsigned char *)scratch, bytes, rank);
    dcuda_rank_sync();
    dcuda_comm_barrier(&st, DCUDA_COMM_WORLD); /* every rank has written its own */
    int64_t sum = scratch ? checksum((const unsigned char *)scratch, bytes) : 0;
    /* A ring of notifications over WORLD: every rank hears from its left. */
    int size = 0;
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    int64_t ring = dcuda_notify(&st, (rank + 1) % size, DCUDA_COMM_WORLD, INT_RING_TAG);
    if (ring == DCUDA_OK)
        ring = dcuda_wait_notifications(&st, INT_RING_TAG, 1);
    int64_t put = d->reg ? ring_of_puts(&st, d->reg, rank, size) : 0;
    if (dcuda_thread_index() == 0 && rank == 0)
        d->marker = integration_marker(size);
    if (dcuda_thread_index() == 0 && d->res) {
        int64_t *res = d->res + (size_t)rank * INT_SLOTS;
        res[INT_RES_STATUS] = status;
        res[INT_RES_BYTES] = (int64_t)bytes;
        res[INT_RES_SUM] = sum;
        res[INT_RES_ALIGNED] = ((uintptr_t)scratch & 15u) == 0;
        res[INT_RES_RING] = ring;
        res[INT_RES_WORLD] = size;
        res[INT_RES_PRE] = pre;
        res[INT_RES_PUT] = put;
    }
    dcuda_rank_finish(&st);
}
