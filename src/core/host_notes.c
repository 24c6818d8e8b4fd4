/*
 * The host's notifications (dcuda_host_notify, dcuda_host_put_notify,
 * dcuda_host_get_notify; docs/communicators.md, "Notifications from the
 * host").
 *
 * A GPU rank's counter takes only its device's atomics, so the host does
 * not add to it: each tag's count has a second half (beside the ranks'
 * half, dcuda_notif_count_t) that only the rank's own process's host
 * thread writes, and a rank's waits read both in one load. Whoever
 * notifies (this host, a node peer's host, the owner's proxy for a host
 * on the network path) puts a note in the owner's ring (util/notes.h)
 * once the bytes it announces are in place: after its copies on the RMA
 * stream (a call of the stream's), or after the proxy's synchronous copy.
 * The owner's host thread takes the notes in order as it serves its ranks
 * and stores each half's new count whole: one writer, so a half only
 * grows, and it grows after the bytes. (host_rows keeps what it wrote.)
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "node/node.h"
#include "util/msg.h"

dcuda_status_t dcu_host_notes_init(dcuda_host_h h)
{
    size_t rows = (size_t)h->image.device_size * DCUDA_TAG_COUNT;
    h->host_rows = calloc(rows ? rows : 1u, sizeof *h->host_rows);
    if (dcu_node())
        h->notes = &dcu_node_proc(h->info.process_index)->notes;
    else
        h->notes = h->own_notes = calloc(1, sizeof *h->own_notes);
    return h->host_rows && h->notes ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
}

void dcu_host_notes_fini(dcuda_host_h h)
{
    free(h->host_rows);
    free(h->own_notes);
    h->host_rows = NULL;
    h->notes = h->own_notes = NULL;
}

/* A run begins: notes of earlier runs left in the ring are dropped as
 * they come up; those of this run may already be there. */
void dcu_host_notes_open(dcuda_host_h h)
{
    uint32_t run = atomic_fetch_add(&h->notes_run, 1u) + 1u;
    memset(h->host_rows, 0, (size_t)h->image.device_size * DCUDA_TAG_COUNT * sizeof *h->host_rows);
    atomic_store(&h->notes->run, run);
    atomic_store(&h->notes->open, 1u);
}

/* The ranks returned: no note can matter to them now. */
void dcu_host_notes_close(dcuda_host_h h) { atomic_store(&h->notes->open, 0u); }

/* The owner's host thread: applies the notes in place; 1 if it took any. */
int dcu_host_notes_poll(dcuda_host_h h)
{
    dcu_note_t n;
    int took = 0;
    const uint32_t run = atomic_load_explicit(&h->notes_run, memory_order_relaxed);
    while (dcu_notes_peek(h->notes, &n)) {
        int32_t ahead = (int32_t)(n.run - run);
        if (ahead > 0)
            break; /* a peer's, of the next run: kept for it */
        if (ahead == 0 && n.rank >= 0 && n.rank < h->image.device_size && n.tag < DCUDA_TAG_COUNT) {
            uint32_t *row = &h->host_rows[(size_t)n.rank * DCUDA_TAG_COUNT + n.tag];
            dcuda_notif_count_t *count = &h->image.notifs[n.rank].arrived[n.tag];
            if (h->ops->store32(h->backend, (uint32_t *)(void *)&count->host, *row + 1u) ==
                DCUDA_OK)
                ++*row;
            else
                dcu_msg_error("a host's notification of tag %u to rank %d was lost: its count "
                              "could not be written",
                              n.tag, (int)n.rank + h->image.world_first);
        }
        dcu_notes_take(h->notes);
        took = 1;
    }
    return took;
}

/* Is a host's notification on its way to this process's ranks? (The
 * deadlock detector's question: while one is, a waiting rank is not
 * stuck. Whether the application may still notify is another:
 * dcu_host_may_notify.) */
int dcu_host_notes_busy(dcuda_host_h h)
{
    return atomic_load(&h->notes_pending) || dcu_notes_waiting(h->notes) != 0;
}

/* A note on its way to a ring, handed to the copy stream's call. */
typedef struct note_call {
    dcu_note_ring_t *ring;
    dcu_note_t note;
    _Atomic int *pending;
} note_call_t;

static void add_note(void *arg)
{
    note_call_t *c = arg;
    if (dcu_notes_add(c->ring, c->note) != 0)
        dcu_msg_warn("a host's notification of tag %u was lost: its rank's process took no "
                     "notes (its run ended)",
                     c->note.tag);
    atomic_fetch_sub(c->pending, 1);
    free(c);
}

dcuda_status_t dcu_host_note_after(dcuda_host_h h, int proc, int world_rank, int tag,
                                   uint64_t *ticket)
{
    note_call_t *c = malloc(sizeof *c);
    if (!c)
        return DCUDA_ERR_NO_MEMORY;
    c->ring = proc == h->info.process_index ? h->notes : &dcu_node_proc(proc)->notes;
    c->note.run = atomic_load(&h->notes_run);
    c->note.rank = world_rank - h->proc_first[proc];
    c->note.tag = (uint32_t)tag;
    c->note.reserved = 0;
    c->pending = &h->notes_pending;
    atomic_fetch_add(&h->notes_pending, 1);
    dcuda_status_t st = h->ops->rma_call(h->backend, add_note, c, ticket);
    if (st != DCUDA_OK) {
        atomic_fetch_sub(&h->notes_pending, 1);
        free(c);
    }
    return st;
}
