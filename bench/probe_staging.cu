/*
 * probe_staging: what the network path's target side can cost on this GPU,
 * to choose how a proxy hands data to a running kernel.
 *
 * 1. The staging ceiling: pinned host <-> device copy bandwidth (64 MiB,
 *    cudaMemcpyAsync), the bound for puts staged through host memory.
 * 2. Handing 4 bytes and a flag to a kernel that spins on the flag, timed
 *    as a ping-pong (the kernel answers in pinned host memory, the host
 *    spins on that), one-way = round trip / 2:
 *      pinned_pinned    data and flag in pinned host memory, the kernel
 *                       polls it (a device-side receiver reading an inbox)
 *      memcpy_sync      cudaMemcpy of data then flag into device memory
 *                       (what the proxy does today)
 *      memcpy_async     cudaMemcpyAsync of both on one stream, no wait
 * Prints one line per figure; GPU only.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__);                \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define ROUNDS 2000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static __device__ uint32_t ld_sys(const volatile uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Spins until *flag == i, checks the data, answers i in *ack (pinned). */
__global__ void responder(const uint32_t *flag, const uint32_t *data, uint32_t *ack, int rounds,
                          uint32_t *bad)
{
    for (uint32_t i = 1; i <= (uint32_t)rounds; i++) {
        while (ld_sys(flag) != i) {
        }
        if (*(volatile const uint32_t *)data != i * 7u)
            atomicAdd(bad, 1u);
        asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(ack), "r"(i) : "memory");
    }
}

static void wait_ack(volatile uint32_t *ack, uint32_t i)
{
    while (*ack != i) {
    }
}

enum mode { PINNED_PINNED, MEMCPY_SYNC, MEMCPY_ASYNC };

static double pingpong(int mode)
{
    uint32_t *h_data, *h_flag, *h_ack, *d_data, *d_flag, *d_bad, bad = 0;
    CHECK(cudaHostAlloc((void **)&h_data, 64, cudaHostAllocMapped));
    CHECK(cudaHostAlloc((void **)&h_flag, 64, cudaHostAllocMapped));
    CHECK(cudaHostAlloc((void **)&h_ack, 64, cudaHostAllocMapped));
    CHECK(cudaMalloc((void **)&d_data, 64));
    CHECK(cudaMalloc((void **)&d_flag, 64));
    CHECK(cudaMalloc((void **)&d_bad, 4));
    *h_data = *h_flag = *h_ack = 0;
    CHECK(cudaMemset(d_data, 0, 64));
    CHECK(cudaMemset(d_flag, 0, 64));
    CHECK(cudaMemset(d_bad, 0, 4));
    uint32_t *m_data, *m_flag, *m_ack;
    CHECK(cudaHostGetDevicePointer((void **)&m_data, h_data, 0));
    CHECK(cudaHostGetDevicePointer((void **)&m_flag, h_flag, 0));
    CHECK(cudaHostGetDevicePointer((void **)&m_ack, h_ack, 0));
    cudaStream_t kern, copy;
    CHECK(cudaStreamCreateWithFlags(&kern, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    int pinned = mode == PINNED_PINNED;
    responder<<<1, 1, 0, kern>>>(pinned ? m_flag : d_flag, pinned ? m_data : d_data, m_ack, ROUNDS,
                                 d_bad);
    uint32_t *vals = (uint32_t *)malloc(2 * sizeof(uint32_t) * (ROUNDS + 1));
    CHECK(cudaHostRegister(vals, 2 * sizeof(uint32_t) * (ROUNDS + 1), 0));
    double t0 = 0;
    for (uint32_t i = 1; i <= ROUNDS; i++) {
        if (i == 2)
            t0 = now_us(); /* the first round includes the launch */
        vals[2 * i] = i * 7u;
        vals[2 * i + 1] = i;
        if (pinned) {
            ((volatile uint32_t *)h_data)[0] = i * 7u;
            __atomic_store_n(h_flag, i, __ATOMIC_RELEASE);
        } else if (mode == MEMCPY_SYNC) {
            CHECK(cudaMemcpy(d_data, &vals[2 * i], 4, cudaMemcpyHostToDevice));
            CHECK(cudaMemcpy(d_flag, &vals[2 * i + 1], 4, cudaMemcpyHostToDevice));
        } else {
            CHECK(cudaMemcpyAsync(d_data, &vals[2 * i], 4, cudaMemcpyHostToDevice, copy));
            CHECK(cudaMemcpyAsync(d_flag, &vals[2 * i + 1], 4, cudaMemcpyHostToDevice, copy));
        }
        wait_ack(h_ack, i);
    }
    double us = (now_us() - t0) / (ROUNDS - 1) / 2;
    CHECK(cudaStreamSynchronize(kern));
    CHECK(cudaMemcpy(&bad, d_bad, 4, cudaMemcpyDeviceToHost));
    cudaHostUnregister(vals);
    free(vals);
    cudaFreeHost(h_data);
    cudaFreeHost(h_flag);
    cudaFreeHost(h_ack);
    cudaFree(d_data);
    cudaFree(d_flag);
    cudaFree(d_bad);
    cudaStreamDestroy(kern);
    cudaStreamDestroy(copy);
    return bad ? -us : us;
}

static double bandwidth(int to_device)
{
    size_t bytes = (size_t)64 << 20;
    void *h, *d;
    cudaEvent_t a, b;
    float ms = 0;
    CHECK(cudaHostAlloc(&h, bytes, cudaHostAllocDefault));
    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int warm = 0; warm < 2; warm++)
        CHECK(cudaMemcpy(to_device ? d : h, to_device ? h : d, bytes, cudaMemcpyDefault));
    CHECK(cudaEventRecord(a));
    for (int k = 0; k < 10; k++)
        CHECK(cudaMemcpyAsync(to_device ? d : h, to_device ? h : d, bytes, cudaMemcpyDefault));
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaFreeHost(h);
    cudaFree(d);
    return 10.0 * bytes / (ms / 1e3) / 1e9;
}

int main(void)
{
    printf("staging h2d_pinned_64MiB GBps=%.1f\n", bandwidth(1));
    printf("staging d2h_pinned_64MiB GBps=%.1f\n", bandwidth(0));
    static const char *names[] = { "pinned_pinned", "memcpy_sync", "memcpy_async" };
    for (int m = 0; m < 3; m++) {
        double us = pingpong(m);
        printf("handoff %s one_way_us=%.3f%s\n", names[m], us < 0 ? -us : us,
               us < 0 ? " (DATA WRONG)" : "");
    }
    return 0;
}
