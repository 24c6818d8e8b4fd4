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
    f->frames_sent++;
    return f->send(f->arg, fr.q, fr.buf, fr.used);
}

static int find(const dcu_frames_t *f, int q)
{
    for (int i = 0; i < f->count; i++)
        if (f->open[i].q == q)
            return i;
    return -1;
}

static size_t aligned(size_t n) { return (n + DCU_WIRE_ALIGN - 1u) & ~(size_t)(DCU_WIRE_ALIGN - 1u); }

dcuda_status_t dcu_frames_add(dcu_frames_t *f, int q, const void *msg, size_t size)
{
    dcuda_status_t st = DCUDA_OK;
    if (size > DCU_FRAME_BYTES)
        return DCUDA_ERR_INVALID_ARG;
    int i = find(f, q);
    if (i >= 0 && aligned(f->open[i].used) + size > DCU_FRAME_BYTES) {
        st = send_frame(f, i);
        i = -1;
    }
    if (i < 0) {
        if (f->count == DCU_FRAMES_OPEN && (st = send_frame(f, 0)) != DCUDA_OK)
            return st;
        char *buf = malloc(DCU_FRAME_BYTES);
        if (!buf)
            return DCUDA_ERR_NO_MEMORY;
        i = f->count++;
        f->open[i] = (dcu_frame_t){ q, 0, buf };
    }
    dcu_frame_t *fr = &f->open[i];
    size_t at = fr->used ? aligned(fr->used) : 0;
    if (at > fr->used)
        memset(fr->buf + fr->used, 0, at - fr->used);
    memcpy(fr->buf + at, msg, size);
    fr->used = at + size;
    f->messages_sent++;
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
