/*
 * NVTX ranges and marks of dcuda's own domain ("dcuda"), so that the host
 * steps, the runs and the proxy's work show in an Nsight Systems timeline
 * (docs/troubleshooting.md). Built where the CUDA backend is, unless
 * -DDCUDA_NVTX=OFF; otherwise every call here is empty and nothing of
 * NVTX is compiled in.
 *
 * The names are registered with the domain once (nvtxDomainRegisterStringA),
 * at the first call; when no tool listens (no NVTX_INJECTION64_PATH, as
 * nsys sets it), the domain is NULL and every later call returns after one
 * test, without calling into NVTX. Ranges pushed on a thread are popped on
 * the same thread; a run's range (dcu_nvtx_start, dcu_nvtx_end) may end on
 * another.
 */
#ifndef DCU_UTIL_NVTX_H
#define DCU_UTIL_NVTX_H

#include <stdint.h>

/* The ranges, as the timeline names them (util/nvtx.c). */
typedef enum dcu_nvtx_name {
    DCU_NVTX_INIT,           /* "dcuda_init": dcuda_host_init */
    DCU_NVTX_INIT_BOOTSTRAP, /* the group's start: forks, rendezvous, MPI, PMIx */
    DCU_NVTX_INIT_AGREE,     /* an init step every process agrees on */
    DCU_NVTX_INIT_NODE,      /* settings agreed, nodes found, node segment */
    DCU_NVTX_INIT_BACKEND,   /* the device (or CPU ranks) opened */
    DCU_NVTX_INIT_PEERS,     /* paths to the peers, the network manager */
    DCU_NVTX_INIT_PLUGIN,    /* the network manager's plugin found and loaded */
    DCU_NVTX_INIT_CONTEXT,   /* context tables, rings, monitor, detector */
    DCU_NVTX_INIT_PROXY,     /* the proxy lanes started */
    DCU_NVTX_RUN,            /* a run: dcuda_host_run, or run_start to run_wait */
    DCU_NVTX_RUN_PREPARE,    /* tables reset, peers' memory, barrier */
    DCU_NVTX_RUN_LAUNCH,     /* the ranks started */
    DCU_NVTX_RUN_SERVE,      /* served and watched until every rank returned */
    DCU_NVTX_RUN_CONCLUDE,   /* user data back, outcome agreed */
    DCU_NVTX_FINISH,         /* dcuda_host_finish */
    DCU_NVTX_PROXY_SERVE,    /* a proxy pass's commands, from the first one found */
    DCU_NVTX_PROXY_RECEIVE,  /* a frame from the network handled */
    DCU_NVTX_PROXY_DRAIN,    /* a proxy's end of a run */
    DCU_NVTX_NAMES
} dcu_nvtx_name_t;

#if defined(DCUDA_NVTX)
void dcu_nvtx_push(dcu_nvtx_name_t name);
void dcu_nvtx_pop(void);
/* A range that may end on another thread: 0 when no tool listens. */
uint64_t dcu_nvtx_start(dcu_nvtx_name_t name);
void dcu_nvtx_end(uint64_t range);
/* A rare event (an error, an abort, a deadlock), its text as printf's;
 * formatted only when a tool listens. */
void dcu_nvtx_mark(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#else
static inline void dcu_nvtx_push(dcu_nvtx_name_t name) { (void)name; }
static inline void dcu_nvtx_pop(void) {}
static inline uint64_t dcu_nvtx_start(dcu_nvtx_name_t name)
{
    (void)name;
    return 0;
}
static inline void dcu_nvtx_end(uint64_t range) { (void)range; }
static inline __attribute__((format(printf, 1, 2))) void dcu_nvtx_mark(const char *fmt, ...)
{
    (void)fmt;
}
#endif

#endif /* DCU_UTIL_NVTX_H */
