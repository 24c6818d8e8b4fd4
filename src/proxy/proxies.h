/*
 * The process's proxies, its lanes: the proxy threads of one process
 * (PROXY_LANES, docs/scale.md). With one lane the process's proxy serves
 * its command ring and the network path alone, as proxy.h says. With L lanes its
 * ranks are split into L contiguous shares, each served by a whole proxy
 * of its own: to the network path every lane is a process (lane l of
 * process p is process p * L + l to the manager, the barrier, the credits
 * and the trees), so every promise the proxies keep between processes
 * holds between lanes unchanged. A rank writes its lane's command ring
 * (a WORLD barrier goes to every lane's); the host thread tells the ranks
 * a barrier once every lane has completed it. Lane 0 runs on the host
 * thread; lanes 1.. on threads of their own while a run goes on.
 *
 * The calls mirror proxy.h's; the host runtime uses these.
 */
#ifndef DCU_PROXY_PROXIES_H
#define DCU_PROXY_PROXIES_H

#include "proxy.h"

typedef struct dcu_proxies dcu_proxies_t;

/* A lane's command ring as the host reaches it (its ranks write it). */
typedef struct dcu_lane_ring {
    dcuda_cmd_t *entries;
    uint32_t capacity;
    DCUDA_ATOMIC(uint32_t) * cmd_tail;
} dcu_lane_ring_t;

/* The lanes that serve when `wanted` are asked for: 1 without a network
 * path, never more than the process of fewest ranks has ranks (every
 * process computes the same); -1, said why, when several cannot serve
 * (a manager that one thread a lane cannot drive: MPI). `wanted` is the
 * setting's, already within 1..DCUDA_MAX_PROXY_LANES. */
int dcu_proxies_fit(int wanted, const dcu_net_ops_t *net_ops, const int32_t *proc_first, int procs);
/* The process's proxies, `lanes` of them (from dcu_proxies_fit), lane l
 * reading rings[l] (lanes > 1; one lane reads config's ring). Collective
 * over the program's processes when there is a network path. */
dcuda_status_t dcu_proxies_create(const dcu_proxy_config_t *config, int lanes,
                                  const dcu_lane_ring_t *rings, dcu_proxies_t **out);
void dcu_proxies_destroy(dcu_proxies_t *g);
/* Lanes that serve (1 when no network path). */
int dcu_proxies_count(const dcu_proxies_t *g);
/* Before a run (no lane thread runs). */
void dcu_proxies_reset(dcu_proxies_t *g);
/* The lanes' threads, for the time the ranks run: started after reset,
 * stopped (joined) once they returned; then the host thread polls every
 * lane itself. */
dcuda_status_t dcu_proxies_start(dcu_proxies_t *g);
void dcu_proxies_stop(dcu_proxies_t *g);
/* Host thread: polls lane 0 (every lane once the threads stopped),
 * publishes completed barriers; > 0 if it did anything. */
int dcu_proxies_poll(dcu_proxies_t *g);
void dcu_proxies_drain(dcu_proxies_t *g);
/* Every rank returned (after dcu_proxies_stop): no lane beats any more. */
void dcu_proxies_ranks_done(dcu_proxies_t *g);
/* The first news of any lane. */
const char *dcu_proxies_failure(const dcu_proxies_t *g);
const char *dcu_proxies_aborted(const dcu_proxies_t *g);
const char *dcu_proxies_left(const dcu_proxies_t *g);
/* Told by lane 0; the trees carry it to every lane of every process. */
void dcu_proxies_abort(dcu_proxies_t *g, const char *why);
/* Told by lane 0, which then sends what it holds (the process leaves). */
void dcu_proxies_leave(dcu_proxies_t *g, const char *why);
/* Nothing in any lane's hands, nothing waiting to be handed out. */
int dcu_proxies_idle(dcu_proxies_t *g);
/* Some lane's WORLD barrier is entered and not completed. */
int dcu_proxies_barrier_open(const dcu_proxies_t *g);
/* Lane 0: the process's voice in the deadlock detector's rounds (the
 * other lanes answer for themselves). */
dcu_proxy_t *dcu_proxies_first(dcu_proxies_t *g);

#endif /* DCU_PROXY_PROXIES_H */
