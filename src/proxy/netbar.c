/*
 * The WORLD barrier over the network path (see netbar.h).
 */
#include "netbar.h"

#include <stdlib.h>
#include <string.h>

static int ceil_log2(int n)
{
    int k = 0;
    while ((1L << k) < n)
        k++;
    return k;
}

dcuda_status_t dcu_netbar_init(dcu_netbar_t *b, int procs, int me, int loopback)
{
    memset(b, 0, sizeof *b);
    b->procs = procs;
    b->me = me;
    b->rounds = ceil_log2(procs);
    if (loopback && b->rounds == 0)
        b->rounds = 1; /* a process alone tells itself, through the manager */
    b->words = (procs + 63) / 64;
    b->peer = calloc((size_t)procs, sizeof *b->peer);
    b->owed = calloc((size_t)procs, sizeof *b->owed);
    b->unacked = calloc((size_t)b->words, sizeof *b->unacked);
    return b->peer && b->owed && b->unacked ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
}

void dcu_netbar_free(dcu_netbar_t *b)
{
    free(b->peer);
    free(b->owed);
    free(b->unacked);
    memset(b, 0, sizeof *b);
}

void dcu_netbar_reset(dcu_netbar_t *b)
{
    b->done = b->entered = 0;
    b->ack_wait = b->round = 0;
    memset(b->at, 0, sizeof b->at);
    memset(b->peer, 0, (size_t)b->procs * sizeof *b->peer);
    memset(b->unacked, 0, (size_t)b->words * sizeof *b->unacked);
    b->owed_count = 0;
}

static int bit(const uint64_t *set, int q) { return (int)((set[q / 64] >> (q % 64)) & 1u); }

int dcu_netbar_may_send(const dcu_netbar_t *b, int q, uint64_t bytes, uint64_t credit)
{
    uint64_t out = b->peer[q].sent_bytes - b->peer[q].acked_bytes;
    return out == 0 || (out <= credit && bytes <= credit - out);
}

/* Is the barrier entered waiting for acknowledgements (it is in progress
 * and has not started its rounds)? */
static int waits_for_acks(const dcu_netbar_t *b) { return b->entered != b->done && b->round == 0; }

void dcu_netbar_sent(dcu_netbar_t *b, int q, uint64_t bytes)
{
    b->peer[q].sent++;
    b->peer[q].sent_bytes += bytes;
    /* Sent while the barrier waits for its acknowledgements (a get's
     * answer: served whenever its turn comes): it waits for this one too. */
    if (!bit(b->unacked, q) && waits_for_acks(b))
        b->ack_wait++;
    b->unacked[q / 64] |= (uint64_t)1 << (q % 64);
}

/* The sender's view can only lag mine (its acknowledgements are on their
 * way), so a message it may send fits the credit in mine too. */
const char *dcu_netbar_arrived(dcu_netbar_t *b, int q, uint64_t bytes, uint64_t credit)
{
    dcu_netbar_peer_t *e = &b->peer[q];
    uint64_t out = e->arrived_bytes - e->told_bytes;
    e->arrived_bytes += bytes;
    e->arrived++;
    return out == 0 || (out <= credit && bytes <= credit - out)
               ? NULL
               : "more bytes than its credit (NET_CREDIT) allows before an acknowledgement";
}

void dcu_netbar_taken(dcu_netbar_t *b, int q, uint64_t bytes)
{
    dcu_netbar_peer_t *e = &b->peer[q];
    if (e->taken++ == e->told)
        b->owed[b->owed_count++] = q; /* each process once: it was owed nothing */
    e->taken_bytes += bytes;
}

int dcu_netbar_owed(dcu_netbar_t *b, int *to, uint32_t *count, uint64_t *bytes)
{
    if (b->owed_count == 0)
        return 0;
    int q = b->owed[--b->owed_count];
    dcu_netbar_peer_t *e = &b->peer[q];
    *to = q;
    *count = e->told = e->taken;
    *bytes = e->told_bytes = e->taken_bytes;
    return 1;
}

const char *dcu_netbar_acked(dcu_netbar_t *b, int q, uint32_t count, uint64_t bytes)
{
    dcu_netbar_peer_t *e = &b->peer[q];
    if ((int32_t)(count - e->acked) < 0 || (int32_t)(e->sent - count) < 0 ||
        bytes < e->acked_bytes || bytes > e->sent_bytes)
        return "an acknowledgement of more than was sent, or of less than before";
    if (count == e->sent && bytes != e->sent_bytes) /* a GET counts no bytes */
        return "an acknowledgement whose count and bytes disagree";
    e->acked = count;
    e->acked_bytes = bytes;
    if (count != e->sent || !bit(b->unacked, q))
        return NULL;
    b->unacked[q / 64] &= ~((uint64_t)1 << (q % 64));
    if (waits_for_acks(b))
        b->ack_wait--;
    return NULL;
}

int dcu_netbar_all_taken(const dcu_netbar_t *b, int q)
{
    return b->peer[q].arrived == b->peer[q].taken;
}

void dcu_netbar_cleared(dcu_netbar_t *b, int q, uint32_t count)
{
    if ((int32_t)(count - b->peer[q].clear) > 0)
        b->peer[q].clear = count;
}

/* The arrivals kept for barrier `epoch` (the next one or the one after,
 * else NULL), started afresh when they belonged to an earlier one. */
static dcu_netbar_arrivals_t *arrivals(dcu_netbar_t *b, uint32_t epoch)
{
    if (epoch != b->done + 1u && epoch != b->done + 2u)
        return NULL;
    if (b->at[epoch & 1u].epoch != epoch) {
        b->at[epoch & 1u].epoch = epoch;
        b->at[epoch & 1u].heard = 0;
    }
    return &b->at[epoch & 1u];
}

const char *dcu_netbar_enter(dcu_netbar_t *b, uint32_t epoch)
{
    if (!arrivals(b, epoch))
        return "a barrier more than one ahead of this process, or one it completed";
    b->entered = epoch;
    b->round = 0;
    b->ack_wait = 0;
    for (int w = 0; w < b->words; w++) /* those acknowledged in full owe nothing */
        for (uint64_t bits = b->unacked[w]; bits; bits &= bits - 1u) {
            int q = w * 64 + __builtin_ctzll(bits);
            if (b->peer[q].acked == b->peer[q].sent)
                b->unacked[w] &= ~((uint64_t)1 << (q % 64));
            else
                b->ack_wait++;
        }
    return NULL;
}

const char *dcu_netbar_heard(dcu_netbar_t *b, int from, uint32_t epoch, uint32_t round)
{
    dcu_netbar_arrivals_t *a = arrivals(b, epoch);
    if (!a)
        return "a barrier round more than one barrier ahead of this process, or of one it "
               "completed";
    if ((int)round >= b->rounds)
        return "a barrier round beyond the last";
    long step = 1L << round;
    if ((int)(((long)from + step) % b->procs) != b->me)
        return "a barrier round from a process that does not send that round here";
    if ((a->heard >> round) & 1u)
        return "a barrier round heard twice";
    a->heard |= 1u << round;
    return NULL;
}

int dcu_netbar_send(dcu_netbar_t *b, int *to, uint32_t *round)
{
    if (b->entered == b->done || b->ack_wait > 0 || b->round >= b->rounds)
        return 0;
    if (b->round > 0) {
        dcu_netbar_arrivals_t *a = arrivals(b, b->entered);
        if (!((a->heard >> (b->round - 1)) & 1u))
            return 0;
    }
    *round = (uint32_t)b->round;
    *to = (int)(((long)b->me + (1L << b->round)) % b->procs);
    b->round++;
    return 1;
}

int dcu_netbar_complete(dcu_netbar_t *b)
{
    if (b->entered == b->done)
        return 0;
    dcu_netbar_arrivals_t *a = arrivals(b, b->entered);
    if (b->ack_wait > 0 || b->round < b->rounds ||
        (b->rounds > 0 && !((a->heard >> (b->rounds - 1)) & 1u)))
        return 0;
    a->epoch = 0;
    a->heard = 0;
    b->done = b->entered;
    return 1;
}
