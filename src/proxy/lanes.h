/*
 * The proxy lanes: the proxy threads of one process (PROXY_LANES,
 * docs/scale.md). With one lane the process's proxy serves its command
 * ring and the network path alone, as proxy.h says. With L lanes its
 * ranks are split into L contiguous shares, each served by a whole proxy
 * of its own: to the network path every lane is a process (lane l of
 * process p is process p * L + l to the manager, the barrier, the credits
 * and the trees), so every promise the proxies keep between processes
 * holds between lanes unchanged. Ranks still write one command ring:
 * the host thread reads it in ticket order and hands each command to its
 * rank's lane (a WORLD barrier to every lane), and it publishes a barrier
 * to the ranks once every lane has completed it. Lane 0 runs on the host
 * thread; lanes 1.. on threads of their own while a run goes on.
 *
 * The calls mirror proxy.h's; the host runtime uses these.
 */
#ifndef DCU_PROXY_LANES_H
#define DCU_PROXY_LANES_H

#include "proxy.h"

#define DCU_MAX_LANES 16

typedef struct dcu_lanes dcu_lanes_t;

/* The process's proxies (collective over the program's processes when
 * there is a network path). `lanes` above 1 needs a manager that one
 * thread a lane may drive (UCX; DCUDA_ERR_SETTING, said why, when not);
 * without a network path one lane serves, and never more lanes than the
 * process of fewest ranks has ranks. */
dcuda_status_t dcu_lanes_create(const dcu_proxy_config_t *config, int lanes, dcu_lanes_t **out);
void dcu_lanes_destroy(dcu_lanes_t *g);
/* Lanes that serve (1 when no network path). */
int dcu_lanes_count(const dcu_lanes_t *g);
/* Before a run (no lane thread runs). */
void dcu_lanes_reset(dcu_lanes_t *g);
/* The lanes' threads, for the time the ranks run: started after reset,
 * stopped (joined) once they returned; then the host thread polls every
 * lane itself. */
dcuda_status_t dcu_lanes_start(dcu_lanes_t *g);
void dcu_lanes_stop(dcu_lanes_t *g);
/* Host thread: hands out commands, polls lane 0 (every lane once the
 * threads stopped), publishes completed barriers; > 0 if it did anything. */
int dcu_lanes_poll(dcu_lanes_t *g);
void dcu_lanes_drain(dcu_lanes_t *g);
void dcu_lanes_ranks_done(dcu_lanes_t *g);
/* The first news of any lane. */
const char *dcu_lanes_failure(const dcu_lanes_t *g);
const char *dcu_lanes_aborted(const dcu_lanes_t *g);
const char *dcu_lanes_left(const dcu_lanes_t *g);
/* Told by lane 0; the trees carry it to every lane of every process. */
void dcu_lanes_abort(dcu_lanes_t *g, const char *why);
/* Told by lane 0, which then sends what it holds (the process leaves). */
void dcu_lanes_leave(dcu_lanes_t *g, const char *why);
/* Nothing in any lane's hands, nothing waiting to be handed out. */
int dcu_lanes_idle(dcu_lanes_t *g);
/* Lane 0: the process's voice in the deadlock detector's rounds (the
 * other lanes answer for themselves). */
dcu_proxy_t *dcu_lanes_first(dcu_lanes_t *g);

#endif /* DCU_PROXY_LANES_H */
