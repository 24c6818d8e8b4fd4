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

dcuda_status_t dcu_netbar_init(dcu_netbar_t *b, int procs, int me)
{
    memset(b, 0, sizeof *b);
    b->procs = procs;
    b->me = me;
    b->rounds = ceil_log2(procs);
    b->words = (procs + 63) / 64;
    b->sent = calloc((size_t)procs, sizeof *b->sent);
    b->acked = calloc((size_t)procs, sizeof *b->acked);
    b->taken = calloc((size_t)procs, sizeof *b->taken);
    b->told = calloc((size_t)procs, sizeof *b->told);
    b->owed = calloc((size_t)procs, sizeof *b->owed);
    b->unacked = calloc((size_t)b->words, sizeof *b->unacked);
    return b->sent && b->acked && b->taken && b->told && b->owed && b->unacked
               ? DCUDA_OK
               : DCUDA_ERR_NO_MEMORY;
}

void dcu_netbar_free(dcu_netbar_t *b)
{
    free(b->sent);
    free(b->acked);
    free(b->taken);
    free(b->told);
    free(b->owed);
    free(b->unacked);
    memset(b, 0, sizeof *b);
}

void dcu_netbar_reset(dcu_netbar_t *b)
{
    size_t n = (size_t)b->procs;
    b->done = b->entered = 0;
    b->ack_wait = b->round = 0;
    memset(b->at, 0, sizeof b->at);
    memset(b->sent, 0, n * sizeof *b->sent);
    memset(b->acked, 0, n * sizeof *b->acked);
    memset(b->taken, 0, n * sizeof *b->taken);
    memset(b->told, 0, n * sizeof *b->told);
    memset(b->unacked, 0, (size_t)b->words * sizeof *b->unacked);
    b->owed_count = 0;
}

static int bit(const uint64_t *set, int q) { return (int)((set[q / 64] >> (q % 64)) & 1u); }

void dcu_netbar_sent(dcu_netbar_t *b, int q)
{
    b->sent[q]++;
    b->unacked[q / 64] |= (uint64_t)1 << (q % 64);
}

void dcu_netbar_taken(dcu_netbar_t *b, int q)
{
    if (b->taken[q]++ == b->told[q])
        b->owed[b->owed_count++] = q; /* each process once: it was owed nothing */
}

int dcu_netbar_owed(dcu_netbar_t *b, int held, int *to, uint32_t *count)
{
    if (held > 0 || b->owed_count == 0)
        return 0;
    int q = b->owed[--b->owed_count];
    *to = q;
    *count = b->told[q] = b->taken[q];
    return 1;
}

/* Is the barrier entered waiting for acknowledgements (it is in progress
 * and has not started its rounds)? */
static int waits_for_acks(const dcu_netbar_t *b) { return b->entered != b->done && b->round == 0; }

const char *dcu_netbar_acked(dcu_netbar_t *b, int q, uint32_t count)
{
    if ((int32_t)(count - b->acked[q]) < 0 || (int32_t)(b->sent[q] - count) < 0)
        return "an acknowledgement of more than was sent, or of less than before";
    b->acked[q] = count;
    if (count != b->sent[q] || !bit(b->unacked, q))
        return NULL;
    b->unacked[q / 64] &= ~((uint64_t)1 << (q % 64));
    if (waits_for_acks(b))
        b->ack_wait--;
    return NULL;
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
            if (b->acked[q] == b->sent[q])
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
