/*
 * The process's proxies, its lanes: the proxy threads of one process
 * (PROXY_LANES, docs/scale.md). With one lane the process's proxy serves
 * its command ring and the network path alone, as proxy.h says. With L lanes its
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
#ifndef DCU_PROXY_PROXIES_H
#define DCU_PROXY_PROXIES_H

#include "proxy.h"

#define DCU_MAX_LANES 16

typedef struct dcu_proxies dcu_proxies_t;

/* The process's proxies (collective over the program's processes when
 * there is a network path). `lanes` above 1 needs a manager that one
 * thread a lane may drive (UCX; DCUDA_ERR_SETTING, said why, when not);
 * without a network path one lane serves, and never more lanes than the
 * process of fewest ranks has ranks. */
dcuda_status_t dcu_proxies_create(const dcu_proxy_config_t *config, int lanes, dcu_proxies_t **out);
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
/* Host thread: hands out commands, polls lane 0 (every lane once the
 * threads stopped), publishes completed barriers; > 0 if it did anything. */
int dcu_proxies_poll(dcu_proxies_t *g);
void dcu_proxies_drain(dcu_proxies_t *g);
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
/* Lane 0: the process's voice in the deadlock detector's rounds (the
 * other lanes answer for themselves). */
dcu_proxy_t *dcu_proxies_first(dcu_proxies_t *g);

#endif /* DCU_PROXY_PROXIES_H */
