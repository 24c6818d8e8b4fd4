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

/* Frame i's one message into a frame buffer of its own. */
static dcuda_status_t grow(dcu_frame_t *fr)
{
    char *buf = malloc(DCU_FRAME_BYTES);
    if (!buf)
        return DCUDA_ERR_NO_MEMORY;
    memcpy(buf, fr->buf, fr->used);
    free(fr->buf);
    fr->buf = buf;
    fr->cap = DCU_FRAME_BYTES;
    return DCUDA_OK;
}

dcuda_status_t dcu_frames_add(dcu_frames_t *f, int q, void *msg, size_t size)
{
    dcuda_status_t st = DCUDA_OK;
    if (size > DCU_FRAME_BYTES) {
        free(msg);
        return DCUDA_ERR_INVALID_ARG;
    }
    int i = find(f, q);
    if (i >= 0 && dcu_wire_aligned(f->open[i].used) + size > DCU_FRAME_BYTES) {
        st = send_frame(f, i);
        i = -1;
    }
    if (i < 0) { /* a frame of this one message, its own buffer */
        if (f->count == DCU_FRAMES_OPEN)
            st = send_frame(f, 0);
        f->open[f->count++] = (dcu_frame_t){ q, size, 0, msg };
        return st;
    }
    dcu_frame_t *fr = &f->open[i];
    if (fr->cap == 0 && (st = grow(fr)) != DCUDA_OK) {
        free(msg);
        return st;
    }
    size_t at = dcu_wire_aligned(fr->used);
    memset(fr->buf + fr->used, 0, at - fr->used);
    memcpy(fr->buf + at, msg, size);
    fr->used = at + size;
    free(msg);
    return st;
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
