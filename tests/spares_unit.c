/*
 * The proxy's receive buffers (src/proxy/spares.h) against a model of a
 * network manager and an inbox: a manager keeps RECEIVES buffers posted
 * and delivers frames into them in turn; each frame holds up to three
 * large puts, each of which the inbox asks to keep; what was kept is
 * given back later, in random order, some before the frame's end. Checks,
 * at every step: no pinned memory is allocated or freed between the
 * spares' making and the end (a pinned allocation or free may wait for a
 * running kernel); a kept buffer is never received into again until given
 * back; a frame is told kept exactly when something in it still is; every
 * buffer is posted, kept or a spare, none twice and none lost; at most as
 * many spares as the credit asks for (NET_CREDIT / 1 MiB, 1 to
 * DCU_SPARES_MAX). Credits of 4 KiB, 4 MiB, 5.5 MiB and 1 GiB. Seeded,
 * well under a second.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "proxy/spares.h"
#include "test_util.h"

#define RECEIVES 16
#define STEPS 4000
#define KEPT_MAX 256

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(uint32_t bound) { return (uint32_t)(test_rng(&rng) % bound); }

/* The backend's pinned memory, counted; `running` forbids it. */
static int made, freed, running;

static dcuda_status_t alloc_mapped(dcu_backend_t *b, size_t size, void **host, void **rank)
{
    (void)b;
    TEST_CHECK(size == DCU_NET_MAX_MESSAGE, "a pinned buffer of %zu bytes", size);
    TEST_CHECK(!running, "pinned memory allocated during a run");
    *host = *rank = malloc(size);
    made++;
    return *host ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
}

static void free_mapped(dcu_backend_t *b, void *host)
{
    (void)b;
    TEST_CHECK(!running, "pinned memory freed during a run");
    free(host);
    freed++;
}

static const dcu_backend_ops_t ops = { .alloc_mapped = alloc_mapped, .free_mapped = free_mapped };

/* What the model knows of each buffer. */
static void *posted[RECEIVES];
static struct {
    void *buf;
    void *token;
} kept[KEPT_MAX];
static int nkept;

static int is_kept(const void *buf)
{
    for (int i = 0; i < nkept; i++)
        if (kept[i].buf == buf)
            return 1;
    return 0;
}

static void give_back(dcu_spares_t *s, int i)
{
    dcu_spares_unkeep(s, kept[i].token);
    kept[i] = kept[--nkept];
}

/* Every buffer is posted, kept or a spare, each once. */
static void check_accounted(const dcu_spares_t *s, int step)
{
    void *all[RECEIVES + KEPT_MAX + DCU_SPARES_MAX];
    int n = 0;
    for (int i = 0; i < RECEIVES; i++)
        all[n++] = posted[i];
    for (int i = 0; i < nkept; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= kept[j].buf == kept[i].buf;
        if (!dup)
            all[n++] = kept[i].buf;
    }
    for (int i = 0; i < s->count; i++)
        all[n++] = s->free[i];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            TEST_CHECK(all[i] != all[j], "step %d: a buffer in two places", step);
    TEST_CHECK(n == made - freed, "step %d: %d buffers accounted, %d made and not freed", step, n,
               made - freed);
    TEST_CHECK(s->count <= s->capacity, "step %d: %d spares of %d", step, s->count, s->capacity);
}

static void run(uint64_t credit)
{
    dcu_spares_t s;
    made = freed = 0;
    nkept = 0;
    TEST_STATUS(dcu_spares_init(&s, &ops, NULL, credit), DCUDA_OK);
    uint64_t chunks = (credit + DCU_NET_PUT_CHUNK - 1u) / DCU_NET_PUT_CHUNK;
    int want = chunks < 1u ? 1 : chunks > DCU_SPARES_MAX ? DCU_SPARES_MAX : (int)chunks;
    TEST_CHECK(s.capacity == want, "credit %llu: room for %d spares, want %d",
               (unsigned long long)credit, s.capacity, want);
    for (int i = 0; i < RECEIVES; i++) /* the manager opens: its own buffers */
        posted[i] = dcu_spares_alloc(&s, DCU_NET_MAX_MESSAGE);
    TEST_STATUS(dcu_spares_fill(&s), DCUDA_OK);
    TEST_CHECK(s.count == want && made == RECEIVES + want, "%d spares made", s.count);
    running = 1;
    int frames_kept = 0, refused = 0;
    for (int step = 0, head = 0; step < STEPS; step++, head = (head + 1) % RECEIVES) {
        void *frame = posted[head];
        TEST_CHECK(!is_kept(frame), "step %d: received into a kept buffer", step);
        dcu_spares_begin(&s, frame);
        int puts = (int)next(4), mine = 0;
        for (int k = 0; k < puts && nkept < KEPT_MAX; k++) {
            void *token = dcu_spares_keep(&s);
            if (!token) {
                refused++;
                TEST_CHECK(s.count == 0 && mine == 0, "step %d: keeping refused with %d spares",
                           step, s.count);
                continue;
            }
            kept[nkept].buf = frame;
            kept[nkept++].token = token;
            mine++;
        }
        if (mine && next(4) == 0) /* the write ended before the frame did */
            for (int i = nkept - 1; i >= 0; i--)
                if (kept[i].buf == frame) {
                    give_back(&s, i);
                    mine--;
                }
        int said = dcu_spares_end(&s);
        TEST_CHECK(said == (mine > 0), "step %d: end says %d with %d kept", step, said, mine);
        if (said) { /* the manager posts a new buffer in its place */
            posted[head] = dcu_spares_alloc(&s, DCU_NET_MAX_MESSAGE);
            frames_kept++;
        }
        while (nkept > 0 && next(3) == 0) /* writes end */
            give_back(&s, (int)next((uint32_t)nkept));
        check_accounted(&s, step);
    }
    while (nkept > 0)
        give_back(&s, nkept - 1);
    check_accounted(&s, STEPS);
    running = 0;
    for (int i = 0; i < RECEIVES; i++) /* the manager closes */
        dcu_spares_put(&s, posted[i]);
    dcu_spares_free(&s);
    TEST_CHECK(made == freed, "credit %llu: %d pinned buffers made, %d freed",
               (unsigned long long)credit, made, freed);
    TEST_CHECK(frames_kept > 100 && (want > 2 || refused > 0),
               "credit %llu: %d frames kept, %d keeps refused", (unsigned long long)credit,
               frames_kept, refused);
    printf("spares: credit %llu: %d spares, %d frames kept, %d keeps refused\n",
           (unsigned long long)credit, want, frames_kept, refused);
}

int main(void)
{
    static const uint64_t credits[] = { 4096u, 4u << 20, (11u << 20) / 2u, 1u << 30 };
    for (size_t i = 0; i < sizeof credits / sizeof credits[0]; i++)
        run(credits[i]);
    return test_failures ? 1 : 0;
}
