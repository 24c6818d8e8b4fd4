/*
 * The notify cases of the host RMA test (dcuda_test_hostrma notify,
 * notify_large): while the ranks wait, every process's host runs a seeded
 * program of dcuda_host_put_notify, dcuda_host_put followed by
 * dcuda_host_notify, and dcuda_host_get_notify, to three hot ranks at a
 * time of the whole job, blocking or with requests. Each rank knows from
 * a replay of every host's program how many notifications each host
 * sends it, checks the slot each announces as soon as it takes it,
 * answers a get's notification by writing the bytes anew, and then finds
 * no more; after the run each host compares its ranks' parts with the
 * replay (hostrma.h: the layout; hostrma_kernels.c: the ranks' side).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "hostrma.h"
#include "hostrma_host.h"
#include "test_util.h"

#define HN_OPS 48
#define HN_OPS_LARGE 12
#define HN_IN_FLIGHT 6

enum { HN_PUT_NOTIFY, HN_PUT_THEN_NOTE, HN_GET_NOTIFY };

/* One request of a host's notify program: slot -1 when it is skipped
 * (the rank's slots are used up, or it was got from already). */
typedef struct hn_op {
    int kind, target, slot, mode; /* mode 0: blocking; else handles */
    uint32_t size;                /* the payload's */
} hn_op_t;

/* A payload's size across the copies' thresholds, or any up to `most`;
 * the large form's beyond one of the network path's chunks. */
static uint32_t draw_payload(uint64_t *rng, uint32_t most)
{
    static const uint32_t sizes[] = { 0, 1, 3, 7, 8, 9, 16, 31, 64, 65, 4095, 4096, 4097 };
    uint64_t pick = test_rng(rng) % 16u, any = test_rng(rng);
    if (most > HR_CHUNK)
        return pick < 4   ? sizes[pick * 3]
               : pick < 8 ? most
                          : HR_CHUNK + (uint32_t)(any % (most - HR_CHUNK + 1u));
    return pick < 13 ? sizes[pick] : (uint32_t)(any % (most + 1u));
}

/* Op i of a host's program; slots[r] and gets[r] count what it sent rank
 * r so far (every draw is made whatever is skipped, so that any host
 * replays another's). */
static hn_op_t draw_note(const hr_t *t, uint64_t *rng, int hot[3], int *slots, int *gets)
{
    hn_op_t op;
    if (test_rng(rng) % 8u == 0)
        for (int k = 0; k < 3; k++)
            hot[k] = (int)(test_rng(rng) % (uint64_t)t->info.rank_count);
    op.target = hot[test_rng(rng) % 3u];
    uint64_t kind = test_rng(rng) % 8u;
    op.kind = kind < 4 ? HN_PUT_NOTIFY : kind < 7 ? HN_PUT_THEN_NOTE : HN_GET_NOTIFY;
    op.size = draw_payload(rng, t->d.note_cap - HN_HEADER);
    op.mode = (int)(test_rng(rng) % 3u);
    op.slot = -1;
    if (op.kind == HN_GET_NOTIFY && !gets[op.target]) {
        gets[op.target] = 1;
        op.slot = 0;
    } else if (op.kind != HN_GET_NOTIFY && slots[op.target] < (int)t->d.note_slots) {
        op.slot = slots[op.target]++;
    }
    return op;
}

/* Replays host q's program: slots[r], gets[r] and (sizes, when not NULL)
 * each slot's payload size, [r][slot]. */
static int replay_notes(const hr_t *t, int q, int *slots, int *gets, uint32_t *sizes)
{
    int world = t->info.rank_count;
    int *s = calloc((size_t)world, sizeof *s), *g = calloc((size_t)world, sizeof *g);
    if (!s || !g) {
        free(s);
        free(g);
        return 0;
    }
    uint64_t rng = program_seed(t, q);
    int hot[3] = { 0, 0, 0 };
    for (int i = 0; i < HN_OPS; i++) {
        hn_op_t op = draw_note(t, &rng, hot, s, g);
        if (sizes && op.slot >= 0 && op.kind != HN_GET_NOTIFY)
            sizes[op.target * (int)t->d.note_slots + op.slot] = op.size;
    }
    memcpy(slots, s, (size_t)world * sizeof *s);
    memcpy(gets, g, (size_t)world * sizeof *g);
    free(s);
    free(g);
    return 1;
}

/* The plan of my ranks: what every host sends each of them. */
static void write_plan(hr_t *t, int32_t *plan)
{
    int world = t->info.rank_count;
    int *slots = calloc((size_t)world, sizeof *slots), *gets = calloc((size_t)world, sizeof *gets);
    TEST_CHECK(slots && gets, "out of memory");
    for (int q = 0; slots && gets && q < t->procs; q++) {
        TEST_CHECK(replay_notes(t, q, slots, gets, NULL), "out of memory");
        for (int l = 0; l < t->per_proc; l++) {
            int32_t *p = plan + ((size_t)l * (size_t)t->procs + (size_t)q) * HN_PLAN;
            p[HN_COUNT] = slots[t->info.rank_start + l];
            p[HN_GETS] = gets[t->info.rank_start + l];
            p[HN_FOUND] = HN_NOT_YET;
            p[HN_WHERE] = 0;
        }
    }
    free(slots);
    free(gets);
}

/* The bytes of rank r's WORLD part before anything moved. */
static uint8_t note_first(const hr_t *t, int r, uint64_t at)
{
    return hostrma_first(t->d.seed, r, HR_WORLD, at);
}

/* A request of mine in flight: its requests, bytes and what a get must find. */
typedef struct hn_flight {
    dcuda_host_req_t req[2];
    unsigned char *buf;
    hn_op_t op;
} hn_flight_t;

/* Starts op (its requests in f->req, or completed when blocking). */
static void start_note(hr_t *t, const hn_op_t *op, hn_flight_t *f)
{
    uint64_t stripe = stripe_of(t, op->target, HR_WORLD);
    uint64_t region = (uint64_t)t->me * stripe;
    uint32_t win = t->win[HR_WORLD][0];
    int tag = hostnote_tag(t->me);
    memset(f, 0, sizeof *f);
    f->op = *op;
    f->buf = malloc(t->d.note_cap);
    TEST_CHECK(f->buf != NULL, "out of memory");
    if (!f->buf)
        return;
    dcuda_host_req_t *r0 = op->mode ? &f->req[0] : NULL, *r1 = op->mode ? &f->req[1] : NULL;
    if (op->kind == HN_GET_NOTIFY) {
        memset(f->buf, 0x5a, HN_GET_BYTES);
        dcuda_gptr_t g =
            dcuda_gptr(win, op->target, region + (uint64_t)t->d.note_slots * t->d.note_cap);
        TEST_STATUS(
            dcuda_host_get_notify(t->h, f->buf, g, HN_GET_BYTES, hostnote_get_tag(t->me), r0),
            DCUDA_OK);
        return;
    }
    uint32_t magic = hostnote_magic(t->me, op->slot), size = op->size;
    memset(f->buf, 0, HN_HEADER);
    for (int i = 0; i < 4; i++) {
        f->buf[i] = (unsigned char)(magic >> (8 * i));
        f->buf[4 + i] = (unsigned char)(size >> (8 * i));
    }
    for (uint32_t i = 0; i < size; i++)
        f->buf[HN_HEADER + i] = hostnote_byte(t->d.seed, t->me, op->target, op->slot, i);
    dcuda_gptr_t g = dcuda_gptr(win, op->target, region + (uint64_t)op->slot * t->d.note_cap);
    if (op->kind == HN_PUT_NOTIFY) {
        TEST_STATUS(dcuda_host_put_notify(t->h, g, f->buf, HN_HEADER + size, tag, r0), DCUDA_OK);
    } else { /* a put, then a notification alone: it covers the put */
        TEST_STATUS(dcuda_host_put(t->h, g, f->buf, HN_HEADER + size, r0), DCUDA_OK);
        TEST_STATUS(dcuda_host_notify(t->h, op->target, tag, r1), DCUDA_OK);
    }
}

/* A get's bytes are the rank's from before its notification. */
static void end_note(hr_t *t, hn_flight_t *f)
{
    TEST_CHECK(f->req[0] == NULL && f->req[1] == NULL, "a completed request keeps its handle");
    if (f->buf && f->op.kind == HN_GET_NOTIFY) {
        int r = f->op.target;
        uint64_t at =
            (uint64_t)t->me * stripe_of(t, r, HR_WORLD) + (uint64_t)t->d.note_slots * t->d.note_cap;
        for (uint64_t i = 0; i < HN_GET_BYTES; i++)
            if (f->buf[i] != note_first(t, r, at + i)) {
                TEST_CHECK(0,
                           "host %d's get from rank %d: byte %llu is 0x%02x, want 0x%02x "
                           "(the rank wrote it before the get ended?)",
                           t->me, r, (unsigned long long)i, f->buf[i], note_first(t, r, at + i));
                break;
            }
    }
    free(f->buf);
    f->buf = NULL;
}

/* Completes the requests in flight: all waited for at once, tested until
 * done, or each waited for. */
static void end_notes(hr_t *t, hn_flight_t *f, int n, uint64_t *rng)
{
    dcuda_host_req_t reqs[2 * HN_IN_FLIGHT];
    for (int i = 0; i < n; i++)
        reqs[2 * i] = f[i].req[0], reqs[2 * i + 1] = f[i].req[1];
    int how = (int)(test_rng(rng) % 3u), done = 0;
    if (how == 0)
        TEST_STATUS(dcuda_host_req_waitall(t->h, reqs, (size_t)(2 * n)), DCUDA_OK);
    for (long polls = 0; how == 1 && !done && polls < 6000000L; polls++)
        TEST_STATUS(dcuda_host_req_testall(t->h, reqs, (size_t)(2 * n), &done), DCUDA_OK);
    for (int i = 0; how == 2 && i < 2 * n; i++)
        TEST_STATUS(dcuda_host_req_wait(t->h, &reqs[i]), DCUDA_OK);
    for (int i = 0; i < n; i++) {
        f[i].req[0] = reqs[2 * i];
        f[i].req[1] = reqs[2 * i + 1];
        end_note(t, &f[i]);
    }
}

static void run_notes(hr_t *t)
{
    int world = t->info.rank_count;
    int *slots = calloc((size_t)world, sizeof *slots), *gets = calloc((size_t)world, sizeof *gets);
    uint64_t rng = program_seed(t, t->me), crng = rng ^ 0x2545f491u;
    int hot[3] = { 0, 0, 0 }, n = 0;
    hn_flight_t f[HN_IN_FLIGHT];
    TEST_CHECK(slots && gets, "out of memory");
    for (int i = 0; slots && gets && i < HN_OPS; i++) {
        hn_op_t op = draw_note(t, &rng, hot, slots, gets);
        if (op.slot < 0)
            continue;
        start_note(t, &op, &f[n]);
        if (!op.mode)
            end_note(t, &f[n]);
        else if (++n == HN_IN_FLIGHT || test_rng(&crng) % 4u == 0) {
            end_notes(t, f, n, &crng);
            n = 0;
        }
    }
    end_notes(t, f, n, &crng);
    free(slots);
    free(gets);
}

/* After the run: what each of my ranks found, and its part of WORLD's
 * window against a replay of every host's program. */
static void check_notes(hr_t *t, int32_t *plan)
{
    size_t entries = (size_t)t->per_proc * (size_t)t->procs * HN_PLAN;
    int32_t *got = malloc(entries * sizeof *got);
    int world = t->info.rank_count;
    int *slots = calloc((size_t)world, sizeof *slots), *gets = calloc((size_t)world, sizeof *gets);
    uint32_t *sizes = calloc((size_t)world * t->d.note_slots, sizeof *sizes);
    unsigned char *part = malloc(t->d.slot_bytes), *want = malloc(t->d.slot_bytes);
    TEST_CHECK(got && slots && gets && sizes && part && want, "out of memory");
    if (got && TEST_STATUS(dcuda_host_copy_out(t->h, got, plan, entries * sizeof *got), DCUDA_OK))
        for (size_t e = 0; e < entries; e += HN_PLAN)
            TEST_CHECK(got[e + HN_FOUND] == HN_OK,
                       "rank %d, notifications of host %d: finding %d at slot %d byte %d",
                       t->info.rank_start + (int)(e / HN_PLAN) / t->procs,
                       (int)(e / HN_PLAN) % t->procs, got[e + HN_FOUND], got[e + HN_WHERE] >> 20,
                       got[e + HN_WHERE] & 0xfffff);
    for (int l = 0; part && want && sizes && l < t->per_proc; l++) {
        int r = t->info.rank_start + l;
        uint64_t stripe = stripe_of(t, r, HR_WORLD), n = (uint64_t)t->procs * stripe;
        for (uint64_t i = 0; i < n; i++)
            want[i] = note_first(t, r, i);
        for (int q = 0; q < t->procs; q++) {
            if (!replay_notes(t, q, slots, gets, sizes))
                break;
            unsigned char *region = want + (uint64_t)q * stripe;
            for (int k = 0; k < slots[r]; k++) {
                unsigned char *slot = region + (uint64_t)k * t->d.note_cap;
                uint32_t magic = hostnote_magic(q, k), size = sizes[r * (int)t->d.note_slots + k];
                memset(slot, 0, HN_HEADER);
                for (int i = 0; i < 4; i++) {
                    slot[i] = (unsigned char)(magic >> (8 * i));
                    slot[4 + i] = (unsigned char)(size >> (8 * i));
                }
                for (uint32_t i = 0; i < size; i++)
                    slot[HN_HEADER + i] = hostnote_byte(t->d.seed, q, r, k, i);
            }
            for (uint64_t i = 0; gets[r] && i < HN_GET_BYTES; i++)
                region[(uint64_t)t->d.note_slots * t->d.note_cap + i] =
                    hostnote_after_get(t->d.seed, q, r, i);
        }
        const unsigned char *at = t->d.parts + (size_t)l * HR_SLOTS * t->d.slot_bytes;
        if (!TEST_STATUS(dcuda_host_copy_out(t->h, part, at, n), DCUDA_OK))
            break;
        for (uint64_t i = 0; i < n; i++)
            if (part[i] != want[i]) {
                TEST_CHECK(0, "rank %d's part, byte %llu (host %llu's stripe): 0x%02x, want 0x%02x",
                           r, (unsigned long long)i, (unsigned long long)(i / stripe), part[i],
                           want[i]);
                break;
            }
    }
    free(got);
    free(slots);
    free(gets);
    free(sizes);
    free(part);
    free(want);
}

/* The hosts notify the ranks while they wait: a seeded program of notified
 * puts, puts then notifications alone, and notified gets, to every rank
 * over every path; each rank checks the slot a notification announces as
 * soon as it has it, answers a get's notification, and finds no more. */
static int notify_run(int argc, char **argv, uint32_t slots, uint32_t cap, int ops)
{
    hr_t t;
    int32_t *plan = NULL;
    uint64_t region = (uint64_t)slots * cap + HN_GET_BYTES; /* a host's stripe's use */
    if (!hr_open(&t, argc, argv, 0, region + region / 3u + 64u, ops))
        return 0;
    t.d.note_slots = slots;
    t.d.note_cap = cap;
    size_t bytes = (size_t)t.per_proc * (size_t)t.procs * HN_PLAN * sizeof *plan;
    int32_t *mine = calloc(1, bytes);
    TEST_CHECK(mine != NULL, "out of memory");
    if (mine && TEST_STATUS(dcuda_host_alloc(t.h, bytes, (void **)&plan), DCUDA_OK)) {
        t.d.notify = 1;
        t.d.plan = plan;
        TEST_STATUS(dcuda_host_run_start(t.h, &t.d, sizeof t.d, NULL), DCUDA_OK);
        if (await_ranks(&t, HR_READY)) {
            read_handles(&t);
            write_plan(&t, mine);
            TEST_STATUS(dcuda_host_copy_in(t.h, plan, mine, bytes), DCUDA_OK);
        }
        write_word(&t, HR_GATE, 1);
        run_notes(&t);
        TEST_STATUS(dcuda_host_run_wait(t.h, NULL), DCUDA_OK);
        check_ranks(&t);
        check_notes(&t, plan);
        TEST_STATUS(dcuda_host_free(t.h, plan), DCUDA_OK);
    }
    free(mine);
    hr_close(&t);
    return 0;
}

int case_notify(int argc, char **argv)
{
    return notify_run(argc, argv, HN_SLOTS, HN_SLOT_CAP, HN_OPS);
}

/* Notified requests of more than one of the network path's chunks: the
 * notification goes with the last. */
int case_notify_large(int argc, char **argv)
{
    return notify_run(argc, argv, HN_SLOTS_LARGE, HN_SLOT_CAP_LARGE, HN_OPS_LARGE);
}
