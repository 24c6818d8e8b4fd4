/*
 * Shared between the rank code (semantics_kernels.c) and the host driver
 * (semantics_host.c) of the semantics suite: case ids, the user struct,
 * per-rank result slots, tags and the memory layout of each case.
 */
#ifndef DCUDA_TESTS_SEMANTICS_H
#define DCUDA_TESTS_SEMANTICS_H

#include "test_common.h"

enum sem_case {
    SEM_VISIBILITY = 1,
    SEM_ORDER,
    SEM_TAGS,
    SEM_MANY,
    SEM_WRAP,
    SEM_OVERLAP,
    SEM_FLUSH,
    SEM_BARRIER,
    SEM_SIZE0,
    SEM_RING,
    SEM_WINDOWS,
    SEM_USER,
    SEM_ACK,            /* visibility with dcuda_notify as the buffer-free signal */
    SEM_NOTIFY_RELEASE, /* a put, a notification elsewhere, then one to its target */
    SEM_MIX,            /* sizes across every threshold, overlapping small and large puts */
    SEM_LARGE,          /* puts of megabytes, between small ones that overlap them */
    SEM_BURST,          /* bursts of small notified puts, checked one by one */
    SEM_TINY,           /* small notified puts whose source is rewritten at once */
    SEM_STALE,          /* a small notified put, then a larger one over the same bytes */
    SEM_GETS            /* several large notified gets in flight at once */
};

/* Result slots of each rank: res[rank * SEM_SLOTS + slot]. */
enum sem_slot {
    SEM_RES_STATUS = 0, /* first failing rank API call (0: none) */
    SEM_RES_BAD,        /* checks that failed */
    SEM_RES_CHECKED,    /* checks made */
    SEM_RES_FIRST_BAD,  /* where the first failed check was */
    SEM_RES_A,          /* case-specific values */
    SEM_RES_B,
    SEM_RES_C,
    SEM_RES_D,
    SEM_RES_E,
    SEM_RES_F,
    SEM_SLOTS
};

/* The user struct (copied in before and out after each run; each process
 * of a multi-process run has its own, as it has its own buf and res). buf
 * holds the regions of the process's own ranks, from WORLD rank `first`
 * on (what a process holds grows with its ranks, not with WORLD), except
 * in the cases of sem_world_buffer, whose buffer has a slot for every
 * WORLD rank. */
typedef struct sem_data {
    int32_t test_case;
    int32_t iters;       /* case-specific repetition count */
    uint64_t region;     /* bytes of buf per rank */
    unsigned char *buf;  /* [own ranks * region] (or [WORLD ranks * region]), rank-visible */
    int64_t *res;        /* [ranks * SEM_SLOTS], rank-visible */
    uint64_t user_in;    /* user case: set by the host */
    uint64_t user_out;   /* user case: written by rank 0 */
    int32_t timer_pairs; /* user case: timer pairs each rank runs */
    int32_t ranks_seen;  /* user case: WORLD size, written by rank 0 of DEVICE */
    int32_t first_seen;  /* user case: WORLD rank of rank 0 of DEVICE, written by it */
    int32_t device_seen; /* user case: DEVICE size, written by rank 0 of DEVICE */
    int32_t first;       /* the WORLD rank of the process's first rank */
} sem_data_t;

/* Tags. */
#define SEM_TAG_DATA 1
#define SEM_TAG_ACK 2
#define SEM_TAG_ORDER 3
#define SEM_TAG_ORDER_B 4
#define SEM_TAG_A 7 /* tags case */
#define SEM_TAG_B 8
#define SEM_TAG_MANY 9
#define SEM_TAG_OV1 10
#define SEM_TAG_OV2 11
#define SEM_TAG_OV3 12
#define SEM_TAG_ZERO 13
#define SEM_TAG_RING 14
#define SEM_TAG_ALL 15
#define SEM_TAG_WIN 16
#define SEM_TAG_FL1 17
#define SEM_TAG_FL2 18
#define SEM_TAG_FLACK 19
#define SEM_TAG_SELF 20
#define SEM_TAG_NR 21
#define SEM_TAG_BAR 22
#define SEM_TAG_MIX 23

/* Sizes. */
#define SEM_VIS_BYTES 65536u   /* visibility: bytes per put */
#define SEM_ACK_BYTES 4096u    /* ack: bytes per put */
#define SEM_ORDER_ROUNDS 8     /* order: rounds of plain puts ... */
#define SEM_ORDER_MSGS 6       /* ... of this many puts each */
#define SEM_MANY_CHUNK 7       /* many: notifications consumed per wait/test */
#define SEM_WRAP_TAGS 3        /* wrap: tags used (see sem_wrap_tag) */
#define SEM_OV_BYTES 1024u     /* overlap: chunk per rank (4 quarters) */
#define SEM_FLUSH_BYTES 16384u /* flush: bytes per put */
#define SEM_ZERO_BYTES 256u    /* size0: bytes of a non-empty part */
#define SEM_WIN_SUB 32u        /* windows: bytes per window part */
#define SEM_WIN_MAXLIVE 5      /* windows: most windows live at once */

/* mix: the sizes of one round's puts, in order: inline in one inbox entry,
 * at and past its end, at and past the inbox's eager limit (4096), and
 * past one network chunk. Odd sizes leave later destinations unaligned. */
#define SEM_MIX_SIZES 10
TEST_FN uint64_t sem_mix_size(int i)
{
    switch (i) {
    case 0:
        return 4;
    case 1:
        return 31;
    case 2:
        return 32;
    case 3:
        return 33;
    case 4:
        return 1000;
    case 5:
        return 4064;
    case 6:
        return 4096;
    case 7:
        return 4097;
    case 8:
        return 9000;
    default:
        return 70000;
    }
}
/* mix: the overlap zone at the start of a round, large enough that a put
 * to a process on the network path is read by its proxy (32 KiB and up). */
#define SEM_MIX_ZONE 40960u
#define SEM_MIX_DATA 92357u   /* mix: the sum of the sizes */
#define SEM_MIX_ROUND 133320u /* mix: zone + sizes, rounded up to 8 */
#define SEM_MIX_SEND 70144u   /* mix: the send buffer: the largest size + source offsets */
/* mix: where put i of round r reads in the send buffer (varied alignment). */
TEST_FN uint64_t sem_mix_src(int r, int i) { return (uint64_t)((r * 13 + i * 7) % 61); }

/* large: bytes of each of the two large puts (several network chunks of a
 * megabyte, odd so that the second lands unaligned), and the region:
 * both targets, then the send buffer. */
/* burst: puts of 1..SEM_BURST_SPAN bytes (across the inline bytes of an
 * inbox entry, 12, and the leader's few words, 16), each in a slot of
 * SEM_BURST_SPAN bytes. */
#define SEM_BURST_SPAN 16u
#define SEM_BURST_PUTS 80u
/* tiny: SEM_TINY_PUTS notified puts a round, each into a slot of 16
 * bytes; put i has size sem_tiny_size(i) (1 to 4 whole words, which the
 * leader copies alone, or 3 and 6 bytes one byte off alignment, which the
 * block copies) and both its addresses that far off a slot's start. */
#define SEM_TINY_PUTS 24u
#define SEM_TINY_SLOT 16u
TEST_FN uint64_t sem_tiny_size(uint64_t i)
{
    static const unsigned char sizes[6] = { 4, 8, 12, 16, 3, 6 };
    return sizes[i % 6u];
}
TEST_FN uint64_t sem_tiny_skew(uint64_t i) { return sem_tiny_size(i) % 4u ? 1u : 0u; }
/* stale: the second put's size (the first writes half of it). */
#define SEM_STALE_BYTES 16u
#define SEM_LARGE_BYTES 2500007u
#define SEM_LARGE_REGION (3u * SEM_LARGE_BYTES + 65u)
/* gets: SEM_GETS_COUNT notified gets of SEM_GETS_BYTES each (a network chunk
 * and a byte: together past the network path's default credit of 4 MiB)
 * from the right neighbour's source, into places of mine a slot apart;
 * the region: the source, then the slots. */
#define SEM_GETS_COUNT 4u
#define SEM_GETS_BYTES 1048577u
#define SEM_GETS_SLOT (SEM_GETS_BYTES + 63u)

TEST_FN int sem_wrap_tag(int k) { return k == 0 ? 1 : k == 1 ? 2 : 254; }

/* 1 if case c's buffer has a slot for every WORLD rank (small slots, the
 * same buffer exposed by every rank); else it holds the regions of the
 * process's own ranks. */
TEST_FN int sem_world_buffer(int c) { return c == SEM_OVERLAP || c == SEM_BARRIER; }

/* The index of WORLD rank `rank`'s region in the buffer of its process. */
TEST_FN uint64_t sem_region_index(const sem_data_t *d, int rank)
{
    return (uint64_t)(sem_world_buffer(d->test_case) ? rank : rank - d->first);
}

/* Bytes of buf per rank for a case with `ranks` ranks and `iters`. */
TEST_FN uint64_t sem_region_bytes(int c, int ranks, int iters)
{
    uint64_t n = (uint64_t)ranks, k = (uint64_t)iters;
    switch (c) {
    case SEM_VISIBILITY:
        return 2u * SEM_VIS_BYTES;
    case SEM_ACK:
        return 2u * SEM_ACK_BYTES;
    case SEM_NOTIFY_RELEASE:
        return 16u * k;
    case SEM_ORDER:
        return 8u * (2u * k + 2u * SEM_ORDER_ROUNDS * SEM_ORDER_MSGS);
    case SEM_TAGS:
        return 8u;
    case SEM_MANY:
        return 8u * (n * k + k);
    case SEM_WRAP:
        return 8u * (2u * SEM_WRAP_TAGS * k);
    case SEM_OVERLAP:
        return SEM_OV_BYTES;
    case SEM_FLUSH:
        return 3u * SEM_FLUSH_BYTES;
    case SEM_BARRIER:
        return 16u; /* the buffer is [2][WORLD ranks] words */
    case SEM_SIZE0:
        return 2u * SEM_ZERO_BYTES;
    case SEM_RING:
        return 8u * (2u * k + 1u + n);
    case SEM_WINDOWS:
        return SEM_WIN_SUB * SEM_WIN_MAXLIVE;
    case SEM_MIX:
        return k * SEM_MIX_ROUND + SEM_MIX_SEND;
    case SEM_LARGE:
        return (SEM_LARGE_REGION + 7u) & ~(uint64_t)7u;
    case SEM_BURST: /* received slots, then the send buffer */
        return 2u * SEM_BURST_SPAN * SEM_BURST_PUTS;
    case SEM_STALE: /* the target bytes, then the two sources */
        return 3u * SEM_STALE_BYTES;
    case SEM_GETS:
        return (1u + SEM_GETS_COUNT) * SEM_GETS_SLOT;
    case SEM_TINY: /* received slots of every round, then the source slot */
        return (k * SEM_TINY_PUTS + 1u) * SEM_TINY_SLOT;
    default:
        return 8u;
    }
}

#endif /* DCUDA_TESTS_SEMANTICS_H */
