/*
 * A minimal NVTX tool for the test nvtx.ranges, as a profiler attaches:
 * NVTX loads it from NVTX_INJECTION64_PATH at the library's first NVTX
 * call and calls InitializeInjectionNvtx2, which takes over the domain
 * calls (NVTX_CB_MODULE_CORE2). It records the domains made, the strings
 * registered, each range pushed or started by name, the pops and ends,
 * and the marks' texts; the test program reads them through the
 * nvtx_tool_* functions (dlsym) once its runs are done.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TOOL_API __attribute__((visibility("default")))
#define MAX_NAMES 64
#define MAX_MARKS 32
#define MAX_STARTED 256

typedef struct {
    char text[96];
    int pushes, starts, registered;
} name_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static name_t names[MAX_NAMES];
static int name_count;
static char domain_name[64];
static int domains;
static int pops, underflows, unnamed, bad_ends;
static char marks[MAX_MARKS][256];
static int mark_count;
static uint64_t started[MAX_STARTED]; /* ids not ended yet (0: free) */
static uint64_t next_id = 1;
static _Thread_local int depth; /* this thread's pushed ranges */

/* The name of `text`, added if new (under the lock). */
static name_t *name_of(const char *text)
{
    for (int i = 0; i < name_count; i++)
        if (strcmp(names[i].text, text) == 0)
            return &names[i];
    if (name_count == MAX_NAMES)
        return NULL;
    name_t *n = &names[name_count++];
    snprintf(n->text, sizeof n->text, "%s", text);
    return n;
}

/* The registered name an event carries (NULL: none, counted as unnamed). */
static name_t *event_name(const nvtxEventAttributes_t *a)
{
    if (a && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered)
        return (name_t *)(void *)a->message.registered;
    unnamed++;
    return NULL;
}

static nvtxDomainHandle_t domain_create(const char *name)
{
    pthread_mutex_lock(&lock);
    domains++;
    snprintf(domain_name, sizeof domain_name, "%s", name ? name : "");
    pthread_mutex_unlock(&lock);
    return (nvtxDomainHandle_t)(void *)domain_name;
}

static nvtxStringHandle_t register_string(nvtxDomainHandle_t d, const char *text)
{
    (void)d;
    pthread_mutex_lock(&lock);
    name_t *n = name_of(text);
    if (n)
        n->registered++;
    pthread_mutex_unlock(&lock);
    return (nvtxStringHandle_t)(void *)n;
}

static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    pthread_mutex_lock(&lock);
    name_t *n = event_name(a);
    if (n)
        n->pushes++;
    pthread_mutex_unlock(&lock);
    return depth++;
}

static int pop(nvtxDomainHandle_t d)
{
    (void)d;
    pthread_mutex_lock(&lock);
    pops++;
    if (depth == 0)
        underflows++;
    else
        depth--;
    pthread_mutex_unlock(&lock);
    return depth;
}

static nvtxRangeId_t start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    pthread_mutex_lock(&lock);
    name_t *n = event_name(a);
    if (n)
        n->starts++;
    uint64_t id = next_id++;
    for (int i = 0; i < MAX_STARTED; i++)
        if (!started[i]) {
            started[i] = id;
            break;
        }
    pthread_mutex_unlock(&lock);
    return id;
}

static void end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    pthread_mutex_lock(&lock);
    int found = 0;
    for (int i = 0; i < MAX_STARTED && !found; i++)
        if (started[i] == id) {
            started[i] = 0;
            found = 1;
        }
    bad_ends += !found;
    pthread_mutex_unlock(&lock);
}

static void mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    pthread_mutex_lock(&lock);
    if (mark_count < MAX_MARKS && a && a->messageType == NVTX_MESSAGE_TYPE_ASCII)
        snprintf(marks[mark_count++], sizeof marks[0], "%s", a->message.ascii);
    pthread_mutex_unlock(&lock);
}

/* Sets the slot of callback `id` in `table` (of `size` slots) to fn. */
static int attach(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
    if (id >= size || !table[id])
        return 0;
    *table[id] = fn;
    return 1;
}

TOOL_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable t = NULL;
    unsigned size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &size) || !t)
        return 0;
    int ok = attach(t, size, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)domain_create);
    ok &= attach(t, size, NVTX_CBID_CORE2_DomainRegisterStringA,
                 (NvtxFunctionPointer)register_string);
    ok &= attach(t, size, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)push);
    ok &= attach(t, size, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)pop);
    ok &= attach(t, size, NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)start);
    ok &= attach(t, size, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)end);
    ok &= attach(t, size, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)mark);
    return ok;
}

/* ---- what the test program reads ------------------------------------------------ */

/* Ranges pushed (or, with `started`, started) under `name`; -1: never registered. */
TOOL_API int nvtx_tool_count(const char *name, int started_ranges)
{
    pthread_mutex_lock(&lock);
    int count = -1;
    for (int i = 0; i < name_count; i++)
        if (strcmp(names[i].text, name) == 0 && names[i].registered)
            count = started_ranges ? names[i].starts : names[i].pushes;
    pthread_mutex_unlock(&lock);
    return count;
}

/* The first mark that begins with `prefix`, or NULL. */
TOOL_API const char *nvtx_tool_mark(const char *prefix)
{
    const char *found = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < mark_count && !found; i++)
        if (strncmp(marks[i], prefix, strlen(prefix)) == 0)
            found = marks[i];
    pthread_mutex_unlock(&lock);
    return found;
}

/* What does not add up, in `why`: domains other than one "dcuda", pushes
 * not popped or pops without a push, ranges without a registered name,
 * ranges started and not ended, or ended and never started. 1 if all is
 * well. The calling thread's pushes count as popped only when it popped
 * them (ranges are per thread). */
TOOL_API int nvtx_tool_balanced(char *why, size_t size)
{
    pthread_mutex_lock(&lock);
    int pushes = 0, open = 0;
    for (int i = 0; i < name_count; i++)
        pushes += names[i].pushes;
    for (int i = 0; i < MAX_STARTED; i++)
        open += started[i] != 0;
    snprintf(why, size,
             "%d domain(s), the last '%s'; %d pushes, %d pops (%d without a push, %d left "
             "on this thread); %d range(s) without a registered name; %d started range(s) "
             "open, %d end(s) of no started range",
             domains, domain_name, pushes, pops, underflows, depth, unnamed, open, bad_ends);
    int ok = domains == 1 && strcmp(domain_name, "dcuda") == 0 && pushes == pops && !underflows &&
             !depth && !unnamed && !open && !bad_ends;
    pthread_mutex_unlock(&lock);
    return ok;
}
