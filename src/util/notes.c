/*
 * The ring of the host's notifications (notes.h): writers claim a place
 * by a compare-and-swap of the tail while there is room, fill it and then
 * publish it (written[t % N] = t + 1, a release); the owner takes notes
 * in claim order, each once it is published.
 */
#include "util/notes.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

/* The ring lies in memory several processes share: no private futexes. */
static void ring_bell(dcu_note_ring_t *r)
{
    if (!atomic_load(&r->sleeping)) /* seq_cst: after the note's publication */
        return;
    atomic_fetch_add(&r->bell, 1u);
    (void)syscall(SYS_futex, (uint32_t *)&r->bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void dcu_notes_sleep(dcu_note_ring_t *r, uint64_t ns)
{
    uint32_t bell = atomic_load(&r->bell);
    atomic_store(&r->sleeping, 1u); /* seq_cst: before the look at the ring */
    uint64_t head = atomic_load(&r->head);
    if (atomic_load(&r->tail) == head && atomic_load(&r->written[head % DCU_NOTES]) != head + 1u) {
        struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
        (void)syscall(SYS_futex, (uint32_t *)&r->bell, FUTEX_WAIT, bell, &ts, NULL, 0);
    }
    atomic_store(&r->sleeping, 0u);
}

int dcu_notes_add(dcu_note_ring_t *r, dcu_note_t note)
{
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (;;) {
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        if (t - head >= DCU_NOTES) {
            if (!atomic_load_explicit(&r->open, memory_order_acquire))
                return -1;
            dcu_clock_sleep_ns(2000);
            t = atomic_load_explicit(&r->tail, memory_order_relaxed);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&r->tail, &t, t + 1u, memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }
    r->notes[t % DCU_NOTES] = note;
    atomic_store_explicit(&r->written[t % DCU_NOTES], t + 1u, memory_order_seq_cst);
    ring_bell(r);
    return 0;
}

int dcu_notes_peek(dcu_note_ring_t *r, dcu_note_t *note)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (atomic_load_explicit(&r->written[head % DCU_NOTES], memory_order_acquire) != head + 1u)
        return 0;
    *note = r->notes[head % DCU_NOTES];
    return 1;
}

void dcu_notes_take(dcu_note_ring_t *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&r->head, head + 1u, memory_order_release);
}

uint64_t dcu_notes_waiting(dcu_note_ring_t *r)
{
    return atomic_load_explicit(&r->tail, memory_order_acquire) -
           atomic_load_explicit(&r->head, memory_order_acquire);
}
