/*
 * probe_eager: what a small notified put between two GPUs can cost when
 * its payload and its flag travel as one message (the eager form), beside
 * the form dcuda takes (stores, then a release add to the target's
 * counter). One thread on each of two GPUs of one process (peer access)
 * ping-pongs; no dcuda code runs, so each row is a floor of its protocol:
 *
 *   counter       4 B store into the peer, a release add to its counter;
 *                 the receiver polls its counter (acquire loads) and reads
 *                 the payload (the anchors' put floor)
 *   release_add   the release add alone (the anchors' notify floor)
 *   msg_sc        one 64-byte message (eight 8-byte words, each with the
 *                 round's flag; 4 B of payload) after fence.sc.sys, stored
 *                 into a 32-entry ring in the receiver's memory; the
 *                 receiver polls the entry (relaxed 16-byte loads) until
 *                 every flag is the round's, acquires (fence.acq_rel.sys),
 *                 stores the payload where it belongs and reads it back
 *   msg           the same with the sender's fence as fence.acq_rel.sys
 *   msg_ld        msg, the receiver acquiring by an acquire load of the
 *                 entry's first word instead of a fence
 *   msg16         a 16-byte message (one store: two words of 48 bits of
 *                 data and a 16-bit flag, room for a 4 B put's header and
 *                 payload), acquired by fence.acq_rel.sys
 *   msg16_ld      msg16 acquired by an acquire load of its first word
 *   msg16_acq     msg16 polled by acquire loads of its 16 bytes
 *   msg_dual      msg, the receiver polling its counter in the same poll
 *                 (an arrival may take either way) and reading the next
 *                 entry once after its acquire (nothing may be left behind
 *                 in the ring when the wait returns)
 *   counter_dual  counter, the receiver polling a ring entry in the same
 *                 poll and reading it once more after the counter's
 *                 acquire: what rings cost an arrival through the counter
 *   msg_full      msg_dual with the ticket of a ring shared by the ranks
 *                 of the sender's process (a CAS on a word of its own
 *                 memory, a load of the count the receiver hands back) and
 *                 the receiver's hand-back (a store into the sender's
 *                 memory): the whole eager protocol, less its API
 *
 *   counter@gap   counter with the payload `gap` bytes after the counter
 *
 * Prints the best of three runs of 50,000 round trips a row, one-way
 * microseconds by the GPU's global timer. Needs two GPUs with peer access
 * (says so and exits 0 otherwise); about two seconds.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "probe_ptx.cuh"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "probe_eager: %s: %s\n", #x, cudaGetErrorString(e_));                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define ITERS 50000
#define RING 32u

typedef unsigned long long u64;

enum mode {
    COUNTER,
    RELEASE_ADD,
    MSG_SC,
    MSG,
    MSG_LD,
    MSG16,
    MSG16_LD,
    MSG16_ACQ,
    MSG_DUAL,
    COUNTER_DUAL,
    MSG_FULL,
    MODES
};
static const char *const mode_names[MODES] = { "counter",  "release_add",  "msg_sc",   "msg",
                                               "msg_ld",   "msg16",        "msg16_ld", "msg16_acq",
                                               "msg_dual", "counter_dual", "msg_full" };

/* One GPU's side: its counter, payload word, ring and ticket words. */
typedef struct side {
    unsigned *cnt; /* [0] counter, [32] ticket taken, [64] entries handed back */
    int *buf;      /* [0] payload */
    u64 *ring;     /* RING entries of 8 words */
    char *arena;   /* ARENA bytes from cnt: where the payload may lie instead */
} side_t;

#define ARENA (4u << 20)

static __device__ __forceinline__ void fence_acq_rel_sys(void)
{
    asm volatile("fence.acq_rel.sys;" ::: "memory");
}

/* The message of round `flag` into entry e, after a release fence. */
static __device__ __forceinline__ void msg_send(u64 *e, unsigned flag, unsigned data, int sc)
{
    if (sc)
        asm volatile("fence.sc.sys;" ::: "memory");
    else
        fence_acq_rel_sys();
    u64 f = (u64)flag << 32, w0 = f | data;
    for (int i = 0; i < 8; i += 2)
        asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(e + i), "l"(i ? f : w0),
                     "l"(f)
                     : "memory");
}

/* 1 if every word of entry e carries `flag`; its payload in *data. */
static __device__ __forceinline__ int msg_ready(const u64 *e, unsigned flag, unsigned *data)
{
    u64 x[8];
    read_entry_sys(e, x);
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= (unsigned)(x[i] >> 32) == flag;
    *data = (unsigned)x[0];
    return ok;
}

/* A 16-byte message: two 8-byte words of 48 bits of data and a 16-bit
 * flag each (room for a tag, a window, a size, an offset of 44 bits and
 * 4 B of payload), one store. */
static __device__ __forceinline__ void msg16_send(u64 *e, unsigned flag, unsigned data)
{
    fence_acq_rel_sys();
    u64 f = (u64)(flag & 0xffffu) << 48;
    asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(e), "l"(f | data), "l"(f)
                 : "memory");
}

/* acquire: 0 relaxed load, 1 acquire load (the 16 bytes at once). */
static __device__ __forceinline__ int msg16_ready(const u64 *e, unsigned flag, unsigned *data,
                                                  int acquire)
{
    u64 x0, x1;
    if (acquire)
        asm volatile("ld.acquire.sys.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(x0), "=l"(x1)
                     : "l"(e)
                     : "memory");
    else
        asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(x0), "=l"(x1)
                     : "l"(e)
                     : "memory");
    *data = (unsigned)x0;
    return (unsigned)(x0 >> 48) == (flag & 0xffffu) && (unsigned)(x1 >> 48) == (flag & 0xffffu);
}

static __device__ __forceinline__ u64 ld_acquire_sys64(const u64 *p)
{
    u64 v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ u64 *entry(u64 *ring, unsigned round)
{
    return ring + (size_t)(round & (RING - 1u)) * 8u;
}

/* Sends round i to the peer. */
static __device__ void send(int mode, side_t me, side_t peer, unsigned i)
{
    switch (mode) {
    case COUNTER:
    case COUNTER_DUAL:
        peer.buf[0] = (int)i;
        red_release_sys(peer.cnt, 1u);
        break;
    case RELEASE_ADD:
        red_release_sys(peer.cnt, 1u);
        break;
    case MSG_FULL: {
        unsigned s = *(volatile unsigned *)&me.cnt[32];
        while (s - ld_relaxed_sys(&me.cnt[64]) >= RING) {
        }
        unsigned t = atomicCAS(&me.cnt[32], s, s + 1u); /* one sender: always s, round i - 1 */
        msg_send(entry(peer.ring, t + 1u), t + 1u, i, 0);
        break;
    }
    case MSG16:
    case MSG16_LD:
    case MSG16_ACQ:
        msg16_send(entry(peer.ring, i), i, i);
        break;
    default:
        msg_send(entry(peer.ring, i), i, i, mode == MSG_SC);
    }
}

/* Waits for round i from the peer; returns what the receiver read. */
static __device__ unsigned receive(int mode, side_t me, side_t peer, unsigned i)
{
    unsigned data = 0, next = 0;
    switch (mode) {
    case COUNTER:
        while (ld_acquire_sys(me.cnt) < i) {
        }
        return (unsigned)((volatile int *)me.buf)[0];
    case RELEASE_ADD:
        while (ld_acquire_sys(me.cnt) < i) {
        }
        return 0;
    case COUNTER_DUAL:
        for (;;) {
            int got = msg_ready(entry(me.ring, i), i, &data); /* nothing comes this way here */
            if (ld_acquire_sys(me.cnt) >= i)
                break;
            data += (unsigned)got;
        }
        (void)msg_ready(entry(me.ring, i), i, &next); /* once more, after the acquire */
        return (unsigned)((volatile int *)me.buf)[0] + next + data;
    case MSG_DUAL:
    case MSG_FULL:
        for (;;) {
            unsigned c = ld_relaxed_sys(me.cnt);
            if (msg_ready(entry(me.ring, i), i, &data))
                break;
            data += c;
        }
        fence_acq_rel_sys();
        me.buf[0] = (int)data;
        (void)msg_ready(entry(me.ring, i + 1u), i + 1u, &next); /* the ring is empty now */
        if (mode == MSG_FULL)
            st_relaxed_sys(&peer.cnt[64], i); /* entries handed back */
        return (unsigned)((volatile int *)me.buf)[0] + next;
    case MSG_LD:
        while (!msg_ready(entry(me.ring, i), i, &data)) {
        }
        data += (unsigned)ld_acquire_sys64(entry(me.ring, i)) - i; /* the acquire: a load */
        me.buf[0] = (int)data;
        return (unsigned)((volatile int *)me.buf)[0];
    case MSG16:
    case MSG16_LD:
    case MSG16_ACQ:
        while (!msg16_ready(entry(me.ring, i), i, &data, mode == MSG16_ACQ)) {
        }
        if (mode == MSG16)
            fence_acq_rel_sys();
        else if (mode == MSG16_LD)
            data += (unsigned)ld_acquire_sys64(entry(me.ring, i)) - i;
        me.buf[0] = (int)data;
        return (unsigned)((volatile int *)me.buf)[0];
    default:
        while (!msg_ready(entry(me.ring, i), i, &data)) {
        }
        fence_acq_rel_sys();
        me.buf[0] = (int)data;
        return (unsigned)((volatile int *)me.buf)[0];
    }
}

__global__ void ping_pong(int mode, int pinger, side_t me, side_t peer, int iters, u64 *out)
{
    unsigned sink = 0;
    u64 t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (unsigned i = 1; i <= (unsigned)iters; i++) {
        if (pinger) {
            send(mode, me, peer, i);
            sink += receive(mode, me, peer, i);
        } else {
            sink += receive(mode, me, peer, i);
            send(mode, me, peer, i);
        }
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[0] = t1 - t0;
    out[1] = sink;
}

static side_t side_alloc(int dev)
{
    side_t s;
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMalloc(&s.arena, ARENA));
    s.cnt = (unsigned *)(void *)s.arena;
    CHECK(cudaMalloc(&s.buf, 64 * sizeof(int)));
    CHECK(cudaMalloc(&s.ring, RING * 8u * sizeof(u64)));
    return s;
}

static void side_reset(int dev, side_t s)
{
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMemset(s.arena, 0, ARENA));
    CHECK(cudaMemset(s.buf, 0, 64 * sizeof(int)));
    CHECK(cudaMemset(s.ring, 0, RING * 8u * sizeof(u64)));
    CHECK(cudaDeviceSynchronize());
}

/* One run of a row: one-way microseconds. */
static double run_once(int mode, side_t a, side_t b, u64 *out_a, u64 *out_b)
{
    side_reset(0, a);
    side_reset(1, b);
    CHECK(cudaSetDevice(1));
    ping_pong<<<1, 1>>>(mode, 0, b, a, ITERS, out_b);
    CHECK(cudaGetLastError());
    CHECK(cudaSetDevice(0));
    ping_pong<<<1, 1>>>(mode, 1, a, b, ITERS, out_a);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaSetDevice(1));
    CHECK(cudaDeviceSynchronize());
    u64 ns;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemcpy(&ns, out_a, sizeof ns, cudaMemcpyDeviceToHost));
    return (double)ns / 1e3 / ITERS / 2.0;
}

int main(void)
{
    int n = 0, ab = 0, ba = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
        printf("probe_eager: needs two GPUs (found %d)\n", n);
        return 0;
    }
    CHECK(cudaDeviceCanAccessPeer(&ab, 0, 1));
    CHECK(cudaDeviceCanAccessPeer(&ba, 1, 0));
    if (!ab || !ba) {
        printf("probe_eager: GPUs 0 and 1 cannot access each other's memory\n");
        return 0;
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    CHECK(cudaSetDevice(1));
    CHECK(cudaDeviceEnablePeerAccess(0, 0));
    side_t a = side_alloc(0), b = side_alloc(1);
    u64 *out_a, *out_b;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&out_a, 2 * sizeof(u64)));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&out_b, 2 * sizeof(u64)));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("# probe_eager: %s x 2, one thread a GPU, %d round trips, best of 3\n", prop.name,
           ITERS);
    printf("%-14s %12s\n", "row", "one_way_us");
    for (int m = 0; m < MODES; m++) {
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            double us = run_once(m, a, b, out_a, out_b);
            best = us < best ? us : best;
        }
        printf("%-14s %12.3f\n", mode_names[m], best);
    }
    /* The counter row with the payload at a distance from the counter. */
    static const unsigned gaps[] = { 512u, 4096u, 65536u, 1u << 20, 3u << 20 };
    int *own_a = a.buf, *own_b = b.buf;
    for (unsigned g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        a.buf = (int *)(void *)(a.arena + gaps[g]);
        b.buf = (int *)(void *)(b.arena + gaps[g]);
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            double us = run_once(COUNTER, a, b, out_a, out_b);
            best = us < best ? us : best;
        }
        printf("counter@%-6u %12.3f\n", gaps[g], best);
    }
    a.buf = own_a;
    b.buf = own_b;
    return 0;
}
