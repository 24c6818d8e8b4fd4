/*
 * Rank code of the host RMA test (dcuda_test_hostrma): every rank makes
 * three windows (WORLD's, its half of a split of WORLD by parity, DEVICE's)
 * and fills its parts; after a WORLD barrier, device rank 0 tells its host
 * the ranks are ready and waits at the host's gate while the others wait
 * in a WORLD barrier: the host alone moves bytes meanwhile. Once every
 * host has opened its gate, the ranks free their windows and return; the
 * host checks the parts. In the misuse case the split's window is freed
 * at the first gate, and the ranks meet the host a second time. Written
 * once for CPU and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "hostrma.h"

/* A word the host polls (after a barrier ordered the ranks' writes). */
TEST_RANK_FN void publish_word(int64_t *p, int64_t v)
{
#if defined(__CUDACC__)
    __threadfence_system();
    *(volatile int64_t *)p = v;
#else
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

/* Device rank 0 tells the host (ready) and waits for its gate; then every
 * rank of WORLD has passed its host's gate. */
TEST_RANK_FN dcuda_status_t meet_host(dcuda_state_t *st, const hostrma_data_t *d, int drank,
                                      int ready, int gate)
{
    dcuda_status_t s = dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    if (drank == 0) {
        if (dcuda_thread_index() == 0)
            publish_word(&d->words[ready], 1);
        while (test_poll_word(&d->words[gate]) == 0) {
        }
    }
    dcuda_rank_sync();
    dcuda_status_t b = dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    return s != DCUDA_OK ? s : b;
}

TEST_RANK_FN void fill_part(unsigned char *p, uint64_t bytes, uint32_t seed, int rank, int w)
{
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < bytes;
         i += (uint64_t)dcuda_thread_count())
        p[i] = hostrma_first(seed, rank, w, i);
}

DCUDA_KERNEL(hostrma, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    hostrma_data_t *d = 0;
    int rank = 0, size = 0, drank = 0;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK || dcuda_get_data(&st, (void **)&d) != DCUDA_OK)
        return;
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    unsigned char *mine = d->parts + (uint64_t)drank * HR_SLOTS * d->slot_bytes;
    int64_t *handles = d->words + HR_HANDLES + drank * HR_PER_RANK;
    dcuda_win_t win[HR_WINDOWS], scratch = DCUDA_WIN_NONE;
    dcuda_comm_t half = DCUDA_COMM_NULL;
    dcuda_status_t s = dcuda_win_create(&st, DCUDA_COMM_WORLD, mine + HR_WINDOWS * d->slot_bytes,
                                        dcuda_comm_split_room(size), &scratch);
    if (s == DCUDA_OK)
        s = dcuda_comm_split(&st, DCUDA_COMM_WORLD, rank % 2, rank, scratch, 0, &half);
    dcuda_win_free(&st, scratch);
    const dcuda_comm_t comm[HR_WINDOWS] = { DCUDA_COMM_WORLD, half, DCUDA_COMM_DEVICE };
    for (int w = 0; w < HR_WINDOWS; w++) {
        uint64_t bytes = (uint64_t)d->processes * hostrma_stripe(d->seed, rank, w, d->stripe_max);
        fill_part(mine + (uint64_t)w * d->slot_bytes, bytes, d->seed, rank, w);
        dcuda_rank_sync();
        win[w] = DCUDA_WIN_NONE;
        dcuda_status_t c =
            dcuda_win_create(&st, comm[w], mine + (uint64_t)w * d->slot_bytes, bytes, &win[w]);
        s = s != DCUDA_OK ? s : c;
        if (dcuda_thread_index() == 0)
            handles[w] = s == DCUDA_OK ? (int64_t)win[w] : -1;
    }
    if (dcuda_thread_index() == 0)
        handles[HR_WINDOWS] = rank % 2;
    dcuda_rank_sync();
    dcuda_status_t m = meet_host(&st, d, drank, HR_READY, HR_GATE);
    if (d->misuse) {
        dcuda_win_free(&st, win[HR_SPLIT]);
        win[HR_SPLIT] = DCUDA_WIN_NONE;
        dcuda_status_t again = meet_host(&st, d, drank, HR_READY2, HR_GATE2);
        m = m != DCUDA_OK ? m : again;
    }
    for (int w = 0; w < HR_WINDOWS; w++)
        if (win[w] != DCUDA_WIN_NONE)
            dcuda_win_free(&st, win[w]);
    if (half != DCUDA_COMM_NULL)
        dcuda_comm_free(&st, half);
    if (dcuda_thread_index() == 0 && (s != DCUDA_OK || m != DCUDA_OK))
        handles[HR_WINDOWS] = -100 + (s != DCUDA_OK ? (int64_t)s : (int64_t)m);
    dcuda_rank_finish(&st);
}
