/*
 * Tasks (dcuda/dcuda_task.h), inside: a pool's devices and its tasks,
 * shared by task_pool.c (the pools and the API), task_run.c (the workers:
 * a task run on its device, or migrated to another) and task_queue.c (the
 * queues, beneath both).
 */
#ifndef DCU_CORE_TASK_H
#define DCU_CORE_TASK_H

#include <pthread.h>
#include <stdint.h>

#include "backend/backend.h"
#include "dcuda/dcuda_task.h"

enum { DCU_TASK_CPU = 0, DCU_TASK_GPU = 1 };
enum { DCU_TASK_QUEUED = 0, DCU_TASK_RUNNING, DCU_TASK_DONE };

struct dcuda_task {
    dcuda_task_pool_h pool;
    dcuda_task_desc_t d;
    int state; /* DCU_TASK_*: changed under the pool's lock */
    dcuda_status_t status;
    struct dcuda_task *prev, *next;         /* in a queue */
    struct dcuda_task *all_prev, *all_next; /* the pool's tasks not yet waited for */
};

typedef struct dcu_task_dev {
    dcuda_task_pool_h pool;
    int index, kind;          /* DCU_TASK_CPU or DCU_TASK_GPU */
    dcuda_task_h first, last; /* its queue */
    int queued;
    pthread_t thread;
    int started;
    dcuda_task_stats_t stats;
} dcu_task_dev_t;

struct dcuda_task_pool {
    const dcu_backend_ops_t *ops;
    dcu_backend_t *backend;
    unsigned flags;
    pthread_mutex_t lock;
    pthread_cond_t work;  /* a task was queued, or the pool stops */
    pthread_cond_t ended; /* a task ended or was cancelled */
    int stopping;
    dcuda_task_h tasks;                /* not yet waited for */
    struct dcuda_task_pool *next_pool; /* the host's pools */
    int ndev, gpu;
    dcu_task_dev_t dev[];
};

/* task_queue.c, the lock held: a task into device d's queue (first, or
 * last), or out of it. */
void dcu_task_queue_push(dcu_task_dev_t *d, dcuda_task_h t, int front);
void dcu_task_queue_remove(dcu_task_dev_t *d, dcuda_task_h t);
/* Has a task of desc a form that device d runs? */
int dcu_task_runs_on(const dcu_task_dev_t *d, const dcuda_task_desc_t *desc);
/* task_queue.c, the lock held: device d's next task (*stolen: taken from
 * another device's queue), waiting for one unless `busy`; NULL once the
 * pool stops and none is left for it. And a task's end. */
dcuda_task_h dcu_task_next(dcuda_task_pool_h p, int d, int busy, int *stolen);
void dcu_task_ended(dcuda_task_pool_h p, int d, dcuda_task_h t, dcuda_status_t st, int stolen);
/* task_pool.c: the pools a host leaves at dcuda_host_finish, stopped and freed
 * (the API lock held). */
void dcu_task_pools_release(dcuda_host_h h);

/* task_run.c: the workers' loops. */
void dcu_task_cpu_worker(dcuda_task_pool_h p, int d);
void dcu_task_gpu_worker(dcuda_task_pool_h p, int d);

#endif /* DCU_CORE_TASK_H */
