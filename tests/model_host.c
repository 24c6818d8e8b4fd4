/*
 * Host driver of the randomized model test (model.h, model_kernels.c):
 *
 *   dcuda_test_model model|large|split|node [seed [runs [steps]]]
 *
 * Each run fills every slot of this process's ranks with a canary, runs the
 * seeded program, and then checks, for every rank this process owns, the
 * counts its ranks report (operations issued, notifications consumed and
 * bytes checked, each recomputed here) and every byte of its slots against
 * a replay of the whole program. Runs use the seeds seed, seed + 1, ...
 * `model` draws sizes up to 72 KiB (every threshold below the network's
 * 1 MiB chunk); `large` up to 1.25 MiB, with at most 8 ranks and fewer steps.
 * `split` runs `model` on the communicators of a seeded split of WORLD
 * (windows, notifications and barriers of each), `node` on NODE.
 * tools/model_soak.sh runs many seeds on every path.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"
#include "model.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(model);

typedef struct model_shape {
    int phases, steps;
    uint64_t region;
    int max_world; /* more ranks than this: skip (memory) */
    long runs;     /* seeds run by default */
} model_shape_t;

static const model_shape_t model_default = { 3, 32, 72u * 1024u, MODEL_MAX_RANKS, 2 };
static const model_shape_t model_large = { 2, 12, 1280u * 1024u, 8, 1 };

typedef struct model_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    model_data_t d;
    size_t part, buf_bytes;
    unsigned char *buf;  /* host copy of d.buf */
    unsigned char *want; /* one slot of the replay */
    int64_t res[MODEL_SLOTS * 512];
    int64_t total_ops, total_notes, total_bytes, total_gets, total_got, host_bytes;
} model_run_t;

/* The checks rank t makes of source s's operations in phase f: after
 * each notification (what came since the last), then after the phase's
 * last one, and all of it; the notifications and bytes they count. */
static void model_expect_source(const model_data_t *d, int s, int t, int f, int64_t *notes,
                                int64_t *bytes)
{
    model_list_t l;
    int checked = 0;
    model_list(d->seed, s, t, f, d->steps, d->world, d->region, &l);
    for (int step = 0; step < d->steps; step++) {
        model_op_t op = model_op(d->seed, s, f, step, d->world, d->region);
        if (op.target != t || !model_notifies(&op))
            continue;
        *notes += 1;
        *bytes += model_check_bytes(&l, checked, step);
        checked = step + 1;
    }
    *notes += 1;
    *bytes += model_check_bytes(&l, checked, d->steps - 1) + model_check_bytes(&l, 0, d->steps - 1);
}

/* What rank t must report. */
typedef struct model_counts {
    int64_t ops, notes, bytes; /* operations issued, notifications consumed, bytes checked */
    int64_t gets, got;         /* gets checked, and the bytes they brought */
} model_counts_t;

static void model_expect(const model_data_t *d, int t, model_counts_t *n)
{
    int64_t *notes = &n->notes, *bytes = &n->bytes;
    *n = (model_counts_t){ 0, 0, 0, 0, 0 };
    for (int f = 0; f < d->phases; f++)
        for (int s = 0; s < d->world; s++) {
            for (int step = 0; step < d->steps; step++) {
                model_op_t op = model_op(d->seed, s, f, step, d->world, d->region);
                n->ops += s == t && op.kind != MODEL_NONE;
                n->gets += s == t && model_gets(&op);
                n->got += s == t && model_gets(&op) ? (int64_t)op.size : 0;
            }
            if (model_targets(d->seed, s, t, f, d->world))
                model_expect_source(d, s, t, f, notes, bytes);
        }
}

/* Slot q of rank t after the whole program, into out. */
static void model_replay(const model_data_t *d, int t, int q, unsigned char *out)
{
    for (uint64_t pos = 0; pos < d->region; pos++)
        out[pos] = model_canary(d->seed, t, q, pos);
    for (int f = 0; f < d->phases; f++) {
        int s = model_owner(q, t, f, d->world);
        for (int step = 0; step < d->steps; step++) {
            model_op_t op = model_op(d->seed, s, f, step, d->world, d->region);
            if (op.target != t || !model_writes(&op))
                continue;
            for (uint64_t i = 0; i < op.size; i++)
                out[op.offset + i] = model_byte(d->seed, s, f, step, op.offset + i);
        }
    }
}

/* WORLD rank w (of this process) as the program sees it: its
 * communicator's program (seed) and size (world) in *v, its rank there
 * returned. A split's order is counted here from the colours and keys;
 * NODE is WORLD on one node, and my process's ranks where each process is
 * a node of its own (model_main runs no other layout). */
static int model_view(const model_data_t *d, const dcuda_rank_info_t *info, int w, model_data_t *v)
{
    *v = *d;
    if (d->comm == MODEL_ON_NODE && info->node_count > 1) {
        v->world = info->rank_responsible;
        return w - info->rank_start;
    }
    if (d->comm != MODEL_ON_SPLIT)
        return w;
    int colour = model_colour(d->seed, w), key = model_key(d->seed, w), rank = 0, size = 0;
    for (int u = 0; u < d->world; u++) {
        if (model_colour(d->seed, u) != colour)
            continue;
        int k = model_key(d->seed, u);
        rank += k < key || (k == key && u < w);
        size++;
    }
    v->seed = model_comm_seed(d->seed, colour);
    v->world = size;
    return rank;
}

static void model_check_rank(model_run_t *m, int dr)
{
    model_data_t view;
    const model_data_t *d = &view;
    const int w = m->info.rank_start + dr, t = model_view(&m->d, &m->info, w, &view);
    const int64_t *res = m->res + (size_t)dr * MODEL_SLOTS;
    model_counts_t n;
    model_expect(d, t, &n);
    TEST_CHECK(res[MODEL_RES_STATUS] == 0, "seed %u, rank %d: a call failed with %s", m->d.seed, w,
               dcuda_status_name((dcuda_status_t)res[MODEL_RES_STATUS]));
    TEST_CHECK(res[MODEL_RES_BAD] == 0, "seed %u, rank %d: %" PRId64 " checks failed (see its log)",
               m->d.seed, w, res[MODEL_RES_BAD]);
    TEST_CHECK(res[MODEL_RES_OPS] == n.ops && res[MODEL_RES_NOTES] == n.notes &&
                   res[MODEL_RES_BYTES] == n.bytes,
               "seed %u, rank %d: issued %" PRId64 ", consumed %" PRId64 ", checked %" PRId64
               " bytes; expected %" PRId64 ", %" PRId64 ", %" PRId64,
               m->d.seed, w, res[MODEL_RES_OPS], res[MODEL_RES_NOTES], res[MODEL_RES_BYTES], n.ops,
               n.notes, n.bytes);
    TEST_CHECK(res[MODEL_RES_GETS] == n.gets && res[MODEL_RES_GOT] == n.got,
               "seed %u, rank %d: checked %" PRId64 " gets of %" PRId64 " bytes; expected %" PRId64
               " of %" PRId64,
               m->d.seed, w, res[MODEL_RES_GETS], res[MODEL_RES_GOT], n.gets, n.got);
    m->total_ops += res[MODEL_RES_OPS];
    m->total_notes += res[MODEL_RES_NOTES];
    m->total_bytes += res[MODEL_RES_BYTES];
    m->total_gets += res[MODEL_RES_GETS];
    m->total_got += res[MODEL_RES_GOT];
    const unsigned char *part = m->buf + (size_t)dr * m->part;
    for (int q = 0; q < d->world; q++) {
        const unsigned char *got = part + (size_t)(1 + q) * d->region;
        model_replay(d, t, q, m->want);
        m->host_bytes += (int64_t)d->region;
        for (uint64_t pos = 0; pos < d->region; pos++)
            if (got[pos] != m->want[pos]) {
                TEST_CHECK(0,
                           "seed %u, rank %d: byte %" PRIu64 " of slot %d is %u, the replay "
                           "says %u",
                           m->d.seed, w, pos, q, got[pos], m->want[pos]);
                break;
            }
    }
}

/* One run of the program with `seed`; checks this process's ranks. */
static void model_one(model_run_t *m, uint32_t seed)
{
    model_data_t *d = &m->d;
    int mine = m->info.rank_responsible;
    d->seed = seed;
    for (int dr = 0; dr < mine; dr++) {
        model_data_t v;
        int t = model_view(d, &m->info, m->info.rank_start + dr, &v);
        for (int q = 0; q < v.world; q++)
            for (uint64_t pos = 0; pos < d->region; pos++)
                m->buf[(size_t)dr * m->part + (size_t)(1 + q) * d->region + pos] =
                    model_canary(v.seed, t, q, pos);
    }
    memset(m->res, 0x55, sizeof m->res);
    TEST_STATUS(dcuda_host_copy_in(m->h, d->buf, m->buf, m->buf_bytes), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(m->h, d->res, m->res, (size_t)mine * MODEL_SLOTS * 8), DCUDA_OK);
    double ms = 0;
    dcuda_status_t st = dcuda_host_run(m->h, d, sizeof *d, &ms);
    if (!TEST_STATUS(st, DCUDA_OK))
        printf("%sseed %u: the run returned %s: %s\n", test_who, seed, dcuda_status_name(st),
               dcuda_host_last_error(m->h));
    TEST_STATUS(dcuda_host_copy_out(m->h, m->buf, d->buf, m->buf_bytes), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(m->h, m->res, d->res, (size_t)mine * MODEL_SLOTS * 8),
                DCUDA_OK);
    for (int dr = 0; dr < mine; dr++)
        model_check_rank(m, dr);
}

static int model_main(int argc, char **argv, const model_shape_t *shape, int comm)
{
    model_run_t *m = calloc(1, sizeof *m);
    if (!m)
        return 1;
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, shape->runs);
    int steps = (int)test_arg(argc, argv, 4, shape->steps);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(model), 64, &m->h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(m->h, &m->info);
    test_check_rank_setting(&m->info);
    int world = m->info.rank_count;
    if (comm == MODEL_ON_NODE && m->info.node_count > 1 &&
        m->info.node_count != m->info.process_count) {
        printf("SKIP %s: %d nodes of %d processes (this test replays NODE on one node, or on "
               "a node a process)\n",
               argv[1], m->info.node_count, m->info.process_count);
        TEST_STATUS(dcuda_host_finish(m->h), DCUDA_OK);
        free(m);
        return TEST_SKIP;
    }
    if (world > shape->max_world || m->info.rank_responsible > 512 || steps < 1 ||
        steps > MODEL_MAX_STEPS) {
        printf("SKIP %s: %d ranks (at most %d) and %d steps (1..%d)\n", argv[1], world,
               shape->max_world, steps, MODEL_MAX_STEPS);
        TEST_STATUS(dcuda_host_finish(m->h), DCUDA_OK);
        free(m);
        return TEST_SKIP;
    }
    m->d = (model_data_t){ 0, shape->phases, steps, comm, world, shape->region, NULL, NULL };
    m->part = (size_t)model_part_bytes(world, shape->region);
    m->buf_bytes = m->part * (size_t)m->info.rank_responsible;
    m->want = malloc(shape->region);
    TEST_CHECK(m->want != NULL, "out of memory");
    if (m->want && test_alloc_both(m->h, m->buf_bytes, (void **)&m->buf, (void **)&m->d.buf) &&
        TEST_STATUS(dcuda_host_alloc(m->h, (size_t)m->info.rank_responsible * MODEL_SLOTS * 8,
                                     (void **)&m->d.res),
                    DCUDA_OK))
        for (long run = 0; run < runs; run++)
            model_one(m, seed + (uint32_t)run);
    printf("%smodel on %s: seeds %u..%u, %d ranks, %d phases of %d steps: this process's ranks "
           "issued "
           "%" PRId64 " operations, consumed %" PRId64 " notifications, checked %" PRId64
           " bytes and %" PRId64 " gets of %" PRId64 " bytes; the host compared %" PRId64
           " bytes with the replay\n",
           test_who,
           comm == MODEL_ON_SPLIT  ? "splits"
           : comm == MODEL_ON_NODE ? "NODE"
                                   : "WORLD",
           seed, seed + (uint32_t)runs - 1u, world, m->d.phases, steps, m->total_ops,
           m->total_notes, m->total_bytes, m->total_gets, m->total_got, m->host_bytes);
    test_free_both(m->h, m->buf, m->d.buf);
    if (m->d.res)
        TEST_STATUS(dcuda_host_free(m->h, m->d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(m->h), DCUDA_OK);
    free(m->want);
    free(m);
    return 0;
}

static int run_model(int argc, char **argv)
{
    return model_main(argc, argv, &model_default, MODEL_ON_WORLD);
}
static int run_large(int argc, char **argv)
{
    return model_main(argc, argv, &model_large, MODEL_ON_WORLD);
}
static int run_split(int argc, char **argv)
{
    return model_main(argc, argv, &model_default, MODEL_ON_SPLIT);
}
static int run_node(int argc, char **argv)
{
    return model_main(argc, argv, &model_default, MODEL_ON_NODE);
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "model", run_model },
        { "large", run_large },
        { "split", run_split },
        { "node", run_node },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
