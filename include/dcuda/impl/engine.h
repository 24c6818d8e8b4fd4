/*
 * The rank engine: every rank call's algorithm, written once over the
 * backend's primitives (impl/cpu/prims.h: a rank is a thread; or
 * impl/cuda/prims.cuh: a rank is a thread block). CPU ranks run exactly this
 * code, so what CI proves about ordering and counting on CPU ranks holds
 * for the GPU's. prims.h and report.h pick the backend's primitives and
 * report wording by the compiler (nvcc or C11).
 *
 * Shape of a collective call: dcu_sync() first (the rank's earlier writes
 * are done, the last call's broadcast has been read), every thread runs the
 * checks (same inputs, same answer; the leader reports), single-thread work
 * runs on the leader, and results reach every thread through st->result.
 *
 * A put or notify is routed by one switch on its path id (dcuda_path):
 * every path built so far reaches the target's memory with stores, and
 * differs only in the scope of the release that notifies.
 */
#ifndef DCUDA_IMPL_ENGINE_H
#define DCUDA_IMPL_ENGINE_H

/* The engine by topic, each file including the one before it:
 *   rank_base.h  the leader's step, the state's checks, window call starts
 *   block.h      the watchdog's view and the waits
 *   cmd.h        commands to the proxy
 *   barrier.h    barriers
 *   init.h       a rank's init and finish
 *   win.h        windows
 *   rma.h        put and notify on every path (the network path's rank side)
 *   wait.h       waits and tests of notifications
 *   host_link.h  host commands and the ranks' notifications to the host
 *   timers.h     timers and log lines
 * The collectives (coll.h), communicators (comm.h) and gets (get.h) build
 * on it. */
#include "timers.h"

#endif /* DCUDA_IMPL_ENGINE_H */
