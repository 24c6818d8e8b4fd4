/*
 * probe_queue: where a GPU rank's turnaround on the remote path goes. A
 * host thread plays the proxy (no network): it hands the kernel a message,
 * the kernel answers with a command, the host finds it and hands the next
 * message. Each row pairs one way of receiving with one way of answering;
 * one-way = round trip / 2 by the host's clock, and send_ns is what the
 * answer costs the rank itself (the GPU's global timer, from the message
 * found to the answer written).
 *
 * Receiving (warp 0 polls, then the block of 128 threads meets):
 *   flag      lane 0 polls a 4-byte flag in pinned host memory (the floor)
 *   inbox     lane 0 reads a 64-byte inbox entry of flagged words
 *             (shared/ring.h's inbox) until every flag is right
 *   inbox_warp   lanes 0..3 read a quarter of the entry each (one 64-byte
 *             request), and vote
 *   inbox_ctr the engine's wait: each poll reads the rank's counter (GPU
 *             memory) and then the inbox; the message is counted on the
 *             counter, which is read again
 *   warp_ctr  as inbox_ctr, the inbox read as inbox_warp
 *   apply     as warp_ctr, the counter read with acquire at GPU scope
 *   apply_tail   as apply, and the consumed count stored to host memory
 *             (relaxed) before the counter is read again, as the engine does
 *   doorbell  lane 0 polls a word of GPU memory that the host writes with
 *             a stream memory operation (cuStreamWriteValue32)
 * Answering:
 *   flag      lane 0 stores a flag, then a system fence (the floor)
 *   cmd       a ticket from a GPU-memory head, a 64-byte command header,
 *             its seq stored with system-scope release (shared/ring.h)
 *   cmd_put   the engine's 4-byte put: the block meets, the leader's
 *             ticket of two entries is shared, a payload entry is written,
 *             the block meets, then the header as `cmd`
 *   flagged   a ticket, then 64 bytes of flagged words (4 bytes of data and
 *             the lap's flag each, 16-byte stores, no fence)
 *   flagged_put  as cmd_put with the header and payload in flagged words
 *
 * Best of three runs of ROUNDS round trips a row. GPU only; about 2 s.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_ptx.cuh"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            printf("probe_queue: %s: %s\n", #x, cudaGetErrorString(e_));                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define ROUNDS 20000u
#define RING 4096u  /* command entries (64 B) */
#define INBOX 256u  /* inbox entries (64 B) */
#define THREADS 128 /* a rank's block */

typedef unsigned long long u64;

enum rx {
    RX_FLAG,
    RX_INBOX,
    RX_INBOX_WARP,
    RX_INBOX_CTR,
    RX_DOORBELL,
    RX_WARP_CTR,
    RX_APPLY,
    RX_APPLY_TAIL,
    RXS
};
enum tx { TX_FLAG, TX_CMD, TX_CMD_PUT, TX_FLAGGED, TX_FLAGGED_PUT, TXS };
static const char *const rx_names[RXS] = { "flag",     "inbox",    "inbox_warp", "inbox_ctr",
                                           "doorbell", "warp_ctr", "apply",      "apply_tail" };
static const char *const tx_names[TXS] = { "flag", "cmd", "cmd_put", "flagged", "flagged_put" };

/* What both sides share. Host-written words lie in pinned memory (h_*),
 * except the doorbell; rank-only words in GPU memory (d_*). */
typedef struct shared {
    uint32_t *h_flag; /* host -> rank flag */
    u64 *h_inbox;     /* [INBOX * 8] host -> rank entries */
    uint32_t *d_bell; /* host -> rank doorbell (GPU memory) */
    uint32_t *h_ack;  /* rank -> host flag */
    u64 *h_ring;      /* [RING * 8] rank -> host entries */
    uint32_t *d_head; /* ticket head (GPU memory) */
    uint32_t *d_ctr;  /* the rank's counter (GPU memory) */
    uint32_t *h_tail; /* rank -> host consumed count */
    u64 *d_send_ns;   /* total send cost */
} shared_t;

static __device__ __forceinline__ void st_v2_relaxed_sys(u64 *p, u64 a, u64 b)
{
    asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b)
                 : "memory");
}

/* Is inbox entry `pos` written for this lap (every word's flag pos + 1)? */
static __device__ int inbox_ready(const u64 *e, uint32_t pos)
{
    u64 x[8];
    read_entry_sys(e, x);
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= (uint32_t)(x[i] >> 32) == pos + 1u;
    return ok;
}

/* Warp 0: is inbox entry `pos` written, read by lanes 0..3 at once? */
static __device__ int inbox_ready_warp(const u64 *e, uint32_t pos)
{
    const unsigned lane = threadIdx.x & 31u;
    u64 x0 = 0, x1 = 0;
    if (lane < 4u)
        asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(x0), "=l"(x1)
                     : "l"(e + 2u * lane)
                     : "memory");
    int ok = lane >= 4u || ((uint32_t)(x0 >> 32) == pos + 1u && (uint32_t)(x1 >> 32) == pos + 1u);
    return __all_sync(0xffffffffu, ok);
}

/* Warp 0 (lane 0 alone for the lane-0 ways): waits for message i (1, 2, ...). */
static __device__ void receive(const shared_t *s, int rx, uint32_t i)
{
    const int lane0 = (threadIdx.x & 31u) == 0;
    uint32_t pos = i - 1u;
    const u64 *e = s->h_inbox + (size_t)(pos % INBOX) * 8u;
    switch (rx) {
    case RX_FLAG:
        if (lane0)
            while (ld_acquire_sys(s->h_flag) != i) {
            }
        break;
    case RX_INBOX_WARP:
        while (!inbox_ready_warp(e, pos)) {
        }
        break;
    case RX_WARP_CTR:
        for (;;) {
            uint32_t c = __shfl_sync(0xffffffffu, lane0 ? ld_acquire_sys(s->d_ctr) : 0u, 0);
            if (c == i)
                break;
            if (inbox_ready_warp(e, pos) && lane0)
                atomicAdd(s->d_ctr, 1u);
            __syncwarp();
        }
        break;
    case RX_APPLY:
    case RX_APPLY_TAIL:
        for (;;) {
            uint32_t c = __shfl_sync(0xffffffffu, lane0 ? ld_acquire_gpu(s->d_ctr) : 0u, 0);
            if (c == i)
                break;
            if (inbox_ready_warp(e, pos) && lane0) {
                atomicAdd(s->d_ctr, 1u);
                if (rx == RX_APPLY_TAIL)
                    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(s->h_tail), "r"(i)
                                 : "memory");
            }
            __syncwarp();
        }
        break;
    case RX_INBOX:
        if (lane0)
            while (!inbox_ready(e, pos)) {
            }
        break;
    case RX_INBOX_CTR:
        for (; lane0;) {
            if (ld_acquire_sys(s->d_ctr) == i)
                break;
            if (inbox_ready(e, pos))
                atomicAdd(s->d_ctr, 1u);
        }
        break;
    case RX_DOORBELL:
        if (lane0)
            while (ld_acquire_sys(s->d_bell) != i) {
            }
        break;
    }
}

/* 64 bytes of flagged words at entry `e`, lap flag f, by one thread. */
static __device__ void write_flagged(u64 *e, uint32_t f, uint32_t a)
{
    u64 hi = (u64)f << 32;
    st_v2_relaxed_sys(e, hi | a, hi | 2u);
    st_v2_relaxed_sys(e + 2, hi | 3u, hi | 4u);
    st_v2_relaxed_sys(e + 4, hi | 5u, hi | 6u);
    st_v2_relaxed_sys(e + 6, hi | 7u, hi | 8u);
}

/* A command header at ticket t: fields, then seq with release. */
static __device__ void write_cmd(u64 *e, uint32_t t, uint32_t a)
{
    uint32_t *w = (uint32_t *)e;
    w[1] = 0; /* rank */
    w[2] = 2; /* op */
    w[3] = 0; /* tag */
    e[2] = a; /* args */
    e[3] = 0;
    e[4] = 0;
    e[5] = 4;
    e[6] = 2;
    e[7] = 1;
    st_release_sys(w, t + 1u);
}

/* The block answers message i. */
static __device__ void answer(const shared_t *s, int tx, uint32_t i, uint32_t *shared_ticket)
{
    const int lead = threadIdx.x == 0;
    switch (tx) {
    case TX_FLAG:
        if (lead) {
            *(volatile uint32_t *)s->h_ack = i;
            __threadfence_system();
        }
        break;
    case TX_CMD:
        if (lead) {
            uint32_t t = atomicAdd(s->d_head, 1u);
            write_cmd(s->h_ring + (size_t)(t % RING) * 8u, t, i);
        }
        break;
    case TX_FLAGGED:
        if (lead) {
            uint32_t t = atomicAdd(s->d_head, 1u);
            write_flagged(s->h_ring + (size_t)(t % RING) * 8u, t + 1u, i);
        }
        break;
    case TX_CMD_PUT:
    case TX_FLAGGED_PUT: {
        __syncthreads();
        if (lead)
            *shared_ticket = atomicAdd(s->d_head, 2u);
        __syncthreads();
        uint32_t t = *shared_ticket;
        u64 *payload = s->h_ring + (size_t)((t + 1u) % RING) * 8u;
        if (tx == TX_CMD_PUT && lead)
            *(volatile uint32_t *)payload = i;
        if (tx == TX_FLAGGED_PUT && lead)
            write_flagged(payload, t + 2u, i);
        __syncthreads();
        if (lead && tx == TX_CMD_PUT)
            write_cmd(s->h_ring + (size_t)(t % RING) * 8u, t, i);
        if (lead && tx == TX_FLAGGED_PUT)
            write_flagged(s->h_ring + (size_t)(t % RING) * 8u, t + 1u, i);
        break;
    }
    }
}

__global__ void rank(shared_t s, int rx, int tx, uint32_t rounds)
{
    __shared__ uint32_t ticket;
    u64 spent = 0;
    for (uint32_t i = 1; i <= rounds; i++) {
        if (threadIdx.x < 32)
            receive(&s, rx, i);
        __syncthreads();
        u64 t0 = global_ns();
        answer(&s, tx, i, &ticket);
        if (threadIdx.x == 0)
            spent += global_ns() - t0;
    }
    if (threadIdx.x == 0)
        *s.d_send_ns = spent;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The host's side: state across rounds. */
typedef struct host {
    shared_t h;      /* host addresses of the pinned words */
    uint32_t ticket; /* next command ticket expected */
    CUstream bell_stream;
    CUdeviceptr bell;
} host_t;

static void hand(host_t *H, int rx, uint32_t i)
{
    uint32_t pos = i - 1u;
    switch (rx) {
    case RX_FLAG:
        __atomic_store_n(H->h.h_flag, i, __ATOMIC_RELEASE);
        break;
    case RX_INBOX:
    case RX_INBOX_WARP:
    case RX_WARP_CTR:
    case RX_APPLY:
    case RX_APPLY_TAIL:
    case RX_INBOX_CTR: {
        u64 *e = H->h.h_inbox + (size_t)(pos % INBOX) * 8u;
        for (int w = 7; w >= 0; w--)
            __atomic_store_n(&e[w], (u64)(pos + 1u) << 32 | (u64)w, __ATOMIC_RELAXED);
        break;
    }
    case RX_DOORBELL:
        if (cuStreamWriteValue32(H->bell_stream, H->bell, i, 0) != CUDA_SUCCESS) {
            printf("probe_queue: cuStreamWriteValue32 failed\n");
            exit(1);
        }
        break;
    }
}

/* Waits for answer i; recycles command entries as the proxy does. */
static void collect(host_t *H, int tx, uint32_t i)
{
    if (tx == TX_FLAG) {
        while (__atomic_load_n(H->h.h_ack, __ATOMIC_ACQUIRE) != i) {
        }
        return;
    }
    uint32_t entries = tx == TX_CMD_PUT || tx == TX_FLAGGED_PUT ? 2u : 1u;
    uint32_t t = H->ticket;
    u64 *e = H->h.h_ring + (size_t)(t % RING) * 8u;
    if (tx == TX_CMD || tx == TX_CMD_PUT) {
        uint32_t *seq = (uint32_t *)e;
        while (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != t + 1u) {
        }
    } else {
        for (uint32_t k = 0; k < entries; k++) {
            u64 *x = H->h.h_ring + (size_t)((t + k) % RING) * 8u;
            for (int w = 0; w < 8; w++)
                while ((uint32_t)(__atomic_load_n(&x[w], __ATOMIC_ACQUIRE) >> 32) != t + k + 1u) {
                }
        }
    }
    H->ticket = t + entries;
}

static void run(host_t *H, const shared_t *d, int rx, int tx, double *one_way, double *send_ns)
{
    double best = 1e30, best_send = 0;
    for (int rep = 0; rep < 3; rep++) {
        memset(H->h.h_ring, 0, (size_t)RING * 64u);
        memset(H->h.h_inbox, 0, (size_t)INBOX * 64u);
        *H->h.h_flag = *H->h.h_ack = 0;
        H->ticket = 0;
        CHECK(cudaMemset(d->d_head, 0, 4));
        CHECK(cudaMemset(d->d_ctr, 0, 4));
        CHECK(cudaMemset(d->d_bell, 0, 4));
        CHECK(cudaDeviceSynchronize());
        rank<<<1, THREADS>>>(*d, rx, tx, ROUNDS);
        CHECK(cudaGetLastError());
        double t0 = 0;
        for (uint32_t i = 1; i <= ROUNDS; i++) {
            if (i == 2)
                t0 = now_us(); /* the first round includes the launch */
            hand(H, rx, i);
            collect(H, tx, i);
        }
        double us = (now_us() - t0) / (ROUNDS - 1) / 2;
        CHECK(cudaDeviceSynchronize());
        u64 spent;
        CHECK(cudaMemcpy(&spent, d->d_send_ns, 8, cudaMemcpyDeviceToHost));
        if (us < best) {
            best = us;
            best_send = (double)spent / ROUNDS;
        }
    }
    *one_way = best;
    *send_ns = best_send;
}

static void *pinned(size_t bytes, void **dev)
{
    void *h;
    CHECK(cudaHostAlloc(&h, bytes, cudaHostAllocMapped));
    memset(h, 0, bytes);
    CHECK(cudaHostGetDevicePointer(dev, h, 0));
    return h;
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("probe_queue: no GPU: nothing to measure\n");
        return 0;
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0));
    host_t H;
    shared_t d;
    memset(&H, 0, sizeof H);
    H.h.h_flag = (uint32_t *)pinned(64, (void **)&d.h_flag);
    H.h.h_ack = (uint32_t *)pinned(64, (void **)&d.h_ack);
    H.h.h_tail = (uint32_t *)pinned(64, (void **)&d.h_tail);
    H.h.h_inbox = (u64 *)pinned((size_t)INBOX * 64u, (void **)&d.h_inbox);
    H.h.h_ring = (u64 *)pinned((size_t)RING * 64u, (void **)&d.h_ring);
    CHECK(cudaMalloc((void **)&d.d_bell, 256));
    CHECK(cudaMalloc((void **)&d.d_head, 256));
    CHECK(cudaMalloc((void **)&d.d_ctr, 256));
    CHECK(cudaMalloc((void **)&d.d_send_ns, 8));
    H.bell = (CUdeviceptr)d.d_bell;
    if (cuStreamCreate(&H.bell_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        printf("probe_queue: cuStreamCreate failed\n");
        return 1;
    }
    static const int pairs[][2] = {
        { RX_FLAG, TX_FLAG },
        { RX_INBOX, TX_FLAG },
        { RX_INBOX_WARP, TX_FLAG },
        { RX_INBOX_CTR, TX_FLAG },
        { RX_WARP_CTR, TX_FLAG },
        { RX_DOORBELL, TX_FLAG },
        { RX_FLAG, TX_CMD },
        { RX_FLAG, TX_CMD_PUT },
        { RX_FLAG, TX_FLAGGED },
        { RX_FLAG, TX_FLAGGED_PUT },
        { RX_INBOX_CTR, TX_CMD_PUT },
        { RX_INBOX_CTR, TX_FLAGGED_PUT },
        { RX_DOORBELL, TX_FLAGGED_PUT },
        { RX_WARP_CTR, TX_FLAGGED_PUT },
        { RX_APPLY, TX_FLAG },
        { RX_APPLY_TAIL, TX_FLAG },
        { RX_APPLY, TX_CMD_PUT },
        { RX_APPLY_TAIL, TX_CMD_PUT },
    };
    printf("%-10s %-12s %10s %10s %9s\n", "receive", "answer", "one_way_us", "round_us", "send_ns");
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        double us, send_ns;
        run(&H, &d, pairs[k][0], pairs[k][1], &us, &send_ns);
        printf("%-10s %-12s %10.3f %10.3f %9.0f\n", rx_names[pairs[k][0]], tx_names[pairs[k][1]],
               us, 2 * us, send_ns);
    }
    return 0;
}
