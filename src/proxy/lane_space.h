/*
 * What the proxy lanes (proxies.h) need beside the proxies: the program's
 * processes numbered as lanes (lane l of process p is p * L + l), the
 * manager's view of that numbering (its allgather, which the L lanes of a
 * process enter at once from their opening threads, and its names), and
 * the backend's calls the proxies make, taken one at a time.
 */
#ifndef DCU_PROXY_LANE_SPACE_H
#define DCU_PROXY_LANE_SPACE_H

#include <stdint.h>

#include "backend/backend.h"
#include "dcuda/shared/layout.h"
#include "net/net.h"

/* First WORLD rank of every lane ([P * L + 1]: lane l of process p holds
 * its process's ranks from DCUDA_LANE_FIRST(n, l, L), n its ranks) and the path to each
 * ([P * L]: its process's). NULL when out of memory. */
int32_t *dcu_lane_first(const int32_t *proc_first, int procs, int lanes);
uint8_t *dcu_lane_path(const uint8_t *path, int procs, int lanes);

/* The manager's environment of lane `lane`: its index and count in lane
 * numbers, an allgather of lane numbers and names that say the lane. The
 * lanes of a process open at once, each on a thread that first calls
 * dcu_lane_gather_enter(lane). */
dcu_net_env_t dcu_lane_env(const dcu_net_env_t *process_env, int lanes, int lane);
void dcu_lane_gather_begin(const dcu_net_env_t *process_env, int lanes);
void dcu_lane_gather_enter(int lane);
/* A lane's opening failed: the others stop waiting for it in the
 * allgather (they fail too). */
void dcu_lane_gather_abandon(void);
void dcu_lane_gather_end(void);

/* The backend's calls the proxies make (memory, reads and writes of
 * rank memory), each under one lock: lanes run them from several
 * threads. */
const dcu_backend_ops_t *dcu_lane_locked_ops(const dcu_backend_ops_t *base);

#endif /* DCU_PROXY_LANE_SPACE_H */
