/*
 * The live host runtime of the process and the API lock: the bottom of the
 * host side, which every file of the host API calls and which calls none
 * of them (host.c sets the runtime live at init and retires it at finish).
 */
#include <pthread.h>
#include <stdlib.h>

#include "core.h"
#include "util/msg.h"

/* One host runtime per process at a time (its exports live in the node
 * segment under the process's name): the live one. A handle is valid when
 * it equals live_host, and is never dereferenced otherwise, so a call with
 * a finished handle is an error rather than a use after free. The struct of
 * the runtime finished last is kept (its contents released) until the next
 * dcuda_host_init has allocated its own, so a new handle never equals the
 * one just finished. */
static dcuda_host_h live_host, retired_host;

dcuda_host_h dcu_host_live(void) { return live_host; }

void dcu_host_set_live(dcuda_host_h h) { live_host = h; }

/* h is finished: no handle equals it from now on, and its struct stays
 * allocated until the next init has its own. */
void dcu_host_retire(dcuda_host_h h)
{
    live_host = NULL;
    retired_host = h;
}

void dcu_host_forget_retired(void)
{
    free(retired_host);
    retired_host = NULL;
}

/* DCUDA_OK for the live runtime; otherwise a message and NOT_INITIALIZED. */
dcuda_status_t dcu_host_check(dcuda_host_h h, const char *call)
{
    if (h && h == live_host)
        return DCUDA_OK;
    if (!h)
        dcu_msg_error("%s: called before dcuda_host_init (host is NULL)", call);
    else
        dcu_msg_error("%s: %p is not a live host runtime (dcuda_host_finish ended it, or "
                      "dcuda_host_init never returned it)",
                      call, (void *)h);
    return DCUDA_ERR_NOT_INITIALIZED;
}

dcuda_status_t dcu_host_idle(dcuda_host_h h, const char *call)
{
    if (dcu_host_check(h, call) != DCUDA_OK)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (h->run.started)
        dcu_msg_error("%s: a run started by dcuda_host_run_start is in flight (call "
                      "dcuda_host_run_wait first)",
                      call);
    else if (h->run.active)
        dcu_msg_error("%s: dcuda_host_run is running on another thread (call it when the run "
                      "has returned)",
                      call);
    else
        return DCUDA_OK;
    return DCUDA_ERR_IN_PROGRESS;
}

/* One host call at a time in a process: a call from another thread waits
 * for the one in progress (a run in progress makes it fail at once with
 * DCUDA_ERR_IN_PROGRESS instead, dcu_host_idle). dcuda_host_abort and
 * dcuda_host_run_test take no lock. */
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
void dcu_host_lock(void) { pthread_mutex_lock(&api_lock); }
void dcu_host_unlock(void) { pthread_mutex_unlock(&api_lock); }
