/*
 * The randomized test of window parts (window metadata), shared by its rank
 * code (parts_kernels.c) and its host driver (parts_host.c), which both
 * regenerate every rank's program from the seed alone.
 *
 * Each rank owns a region of PARTS_REGION bytes; every window part it
 * exposes lies in it, at an offset and of a size drawn per rank and window
 * (empty parts, parts up to the region's end, unaligned starts). One window
 * lives through the run; each round creates 1 to PARTS_MAX_WINDOWS more
 * (reusing the slots the last round freed, with other sizes) and frees
 * them in a drawn order. In a round every rank issues PARTS_OPS notified
 * puts: put j of every rank goes the same drawn distance around WORLD (so
 * each rank receives one put j), into a drawn window, at offsets and sizes
 * in the target's part, ending at its last byte, one byte past it, or
 * beyond it. A put outside the target's part must return
 * DCUDA_ERR_BOUNDS and touch nothing; one inside must land. The value of
 * a byte depends only on the round, the target and its place in the
 * region, and put j writes only band j of it (parts_band: puts of
 * different sources never cover the same bytes), and after its
 * notifications a rank checks its whole region: bytes some put of the
 * round covered hold the round's values, the others the round's canary.
 * Parts of ranks of other nodes are what the proxies ask their owners for
 * (docs/design.md); a wrong, stale or missing answer shows as a wrong
 * status or a wrong byte.
 */
#ifndef DCUDA_TESTS_PARTS_H
#define DCUDA_TESTS_PARTS_H

#include "test_common.h"

#define PARTS_REGION 2048u  /* bytes a rank's parts lie in */
#define PARTS_STAGE 1024u   /* bytes of a rank's staging window (the sources) */
#define PARTS_MAX_WINDOWS 3 /* windows a round creates, the long-lived one besides */
#define PARTS_OPS 8         /* puts a rank issues a round */
#define PARTS_MAX_PUT 600u  /* bytes a put carries at most */
#define PARTS_TAG 5

/* Result slots of each rank: res[rank * PARTS_SLOTS + slot]. */
enum parts_res {
    PARTS_RES_STATUS = 0, /* first rank API call that failed unexpectedly (0: none) */
    PARTS_RES_BAD,        /* failed checks */
    PARTS_RES_OPS,        /* puts issued */
    PARTS_RES_REFUSED,    /* puts refused as outside the target's part */
    PARTS_RES_BYTES,      /* bytes checked */
    PARTS_SLOTS
};

/* The user struct; each process has its own buf and res, of its ranks. */
typedef struct parts_data {
    uint32_t seed;
    int32_t rounds;
    int32_t world;      /* WORLD size the host expects */
    unsigned char *buf; /* [device ranks][PARTS_REGION + PARTS_STAGE] */
    int64_t *res;       /* [device ranks][PARTS_SLOTS] */
} parts_data_t;

/* A rank's part of a window: [off, off + size) of its region. */
typedef struct parts_part {
    uint64_t off, size;
} parts_part_t;

/* One put: into window `win` (0: the long-lived one, 1..: the round's). */
typedef struct parts_op {
    int win, target;
    uint64_t offset, size;
    int inside; /* [offset, offset + size) lies in the target's part */
} parts_op_t;

TEST_FN uint32_t parts_hash(uint32_t seed, uint32_t a, uint32_t b, uint32_t c)
{
    return test_mix(
        seed ^ test_mix(a * 0x9e3779b9u ^ test_mix(b * 0x85ebca6bu ^ test_mix(c + 0x165667b1u))));
}

/* Windows round r creates. */
TEST_FN int parts_windows(uint32_t seed, int r)
{
    return 1 + (int)(parts_hash(seed, (uint32_t)r, 0xa11u, 0u) % PARTS_MAX_WINDOWS);
}

/* Rank t's part of window w in round r (w 0: the long-lived window). */
TEST_FN parts_part_t parts_part(uint32_t seed, int r, int w, int t)
{
    uint32_t round = w == 0 ? 0xffffffffu : (uint32_t)r;
    uint32_t h = parts_hash(seed, round, (uint32_t)w, (uint32_t)t);
    uint32_t k = parts_hash(seed ^ 0x5eedu, round, (uint32_t)w, (uint32_t)t);
    parts_part_t p;
    p.off = h % 4u == 0u ? (uint64_t)((h >> 4) % PARTS_REGION)
                         : (uint64_t)((h >> 4) % (PARTS_REGION / 8u)) * 8u;
    uint64_t room = PARTS_REGION - p.off;
    p.size = k % 6u == 0u ? 0u : k % 6u == 1u ? room : (uint64_t)((k >> 4) % (room + 1u));
    return p;
}

/* How far around WORLD put j of round r goes. */
TEST_FN int parts_shift(uint32_t seed, int r, int j, int world)
{
    return (int)(parts_hash(seed, (uint32_t)r, (uint32_t)j, 0x5417u) % (uint32_t)world);
}

/* The offsets of a part (at `off`, of `size` bytes) that put j may write:
 * those in band j of the region (PARTS_REGION / PARTS_OPS bytes), so that
 * the puts a target receives (one a step, from different sources) never
 * cover the same bytes and need no order among them. [*lo, *hi) may be
 * empty. */
TEST_FN void parts_band(int j, parts_part_t p, uint64_t *lo, uint64_t *hi)
{
    uint64_t band = PARTS_REGION / PARTS_OPS, first = (uint64_t)j * band, end = first + band;
    *lo = first > p.off ? first - p.off : 0u;
    *hi = end > p.off ? end - p.off : 0u;
    *hi = *hi < p.size ? *hi : p.size;
    *lo = *lo < *hi ? *lo : *hi;
}

/* Put j of rank s in round r. */
TEST_FN parts_op_t parts_op(uint32_t seed, int r, int j, int s, int world)
{
    parts_op_t op;
    uint32_t h = parts_hash(seed ^ 0x1234u, (uint32_t)r, (uint32_t)j, (uint32_t)s);
    uint32_t k = parts_hash(seed ^ 0x77u, (uint32_t)r, (uint32_t)j, (uint32_t)s);
    op.target = (s + parts_shift(seed, r, j, world)) % world;
    op.win = (int)(h % (uint32_t)(parts_windows(seed, r) + 1));
    parts_part_t p = parts_part(seed, r, op.win, op.target);
    uint64_t part = p.size, lo, hi;
    parts_band(j, p, &lo, &hi);
    uint64_t size = (uint64_t)((k >> 3) % (PARTS_MAX_PUT + 1u));
    uint64_t in_band = lo + (uint64_t)((k >> 13) % (uint32_t)(hi - lo + 1u));
    uint32_t kind = k % 8u;
    if (kind == 1u && !(hi == part && lo < hi))
        kind = 2u; /* the part's last byte is not in the band */
    switch (kind) {
    case 0: /* nothing at all */
        op.size = 0;
        op.offset = (uint64_t)((k >> 13) % (uint32_t)(part + 1u));
        break;
    case 1: /* up to the part's last byte */
        op.size = size < hi - lo ? size : hi - lo;
        op.offset = part - op.size;
        break;
    case 2: /* one byte past it */
        op.size = size < part + 1u ? size : part + 1u;
        op.offset = part + 1u - op.size;
        break;
    case 3: /* beyond it */
        op.size = size;
        op.offset = part + 1u + (uint64_t)((k >> 20) % 64u);
        break;
    case 4:
    case 5: /* in the band, cut to fit */
        op.offset = in_band;
        op.size = size < hi - in_band ? size : hi - in_band;
        break;
    default: /* from the band, perhaps running past the part (never past the band in it) */
        op.offset = in_band;
        op.size = in_band + size <= part && in_band + size > hi ? hi - in_band : size;
        break;
    }
    op.inside = op.offset <= part && op.size <= part - op.offset;
    return op;
}

/* What byte `pos` of rank t's region holds in round r: covered by a put
 * of the round, or not. */
TEST_FN uint8_t parts_byte(uint32_t seed, int r, int t, uint64_t pos)
{
    return (uint8_t)(parts_hash(seed, (uint32_t)r, (uint32_t)t, (uint32_t)pos) >> 8);
}

TEST_FN uint8_t parts_canary(uint32_t seed, int r, int t, uint64_t pos)
{
    return (uint8_t)(parts_hash(seed ^ 0xca4a7u, (uint32_t)r, (uint32_t)t, (uint32_t)pos) >> 16);
}

/* Put j of round r that rank t receives (every rank receives one). */
TEST_FN parts_op_t parts_incoming(uint32_t seed, int r, int j, int t, int world)
{
    int s = (t - parts_shift(seed, r, j, world) + world) % world;
    return parts_op(seed, r, j, s, world);
}

/* Does a put of round r that landed cover byte pos of rank t's region? */
TEST_FN int parts_covered(uint32_t seed, int r, int t, uint64_t pos, int world)
{
    for (int j = 0; j < PARTS_OPS; j++) {
        parts_op_t op = parts_incoming(seed, r, j, t, world);
        uint64_t at = parts_part(seed, r, op.win, t).off + op.offset;
        if (op.inside && pos >= at && pos - at < op.size)
            return 1;
    }
    return 0;
}

/* What byte pos of rank t's region must hold after round r's puts. */
TEST_FN uint8_t parts_want(uint32_t seed, int r, int t, uint64_t pos, int world)
{
    return parts_covered(seed, r, t, pos, world) ? parts_byte(seed, r, t, pos)
                                                 : parts_canary(seed, r, t, pos);
}

/* The order round r frees its windows in: the i-th freed is window
 * 1 + (i + rotation) % n. */
TEST_FN int parts_freed(uint32_t seed, int r, int i)
{
    int n = parts_windows(seed, r);
    return 1 + (i + (int)(parts_hash(seed, (uint32_t)r, 0xf4eeu, 0u) % (uint32_t)n)) % n;
}

#endif /* DCUDA_TESTS_PARTS_H */
