/*
 * The window parts of ranks on the network path, as the proxy knows them.
 * No process holds a table of WORLD: a rank that puts to a rank of
 * another node for the first time (in a window, since its route was
 * dropped) asks its proxy for that rank's part (DCUDA_CMD_PART); the proxy
 * answers from what it asked before or asks the part's owner, whose proxy
 * read its ranks' parts when the window was created. What a process holds
 * grows with the pairs of window and rank it talks to, not with the job.
 *
 * This keeps the answers (sizes: a put to another node carries a window
 * slot and an offset, never an address), valid until the slot's next
 * window, and which of the process's ranks wait for one (each waits for
 * its answer, so one ask a rank at most). No I/O here.
 */
#ifndef DCU_PROXY_PARTS_H
#define DCU_PROXY_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/dcuda_status.h"
#include "dcuda/shared/layout.h"

typedef struct dcu_part_entry {
    int32_t rank;   /* WORLD rank (-1: empty) */
    uint32_t slot;  /* window slot */
    uint32_t epoch; /* the slot's window it belongs to (dcu_parts_t.epoch) */
    uint32_t reserved;
    uint64_t size;
} dcu_part_entry_t;

typedef struct dcu_part_ask {
    int waiting; /* the rank waits for an answer */
    int32_t rank;
    uint32_t slot, tag;
} dcu_part_ask_t;

typedef struct dcu_parts {
    dcu_part_entry_t *table; /* open addressing, a power of two entries */
    size_t capacity, count;
    uint32_t epoch[DCUDA_WIN_TABLE_SLOTS]; /* windows created in each slot (this run) */
    dcu_part_ask_t *asks;                  /* [ranks]: what each of my ranks waits for */
    int ranks, asking;
} dcu_parts_t;

dcuda_status_t dcu_parts_init(dcu_parts_t *c, int ranks);
void dcu_parts_free(dcu_parts_t *c);
/* A new run: nothing known, nobody waits. */
void dcu_parts_reset(dcu_parts_t *c);
/* A window is created in `slot`: what was known of the slot is stale. */
void dcu_parts_new_window(dcu_parts_t *c, uint32_t slot);
/* 1 and the size of WORLD rank `rank`'s part of the window in `slot`, if
 * known; else 0. */
int dcu_parts_find(const dcu_parts_t *c, uint32_t slot, int32_t rank, uint64_t *size);
dcuda_status_t dcu_parts_store(dcu_parts_t *c, uint32_t slot, int32_t rank, uint64_t size);

/* My device rank r waits for the part of `rank` in `slot`, answered with
 * reply tag `tag`. */
void dcu_parts_ask(dcu_parts_t *c, int r, uint32_t slot, int32_t rank, uint32_t tag);
/* An answer for device rank r came: NULL when it answers r's ask (which
 * then ends), else why it cannot. */
const char *dcu_parts_answered(dcu_parts_t *c, int r, uint32_t slot, int32_t rank, uint32_t tag);
/* The next rank that waits (its ask ends): 1 and r, tag; 0 if none. */
int dcu_parts_next_waiting(dcu_parts_t *c, int *r, uint32_t *tag);

#endif /* DCU_PROXY_PARTS_H */
