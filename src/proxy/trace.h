/*
 * Timestamps of the network path's hops, for placing its latency: built
 * only with -DDCUDA_PROXY_TRACE=ON (otherwise every call is empty). The
 * proxy marks when it finds a command, hands its message to the manager,
 * receives a message and has written it to an inbox; at the end of the
 * runtime each proxy appends its marks to dcuda-trace.<process>.txt (one
 * "event ns bytes" line each, the host's monotonic clock, which processes
 * of one host share). tools/trace_hops.py turns two such files into the
 * time of each hop. The host's serving loop also times its passes
 * (dcu_trace_pass): how long a command or a message can wait to be found,
 * and how much of the thread's time went to passes that did something
 * (near all of it: the thread always has work, which does not by itself
 * make its work the limit of the message rate; a change in its cost a
 * message tells); their count, mean and largest, and the busy passes'
 * count and time, go to dcuda-trace.<process>.passes.txt.
 */
#ifndef DCU_PROXY_TRACE_H
#define DCU_PROXY_TRACE_H

#include <stdint.h>

enum dcu_trace_event {
    DCU_TRACE_SEEN = 1,     /* a put or notify command found in the queue */
    DCU_TRACE_SENT = 2,     /* its message handed to the manager */
    DCU_TRACE_RECEIVED = 3, /* a put or notify message arrived */
    DCU_TRACE_WRITTEN = 4,  /* ... and is in its rank's inbox */
    DCU_TRACE_LANDED = 5,   /* a message is told written (its bytes: what the ack credits) */
    DCU_TRACE_ACKED = 6,    /* an acknowledgement arrived (its bytes: what it credits) */
    DCU_TRACE_RELEASED = 7  /* the manager gave back a staging buffer (a large put's chunk) */
};

#if defined(DCUDA_PROXY_TRACE)
void dcu_trace_mark(int event, uint64_t bytes);
uint64_t dcu_trace_now(void);
void dcu_trace_pass(uint64_t ns, int worked);
void dcu_trace_write(int process_index);
#else
static inline uint64_t dcu_trace_now(void) { return 0; }
static inline void dcu_trace_pass(uint64_t ns, int worked)
{
    (void)ns;
    (void)worked;
}
static inline void dcu_trace_mark(int event, uint64_t bytes)
{
    (void)event;
    (void)bytes;
}
static inline void dcu_trace_write(int process_index) { (void)process_index; }
#endif

#endif /* DCU_PROXY_TRACE_H */
