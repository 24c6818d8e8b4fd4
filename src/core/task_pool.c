/*
 * Tasks on the devices of this process (dcuda/dcuda_task.h): the pools
 * and the API. A pool's devices each have a worker thread (task_run.c)
 * and a FIFO queue (task_queue.c), under the pool's one lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/task.h"
#include "util/msg.h"

#define TASK_CPU_DEVICES_MAX 64

static void *worker_main(void *arg)
{
    dcu_task_dev_t *dev = arg;
    if (dev->kind == DCU_TASK_GPU)
        dcu_task_gpu_worker(dev->pool, dev->index);
    else
        dcu_task_cpu_worker(dev->pool, dev->index);
    return NULL;
}

/* ---- the pool ---------------------------------------------------------------------------- */

static void pool_free(dcuda_task_pool_h p)
{
    for (dcuda_task_h t = p->tasks; t;) {
        dcuda_task_h next = t->all_next;
        free(t);
        t = next;
    }
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->ended);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Stops the pool's workers once every queued task ran, joins them, frees
 * it (the API lock held, the pool out of its host's list). */
static void pool_stop(dcuda_task_pool_h p)
{
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int d = 0; d < p->ndev; d++)
        if (p->dev[d].started)
            pthread_join(p->dev[d].thread, NULL);
    pool_free(p);
}

static dcuda_status_t pool_start(dcuda_task_pool_h p)
{
    for (int d = 0; d < p->ndev; d++) {
        p->dev[d].pool = p;
        p->dev[d].index = d;
        if (pthread_create(&p->dev[d].thread, NULL, worker_main, &p->dev[d]) != 0) {
            dcu_msg_error("dcuda_task_pool_create: cannot start the worker of device %d", d);
            return DCUDA_ERR_SYSTEM;
        }
        p->dev[d].started = 1;
    }
    return DCUDA_OK;
}

dcuda_status_t dcuda_task_pool_create(dcuda_host_h host, int cpu_devices, unsigned flags,
                                      dcuda_task_pool_h *pool)
{
    const char *call = "dcuda_task_pool_create";
    if (pool)
        *pool = NULL;
    dcu_host_lock();
    dcuda_status_t st = dcu_host_check(host, call);
    if (st == DCUDA_OK && (!pool || cpu_devices < 0 || cpu_devices > TASK_CPU_DEVICES_MAX ||
                           (flags & ~DCUDA_TASK_NO_STEAL))) {
        dcu_msg_error("%s: %s", call,
                      !pool                            ? "pool is NULL"
                      : (flags & ~DCUDA_TASK_NO_STEAL) ? "flags other than DCUDA_TASK_NO_STEAL"
                                                       : "cpu_devices is not 0 (one) to 64");
        st = DCUDA_ERR_INVALID_ARG;
    }
    if (st != DCUDA_OK) {
        dcu_host_unlock();
        return st;
    }
    const int cpus = cpu_devices ? cpu_devices : 1;
    const int gpu = host->ops->task_gpu != NULL;
    dcuda_task_pool_h p = calloc(1, sizeof *p + (size_t)(cpus + gpu) * sizeof(dcu_task_dev_t));
    if (!p) {
        dcu_host_unlock();
        return DCUDA_ERR_NO_MEMORY;
    }
    p->ops = host->ops;
    p->backend = host->backend;
    p->flags = flags;
    p->ndev = cpus + gpu;
    p->gpu = gpu ? cpus : -1;
    for (int d = 0; d < p->ndev; d++)
        p->dev[d].kind = d == p->gpu ? DCU_TASK_GPU : DCU_TASK_CPU;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->ended, NULL);
    st = pool_start(p);
    if (st != DCUDA_OK) {
        pool_stop(p);
    } else {
        p->next_pool = host->task_pools;
        host->task_pools = p;
        *pool = p;
    }
    dcu_host_unlock();
    return st;
}

/* Takes p out of its host's list; 0 when it is not there (no pool). */
static int unlist(dcuda_host_h h, dcuda_task_pool_h p)
{
    for (dcuda_task_pool_h *at = &h->task_pools; *at; at = &(*at)->next_pool)
        if (*at == p) {
            *at = p->next_pool;
            return 1;
        }
    return 0;
}

dcuda_status_t dcuda_task_pool_destroy(dcuda_task_pool_h pool)
{
    dcu_host_lock();
    dcuda_host_h h = dcu_host_live();
    if (!pool || !h || !unlist(h, pool)) {
        dcu_host_unlock();
        dcu_msg_error("dcuda_task_pool_destroy: %p is no pool of the live runtime", (void *)pool);
        return DCUDA_ERR_INVALID_ARG;
    }
    pool_stop(pool);
    dcu_host_unlock();
    return DCUDA_OK;
}

void dcu_task_pools_release(dcuda_host_h h)
{
    while (h->task_pools) {
        dcuda_task_pool_h p = h->task_pools;
        h->task_pools = p->next_pool;
        pool_stop(p);
    }
}

dcuda_status_t dcuda_task_devices(dcuda_task_pool_h pool, int *count, int *gpu)
{
    if (!pool || !count || !gpu)
        return DCUDA_ERR_INVALID_ARG;
    *count = pool->ndev;
    *gpu = pool->gpu;
    return DCUDA_OK;
}

dcuda_status_t dcuda_task_device_stats(dcuda_task_pool_h pool, int device,
                                       dcuda_task_stats_t *stats)
{
    if (!pool || !stats || device < 0 || device >= pool->ndev)
        return DCUDA_ERR_INVALID_ARG;
    pthread_mutex_lock(&pool->lock);
    *stats = pool->dev[device].stats;
    pthread_mutex_unlock(&pool->lock);
    return DCUDA_OK;
}

/* ---- tasks ------------------------------------------------------------------------------- */

/* Why desc cannot be a task of p, or NULL. */
static const char *refusal(dcuda_task_pool_h p, const dcuda_task_desc_t *desc)
{
    if (!desc)
        return "desc is NULL";
    if (desc->home < 0 || desc->home >= p->ndev)
        return "its home is no device of the pool";
    if (!dcu_task_runs_on(&p->dev[desc->home], desc))
        return p->dev[desc->home].kind == DCU_TASK_GPU
                   ? "its home is the GPU, and it has no GPU form"
                   : "its home is a CPU device, and it has no CPU form";
    if ((desc->in_size && !desc->in) || (desc->out_size && !desc->out))
        return "in or out is NULL with a size";
    return NULL;
}

dcuda_status_t dcuda_task_create(dcuda_task_pool_h pool, const dcuda_task_desc_t *desc,
                                 dcuda_task_h *task)
{
    const char *bad = pool ? refusal(pool, desc) : "pool is NULL";
    if (task)
        *task = NULL;
    if (bad) {
        dcu_msg_error("dcuda_task_create: %s", bad);
        return DCUDA_ERR_INVALID_ARG;
    }
    dcuda_task_h t = calloc(1, sizeof *t);
    if (!t)
        return DCUDA_ERR_NO_MEMORY;
    t->pool = pool;
    t->d = *desc;
    pthread_mutex_lock(&pool->lock);
    t->all_next = pool->tasks;
    if (pool->tasks)
        pool->tasks->all_prev = t;
    pool->tasks = t;
    dcu_task_queue_push(&pool->dev[desc->home], t, task == NULL);
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    if (task) {
        *task = t;
        return DCUDA_OK;
    }
    return dcuda_task_wait(t);
}

dcuda_status_t dcuda_task_wait(dcuda_task_h t)
{
    if (!t)
        return DCUDA_ERR_INVALID_ARG;
    dcuda_task_pool_h p = t->pool;
    pthread_mutex_lock(&p->lock);
    while (t->state != DCU_TASK_DONE)
        pthread_cond_wait(&p->ended, &p->lock);
    dcuda_status_t st = t->status;
    if (t->all_prev)
        t->all_prev->all_next = t->all_next;
    else
        p->tasks = t->all_next;
    if (t->all_next)
        t->all_next->all_prev = t->all_prev;
    pthread_mutex_unlock(&p->lock);
    free(t);
    return st;
}

dcuda_status_t dcuda_task_test(dcuda_task_h t, int *done)
{
    if (!t || !done)
        return DCUDA_ERR_INVALID_ARG;
    pthread_mutex_lock(&t->pool->lock);
    *done = t->state == DCU_TASK_DONE;
    pthread_mutex_unlock(&t->pool->lock);
    return DCUDA_OK;
}

dcuda_status_t dcuda_task_cancel(dcuda_task_h t)
{
    if (!t)
        return DCUDA_ERR_INVALID_ARG;
    dcuda_task_pool_h p = t->pool;
    pthread_mutex_lock(&p->lock);
    const int waiting = t->state == DCU_TASK_QUEUED;
    if (waiting) {
        dcu_task_queue_remove(&p->dev[t->d.home], t);
        t->state = DCU_TASK_DONE;
        t->status = DCUDA_ERR_CANCELED;
        pthread_cond_broadcast(&p->ended);
    }
    pthread_mutex_unlock(&p->lock);
    return waiting ? DCUDA_OK : DCUDA_ERR_INVALID_ARG; /* it started: a race, said by the status */
}
