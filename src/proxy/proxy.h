/*
 * The proxy: serves the rank -> host command queue of one process's ranks,
 * and carries the network path (docs/remote-path.md). It answers pings in
 * the sender's reply slot; turns puts, notifications and WORLD barriers
 * for processes of other nodes into messages of a network manager (reading
 * the source of a large put from rank memory itself); and
 * hands the puts and notifications that arrive to its ranks' inboxes
 * (inbox.h), runs the WORLD barrier (netbar.h), tells its ranks the
 * window parts of ranks on other nodes (parts.h) and when what they sent
 * was acknowledged (fence.h).
 *
 * The proxy reads the queue where the host reaches it (mapped host memory)
 * and writes rank memory through the backend. It is polled by the thread
 * that runs the ranks.
 */
#ifndef DCU_PROXY_PROXY_H
#define DCU_PROXY_PROXY_H

#include <stdint.h>

#include "backend/backend.h"
#include "dcuda/dcuda_status.h"
#include "dcuda/shared/layout.h"
#include "net/net.h"
#include "util/notes.h"
#include "util/quiet.h"

typedef struct dcu_proxy dcu_proxy_t;

enum { DCU_PROXY_FAILED = 1, DCU_PROXY_ABORTED = 2, DCU_PROXY_LEFT = 4 };

typedef struct dcu_proxy_config {
    /* The command queue of `ranks` ranks (host views). */
    dcuda_cmd_t *entries;
    uint32_t capacity;
    dcuda_cmd_reply_t *replies;
    DCUDA_ATOMIC(uint32_t) * cmd_tail;
    int ranks;
    /* The network path (net_ops NULL: no process is on it). */
    const dcu_net_ops_t *net_ops;
    dcu_net_env_t net_env;
    const dcu_backend_ops_t *ops; /* rank memory */
    dcu_backend_t *backend;
    int process_count, process_index;
    const int32_t *proc_first;            /* [process_count + 1] first WORLD rank of each */
    const uint8_t *path;                  /* [process_count] dcuda_path to each */
    dcuda_win_entry_t *own_table;         /* rank memory: my WORLD table [windows][own_stride] */
    int own_stride;                       /* entries a window's row of it (0: ranks) */
    char *lib;                            /* rank memory: my ranks' library parts [ranks] */
    uint64_t lib_stride;                  /* bytes of each */
    dcuda_inbox_entry_t *inbox;           /* host view: [ranks][DCUDA_INBOX_ENTRIES] */
    DCUDA_ATOMIC(uint32_t) * inbox_tail;  /* host view: [ranks] entries each consumed */
    DCUDA_ATOMIC(uint32_t) * net_barrier; /* host view: WORLD barriers completed */
    DCUDA_ATOMIC(uint32_t) * cancel;      /* host view: the run's cancel flag */
    /* The host's notifications to my ranks (util/notes.h), and the WORLD
     * rank of my process's first rank (a note names a device rank). */
    dcu_note_ring_t *notes;
    int32_t notes_first;
    /* Where the proxy tells another thread its news (NULL: nowhere): it
     * sets DCU_PROXY_FAILED, _ABORTED or _LEFT (release) once the text
     * dcu_proxy_failure, _aborted or _left returns is written, before it
     * cancels the run's waits. */
    DCUDA_ATOMIC(int) * news;
    /* Bytes of puts and notifications sent to a process and not yet
     * acknowledged by it, at most (NET_CREDIT; the same in every process). */
    uint64_t net_credit;
    /* Largest put handed to a rank through its inbox (NET_INBOX_MAX). */
    uint32_t inbox_max;
    /* Is [addr, addr + size) rank memory the proxy may read (the source of
     * a large put)? NULL: none is. */
    int (*readable)(void *arg, uint64_t addr, uint64_t size);
    void *readable_arg;
} dcu_proxy_config_t;

/* A host's put or get to a rank of a process on the network path
 * (dcuda_host_put, dcuda_host_get; host_reqs.c): made by the host runtime,
 * handed to the proxy (dcu_proxy_host_submit), completed by it. The
 * caller keeps it, and the host bytes, until `done`. */
typedef struct dcu_host_rma {
    struct dcu_host_rma *next; /* the proxy's */
    uint64_t id;               /* the proxy's */
    int put;
    int32_t rank;    /* WORLD rank of the owner */
    uint32_t slot;   /* DCU_WIRE_HOST_NO_WINDOW: a notification alone */
    uint32_t notify; /* the user tag + 1 to notify the owner of after, 0: none */
    uint64_t offset, size;
    void *host; /* the host's bytes */
    /* The proxy's: bytes whose chunks were sent, answered, and (a get)
     * copied into host memory; whether its first chunk went. */
    uint64_t sent, answered, received;
    int started;
    dcuda_status_t status; /* written before done */
    _Atomic int done;      /* 1 once ended (release) */
} dcu_host_rma_t;

/* Opens the network manager when there is a network path (collective over
 * the program's processes). */
dcuda_status_t dcu_proxy_create(const dcu_proxy_config_t *config, dcu_proxy_t **out);
void dcu_proxy_destroy(dcu_proxy_t *p);
/* Before a run: every entry free, counts and counters at their start. */
void dcu_proxy_reset(dcu_proxy_t *p);
/* Hands request r to the proxy (from any thread): its messages leave at
 * the proxy's next poll; it ends when its owner answered, or with the
 * run (DCUDA_ERR_PEER) or the proxy's failure. */
void dcu_proxy_host_submit(dcu_proxy_t *p, dcu_host_rma_t *r);
/* Ends the requests handed over and not yet taken with `status` (from any
 * thread: once no poll may take them any more). */
void dcu_proxy_host_cancel_queued(dcu_proxy_t *p, dcuda_status_t status);
/* Serves ready commands in ticket order and progresses the network; > 0 if
 * it did anything. */
int dcu_proxy_poll(dcu_proxy_t *p);
/* After a run: until every message this process sent has left; then what
 * the ranks left in their inboxes is applied. */
void dcu_proxy_drain(dcu_proxy_t *p);
/* Why the proxy cannot go on (a bad message, a network error), or NULL. */
const char *dcu_proxy_failure(const dcu_proxy_t *p);
/* This process ends the run early: every process hears why (they cancel
 * their run's waits), passed on along the deadlock detector's tree. */
void dcu_proxy_abort(dcu_proxy_t *p, const char *why);
/* Why a process on the network path ended this run (the proxy has then
 * cancelled its waits), or NULL. */
const char *dcu_proxy_aborted(const dcu_proxy_t *p);
/* This process leaves its run (exit() while its ranks run): every process
 * hears how, along the tree (it loses this one to its run). */
void dcu_proxy_leave(dcu_proxy_t *p, const char *why);
/* How a process on the network path left this run (the proxy has then
 * cancelled its waits, DCUDA_CANCEL_PEER), or NULL. While a run goes on,
 * the proxies beat along the deadlock detector's tree (every 0.5 s); a
 * neighbour silent for 4 s (dead, stopped, or its host thread held up)
 * is named here, and every process is told (it leaves their runs too). */
const char *dcu_proxy_left(const dcu_proxy_t *p);
/* Every rank of this process returned: my neighbours expect no more
 * beats this run. */
void dcu_proxy_ranks_done(dcu_proxy_t *p);

/* Messages handed to the manager and not yet sent. */
int dcu_proxy_pending(const dcu_proxy_t *p);
/* A WORLD barrier entered and not completed (its later rounds may be owed
 * to a process that entered late), the proxy still working. */
int dcu_proxy_barrier_open(const dcu_proxy_t *p);
/* Messages of this run that move ranks on, sent and received (the
 * deadlock detector's counts). */
void dcu_proxy_counts(const dcu_proxy_t *p, uint64_t *sent, uint64_t *received);

/* Nothing in the proxy's hands: no command waiting to be served, no large
 * put being read, no rank waiting for a window part or a fence, nothing
 * held for inbox room or unread in an inbox, no acknowledgement owed. */
int dcu_proxy_idle(dcu_proxy_t *p);

/* The deadlock detector's rounds over the network (core/deadlock.c): a
 * tree of the program's processes rooted at process 0. The root asks for
 * round n; each process sees the round asked of it (0: none to answer)
 * and answers with its own dcu_quiet_t (the proxy adds its message
 * counts), which goes up folded with its children's; the root collects
 * the fold (1 once complete) and declares, which every process hears. A
 * process whose child has not answered for `ns` names it in `why`. */
void dcu_proxy_dl_ask(dcu_proxy_t *p, uint32_t round);
uint32_t dcu_proxy_dl_asked(const dcu_proxy_t *p);
void dcu_proxy_dl_answer(dcu_proxy_t *p, uint32_t round, const dcu_quiet_t *q);
int dcu_proxy_dl_collect(const dcu_proxy_t *p, uint32_t round, dcu_quiet_t *sum);
void dcu_proxy_dl_declare(dcu_proxy_t *p);
int dcu_proxy_dl_declared(const dcu_proxy_t *p);
int dcu_proxy_dl_stalled(const dcu_proxy_t *p, uint64_t ns, char *why, size_t why_size);

#endif /* DCU_PROXY_PROXY_H */
