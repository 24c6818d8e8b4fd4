/*
 * The workers of a task pool (task.h): a CPU device runs each task's CPU
 * form on its thread; the GPU's worker enqueues each task's GPU form on
 * one of two streams in turn and waits for the older one only when both
 * are busy, so that a task's copies overlap the kernel before it. A task
 * taken from another device's queue is migrated: its input copied into
 * memory of the device that runs it (host memory for a CPU device, GPU
 * memory for the GPU), its output written back to its home's memory.
 */
#include <stdlib.h>
#include <string.h>

#include "core/task.h"
#include "util/msg.h"

/* ---- CPU devices ------------------------------------------------------------------------- */

/* n bytes between host memory and the memory of the task's home (the
 * backend's copies when that is the GPU's). */
static dcuda_status_t home_copy(dcuda_task_pool_h p, const dcuda_task_desc_t *d, void *dst,
                                const void *src, size_t n, int out)
{
    if (!n)
        return DCUDA_OK;
    if (p->dev[d->home].kind == DCU_TASK_GPU)
        return (out ? p->ops->copy_out : p->ops->copy_in)(p->backend, dst, src, n);
    memcpy(dst, src, n);
    return DCUDA_OK;
}

/* A task of another device run here: its input into host memory of this
 * device's, its CPU form, its output back. */
static dcuda_status_t run_migrated(dcuda_task_pool_h p, dcuda_task_h t)
{
    const dcuda_task_desc_t *d = &t->d;
    void *in = malloc(d->in_size ? d->in_size : 1), *out = malloc(d->out_size ? d->out_size : 1);
    dcuda_status_t st = in && out ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
    if (st == DCUDA_OK)
        st = home_copy(p, d, in, d->in, d->in_size, 1);
    if (st == DCUDA_OK) {
        d->cpu(d->arg, in, out);
        st = home_copy(p, d, d->out, out, d->out_size, 0);
    }
    free(in);
    free(out);
    return st;
}

void dcu_task_cpu_worker(dcuda_task_pool_h p, int dev)
{
    if (p->ops->bind_thread && p->ops->bind_thread(p->backend) != DCUDA_OK)
        dcu_msg_warn("task device %d: cannot bind its thread to the GPU", dev);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        int stolen;
        dcuda_task_h t = dcu_task_next(p, dev, 0, &stolen);
        if (!t)
            break;
        pthread_mutex_unlock(&p->lock);
        dcuda_status_t st = DCUDA_OK;
        if (stolen)
            st = run_migrated(p, t);
        else
            t->d.cpu(t->d.arg, t->d.in, t->d.out);
        pthread_mutex_lock(&p->lock);
        dcu_task_ended(p, dev, t, st, stolen);
    }
    pthread_mutex_unlock(&p->lock);
}

/* ---- the GPU ----------------------------------------------------------------------------- */

/* A task in flight on a lane of the GPU's worker. */
typedef struct gpu_slot {
    dcuda_task_h t;
    int stolen;
    void *in, *out;    /* GPU memory of a migrated task's input and output */
    dcuda_status_t st; /* an error before it was enqueued */
} gpu_slot_t;

/* Enqueues s->t on lane `lane` (a task of a CPU device: its data through
 * GPU memory of its own). */
static void gpu_issue(dcuda_task_pool_h p, void *gpu, int lane, gpu_slot_t *s)
{
    const dcu_task_gpu_ops_t *g = p->ops->task_gpu;
    const dcuda_task_desc_t *d = &s->t->d;
    dcu_task_gpu_job_t job = { d->gpu,     d->arg, d->in, (void *)d->in,
                               d->in_size, d->out, NULL,  d->out_size };
    s->st = DCUDA_OK;
    if (s->stolen) {
        s->st = g->alloc(gpu, d->in_size, &s->in);
        if (s->st == DCUDA_OK)
            s->st = g->alloc(gpu, d->out_size, &s->out);
        job.in = s->in;
        job.out = s->out;
        job.out_to = d->out;
    }
    if (s->st == DCUDA_OK)
        s->st = g->issue(gpu, lane, &job);
}

/* Waits for lane's task; its end told (the lock taken). */
static void gpu_finish(dcuda_task_pool_h p, void *gpu, int lane, gpu_slot_t *s, int dev)
{
    const dcu_task_gpu_ops_t *g = p->ops->task_gpu;
    dcuda_status_t st = g->finish(gpu, lane);
    if (s->st != DCUDA_OK)
        st = s->st;
    g->free(gpu, s->in);
    g->free(gpu, s->out);
    pthread_mutex_lock(&p->lock);
    dcu_task_ended(p, dev, s->t, st, s->stolen);
    pthread_mutex_unlock(&p->lock);
    memset(s, 0, sizeof *s);
}

/* Every task this device takes ends with st (the GPU could not be used). */
static void gpu_refuse_all(dcuda_task_pool_h p, int dev, dcuda_status_t st)
{
    pthread_mutex_lock(&p->lock);
    int stolen;
    for (dcuda_task_h t; (t = dcu_task_next(p, dev, 0, &stolen)) != NULL;)
        dcu_task_ended(p, dev, t, st, stolen);
    pthread_mutex_unlock(&p->lock);
}

void dcu_task_gpu_worker(dcuda_task_pool_h p, int dev)
{
    const dcu_task_gpu_ops_t *g = p->ops->task_gpu;
    void *gpu = NULL;
    dcuda_status_t st = p->ops->bind_thread ? p->ops->bind_thread(p->backend) : DCUDA_OK;
    if (st == DCUDA_OK)
        st = g->open(&gpu);
    if (st != DCUDA_OK) {
        dcu_msg_error("task device %d (the GPU) cannot run tasks: %s", dev, dcuda_status_name(st));
        gpu_refuse_all(p, dev, st);
        return;
    }
    gpu_slot_t slot[2];
    memset(slot, 0, sizeof slot);
    int next = 0, inflight = 0;
    for (;;) {
        dcuda_task_h t = NULL;
        int stolen = 0;
        if (inflight < 2) {
            pthread_mutex_lock(&p->lock);
            t = dcu_task_next(p, dev, inflight > 0, &stolen);
            pthread_mutex_unlock(&p->lock);
        }
        if (t) {
            slot[next] = (gpu_slot_t){ t, stolen, NULL, NULL, DCUDA_OK };
            gpu_issue(p, gpu, next, &slot[next]);
            next ^= 1;
            inflight++;
            continue;
        }
        if (!inflight)
            break; /* the pool stops */
        int oldest = inflight == 2 ? next : next ^ 1;
        gpu_finish(p, gpu, oldest, &slot[oldest], dev);
        inflight--;
    }
    g->close(gpu);
}
