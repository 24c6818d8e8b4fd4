/*
 * The hop timestamps of trace.h: a fixed array of marks, filled by the
 * proxy's thread only, the first DCU_TRACE_MARKS of a process kept.
 */
#include "trace.h"

#if defined(DCUDA_PROXY_TRACE)
#include <stdio.h>

#include "util/clock.h"
#include "util/msg.h"

#define DCU_TRACE_MARKS (1u << 20)

typedef struct mark {
    uint8_t event;
    uint32_t bytes;
    uint64_t ns;
} mark_t;

static mark_t marks[DCU_TRACE_MARKS];
static uint32_t mark_count;
static uint64_t pass_count, pass_ns, pass_max_ns;
static uint64_t busy_count, busy_ns; /* the passes that did something */

uint64_t dcu_trace_now(void) { return dcu_clock_ns(); }

void dcu_trace_pass(uint64_t ns, int worked)
{
    pass_count++;
    pass_ns += ns;
    pass_max_ns = ns > pass_max_ns ? ns : pass_max_ns;
    busy_count += worked != 0;
    busy_ns += worked ? ns : 0u;
}

static void write_passes(int process_index)
{
    char name[64];
    snprintf(name, sizeof name, "dcuda-trace.%d.passes.txt", process_index);
    FILE *f = pass_count ? fopen(name, "w") : NULL;
    if (f) {
        fprintf(f, "passes %llu mean_ns %.0f max_ns %llu busy_passes %llu busy_ns %llu ns %llu\n",
                (unsigned long long)pass_count, (double)pass_ns / (double)pass_count,
                (unsigned long long)pass_max_ns, (unsigned long long)busy_count,
                (unsigned long long)busy_ns, (unsigned long long)pass_ns);
        fclose(f);
    }
    pass_count = pass_ns = pass_max_ns = busy_count = busy_ns = 0;
}

void dcu_trace_mark(int event, uint64_t bytes)
{
    if (mark_count < DCU_TRACE_MARKS)
        marks[mark_count++] = (mark_t){ (uint8_t)event, (uint32_t)bytes, dcu_clock_ns() };
}

void dcu_trace_write(int process_index)
{
    char name[64];
    write_passes(process_index);
    if (!mark_count)
        return;
    snprintf(name, sizeof name, "dcuda-trace.%d.txt", process_index);
    FILE *f = fopen(name, "a"); /* after the marks of this process's earlier runtimes */
    if (!f) {
        dcu_msg_warn("cannot write %s", name);
        return;
    }
    for (uint32_t i = 0; i < mark_count; i++)
        fprintf(f, "%u %llu %u\n", marks[i].event, (unsigned long long)marks[i].ns, marks[i].bytes);
    fclose(f);
    mark_count = 0;
}
#endif
