/*
 * The program's processes numbered as lanes, the manager's allgather in
 * that numbering, and the backend's calls under one lock (lane_space.h).
 *
 * The allgather: the L lanes of a process open their managers at once,
 * each on its own thread, and each manager's allgather is a step of the
 * whole program. Every lane leaves its bytes here; the last of them runs
 * the process's allgather of all L contributions (in pieces the
 * bootstrap carries), which puts them in lane order, p * L + l, and every
 * lane takes the result. A lane whose opening failed counts as arrived
 * with zeros (a manager reads zeros as a peer that could not start).
 */
#include "lane_space.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int32_t *dcu_lane_first(const int32_t *proc_first, int procs, int lanes)
{
    int32_t *first = malloc(((size_t)procs * (size_t)lanes + 1) * sizeof *first);
    if (!first)
        return NULL;
    for (int p = 0; p < procs; p++) {
        int32_t n = proc_first[p + 1] - proc_first[p];
        for (int l = 0; l < lanes; l++)
            first[p * lanes + l] = proc_first[p] + DCUDA_LANE_FIRST(n, l, lanes);
    }
    first[procs * lanes] = proc_first[procs];
    return first;
}

uint8_t *dcu_lane_path(const uint8_t *path, int procs, int lanes)
{
    uint8_t *out = malloc((size_t)procs * (size_t)lanes);
    if (!out)
        return NULL;
    for (int q = 0; q < procs * lanes; q++)
        out[q] = path[q / lanes];
    return out;
}

/* ---- the allgather of lane numbers ------------------------------------------------ */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t turn;
    dcu_net_env_t process; /* the process's own environment */
    int lanes;
    int arrived;       /* lanes that left their bytes for this round */
    int failed;        /* lanes that will not come (their bytes stay zero) */
    unsigned round;    /* rounds completed */
    size_t size;       /* a lane's bytes this round */
    char *mine;        /* [lanes][size] */
    char *all;         /* [procs][lanes][size] */
    dcuda_status_t st; /* of the last round */
} gather = { .lock = PTHREAD_MUTEX_INITIALIZER, .turn = PTHREAD_COND_INITIALIZER };

static _Thread_local int my_lane;

void dcu_lane_gather_begin(const dcu_net_env_t *process_env, int lanes)
{
    pthread_mutex_lock(&gather.lock);
    gather.process = *process_env;
    gather.lanes = lanes;
    gather.arrived = gather.failed = 0;
    gather.size = 0;
    pthread_mutex_unlock(&gather.lock);
}

void dcu_lane_gather_enter(int lane) { my_lane = lane; }

void dcu_lane_gather_end(void)
{
    pthread_mutex_lock(&gather.lock);
    free(gather.mine);
    free(gather.all);
    gather.mine = gather.all = NULL;
    pthread_mutex_unlock(&gather.lock);
}

/* The last lane of a round: the process's allgather of every lane's bytes,
 * in pieces of what the bootstrap carries. */
static dcuda_status_t gather_round(void)
{
    const int procs = gather.process.process_count;
    const size_t block = (size_t)gather.lanes * gather.size, piece_max = gather.process.gather_max;
    free(gather.all);
    gather.all = malloc((size_t)procs * block);
    char *piece = malloc((size_t)procs * piece_max);
    dcuda_status_t st = gather.all && piece ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
    for (size_t at = 0; st == DCUDA_OK && at < block; at += piece_max) {
        size_t n = block - at < piece_max ? block - at : piece_max;
        st = gather.process.allgather(gather.mine + at, piece, n);
        for (int p = 0; st == DCUDA_OK && p < procs; p++)
            memcpy(gather.all + (size_t)p * block + at, piece + (size_t)p * n, n);
    }
    free(piece);
    return st;
}

static void complete_round(void)
{
    gather.st = gather_round();
    gather.arrived = 0;
    gather.round++;
    pthread_cond_broadcast(&gather.turn);
}

static dcuda_status_t lane_allgather(const void *mine, void *all, size_t size)
{
    pthread_mutex_lock(&gather.lock);
    if (gather.arrived == 0) { /* the round's first lane */
        free(gather.mine);
        gather.mine = calloc((size_t)gather.lanes, size ? size : 1);
        gather.size = size;
    }
    dcuda_status_t st = DCUDA_OK;
    if (!gather.mine || size != gather.size) {
        st = gather.mine ? DCUDA_ERR_INVALID_ARG : DCUDA_ERR_NO_MEMORY; /* lanes out of step */
        pthread_mutex_unlock(&gather.lock);
        return st;
    }
    memcpy(gather.mine + (size_t)my_lane * size, mine, size);
    unsigned round = gather.round;
    if (++gather.arrived + gather.failed == gather.lanes)
        complete_round();
    while (gather.round == round)
        pthread_cond_wait(&gather.turn, &gather.lock);
    st = gather.st;
    if (st == DCUDA_OK)
        memcpy(all, gather.all, (size_t)gather.process.process_count * gather.lanes * size);
    pthread_mutex_unlock(&gather.lock);
    return st;
}

void dcu_lane_gather_abandon(void)
{
    pthread_mutex_lock(&gather.lock);
    gather.failed++;
    if (gather.arrived > 0 && gather.arrived + gather.failed == gather.lanes)
        complete_round();
    pthread_mutex_unlock(&gather.lock);
}

/* "process 1 (pid 4242 on node7), lane 2": the process's own words. */
static const char *(*process_describe)(int p, char *buf, size_t size);
static int described_lanes = 1;

static const char *describe_lane(int q, char *buf, size_t size)
{
    char proc[160];
    int p = q / described_lanes, l = q % described_lanes;
    if (process_describe)
        process_describe(p, proc, sizeof proc);
    else
        snprintf(proc, sizeof proc, "process %d", p);
    snprintf(buf, size, "%s, lane %d", proc, l);
    return buf;
}

dcu_net_env_t dcu_lane_env(const dcu_net_env_t *process_env, int lanes, int lane)
{
    dcu_net_env_t env = *process_env;
    env.process_index = process_env->process_index * lanes + lane;
    env.process_count = process_env->process_count * lanes;
    env.allgather = lane_allgather;
    process_describe = process_env->describe;
    described_lanes = lanes;
    env.describe = describe_lane;
    env.lanes = lanes;
    return env;
}

/* ---- the backend under one lock ----------------------------------------------------- */

static const dcu_backend_ops_t *base_ops;
static dcu_backend_ops_t locked_ops;
static pthread_mutex_t backend_lock = PTHREAD_MUTEX_INITIALIZER;

#define LOCKED(type, call)                                                                         \
    do {                                                                                           \
        pthread_mutex_lock(&backend_lock);                                                         \
        type r_ = call;                                                                            \
        pthread_mutex_unlock(&backend_lock);                                                       \
        return r_;                                                                                 \
    } while (0)

static dcuda_status_t alloc_mapped(dcu_backend_t *b, size_t size, void **host, void **rank)
{
    LOCKED(dcuda_status_t, base_ops->alloc_mapped(b, size, host, rank));
}

static void free_mapped(dcu_backend_t *b, void *host)
{
    pthread_mutex_lock(&backend_lock);
    base_ops->free_mapped(b, host);
    pthread_mutex_unlock(&backend_lock);
}

static dcuda_status_t copy_in(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    LOCKED(dcuda_status_t, base_ops->copy_in(b, dst, src, size));
}

static dcuda_status_t copy_out(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    LOCKED(dcuda_status_t, base_ops->copy_out(b, dst, src, size));
}

static dcuda_status_t read_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                 uint64_t *ticket)
{
    LOCKED(dcuda_status_t, base_ops->read_start(b, dst, src, size, ticket));
}

static int read_done(dcu_backend_t *b, uint64_t ticket)
{
    LOCKED(int, base_ops->read_done(b, ticket));
}

static dcuda_status_t write_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                  uint64_t *ticket)
{
    LOCKED(dcuda_status_t, base_ops->write_start(b, dst, src, size, ticket));
}

static int write_done(dcu_backend_t *b, uint64_t ticket)
{
    LOCKED(int, base_ops->write_done(b, ticket));
}

const dcu_backend_ops_t *dcu_lane_locked_ops(const dcu_backend_ops_t *base)
{
    base_ops = base;
    locked_ops = *base;
    locked_ops.alloc_mapped = alloc_mapped;
    locked_ops.free_mapped = free_mapped;
    locked_ops.copy_in = copy_in;
    locked_ops.copy_out = copy_out;
    locked_ops.read_start = read_start;
    locked_ops.read_done = read_done;
    locked_ops.write_start = write_start;
    locked_ops.write_done = write_done;
    return &locked_ops;
}
