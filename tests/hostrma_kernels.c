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

/* Thread 0: slot k of host q's stripe, as notification k says it is;
 * HN_OK, or what is wrong and where (*at). */
TEST_RANK_FN int check_slot(const unsigned char *slot, uint32_t cap, uint32_t seed, int q, int rank,
                            int k, int32_t *at)
{
    uint32_t magic = 0, size = 0;
    for (int i = 0; i < 4; i++) {
        magic |= (uint32_t)slot[i] << (8 * i);
        size |= (uint32_t)slot[4 + i] << (8 * i);
    }
    *at = (int32_t)((uint32_t)k << 20);
    if (magic != hostnote_magic(q, k) || size > cap - HN_HEADER)
        return HN_BAD_HEADER;
    for (uint32_t i = 0; i < size; i++)
        if (slot[HN_HEADER + i] != hostnote_byte(seed, q, rank, k, i)) {
            *at = (int32_t)((uint32_t)k << 20 | i);
            return HN_BAD_BYTE;
        }
    return HN_OK;
}

/* One notification of tag: waited for, or (every third) polled for with
 * dcuda_test_notifications. */
TEST_RANK_FN dcuda_status_t take_note(dcuda_state_t *st, int tag, int poll)
{
    if (!poll)
        return dcuda_wait_notifications(st, tag, 1);
    int ready;
    while ((ready = dcuda_test_notifications(st, tag, 1)) == 0) {
    }
    return ready == 1 ? DCUDA_OK : (dcuda_status_t)ready;
}

/* The notify case: each host's notifications in turn, each slot checked
 * as soon as its notification is taken; a get's notification answered by
 * writing the bytes anew; then nothing more of any host's tags. */
TEST_RANK_FN void take_notes(dcuda_state_t *st, const hostrma_data_t *d, int rank, int drank,
                             const unsigned char *part, uint64_t stripe)
{
    int32_t *plan = d->plan + (size_t)drank * (size_t)d->processes * HN_PLAN;
    for (int q = 0; q < d->processes; q++) {
        int32_t *mine = plan + q * HN_PLAN, found = HN_OK, at = 0;
        unsigned char *region = (unsigned char *)part + (uint64_t)q * stripe;
        for (int k = 0; k < mine[HN_COUNT] && found == HN_OK; k++) {
            if (take_note(st, hostnote_tag(q), (k + rank) % 3 == 0) != DCUDA_OK) {
                found = HN_WAIT_FAILED;
                at = k << 20;
            } else if (dcuda_thread_index() == 0) {
                found = check_slot(region + (uint64_t)k * d->note_cap, d->note_cap, d->seed, q,
                                   rank, k, &at);
            }
            dcuda_rank_sync();
            found = dcuda_thread_index() == 0 ? found : HN_OK;
            if (dcuda_thread_index() == 0)
                mine[HN_FOUND] = found, mine[HN_WHERE] = at;
            dcuda_rank_sync();
            found = mine[HN_FOUND];
        }
        if (found == HN_OK && mine[HN_GETS]) {
            if (dcuda_wait_notifications(st, hostnote_get_tag(q), 1) != DCUDA_OK)
                found = HN_WAIT_FAILED;
            unsigned char *got = region + (uint64_t)d->note_slots * d->note_cap;
            for (uint64_t i = (uint64_t)dcuda_thread_index(); found == HN_OK && i < HN_GET_BYTES;
                 i += (uint64_t)dcuda_thread_count())
                got[i] = hostnote_after_get(d->seed, q, rank, i);
        }
        if (dcuda_thread_index() == 0)
            mine[HN_FOUND] = found;
        dcuda_rank_sync();
    }
    for (int q = 0; q < d->processes; q++) { /* nothing more came */
        int extra = dcuda_test_notifications(st, hostnote_tag(q), 1) |
                    dcuda_test_notifications(st, hostnote_get_tag(q), 1);
        if (dcuda_thread_index() == 0 && extra && plan[q * HN_PLAN + HN_FOUND] == HN_OK)
            plan[q * HN_PLAN + HN_FOUND] = HN_EXTRA;
        dcuda_rank_sync();
    }
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
    if (d->notify && m == DCUDA_OK)
        take_notes(&st, d, rank, drank, mine,
                   hostrma_stripe(d->seed, rank, HR_WORLD, d->stripe_max));
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
