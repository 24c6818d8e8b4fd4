/*
 * The proxy's services. A service owns one concern of the proxy: the wire
 * messages it receives, the commands of the ranks' queues it executes,
 * and its steps of a pass, of a run's end and of a new run. proxy.c keeps
 * their table and, each pass, serves the command queue, hands what arrives
 * to the service of its type and polls every service once, in the
 * table's order; it does the steps that are no service's (the network
 * manager's progress, acknowledgements, frames) itself.
 *
 * The files of the services call down only (proxy_impl.h): to
 * proxy_core.c and send.c beneath all of them, and to services listed
 * below them in proxy.c's table, never up; proxy.c reaches them through
 * the table alone.
 */
#ifndef DCU_PROXY_SERVICE_H
#define DCU_PROXY_SERVICE_H

#include <stdint.h>

#include "proxy_impl.h"

typedef struct dcu_proxy_service {
    const char *name;
    uint32_t messages; /* bit 1u << type of each wire type it receives */
    uint32_t commands; /* bit 1u << op of each command it executes */
    /* A checked message of one of its types from process `from` (this
     * run's, credit counted; NULL: nothing to do beyond being heard). */
    void (*on_message)(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body);
    /* A checked command of one of its ops (header ticket t; target: its
     * target's process): DCUDA_OK or an error, answered now to a rank
     * that waits, or PROXY_LATER when the service answers it later. */
    int (*on_command)(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, int target);
    /* Each pass, before the manager's progress: work the ranks' commands
     * and the hosts gave it. > 0 if it did anything. */
    int (*serve)(dcu_proxy_t *p);
    /* Each pass on the network path, after the manager's progress. > 0 if
     * it did anything. */
    int (*progress)(dcu_proxy_t *p);
    /* The run's end: before what was sent is waited for (finish what is
     * in hand), and after it and the inboxes' settling (end what can no
     * longer finish). */
    void (*drain)(dcu_proxy_t *p);
    void (*close)(dcu_proxy_t *p);
    /* A new run begins (after a drain, or at the first). */
    void (*reset)(dcu_proxy_t *p);
} dcu_proxy_service_t;

/* The bit of a wire type or a command op in a service's sets. */
#define DCU_SVC_BIT(n) (1u << (n))

/* The services, in the order proxy.c's table polls them. */
extern const dcu_proxy_service_t dcu_proxy_svc_host;     /* host_reqs.c, host_serve.c */
extern const dcu_proxy_service_t dcu_proxy_svc_bulk;     /* bulk.c */
extern const dcu_proxy_service_t dcu_proxy_svc_fence;    /* barrier.c */
extern const dcu_proxy_service_t dcu_proxy_svc_beats;    /* beats.c */
extern const dcu_proxy_service_t dcu_proxy_svc_rma;      /* rma.c */
extern const dcu_proxy_service_t dcu_proxy_svc_atomics;  /* atomics.c */
extern const dcu_proxy_service_t dcu_proxy_svc_barrier;  /* barrier.c */
extern const dcu_proxy_service_t dcu_proxy_svc_parts;    /* part_msgs.c */
extern const dcu_proxy_service_t dcu_proxy_svc_control;  /* control.c */
extern const dcu_proxy_service_t dcu_proxy_svc_detector; /* detector.c */

/* proxy.c's table: *count services, in polling order. */
const dcu_proxy_service_t *const *dcu_proxy_services(int *count);
/* Is every wire type received by exactly one service, and every command
 * but PING executed by exactly one? 0 if so, else -1 and why. */
int dcu_proxy_services_check(char *why, size_t why_size);

#endif /* DCU_PROXY_SERVICE_H */
