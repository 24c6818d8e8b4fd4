/*
 * Host driver of the host RMA test: dcuda_test_hostrma <case> [seed].
 *   model   While the ranks wait at its gate, every process's host runs a
 *           seeded program of dcuda_host_put and dcuda_host_get on the
 *           parts of WORLD's window, of a split's and of DEVICE's: batches
 *           of requests to a few hot targets at a time, sizes across 0, a
 *           few bytes, words, pages and its whole share, blocking or with
 *           handles completed by wait, test, waitall or testall in random
 *           order. Host q writes and reads only stripe q of each part, so
 *           what it reads is fixed by its own program: every get is
 *           checked against a model of its stripes when it completes.
 *           After the run each host compares its own ranks' parts with a
 *           replay of every host's program (and the bytes past the parts
 *           with zero). Every part is reached: over memory (this
 *           process's ranks, the node's) or through the proxies (a
 *           process on the network path).
 *   large   The same with stripes up to 1.3 MiB (requests of several of
 *           the network path's chunks, batches beyond what it keeps in
 *           flight) and 40 requests a host, in two runs: one of
 *           dcuda_host_run_start, one of dcuda_host_run on another thread
 *           while the main thread moves the bytes.
 *   staged  The model's program with stripes up to 160 KiB, to other
 *           processes' ranks, sizes across the size from which the
 *           network path's owner copies through the staging (32 KiB),
 *           a third of the requests a get of the bytes just put or a put
 *           over those just read, in flight together.
 *   misuse  Every refusal, with its status: no run, a handle of no window,
 *           a rank outside WORLD or, for DEVICE's window, of another
 *           process, bytes past the part, a wrapping range, NULL memory,
 *           bad request arguments, a freed window, a run whose ranks have
 *           returned; the part's refusals for a rank of another process
 *           too (the network path answers them when the request ends); and
 *           a request left open completes at the run's end.
 *   notify, notify_large  The host's notifications (hostrma_notify.c).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"
#include "hostrma.h"
#include "hostrma_host.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(hostrma);

#define HR_OPS 240
#define HR_OPS_LARGE 40
#define HR_BATCH_MAX 8
#define HR_STRIPE_MAX 9000u
/* The large case: a stripe may hold more than one chunk of the network
 * path (1 MiB), and a batch more than the chunks it keeps in flight. */
#define HR_STRIPE_MAX_LARGE (1300u * 1024u)
/* The staged case: stripes of several staged copies, requests across the
 * size from which the owner's copies take the staging (DCUDA_NET_READ_MIN). */
#define HR_STRIPE_MAX_STAGED (160u * 1024u)
#define HR_STAGED_MIN 32768u
#define HR_OPS_STAGED 96

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* ---- meeting the ranks ------------------------------------------------------ */

static int64_t read_word(hr_t *t, int i)
{
    int64_t v = 0;
    if (t->gpu)
        TEST_STATUS(dcuda_host_copy_out(t->h, &v, &t->d.words[i], sizeof v), DCUDA_OK);
    else
        v = __atomic_load_n(&t->d.words[i], __ATOMIC_ACQUIRE);
    return v;
}

void write_word(hr_t *t, int i, int64_t v)
{
    if (t->gpu)
        TEST_STATUS(dcuda_host_copy_in(t->h, &t->d.words[i], &v, sizeof v), DCUDA_OK);
    else
        __atomic_store_n(&t->d.words[i], v, __ATOMIC_RELEASE);
}

/* Waits (at most a minute) for the ranks' word i. */
int await_ranks(hr_t *t, int i)
{
    for (int n = 0; n < 60000; n++) {
        if (read_word(t, i))
            return 1;
        sleep_ms(1);
    }
    TEST_CHECK(0, "the ranks did not reach the host within a minute (word %d)", i);
    return 0;
}

/* The handles my ranks published: WORLD's from any, a split's of each
 * colour from a rank of that colour, DEVICE's. */
void read_handles(hr_t *t)
{
    int n = t->info.rank_responsible;
    TEST_STATUS(dcuda_host_copy_out(t->h, t->words, t->d.words, t->word_count * sizeof *t->words),
                DCUDA_OK);
    memset(t->win, 0xff, sizeof t->win);
    for (int r = 0; r < n; r++) {
        const int64_t *hd = t->words + HR_HANDLES + r * HR_PER_RANK;
        int colour = (int)hd[HR_WINDOWS];
        TEST_CHECK(hd[0] >= 0 && hd[1] >= 0 && hd[2] >= 0 && (colour == 0 || colour == 1),
                   "device rank %d could not make its windows (%lld %lld %lld, colour %d)", r,
                   (long long)hd[0], (long long)hd[1], (long long)hd[2], colour);
        if (colour != 0 && colour != 1)
            continue;
        t->win[HR_WORLD][0] = t->win[HR_WORLD][1] = (uint32_t)hd[HR_WORLD];
        t->win[HR_SPLIT][colour] = (uint32_t)hd[HR_SPLIT];
        t->win[HR_DEVICE][0] = (uint32_t)hd[HR_DEVICE];
    }
}

/* ---- the programs ------------------------------------------------------------ */

/* One request of a host's program. */
typedef struct hr_op {
    int put, w, target, mode; /* mode 0: blocking; 1: a handle */
    uint64_t offset, size;    /* in the host's stripe */
} hr_op_t;

/* What a host's draws remember: the hot targets, the ops drawn, the last. */
typedef struct hr_draw {
    int hot[3];
    int count;
    hr_op_t last;
} hr_draw_t;

uint64_t stripe_of(const hr_t *t, int r, int w)
{
    return hostrma_stripe(t->d.seed, r, w, t->d.stripe_max);
}

/* A size across the thresholds that matter to copies: none, a few bytes,
 * words, a page, the whole stripe, or any. */
static uint64_t draw_size(uint64_t *rng, uint64_t stripe)
{
    static const uint64_t sizes[] = { 0, 1, 3, 7, 8, 9, 16, 31, 64, 65, 4095, 4096, 4097 };
    uint64_t pick = test_rng(rng) % 16u, n;
    if (pick < sizeof sizes / sizeof sizes[0])
        n = sizes[pick];
    else if (pick == 13)
        n = stripe;
    else if (pick == 14 && stripe > HR_CHUNK) /* more than one chunk of the network path */
        n = HR_CHUNK + test_rng(rng) % (stripe - HR_CHUNK + 1u);
    else
        n = test_rng(rng) % (stripe + 1u);
    return n < stripe ? n : stripe;
}

/* The staged case's sizes: across the staging threshold of the network
 * path's owner (DCUDA_NET_READ_MIN), small ones between. */
static uint64_t draw_staged_size(uint64_t *rng, uint64_t stripe)
{
    static const uint64_t small[] = { 0, 8, 4095 }, edge[] = { 32767, 32768, 32769 };
    uint64_t pick = test_rng(rng) % 8u, n;
    if (pick == 0)
        n = small[test_rng(rng) % 3u];
    else if (pick == 1)
        n = edge[test_rng(rng) % 3u];
    else if (pick == 2)
        n = stripe;
    else
        n = HR_STAGED_MIN + test_rng(rng) % (stripe - HR_STAGED_MIN + 1u);
    return n < stripe ? n : stripe;
}

/* A hot target: any rank, or (the staged case, several processes) a rank
 * of another process. */
static int draw_target(const hr_t *t, uint64_t *rng, int q)
{
    int world = t->info.rank_count, others = world - t->per_proc;
    if (!t->staged || others == 0)
        return (int)(test_rng(rng) % (uint64_t)world);
    return ((q + 1) * t->per_proc + (int)(test_rng(rng) % (uint64_t)others)) % world;
}

/* Op i of host q's program (every draw made whatever is skipped later,
 * so that any host replays another's). `s->hot`: three targets, changed
 * every 16 ops. In the staged case a third of the ops turn the one before
 * around (a get of the bytes just put, or a put over those just read). */
static hr_op_t draw_op(const hr_t *t, uint64_t *rng, int q, hr_draw_t *s)
{
    hr_op_t op;
    const int first = t->staged && s->count == 0; /* the staged case's targets from the start */
    if (first || test_rng(rng) % 16u == 0)
        for (int k = 0; k < 3; k++)
            s->hot[k] = draw_target(t, rng, q);
    if (t->staged && s->count++ > 0 && test_rng(rng) % 3u == 0) {
        op = s->last;
        op.put = !op.put;
        s->last = op;
        return op;
    }
    op.put = test_rng(rng) % 2u == 0;
    op.w = (int)(test_rng(rng) % HR_WINDOWS);
    op.target = s->hot[test_rng(rng) % 3u];
    if (op.w == HR_DEVICE) /* DEVICE's window: my own ranks */
        op.target = q * t->per_proc + op.target % t->per_proc;
    uint64_t stripe = stripe_of(t, op.target, op.w);
    op.size = t->staged ? draw_staged_size(rng, stripe) : draw_size(rng, stripe);
    op.offset = test_rng(rng) % (stripe - op.size + 1u);
    if (test_rng(rng) % 4u == 0) /* a hot zone: puts and gets overlap */
        op.offset = op.offset % 64u < stripe - op.size + 1u ? op.offset % 64u : 0u;
    op.mode = (int)(test_rng(rng) % (t->staged ? 8u : 4u) != 0);
    s->last = op;
    return op;
}

uint64_t program_seed(const hr_t *t, int q)
{
    return (uint64_t)t->d.seed * 0x9e3779b97f4a7c15ull + (uint64_t)q * 7919u + 1u;
}

/* Host q knows a split's handle of `colour` when it has a rank of it. */
static int knows_colour(const hr_t *t, int q, int colour)
{
    for (int r = q * t->per_proc; r < (q + 1) * t->per_proc; r++)
        if (r % 2 == colour)
            return 1;
    return 0;
}

/* Does host q issue op (it may still be refused as unreachable)? */
static int issues(const hr_t *t, int q, const hr_op_t *op)
{
    return op->w != HR_SPLIT || knows_colour(t, q, op->target % 2);
}

/* Byte `at` of the payload of op i of host q. */
static uint8_t payload(const hr_t *t, int q, int i, uint64_t at)
{
    return test_byte(t->d.seed ^ (uint32_t)(q * 0x3779u), (uint32_t)i + 1u, at);
}

/* ---- the model of my stripes ------------------------------------------------- */

/* [WORLD rank][window]: stripe me of that part as it must be. */
typedef struct hr_model {
    unsigned char **bytes;
} hr_model_t;

static unsigned char *model_of(hr_model_t *m, const hr_t *t, int r, int w)
{
    return m->bytes[(size_t)r * HR_WINDOWS + (size_t)w];
}

static int model_init(hr_model_t *m, const hr_t *t, int q)
{
    size_t n = (size_t)t->info.rank_count * HR_WINDOWS;
    m->bytes = calloc(n, sizeof *m->bytes);
    if (!m->bytes)
        return 0;
    for (int r = 0; r < t->info.rank_count; r++)
        for (int w = 0; w < HR_WINDOWS; w++) {
            uint64_t s = stripe_of(t, r, w);
            unsigned char *b = malloc(s);
            if (!b)
                return 0;
            for (uint64_t i = 0; i < s; i++)
                b[i] = hostrma_first(t->d.seed, r, w, (uint64_t)q * s + i);
            m->bytes[(size_t)r * HR_WINDOWS + (size_t)w] = b;
        }
    return 1;
}

static void model_free(hr_model_t *m, const hr_t *t)
{
    if (!m->bytes)
        return;
    for (size_t i = 0; i < (size_t)t->info.rank_count * HR_WINDOWS; i++)
        free(m->bytes[i]);
    free(m->bytes);
    m->bytes = NULL;
}

/* ---- running my program --------------------------------------------------------- */

/* A request in flight and what a get must find. */
typedef struct hr_pending {
    dcuda_host_req_t req;
    unsigned char *buf;  /* the put's payload, or the get's landing */
    unsigned char *want; /* a get: the model's bytes when it was made */
    hr_op_t op;
    int index;
} hr_pending_t;

static void check_get(const hr_pending_t *p)
{
    if (p->op.put)
        return;
    for (uint64_t i = 0; i < p->op.size; i++)
        if (p->buf[i] != p->want[i]) {
            TEST_CHECK(0,
                       "get %d (rank %d, window %d, stripe bytes %llu + %llu): byte %llu is "
                       "0x%02x, the model says 0x%02x",
                       p->index, p->op.target, p->op.w, (unsigned long long)p->op.offset,
                       (unsigned long long)p->op.size, (unsigned long long)i, p->buf[i],
                       p->want[i]);
            return;
        }
}

/* Completes a batch: waitall, testall until done, each by test then
 * wait, or each waited for in reverse order. */
static void complete_batch(hr_t *t, hr_pending_t *b, int n, uint64_t *rng)
{
    dcuda_host_req_t reqs[HR_BATCH_MAX];
    for (int i = 0; i < n; i++)
        reqs[i] = b[i].req;
    int how = (int)(test_rng(rng) % 4u), done = 0;
    if (how == 0) {
        TEST_STATUS(dcuda_host_req_waitall(t->h, reqs, (size_t)n), DCUDA_OK);
    } else if (how == 1) {
        for (long us = 0; !done && us < 60L * 1000000L; us += 10) { /* a minute at most */
            TEST_STATUS(dcuda_host_req_testall(t->h, reqs, (size_t)n, &done), DCUDA_OK);
            if (!done) {
                struct timespec ts = { 0, 10000 };
                nanosleep(&ts, NULL);
            }
        }
        TEST_CHECK(done, "testall never said done");
    } else {
        for (int k = 0; k < n; k++) {
            int i = how == 2 ? k : n - 1 - k;
            if (how == 2) {
                TEST_STATUS(dcuda_host_req_test(t->h, &reqs[i], &done), DCUDA_OK);
                TEST_CHECK((done == 1) == (reqs[i] == NULL),
                           "req_test said %d and left the request %s", done,
                           reqs[i] ? "set" : "NULL");
            }
            TEST_STATUS(dcuda_host_req_wait(t->h, &reqs[i]), DCUDA_OK);
        }
    }
    for (int i = 0; i < n; i++) {
        TEST_CHECK(reqs[i] == NULL, "request %d of the batch still set after completion", i);
        check_get(&b[i]);
        free(b[i].buf);
        free(b[i].want);
    }
}

/* Starts op i of my program (its model updated at once: requests complete
 * in order). 1 if it was started and belongs to the batch. */
static int start_op(hr_t *t, hr_model_t *m, const hr_op_t *op, int i, hr_pending_t *p)
{
    uint64_t stripe = stripe_of(t, op->target, op->w);
    uint32_t win = t->win[op->w][op->w == HR_SPLIT ? op->target % 2 : 0];
    dcuda_gptr_t g = dcuda_gptr(win, op->target, (uint64_t)t->me * stripe + op->offset);
    unsigned char *model = model_of(m, t, op->target, op->w) + op->offset;
    memset(p, 0, sizeof *p);
    p->op = *op;
    p->index = i;
    p->buf = malloc(op->size ? op->size : 1);
    if (!p->buf)
        return 0;
    dcuda_host_req_t *req = op->mode ? &p->req : NULL;
    dcuda_status_t want = DCUDA_OK, got;
    if (op->put) {
        for (uint64_t k = 0; k < op->size; k++)
            p->buf[k] = payload(t, t->me, i, k);
        got = dcuda_host_put(t->h, g, p->buf, op->size, req);
    } else {
        memset(p->buf, 0xa5, op->size);
        p->want = malloc(op->size ? op->size : 1);
        if (p->want)
            memcpy(p->want, model, op->size);
        got = dcuda_host_get(t->h, p->buf, g, op->size, req);
    }
    TEST_CHECK(got == want, "op %d (%s of %llu bytes to rank %d, window %d): %s, want %s", i,
               op->put ? "put" : "get", (unsigned long long)op->size, op->target, op->w,
               dcuda_status_name(got), dcuda_status_name(want));
    if (got == DCUDA_OK && op->put)
        memcpy(model, p->buf, op->size);
    if (got == DCUDA_OK && !op->mode) { /* done already */
        check_get(p);
        got = DCUDA_ERR_UNSUPPORTED; /* not part of the batch */
    }
    if (got != DCUDA_OK) {
        free(p->buf);
        free(p->want);
        return 0;
    }
    return 1;
}

static void run_program(hr_t *t, hr_model_t *m)
{
    uint64_t rng = program_seed(t, t->me), crng = rng ^ 0x5bd1e995u;
    hr_draw_t draw = { { 0, 0, 0 }, 0, { 0 } };
    hr_pending_t batch[HR_BATCH_MAX];
    int n = 0, limit = 1 + (int)(test_rng(&crng) % HR_BATCH_MAX);
    for (int i = 0; i < t->ops; i++) {
        hr_op_t op = draw_op(t, &rng, t->me, &draw);
        if (issues(t, t->me, &op) && start_op(t, m, &op, i, &batch[n]))
            n++;
        if (n == limit || i == t->ops - 1) {
            complete_batch(t, batch, n, &crng);
            n = 0;
            limit = 1 + (int)(test_rng(&crng) % HR_BATCH_MAX);
        }
    }
}

/* ---- after the run ------------------------------------------------------------ */

/* What my rank r's part of window w must hold: every host's stripe as its
 * program left it (a host that cannot reach r left it alone). */
static void expected_part(const hr_t *t, int r, int w, unsigned char *out)
{
    uint64_t s = stripe_of(t, r, w);
    for (uint64_t i = 0; i < (uint64_t)t->procs * s; i++)
        out[i] = hostrma_first(t->d.seed, r, w, i);
    for (int q = 0; q < t->procs; q++) {
        uint64_t rng = program_seed(t, q);
        hr_draw_t draw = { { 0, 0, 0 }, 0, { 0 } };
        for (int i = 0; i < t->ops; i++) {
            hr_op_t op = draw_op(t, &rng, q, &draw);
            if (!op.put || op.target != r || op.w != w || !issues(t, q, &op))
                continue;
            for (uint64_t k = 0; k < op.size; k++)
                out[(uint64_t)q * s + op.offset + k] = payload(t, q, i, k);
        }
    }
}

static void check_parts(hr_t *t)
{
    size_t bytes = (size_t)t->info.rank_responsible * HR_SLOTS * t->d.slot_bytes;
    unsigned char *got = malloc(bytes), *want = malloc(t->d.slot_bytes);
    TEST_CHECK(got && want, "out of memory");
    if (!got || !want ||
        !TEST_STATUS(dcuda_host_copy_out(t->h, got, t->d.parts, bytes), DCUDA_OK)) {
        free(got);
        free(want);
        return;
    }
    for (int l = 0; l < t->info.rank_responsible; l++) {
        int r = t->info.rank_start + l;
        for (int w = 0; w < HR_WINDOWS; w++) {
            const unsigned char *part = got + ((size_t)l * HR_SLOTS + (size_t)w) * t->d.slot_bytes;
            uint64_t n = (uint64_t)t->procs * stripe_of(t, r, w);
            memset(want, 0, t->d.slot_bytes);
            expected_part(t, r, w, want);
            for (uint64_t i = 0; i < t->d.slot_bytes; i++)
                if (part[i] != want[i]) {
                    TEST_CHECK(0,
                               "rank %d, window %d, byte %llu (%s, stripe of host %llu): 0x%02x, "
                               "want 0x%02x",
                               r, w, (unsigned long long)i, i < n ? "in the part" : "past it",
                               (unsigned long long)(i / (n / (uint64_t)t->procs)), part[i],
                               want[i]);
                    break;
                }
        }
    }
    free(got);
    free(want);
}

/* ---- the cases ------------------------------------------------------------------ */

int hr_open(hr_t *t, int argc, char **argv, int misuse, uint64_t stripe_max, int ops)
{
    memset(t, 0, sizeof *t);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(hostrma), 64, &t->h), DCUDA_OK))
        return 0;
    dcuda_host_get_rank_info(t->h, &t->info);
    test_check_rank_setting(&t->info);
    t->gpu = strcmp(t->info.backend, "cuda") == 0;
    t->procs = t->info.process_count;
    t->me = t->info.process_index;
    t->per_proc = t->info.rank_responsible;
    TEST_CHECK(t->per_proc * t->procs == t->info.rank_count,
               "processes of unequal rank counts (%d x %d != %d)", t->per_proc, t->procs,
               t->info.rank_count);
    if (t->per_proc * t->procs != t->info.rank_count)
        return 0;
    t->d.seed = (uint32_t)test_arg(argc, argv, 2, 1);
    t->d.processes = t->procs;
    t->d.misuse = misuse;
    t->d.stripe_max = stripe_max;
    t->ops = ops;
    uint64_t room = (uint64_t)dcuda_comm_split_room(t->info.rank_count);
    uint64_t slot = (uint64_t)t->procs * t->d.stripe_max;
    t->d.slot_bytes = ((slot > room ? slot : room) + 64u) & ~(uint64_t)63u;
    t->word_count = HR_HANDLES + (size_t)t->per_proc * HR_PER_RANK;
    t->words = calloc(t->word_count, sizeof *t->words);
    size_t parts = (size_t)t->per_proc * HR_SLOTS * t->d.slot_bytes;
    TEST_CHECK(t->words != NULL, "out of memory");
    return t->words && TEST_STATUS(dcuda_host_alloc(t->h, parts, (void **)&t->d.parts), DCUDA_OK) &&
           TEST_STATUS(
               dcuda_host_alloc(t->h, t->word_count * sizeof(int64_t), (void **)&t->d.words),
               DCUDA_OK);
}

void hr_close(hr_t *t)
{
    TEST_STATUS(dcuda_host_free(t->h, t->d.parts), DCUDA_OK);
    TEST_STATUS(dcuda_host_free(t->h, t->d.words), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(t->h), DCUDA_OK);
    free(t->words);
}

/* Every rank's part is reached, over memory or the network path: a
 * 0-byte put to each one's part of WORLD's window (checked, no byte
 * moved). */
static void probe_reach(hr_t *t)
{
    for (int r = 0; r < t->info.rank_count; r++) {
        dcuda_status_t st =
            dcuda_host_put(t->h, dcuda_gptr(t->win[HR_WORLD][0], r, 0), NULL, 0, NULL);
        TEST_CHECK(st == DCUDA_OK, "a 0-byte put to rank %d: %s", r, dcuda_status_name(st));
    }
}

/* After the run: every rank's status (its colour slot), then the parts. */
void check_ranks(hr_t *t)
{
    TEST_STATUS(dcuda_host_copy_out(t->h, t->words, t->d.words, t->word_count * sizeof *t->words),
                DCUDA_OK);
    for (int r = 0; r < t->per_proc; r++) {
        int64_t v = t->words[HR_HANDLES + r * HR_PER_RANK + HR_WINDOWS];
        TEST_CHECK(v >= 0, "device rank %d failed: %s", r, dcuda_status_name((int)(v + 100)));
    }
}

/* dcuda_host_run on a thread of its own, while the main thread moves
 * bytes (dcuda_host_run_start's runs leave the host free already). */
typedef struct hr_blocking {
    hr_t *t;
    pthread_t thread;
    dcuda_status_t status;
} hr_blocking_t;

static void *blocking_run(void *arg)
{
    hr_blocking_t *b = arg;
    b->status = dcuda_host_run(b->t->h, &b->t->d, sizeof b->t->d, NULL);
    return NULL;
}

/* One run of the seeded programs: started by dcuda_host_run_start, or
 * (`threaded`) by dcuda_host_run on another thread. */
static void model_run(hr_t *t, int threaded)
{
    hr_model_t m = { NULL };
    hr_blocking_t b = { t, 0, DCUDA_OK };
    /* The parts zeroed (a run before may have left longer ones), the gates shut. */
    size_t bytes = (size_t)t->info.rank_responsible * HR_SLOTS * t->d.slot_bytes;
    void *zero = calloc(1, bytes);
    TEST_CHECK(zero != NULL, "out of memory");
    if (zero) {
        TEST_STATUS(dcuda_host_copy_in(t->h, t->d.parts, zero, bytes), DCUDA_OK);
        TEST_STATUS(dcuda_host_copy_in(t->h, t->d.words, zero, HR_HANDLES * sizeof(int64_t)),
                    DCUDA_OK);
    }
    free(zero);
    TEST_CHECK(model_init(&m, t, t->me), "out of memory");
    if (threaded)
        TEST_CHECK(pthread_create(&b.thread, NULL, blocking_run, &b) == 0, "no thread");
    else
        TEST_STATUS(dcuda_host_run_start(t->h, &t->d, sizeof t->d, NULL), DCUDA_OK);
    if (await_ranks(t, HR_READY)) {
        read_handles(t);
        probe_reach(t);
        if (m.bytes)
            run_program(t, &m);
    }
    write_word(t, HR_GATE, 1);
    if (threaded) {
        pthread_join(b.thread, NULL);
        TEST_STATUS(b.status, DCUDA_OK);
    } else {
        TEST_STATUS(dcuda_host_run_wait(t->h, NULL), DCUDA_OK);
    }
    check_ranks(t);
    check_parts(t);
    model_free(&m, t);
}

static int case_model(int argc, char **argv)
{
    hr_t t;
    if (!hr_open(&t, argc, argv, 0, HR_STRIPE_MAX, HR_OPS))
        return 0;
    model_run(&t, 0);
    hr_close(&t);
    return 0;
}

/* Requests across the network path's chunks, in two runs: the second of
 * dcuda_host_run on another thread. */
static int case_large(int argc, char **argv)
{
    hr_t t;
    if (!hr_open(&t, argc, argv, 0, HR_STRIPE_MAX_LARGE, HR_OPS_LARGE))
        return 0;
    model_run(&t, 0);
    t.d.seed++;
    model_run(&t, 1);
    hr_close(&t);
    return 0;
}

/* Requests to other processes' ranks across the staging threshold, a
 * third of them turning the one before around. */
static int case_staged(int argc, char **argv)
{
    hr_t t;
    if (!hr_open(&t, argc, argv, 0, HR_STRIPE_MAX_STAGED, HR_OPS_STAGED))
        return 0;
    t.staged = 1;
    model_run(&t, 0);
    hr_close(&t);
    return 0;
}

/* The outcome of a request: the call's refusal, or (the network path
 * checks at the owner) the request's. */
static dcuda_status_t outcome(dcuda_host_h h, dcuda_status_t call, dcuda_host_req_t *req)
{
    if (call != DCUDA_OK)
        return call;
    return dcuda_host_req_wait(h, req);
}

/* The part's refusals for the first rank of the next process. */
static void remote_refusals(hr_t *t)
{
    unsigned char buf[16] = { 0 };
    int other = (t->info.rank_start + t->per_proc) % t->info.rank_count;
    uint32_t w = t->win[HR_WORLD][0];
    uint64_t part = (uint64_t)t->procs * stripe_of(t, other, HR_WORLD);
    dcuda_host_req_t req = NULL;
    dcuda_status_t st = dcuda_host_put(t->h, dcuda_gptr(w, other, part), buf, 1, &req);
    TEST_STATUS(outcome(t->h, st, &req), DCUDA_ERR_BOUNDS);
    st = dcuda_host_get(t->h, buf, dcuda_gptr(w, other, part - 1), 2, &req);
    TEST_STATUS(outcome(t->h, st, &req), DCUDA_ERR_BOUNDS);
    TEST_STATUS(dcuda_host_put(t->h, dcuda_gptr(w, other, part - 1), buf, 2, NULL),
                DCUDA_ERR_BOUNDS);
    TEST_STATUS(dcuda_host_get(t->h, buf, dcuda_gptr(w, other, part), 0, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_put(t->h, dcuda_gptr(w, other, UINT64_MAX), buf, 2, NULL),
                DCUDA_ERR_OVERFLOW); /* refused here: no message may carry it */
    st = dcuda_host_put_notify(t->h, dcuda_gptr(w, other, part), buf, 1, 3, &req);
    TEST_STATUS(outcome(t->h, st, &req), DCUDA_ERR_BOUNDS); /* and no notification */
    TEST_CHECK(req == NULL, "an ended request keeps its handle");
}

/* The refusals while the ranks wait at the first gate. */
static void refusals(hr_t *t)
{
    unsigned char buf[16] = { 0 };
    uint32_t w = t->win[HR_WORLD][0], dev = t->win[HR_DEVICE][0];
    int me = t->info.rank_start, world = t->info.rank_count;
    uint64_t part = (uint64_t)t->procs * stripe_of(t, me, HR_WORLD);
    dcuda_host_req_t req = NULL;
    int done = 0;
    TEST_STATUS(dcuda_host_put(t->h, dcuda_gptr(0xffffffffu, me, 0), buf, 1, NULL), DCUDA_ERR_WIN);
    TEST_STATUS(dcuda_host_put(t->h, dcuda_gptr(w | 0x1000u, me, 0), buf, 1, NULL), DCUDA_ERR_WIN);
    TEST_STATUS(dcuda_host_put(t->h, dcuda_gptr(w | (9u << 8), me, 0), buf, 1, NULL),
                DCUDA_ERR_WIN);
    TEST_STATUS(dcuda_host_get(t->h, buf, dcuda_gptr(w, -1, 0), 1, NULL), DCUDA_ERR_RANK);
    TEST_STATUS(dcuda_host_get(t->h, buf, dcuda_gptr(w, world, 0), 1, NULL), DCUDA_ERR_RANK);
    if (t->procs > 1)
        TEST_STATUS(
            dcuda_host_put(t->h, dcuda_gptr(dev, (me + t->per_proc) % world, 0), buf, 1, NULL),
            DCUDA_ERR_RANK);
    TEST_STATUS(dcuda_host_put(t->h, dcuda_gptr(w, me, part), buf, 1, NULL), DCUDA_ERR_BOUNDS);
    TEST_STATUS(dcuda_host_put(t->h, dcuda_gptr(w, me, part), buf, 0, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_get(t->h, buf, dcuda_gptr(w, me, part - 1), 2, NULL), DCUDA_ERR_BOUNDS);
    TEST_STATUS(dcuda_host_get(t->h, buf, dcuda_gptr(w, me, UINT64_MAX), 2, NULL),
                DCUDA_ERR_OVERFLOW);
    TEST_STATUS(dcuda_host_put(t->h, dcuda_gptr(w, me, 0), NULL, 1, NULL), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_get(t->h, NULL, dcuda_gptr(w, me, 0), 1, &req), DCUDA_ERR_INVALID_ARG);
    TEST_CHECK(req == NULL, "a refused request set its handle");
    TEST_STATUS(dcuda_host_req_test(t->h, &req, NULL), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_req_waitall(t->h, NULL, 2), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_req_test(t->h, &req, &done), DCUDA_OK); /* NULL: done */
    TEST_CHECK(done == 1, "testing no request says %d", done);
    TEST_STATUS(dcuda_host_req_wait(t->h, NULL), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_req_wait(NULL, &req), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_put(NULL, dcuda_gptr(w, me, 0), buf, 1, NULL),
                DCUDA_ERR_NOT_INITIALIZED);
    /* Notifications: a tag outside 0..255, a rank outside WORLD, and the
     * refusals of the request that would carry one (nothing notifies). */
    TEST_STATUS(dcuda_host_notify(t->h, me, 256, NULL), DCUDA_ERR_TAG);
    TEST_STATUS(dcuda_host_notify(t->h, me, -1, &req), DCUDA_ERR_TAG);
    TEST_CHECK(req == NULL, "a refused notification set its handle");
    TEST_STATUS(dcuda_host_notify(t->h, -1, 0, NULL), DCUDA_ERR_RANK);
    TEST_STATUS(dcuda_host_notify(t->h, world, 0, NULL), DCUDA_ERR_RANK);
    TEST_STATUS(dcuda_host_put_notify(t->h, dcuda_gptr(w, me, 0), buf, 1, 300, NULL),
                DCUDA_ERR_TAG);
    TEST_STATUS(dcuda_host_put_notify(t->h, dcuda_gptr(w, me, part), buf, 1, 3, NULL),
                DCUDA_ERR_BOUNDS);
    TEST_STATUS(dcuda_host_get_notify(t->h, buf, dcuda_gptr(0xffffffffu, me, 0), 1, 3, NULL),
                DCUDA_ERR_WIN);
    TEST_STATUS(dcuda_host_notify(NULL, me, 0, NULL), DCUDA_ERR_NOT_INITIALIZED);
}

static int case_misuse(int argc, char **argv)
{
    hr_t t;
    unsigned char buf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, back[8];
    if (!hr_open(&t, argc, argv, 1, HR_STRIPE_MAX, HR_OPS))
        return 0;
    int me = t.info.rank_start;
    TEST_STATUS(dcuda_host_put(t.h, dcuda_gptr(0, me, 0), buf, 1, NULL), DCUDA_ERR_WIN);
    TEST_STATUS(dcuda_host_notify(t.h, me, 0, NULL), DCUDA_ERR_WIN); /* no run */
    TEST_STATUS(dcuda_host_run_start(t.h, &t.d, sizeof t.d, NULL), DCUDA_OK);
    if (await_ranks(&t, HR_READY)) {
        read_handles(&t);
        refusals(&t);
        if (t.procs > 1)
            remote_refusals(&t);
    }
    uint32_t split = t.win[HR_SPLIT][me % 2], world = t.win[HR_WORLD][0];
    write_word(&t, HR_GATE, 1);
    if (await_ranks(&t, HR_READY2)) { /* the split's window is freed */
        TEST_STATUS(dcuda_host_put(t.h, dcuda_gptr(split, me, 0), buf, 1, NULL), DCUDA_ERR_WIN);
        int other = (me + t.per_proc + (t.per_proc % 2)) % t.info.rank_count; /* my colour */
        if (t.procs > 1 && other % 2 == me % 2)
            TEST_STATUS(dcuda_host_get(t.h, back, dcuda_gptr(split, other, 0), 1, NULL),
                        DCUDA_ERR_WIN);
    }
    /* Left open: the run's end completes it. */
    dcuda_host_req_t open = NULL;
    TEST_STATUS(dcuda_host_put(t.h, dcuda_gptr(world, me, 0), buf, sizeof buf, &open), DCUDA_OK);
    TEST_CHECK(open != NULL, "a started request has no handle");
    write_word(&t, HR_GATE2, 1);
    int done = 0;
    for (int i = 0; i < 60000 && !done; i++) {
        TEST_STATUS(dcuda_host_run_test(t.h, &done), DCUDA_OK);
        if (!done)
            sleep_ms(1);
    }
    TEST_CHECK(done, "the ranks did not return within a minute");
    TEST_STATUS(dcuda_host_put(t.h, dcuda_gptr(world, me, 0), buf, 1, NULL), DCUDA_ERR_WIN);
    TEST_STATUS(dcuda_host_run_wait(t.h, NULL), DCUDA_OK);
    dcuda_host_req_t copy = open, copies[2] = { open, NULL };
    TEST_STATUS(dcuda_host_req_wait(t.h, &open), DCUDA_OK);
    TEST_CHECK(open == NULL, "a waited request keeps its handle");
    /* A copy of the ended handle is refused, its memory untouched (a
     * request made since may hold its place). */
    TEST_STATUS(dcuda_host_put(t.h, dcuda_gptr(world, me, 0), buf, 1, &open), DCUDA_ERR_WIN);
    TEST_STATUS(dcuda_host_req_wait(t.h, &copy), DCUDA_ERR_INVALID_ARG);
    TEST_CHECK(copy != NULL, "a refused copy was set NULL");
    TEST_STATUS(dcuda_host_req_test(t.h, &copy, &done), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_req_testall(t.h, copies, 2, &done), DCUDA_ERR_INVALID_ARG);
    TEST_CHECK(done == 0, "testall of a stale copy says done");
    dcuda_host_req_t forged = (dcuda_host_req_t)(uintptr_t)0x1234u;
    TEST_STATUS(dcuda_host_req_wait(t.h, &forged), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_copy_out(t.h, back, t.d.parts, sizeof back), DCUDA_OK);
    TEST_CHECK(memcmp(back, buf, sizeof buf) == 0, "the put left open did not land");
    check_ranks(&t);
    hr_close(&t);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "model", case_model },           { "misuse", case_misuse },
        { "large", case_large },           { "staged", case_staged },
        { "notify", case_notify },         { "notify_large", case_notify_large },
        { "dead_owner", case_dead_owner },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
