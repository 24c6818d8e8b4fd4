/*
 * Frames: the small messages a proxy sends one process in one pass,
 * packed into one network message. A manager's cost is mostly per message
 * (a notification is a 56-byte header), so a rank that notifies another
 * process many times, or many ranks that notify one process, cost one send
 * a pass instead of one a message.
 *
 * A frame is whole wire messages, each at an offset that is a multiple of
 * DCU_WIRE_ALIGN, and ends where its last message ends
 * (dcu_wire_next splits it). A few frames are open at once, one a target
 * process; adding to a full one, or opening one more than PROXY_FRAMES,
 * sends the oldest first. The messages to one process stay in the order
 * added: a message that goes alone (large, or whose buffer must go as it
 * is) first sends the frame open to its target. Nothing here sends by
 * itself; the proxy flushes after each pass. A message is written in
 * place: its room is reserved in its target's frame and the proxy builds
 * it there, so a small message costs no allocation and no copy of its
 * own (the frame's buffer is allocated once a frame, and handed to the
 * send function, which owns it from then on).
 */
#ifndef DCU_PROXY_FRAMES_H
#define DCU_PROXY_FRAMES_H

#include <stddef.h>

#include "dcuda/dcuda_status.h"

/* Frames open at once, and the bytes of one. */
#define DCU_FRAMES_OPEN 8
#define DCU_FRAME_BYTES 8192u
/* A message larger than this goes alone. */
#define DCU_FRAME_ALONE 2048u

/* Hands `size` bytes at `buf` to process q (the callee owns buf from now
 * on, also when it fails). */
typedef dcuda_status_t (*dcu_frames_send_fn)(void *arg, int q, void *buf, size_t size);

typedef struct dcu_frame {
    int q;
    size_t used; /* bytes of buf (DCU_FRAME_BYTES) in use */
    char *buf;
} dcu_frame_t;

typedef struct dcu_frames {
    dcu_frame_t open[DCU_FRAMES_OPEN]; /* oldest first */
    int count;
    dcu_frames_send_fn send;
    void *arg;
} dcu_frames_t;

void dcu_frames_init(dcu_frames_t *f, dcu_frames_send_fn send, void *arg);
/* Room for a message of `size` bytes (at most DCU_FRAME_ALONE) for
 * process q at the end of its frame, where the caller writes the message
 * whole before it asks for more room (the padding before it is zeroed);
 * NULL when out of memory, or when `size` is larger. Sends the frame that
 * has no room left for it, or the oldest one when a frame more must open. */
void *dcu_frames_reserve(dcu_frames_t *f, int q, size_t size);
/* Sends q's open frame, if any. */
dcuda_status_t dcu_frames_flush_to(dcu_frames_t *f, int q);
/* Sends every open frame, oldest first. */
dcuda_status_t dcu_frames_flush(dcu_frames_t *f);
/* Drops the open frames unsent (the proxy failed). */
void dcu_frames_discard(dcu_frames_t *f);

#endif /* DCU_PROXY_FRAMES_H */
