/*
 * The host's notifications on their way to the process that writes them
 * (core/host_notes.c): a ring of (run, rank, tag) any process of the node
 * may add to (lock-free, several writers) and only its owner takes from.
 * An owner alone writes the host's half of its ranks' counts, in the order
 * it takes the notes, so they only grow; a note goes in only after the
 * bytes it announces are in place. A ring lives in the node segment (its owner's
 * part) when the program has one, else in the host runtime.
 */
#ifndef DCU_UTIL_NOTES_H
#define DCU_UTIL_NOTES_H

#include <stdatomic.h>
#include <stdint.h>

/* Notes a ring holds (a power of two). */
#define DCU_NOTES 1024u

typedef struct dcu_note {
    uint32_t run; /* the run (of its writer's count) it belongs to */
    int32_t rank; /* the owner's device rank */
    uint32_t tag; /* a user tag */
    uint32_t reserved;
} dcu_note_t;

typedef struct dcu_note_ring {
    _Atomic uint64_t head; /* notes taken (the owner) */
    _Atomic uint64_t tail; /* notes claimed (writers) */
    _Atomic uint32_t open; /* 1 while its owner takes notes (serves a run) */
    _Atomic uint32_t run;  /* the run its owner serves (or served last) */
    /* The owner sleeps on `bell` (a futex: the ring is shared memory)
     * while `sleeping`; a writer that finds it so rings. */
    _Atomic uint32_t sleeping;
    _Atomic uint32_t bell;
    _Atomic uint64_t written[DCU_NOTES]; /* t + 1 once note t is in place */
    dcu_note_t notes[DCU_NOTES];
} dcu_note_ring_t;

/* Adds a note; waits for room while the owner takes notes. 0, or -1 when
 * the ring stays full and its owner takes none (the note is lost). */
int dcu_notes_add(dcu_note_ring_t *r, dcu_note_t note);

/* The owner: the next note, if one is in place (1), else 0. */
int dcu_notes_peek(dcu_note_ring_t *r, dcu_note_t *note);
/* The owner: takes the note dcu_notes_peek returned. */
void dcu_notes_take(dcu_note_ring_t *r);
/* Notes claimed and not yet taken. */
uint64_t dcu_notes_waiting(dcu_note_ring_t *r);
/* The owner: sleeps up to ns, or until a note is added. */
void dcu_notes_sleep(dcu_note_ring_t *r, uint64_t ns);

#endif /* DCU_UTIL_NOTES_H */
