/*
 * Ring algorithms for the large collectives: the ranks of the window's
 * communicator in a ring (my left me - 1, my right me + 1), the data in
 * P blocks, and every rank putting one block to its right and taking one
 * from its left at each step. An allreduce is P - 1 reduce-scatter steps
 * (each rank adds the block from its left into its own and passes the sum
 * on), after which rank r holds block r + 1 reduced, then P - 1 allgather
 * steps that pass the reduced blocks round; an allgather is those steps
 * alone. Each rank moves (P - 1) / P of the data a phase, where the tree
 * moves all of it log2 P times, at the cost of P - 1 steps a phase
 * instead of log2 P: dcu_ring_allreduce_wins and dcu_ring_allgather_wins
 * choose by a model of both (the bytes one step's latency is worth): an
 * allreduce takes the ring from 32 KiB up to 29 ranks, 62 KiB at 64, 170
 * KiB at 264 and 307 KiB at 528; an allgather (its whole array) from 32
 * KiB up to 10 ranks, 63 KiB at 16, 875 KiB at 264 and 1.6 MiB at 528.
 *
 * The tree's promises hold (coll.h): no rank writes into another's part
 * before that rank has called the collective (each tells its left it is
 * in, RING_CTRL, and waits for its right's word before its first put),
 * and a part is its own again on return (a flush ends each call). Every
 * block of an allreduce's reduce-scatter lands in its own place of the
 * scratch after the data, so no scratch is written twice in one call. An
 * allreduce's allgather step writes a block into my right's data that my
 * right's own reduce-scatter put may still be reading (its step s reads
 * the block my step s of the allgather overwrites), so between the phases
 * each rank flushes its puts and tells its left (RING_CTRL again). Only my left
 * sends me RING_DATA and only my right RING_CTRL, each in a fixed order,
 * and each wait counts one: the i-th notification I count is the i-th
 * that rank sent.
 */
#ifndef DCUDA_IMPL_COLL_RING_H
#define DCUDA_IMPL_COLL_RING_H

#include "coll_base.h"

/* Data of at least this many bytes may take a ring; below it latency
 * rules, and the tree's 2 log2 P steps are fewer. */
#ifndef DCU_RING_MIN_BYTES /* overridable, as the two below, to time one algorithm alone */
#define DCU_RING_MIN_BYTES 32768u
#endif
/* The bytes one step's latency is worth in each model below (a step's
 * latency x a rank's rate), from two H200 (2026-11-26, 264 ranks each,
 * 128 threads a rank). An allreduce's rate is its adds': the tree took
 * 470 us for 64 KiB where the ring took 2.9 ms (about 2.8 us a step at
 * 528 ranks), and 6.2 ms for 1 MiB where the ring took 3.1 ms: they
 * cross between 300 and 500 KiB. An allgather's rate is its puts' (13
 * GB/s a rank in the same calls' broadcast rows): its tree took 267 us
 * for 1 KiB blocks, where the ring's 527 steps would take about 1 ms. */
#ifndef DCU_RING_ALLREDUCE_STEP_BYTES
#define DCU_RING_ALLREDUCE_STEP_BYTES 8192u
#endif
#ifndef DCU_RING_ALLGATHER_STEP_BYTES
#define DCU_RING_ALLGATHER_STEP_BYTES 32768u
#endif

/* Is `bytes` below `min` (a function, so that a minimum of 0 compiles
 * without a warning)? */
DCU_FN int dcu_ring_below(uint64_t bytes, uint64_t min) { return bytes < min; }

/* A ring allreduce of `bytes` in `count` elements on P ranks (L = log2 P
 * rounded up) beats the tree when 3 (P - 1) / P of the bytes (put, add,
 * put) in 2 P steps cost less than 3 L times the bytes in 2 L steps:
 * when bytes / P x 3 (L P - P + 1) > 2 (P - L) steps' bytes. */
DCU_FN int dcu_ring_allreduce_wins(uint64_t bytes, uint64_t count, int p)
{
    if (p < 2 || count < (uint64_t)p || dcu_ring_below(bytes, DCU_RING_MIN_BYTES))
        return 0;
    uint64_t P = (uint64_t)p, L = (uint64_t)dcuda_ceil_log2(p);
    return bytes / P >
           2u * (P - L) * (uint64_t)DCU_RING_ALLREDUCE_STEP_BYTES / (3u * (L * P - P + 1u));
}

/* A ring allgather of `bytes` in all (P blocks) beats the tree, whose
 * blocks go up (all the bytes in L steps) and then down as a whole (L
 * steps of all of them), when (L + 1 - (P - 1) / P) x the bytes cost more
 * than P - 2 L steps: when bytes / P x (L P + 1) > (P - 2 L) steps' bytes. */
DCU_FN int dcu_ring_allgather_wins(uint64_t bytes, int p)
{
    if (p < 2 || dcu_ring_below(bytes, DCU_RING_MIN_BYTES))
        return 0;
    uint64_t P = (uint64_t)p, L = (uint64_t)dcuda_ceil_log2(p);
    if (P <= 2u * L)
        return 1;
    return bytes / P > (P - 2u * L) * (uint64_t)DCU_RING_ALLGATHER_STEP_BYTES / (L * P + 1u);
}

/* A chain broadcast's chunks are a multiple of this many bytes (each
 * put's source and destination keep the data's alignment to it). */
#define DCU_CHAIN_CHUNK_ALIGN 256u
/* Overridable to time one algorithm alone: no chain below this many
 * bytes, and a chain (of the model's chunks) wherever it is allowed. */
#ifndef DCU_CHAIN_MIN_BYTES
#define DCU_CHAIN_MIN_BYTES DCU_RING_MIN_BYTES
#endif
#ifndef DCU_CHAIN_ALWAYS
#define DCU_CHAIN_ALWAYS 0
#endif

/* The integer square root of x (the largest r with r * r <= x). */
DCU_FN uint64_t dcu_isqrt(uint64_t x)
{
    uint64_t r = 0, bit = (uint64_t)1 << 62;
    while (bit > x)
        bit >>= 2;
    for (; bit; bit >>= 2) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
    }
    return r;
}

/* The chunk of a pipelined chain broadcast of `bytes` on P ranks, or 0
 * when the tree is faster. The chain passes the root's data round the
 * ring in m chunks, each rank handing chunk i to its right as soon as it
 * has it: the last chunk reaches the root's left after P - 2 + m steps
 * of one chunk, (P - 2 + m) (bytes / m + step) in all, least at m =
 * sqrt((P - 2) bytes / step). The tree's root puts the whole data to
 * each of its L children in turn, and so does each child below: L
 * (bytes + step). The chain is not chosen below DCU_RING_MIN_BYTES, nor on 2
 * ranks, where both are one put. With the allgather's step (32 KiB) the
 * chain takes over from 128 KiB on 3 ranks, 100 KiB on 5 (a tree of 3
 * levels), 390 KiB on 16, 2 MiB on 264 and 3.5 MiB on 528. */
DCU_FN_COLD uint64_t dcu_chain_chunk(uint64_t bytes, int p)
{
    if (p < 3 || dcu_ring_below(bytes, DCU_CHAIN_MIN_BYTES))
        return 0;
    const uint64_t step = (uint64_t)DCU_RING_ALLGATHER_STEP_BYTES, align = DCU_CHAIN_CHUNK_ALIGN;
    uint64_t P = (uint64_t)p, L = (uint64_t)dcuda_ceil_log2(p);
    uint64_t m = dcu_isqrt((P - 2u) * (bytes / step));
    m = m < 1u ? 1u : m;
    uint64_t chunk = (bytes + m - 1u) / m;
    chunk = (chunk + align - 1u) / align * align;
    m = (bytes + chunk - 1u) / chunk;
    return DCU_CHAIN_ALWAYS || (P - 2u + m) * (chunk + step) < L * (bytes + step) ? chunk : 0u;
}

/* A ring over the window's communicator: `count` units of `unit` bytes
 * from offset in every part, in P blocks as even as can be. */
typedef struct dcu_ring {
    uint32_t win;
    int comm, me, size, left, right;
    size_t offset;
    uint64_t count, unit;
} dcu_ring_t;

DCU_FN dcu_ring_t dcu_ring_of(const dcuda_state_t *st, uint32_t win, size_t offset, uint64_t count,
                              uint64_t unit)
{
    dcu_ring_t r;
    r.win = win;
    r.comm = dcu_win_comm(win);
    r.me = dcu_comm_rank(st, r.comm);
    r.size = dcu_comm_size(st, r.comm);
    r.left = (r.me + r.size - 1) % r.size;
    r.right = (r.me + 1) % r.size;
    r.offset = offset;
    r.count = count;
    r.unit = unit;
    return r;
}

/* Block b (taken modulo P): its first byte and its bytes. The first
 * count % P blocks have one unit more. */
DCU_FN void dcu_ring_block(const dcu_ring_t *r, int b, size_t *at, size_t *bytes)
{
    uint64_t P = (uint64_t)r->size, q = r->count / P, extra = r->count % P;
    uint64_t i = (uint64_t)(((b % r->size) + r->size) % r->size);
    uint64_t first = i * q + (i < extra ? i : extra);
    *at = (size_t)(first * r->unit);
    *bytes = (size_t)((q + (i < extra ? 1u : 0u)) * r->unit);
}

/* Tells my left that what it is waiting for of mine holds (RING_CTRL),
 * then waits for my right's word of the same. The first handshake of a
 * call carries the records (`agree`): my left compares mine before it
 * writes into me, and I my right's when I will write into it. */
DCU_FN dcuda_status_t dcu_ring_handshake(dcuda_state_t *st, const dcu_ring_t *r, int agree,
                                         int writes_right, const char *call)
{
    const int tag = dcu_coll_tag(r->comm, DCU_COLL_RING_CTRL);
    dcuda_status_t s = agree ? dcu_call_push(st, r->comm, r->left, DCUDA_MAILBOX_RIGHT, tag)
                             : dcu_notify(st, r->left, r->comm, tag);
    if (s != DCUDA_OK)
        return s;
    return dcu_wait_boxes(st, tag, 1, call,
                          agree && writes_right ? dcu_boxes(r->comm, DCUDA_MAILBOX_RIGHT, 1) : 0u);
}

/* P - 1 steps: my block me - s goes to my right's scratch (its place
 * there: `scratch` bytes after the data, as in mine), and the block from
 * my left is added into mine. After them block me + 1 is reduced here. */
DCU_FN dcuda_status_t dcu_ring_reduce_scatter(dcuda_state_t *st, const dcu_ring_t *r, char *data,
                                              int type, int op, const char *call)
{
    const int tag = dcu_coll_tag(r->comm, DCU_COLL_RING_DATA);
    const size_t scratch = (size_t)(r->count * r->unit);
    dcuda_status_t s = DCUDA_OK;
    for (int step = 0; step < r->size - 1 && s == DCUDA_OK; step++) {
        size_t at, bytes;
        dcu_ring_block(r, r->me - step, &at, &bytes);
        s = dcu_put(st, r->win, r->right, r->offset + scratch + at, bytes, data + at, 1, tag, call);
        if (s == DCUDA_OK)
            s = dcu_wait_tag(st, tag, 1, call);
        dcu_ring_block(r, r->me - step - 1, &at, &bytes);
        if (s == DCUDA_OK)
            dcu_reduce_into(data + at, data + scratch + at, bytes / (size_t)r->unit, type, op);
    }
    return s;
}

/* P - 1 steps from block `first` (mine whole): block first - s goes into
 * the same place of my right's data, and the one from my left lands in
 * mine, to be passed on at the next step. Ends with the puts done
 * reading my data. */
DCU_FN dcuda_status_t dcu_ring_allgather_steps(dcuda_state_t *st, const dcu_ring_t *r, int first,
                                               char *data, const char *call)
{
    const int tag = dcu_coll_tag(r->comm, DCU_COLL_RING_DATA);
    dcuda_status_t s = DCUDA_OK;
    for (int step = 0; step < r->size - 1 && s == DCUDA_OK; step++) {
        size_t at, bytes;
        dcu_ring_block(r, first - step, &at, &bytes);
        s = dcu_put(st, r->win, r->right, r->offset + at, bytes, data + at, 1, tag, call);
        if (s == DCUDA_OK)
            s = dcu_wait_tag(st, tag, 1, call);
    }
    return s == DCUDA_OK ? dcu_win_flush(st, r->win) : s;
}

/* The allreduce of count elements of type at data (checked by the
 * caller, P >= 2; the scratch after the data holds as much again). */
DCU_FN_COLD dcuda_status_t dcu_ring_allreduce(dcuda_state_t *st, uint32_t win, size_t offset,
                                              size_t count, int type, int op, char *data,
                                              const char *call)
{
    dcu_ring_t r =
        dcu_ring_of(st, win, offset, count, dcuda_datatype_bytes((dcuda_datatype_t)type));
    dcuda_status_t s = dcu_ring_handshake(st, &r, 1, 1, call); /* we are in */
    if (s == DCUDA_OK)
        s = dcu_ring_reduce_scatter(st, &r, data, type, op, call);
    if (s == DCUDA_OK)
        s = dcu_win_flush(st, win);
    if (s == DCUDA_OK) /* my puts no longer read my data; my right's neither */
        s = dcu_ring_handshake(st, &r, 0, 1, call);
    return s == DCUDA_OK ? dcu_ring_allgather_steps(st, &r, r.me + 1, data, call) : s;
}

/* The allgather of P blocks of `size` bytes at data (checked by the
 * caller, P >= 2). */
DCU_FN_COLD dcuda_status_t dcu_ring_allgather(dcuda_state_t *st, uint32_t win, size_t offset,
                                              size_t size, char *data, const char *call)
{
    dcu_ring_t r = dcu_ring_of(st, win, offset, (uint64_t)dcu_comm_size(st, dcu_win_comm(win)),
                               (uint64_t)size);
    dcuda_status_t s = dcu_ring_handshake(st, &r, 1, 1, call);
    return s == DCUDA_OK ? dcu_ring_allgather_steps(st, &r, r.me, data, call) : s;
}

/* The broadcast of `size` bytes at data from `root` (checked by the
 * caller, P >= 3) along the ring in chunks of `chunk` bytes: each rank
 * waits for chunk i from its left (RING_DATA) and puts it into the same
 * place of its right's data, except the root's left, where the chain
 * ends. Every rank takes part in the handshake, so that its counts stay
 * even from one collective to the next. */
DCU_FN_COLD dcuda_status_t dcu_chain_broadcast(dcuda_state_t *st, uint32_t win, size_t offset,
                                               size_t size, int root, uint64_t chunk, char *data,
                                               const char *call)
{
    dcu_ring_t r = dcu_ring_of(st, win, offset, (uint64_t)size, 1u);
    const int tag = dcu_coll_tag(r.comm, DCU_COLL_RING_DATA);
    const int passes = r.right != root;
    dcuda_status_t s = dcu_ring_handshake(st, &r, 1, passes, call);
    for (size_t at = 0; at < size && s == DCUDA_OK; at += (size_t)chunk) {
        size_t bytes = size - at < chunk ? size - at : (size_t)chunk;
        if (r.me != root)
            s = dcu_wait_tag(st, tag, 1, call);
        if (s == DCUDA_OK && passes)
            s = dcu_put(st, win, r.right, offset + at, bytes, data + at, 1, tag, call);
    }
    return s == DCUDA_OK && passes ? dcu_win_flush(st, win) : s;
}

#endif /* DCUDA_IMPL_COLL_RING_H */
