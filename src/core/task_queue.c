/*
 * A task pool's queues (task.h), the pool's lock held by every caller:
 * each device's FIFO, what a device takes next (the first of its own, or
 * with none the last task it can run of the busiest other queue: a
 * steal), and a task's end.
 */
#include <pthread.h>

#include "core/task.h"

/* ---- queues (the pool's lock held) ------------------------------------------------------- */

void dcu_task_queue_push(dcu_task_dev_t *d, dcuda_task_h t, int front)
{
    t->prev = front ? NULL : d->last;
    t->next = front ? d->first : NULL;
    if (t->prev)
        t->prev->next = t;
    else
        d->first = t;
    if (t->next)
        t->next->prev = t;
    else
        d->last = t;
    d->queued++;
}

void dcu_task_queue_remove(dcu_task_dev_t *d, dcuda_task_h t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        d->first = t->next;
    if (t->next)
        t->next->prev = t->prev;
    else
        d->last = t->prev;
    t->prev = t->next = NULL;
    d->queued--;
}

int dcu_task_runs_on(const dcu_task_dev_t *d, const dcuda_task_desc_t *desc)
{
    return d->kind == DCU_TASK_GPU ? desc->gpu != NULL : desc->cpu != NULL;
}

/* The task device d takes next: its queue's first; with none, the last
 * task it can run of the busiest other queue (*stolen set). NULL: none. */
static dcuda_task_h take(dcuda_task_pool_h p, int d, int *stolen)
{
    dcu_task_dev_t *me = &p->dev[d];
    *stolen = 0;
    if (me->first) {
        dcuda_task_h t = me->first;
        dcu_task_queue_remove(me, t);
        return t;
    }
    if (p->flags & DCUDA_TASK_NO_STEAL)
        return NULL;
    int victim = -1;
    for (int v = 0; v < p->ndev; v++)
        if (v != d && p->dev[v].queued > 0 &&
            (victim < 0 || p->dev[v].queued > p->dev[victim].queued))
            victim = v;
    if (victim < 0)
        return NULL;
    for (dcuda_task_h t = p->dev[victim].last; t; t = t->prev)
        if (dcu_task_runs_on(me, &t->d)) {
            dcu_task_queue_remove(&p->dev[victim], t);
            *stolen = 1;
            return t;
        }
    return NULL;
}

/* Task t ended with status st on device d (the lock held): counted, and
 * whoever waits for it told. */
void dcu_task_ended(dcuda_task_pool_h p, int d, dcuda_task_h t, dcuda_status_t st, int stolen)
{
    t->status = st;
    t->state = DCU_TASK_DONE;
    p->dev[d].stats.run++;
    p->dev[d].stats.stolen += (uint64_t)stolen;
    if (stolen && st == DCUDA_OK) /* its input came in, its output went back */
        p->dev[d].stats.migrated += (uint64_t)t->d.in_size + t->d.out_size;
    pthread_cond_broadcast(&p->ended);
}

/* Device d's next task, waiting for one while the pool lives (the lock
 * held); NULL once the pool stops and its queue is empty (nor can it
 * steal). With `busy` (tasks of its own in flight), it does not wait. */
dcuda_task_h dcu_task_next(dcuda_task_pool_h p, int d, int busy, int *stolen)
{
    for (;;) {
        dcuda_task_h t = take(p, d, stolen);
        if (t) {
            t->state = DCU_TASK_RUNNING;
            return t;
        }
        if (busy || p->stopping) /* each device runs what is left of its own queue */
            return NULL;
        pthread_cond_wait(&p->work, &p->lock);
    }
}
