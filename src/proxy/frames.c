/*
 * Frames: small messages to one process packed into one network message
 * (frames.h).
 */
#include "frames.h"

#include <stdlib.h>
#include <string.h>

#include "wire.h"

void dcu_frames_init(dcu_frames_t *f, dcu_frames_send_fn send, void *arg)
{
    memset(f, 0, sizeof *f);
    f->send = send;
    f->arg = arg;
}

/* Sends open frame i and closes it. */
static dcuda_status_t send_frame(dcu_frames_t *f, int i)
{
    dcu_frame_t fr = f->open[i];
    memmove(&f->open[i], &f->open[i + 1], (size_t)(f->count - i - 1) * sizeof *f->open);
    f->count--;
    return f->send(f->arg, fr.q, fr.buf, fr.used);
}

static int find(const dcu_frames_t *f, int q)
{
    for (int i = 0; i < f->count; i++)
        if (f->open[i].q == q)
            return i;
    return -1;
}

/* Opens a frame for q, its buffer allocated (the oldest frame sent when
 * DCU_FRAMES_OPEN are open): its index, or -1. A failed send is the send
 * function's to report. */
static int open_frame(dcu_frames_t *f, int q)
{
    if (f->count == DCU_FRAMES_OPEN)
        (void)send_frame(f, 0);
    char *buf = malloc(DCU_FRAME_BYTES);
    if (!buf)
        return -1;
    f->open[f->count] = (dcu_frame_t){ q, 0, buf };
    return f->count++;
}

void *dcu_frames_reserve(dcu_frames_t *f, int q, size_t size)
{
    if (size > DCU_FRAME_ALONE)
        return NULL;
    int i = find(f, q);
    if (i >= 0 && dcu_wire_aligned(f->open[i].used) + size > DCU_FRAME_BYTES) {
        (void)send_frame(f, i);
        i = -1;
    }
    if (i < 0 && (i = open_frame(f, q)) < 0)
        return NULL;
    dcu_frame_t *fr = &f->open[i];
    size_t at = dcu_wire_aligned(fr->used);
    memset(fr->buf + fr->used, 0, at - fr->used);
    fr->used = at + size;
    return fr->buf + at;
}

dcuda_status_t dcu_frames_flush_to(dcu_frames_t *f, int q)
{
    int i = find(f, q);
    return i < 0 ? DCUDA_OK : send_frame(f, i);
}

dcuda_status_t dcu_frames_flush(dcu_frames_t *f)
{
    dcuda_status_t st = DCUDA_OK;
    while (f->count > 0) {
        dcuda_status_t s = send_frame(f, 0);
        if (st == DCUDA_OK)
            st = s;
    }
    return st;
}

void dcu_frames_discard(dcu_frames_t *f)
{
    for (int i = 0; i < f->count; i++)
        free(f->open[i].buf);
    f->count = 0;
}
