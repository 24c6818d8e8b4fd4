/*
 * Layouts shared by rank code (GPU blocks or CPU threads), the host runtime
 * and, later, the network proxy.
 *
 * Everything a rank touches on the put/notify/wait path lives here, in plain
 * fixed-size structs with asserted sizes, so that the CPU backend and the CUDA
 * backend use the very same memory image: notification counters, barrier
 * counters, window tables, timer slots, the watchdog's view of each rank, the
 * log ring and the per-rank state that lives in GPU shared memory.
 *
 * Fields that several agents touch concurrently are declared with
 * DCUDA_ATOMIC(): in C11 they are _Atomic (the CPU backend operates on them
 * with <stdatomic.h>); in C++ and CUDA they are the plain integer of the same
 * size and alignment (device code uses PTX atomics on them). The asserts
 * below pin both views to one layout.
 *
 * No locks anywhere: producers and consumers agree through counters that
 * only grow (modulo 2^32) and per-slot sequence numbers.
 */
#ifndef DCUDA_LAYOUT_H
#define DCUDA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#if !defined(__cplusplus) && !defined(__CUDACC__) && !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
#define DCUDA_ATOMIC(T) _Atomic T
#else
#define DCUDA_ATOMIC(T) T
#endif

#if defined(__cplusplus)
#define DCUDA_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define DCUDA_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define DCUDA_LAYOUT_VERSION 2u
#define DCUDA_CONTEXT_MAGIC 0x64637564u /* "dcud" */
#define DCUDA_STATE_MAGIC 0x72616e6bu   /* "rank" */

/* Processes (one device each) of one program on one node. */
#define DCUDA_MAX_PROCESSES 16
/* Rank-visible allocations of one process that peers can map. */
#define DCUDA_MAX_SEGMENTS 256

/* Notification tags are 0..DCUDA_TAG_COUNT-1 (the thesis' 8-bit tags). */
#define DCUDA_TAG_COUNT 256
/* Communicators: WORLD and DEVICE. */
#define DCUDA_COMM_COUNT 2
/* Live windows per communicator at one time. */
#define DCUDA_MAX_WINDOWS 64
/* Start/stop timer pairs per kernel run. */
#define DCUDA_MAX_TIMERS 64
/* Characters of text in one log entry (longer messages are truncated). */
#define DCUDA_LOG_TEXT 224
/* Arguments carried by a device log entry that the host formats. */
#define DCUDA_LOG_MAX_ARGS 8

/*
 * Window handles are 32-bit values: slot in bits 0..7, communicator in bits
 * 8..11, generation of the slot in bits 16..23. The generation catches use of
 * a handle after its window was freed (and its slot reused).
 */
#define DCUDA_WIN_NONE 0xffffffffu
#define DCUDA_WIN_SLOT_BITS 8
#define DCUDA_WIN_COMM_SHIFT 8
#define DCUDA_WIN_GEN_SHIFT 16

/* Notification counters of one rank: arrivals per tag since the start,
 * modulo 2^32. Written by any rank that can reach this memory (a release
 * add), read only by the owning rank (acquire loads). */
typedef struct dcuda_notif_counters {
    DCUDA_ATOMIC(uint32_t) arrived[DCUDA_TAG_COUNT];
} dcuda_notif_counters_t;

/* Barrier of one communicator: a counter that only grows. A rank in its
 * n-th barrier on a communicator of size s waits until it reaches n*s. One
 * cache line of its own so barrier traffic does not disturb neighbours. */
typedef struct dcuda_barrier {
    DCUDA_ATOMIC(uint32_t) arrived;
    /* WORLD over several processes: barriers passed by the whole world, set
     * by the device's last arriving rank once every process has arrived
     * (see dcuda_node_slot_t); the device's ranks wait for it instead. */
    DCUDA_ATOMIC(uint32_t) released;
    uint32_t reserved[30];
} dcuda_barrier_t;

/* One process's arrivals at WORLD barriers, in memory every process of the
 * node reaches (shared host memory): written only by that process's last
 * arriving rank, it only grows. A cache line of its own. */
typedef struct dcuda_node_slot {
    DCUDA_ATOMIC(uint32_t) arrived;
    uint32_t reserved[15];
} dcuda_node_slot_t;

/* How ranks of one process reach those of another. */
enum dcuda_peer_path {
    DCUDA_PATH_SELF = 0, /* the same process */
    DCUDA_PATH_SHM = 1,  /* CPU ranks: shared memory */
    DCUDA_PATH_P2P = 2   /* GPU ranks: the peer GPU's memory over NVLink or PCIe */
};

/* A rank-visible allocation of another process, mapped into this one:
 * addresses in [owner_base, owner_base + size) of the owner are reached at
 * local_base + (address - owner_base) here. */
typedef struct dcuda_segment {
    uint64_t owner_base;
    uint64_t size;
    uint64_t local_base;
    uint64_t reserved;
} dcuda_segment_t;

/* A process of the program as the ranks of this one see it. Its tables are
 * translated to addresses this process reaches. */
typedef struct dcuda_peer {
    int32_t world_first;    /* WORLD rank of its first rank */
    int32_t rank_count;     /* its ranks */
    uint32_t path;          /* dcuda_peer_path */
    uint32_t segment_first; /* its allocations: segments[first .. first + count) */
    uint32_t segment_count;
    uint32_t reserved;
    struct dcuda_notif_counters *notifs; /* [rank_count] */
    struct dcuda_win_entry *win_world;   /* its WORLD window table */
    uint64_t reserved2;
} dcuda_peer_t;

/* One rank's part of one window: where it starts and how many bytes. */
typedef struct dcuda_win_entry {
    uint64_t base;
    uint64_t size;
} dcuda_win_entry_t;

/* Timer pair: earliest start and latest stop over the ranks of a device,
 * and how many ranks started and stopped it. */
typedef struct dcuda_timer_slot {
    DCUDA_ATOMIC(uint64_t) start_ns;
    DCUDA_ATOMIC(uint64_t) stop_ns;
    DCUDA_ATOMIC(uint32_t) starts;
    DCUDA_ATOMIC(uint32_t) stops;
    uint32_t reserved[2];
} dcuda_timer_slot_t;

/* Why the host cancelled the blocked waits of a run (the context's cancel
 * flag): they fail with DCUDA_ERR_TIMEOUT or DCUDA_ERR_PEER. */
enum dcuda_cancel_reason {
    DCUDA_CANCEL_NONE = 0,
    DCUDA_CANCEL_WATCHDOG = 1, /* WATCHDOG_CANCEL after a report, or a failed launch */
    DCUDA_CANCEL_PEER = 2      /* a peer process died */
};

/* What a rank is doing, as the watchdog sees it (host-visible memory). */
enum dcuda_rank_phase {
    DCUDA_PHASE_IDLE = 0,     /* not started */
    DCUDA_PHASE_RUNNING = 1,  /* computing or communicating */
    DCUDA_PHASE_WAITING = 2,  /* blocked in wait_notifications */
    DCUDA_PHASE_BARRIER = 3,  /* blocked in a barrier (or window create/free) */
    DCUDA_PHASE_FINISHED = 4  /* returned from the kernel */
};

/* A rank writes these fields only when it starts to block (after a short
 * spin), then bumps `episode` with release; the watchdog reads `episode`,
 * the fields, and `episode` again. */
typedef struct dcuda_rank_status {
    DCUDA_ATOMIC(uint32_t) phase;
    DCUDA_ATOMIC(uint32_t) episode;
    DCUDA_ATOMIC(uint32_t) tag;      /* WAITING: tag */
    DCUDA_ATOMIC(uint32_t) count;    /* WAITING: count asked for */
    DCUDA_ATOMIC(uint32_t) consumed; /* WAITING: consumed counter of the tag */
    DCUDA_ATOMIC(uint32_t) comm;     /* BARRIER: communicator */
    DCUDA_ATOMIC(uint32_t) target;   /* BARRIER: arrival count waited for */
    uint32_t reserved;
} dcuda_rank_status_t;

/* Kinds of log entries: flags. */
enum dcuda_log_kind {
    DCUDA_LOG_TEXT_KIND = 0,   /* text[] holds the finished line */
    DCUDA_LOG_FORMAT_KIND = 1, /* text[] holds a printf format, args[] its values */
    DCUDA_LOG_ERROR_KIND = 2   /* a misuse report (text or format) */
};

/*
 * One log line. The ring is a bounded multi-producer, single-consumer queue:
 * a producer takes a ticket t from the head counter, waits until the entry
 * t % capacity has seq == t (free for this lap: back-pressure, nothing is
 * dropped), fills it and stores seq = t + 1 with release. The consumer (the
 * host's logger thread) waits for seq == t + 1, prints, and stores
 * seq = t + capacity to hand the entry to the next lap.
 */
typedef struct dcuda_log_entry {
    DCUDA_ATOMIC(uint32_t) seq;
    int32_t rank;
    uint16_t kind;
    uint16_t nargs;
    uint32_t arg_types; /* 4 bits per argument, see dcuda_log_arg_type */
    uint64_t args[DCUDA_LOG_MAX_ARGS];
    char text[DCUDA_LOG_TEXT];
} dcuda_log_entry_t;

enum dcuda_log_arg_type {
    DCUDA_LOG_ARG_INT = 1,    /* int64 */
    DCUDA_LOG_ARG_UINT = 2,   /* uint64 */
    DCUDA_LOG_ARG_DOUBLE = 3, /* double bits */
    DCUDA_LOG_ARG_PTR = 4,    /* address */
    DCUDA_LOG_ARG_STR = 5     /* string: copied inline after the format text */
};

/* The ring: head lives where producers can do atomics cheaply (GPU memory
 * for GPU ranks), entries where the consumer reads cheaply (pinned host
 * memory). */
typedef struct dcuda_log_ring {
    DCUDA_ATOMIC(uint32_t) *head;
    dcuda_log_entry_t *entries;
    uint32_t capacity; /* a power of two */
    uint32_t reserved;
} dcuda_log_ring_t;

/*
 * Commands from ranks to the host runtime (the device -> host queue), with
 * the same bounded ring protocol as the log: a ticket from head, wait until
 * the entry's seq == ticket, fill, publish seq = ticket + 1 with release;
 * the host consumes in ticket order and hands the entry to the next lap with
 * seq = ticket + capacity, before it answers in the sender's reply slot
 * (the host -> device direction, releasing `seq` = the command's tag last).
 * Commands are synchronous (a rank waits for its reply) and the ring has at
 * least as many entries as ranks, so a ticket's entry is always free when
 * it is taken: at most one command per rank is unanswered, and the host
 * consumes in ticket order. GPU ranks rely on this and skip the check (a
 * read of host memory); CPU ranks still check.
 */
enum dcuda_cmd_op {
    DCUDA_CMD_PING = 1 /* answer at once: measures the queue round trip */
};

typedef struct dcuda_cmd {
    DCUDA_ATOMIC(uint32_t) seq;
    int32_t rank; /* device rank of the sender */
    uint32_t op;
    uint32_t tag; /* echoed in the reply */
    uint64_t args[6];
} dcuda_cmd_t;

typedef struct dcuda_cmd_ring {
    DCUDA_ATOMIC(uint32_t) *head; /* rank memory */
    dcuda_cmd_t *entries;         /* mapped host memory */
    uint32_t capacity;            /* a power of two */
    uint32_t reserved;
} dcuda_cmd_ring_t;

typedef struct dcuda_cmd_reply {
    DCUDA_ATOMIC(uint32_t) seq; /* tag of the command answered */
    int32_t status;
    uint64_t value;
    uint64_t reserved[6];
} dcuda_cmd_reply_t;

/* First error reported by any rank during a run, and how many there were.
 * The rank that records the status first also leaves its report in `first`,
 * so the host's message always matches the status it returns. */
typedef struct dcuda_error_record {
    DCUDA_ATOMIC(int32_t) status;
    DCUDA_ATOMIC(int32_t) rank;
    DCUDA_ATOMIC(uint32_t) count;
    uint32_t reserved;
    dcuda_log_entry_t first;
} dcuda_error_record_t;

/*
 * Everything the ranks of one device (one GPU, or one group of CPU ranks)
 * share, reachable from the handle passed to the kernel. The tables are
 * indexed by device rank (0..device_size-1) or, for window entries, by rank
 * in the window's communicator.
 */
typedef struct dcuda_context {
    uint32_t magic;
    uint32_t version;
    int32_t world_size;   /* ranks in WORLD */
    int32_t world_first;  /* WORLD rank of this device's rank 0 */
    int32_t device_size;  /* ranks in DEVICE (ranks of this device) */
    int32_t device_index; /* which device of the world this is */
    uint32_t notif_start; /* initial value of every notification counter */
    int32_t process_count; /* processes (devices) of the program */
    int32_t process_index; /* this one */
    uint32_t node_base;    /* node_slots' value for WORLD barrier 0 of this run */
    dcuda_peer_t *peers;          /* [process_count], mine included (path SELF) */
    dcuda_segment_t *segments;    /* peers' allocations reachable from here */
    dcuda_node_slot_t *node_slots; /* [process_count], shared host memory */
    dcuda_notif_counters_t *notifs;                      /* [device_size] */
    dcuda_barrier_t *barriers;                           /* [DCUDA_COMM_COUNT] */
    dcuda_win_entry_t *win_entries[DCUDA_COMM_COUNT];    /* [MAX_WINDOWS][comm size] */
    dcuda_timer_slot_t *timers;                          /* [DCUDA_MAX_TIMERS] */
    dcuda_rank_status_t *rank_status;                    /* [device_size], host-visible */
    dcuda_error_record_t *error;                         /* read by the host after a run */
    DCUDA_ATOMIC(uint32_t) *cancel;                      /* host-visible, set by the watchdog */
    void *user_data;
    uint64_t user_size;
    dcuda_log_ring_t log;
    dcuda_cmd_ring_t cmd;
    dcuda_cmd_reply_t *replies; /* [device_size], mapped host memory */
} dcuda_context_t;

/* A put route the rank has checked once: the target's part of one window
 * and the rank's own part (of a window of the same communicator) that held
 * the source. Parts do not change while their window lives (its
 * routes are dropped when it is freed), so later puts along the same route
 * skip the window table in global memory and most of the checks. */
typedef struct dcuda_put_route {
    uint32_t win;      /* handle, DCUDA_WIN_NONE when empty */
    int32_t rank;      /* target rank in the window's communicator */
    uint32_t src_slot; /* window slot of the source part, comm << 8 | slot */
    uint32_t remote;   /* the target lives in another process */
    uint64_t target_base; /* translated: where this process reaches it */
    uint64_t target_size;
    uint64_t mine_base; /* my part that held the source */
    uint64_t mine_size;
    dcuda_notif_counters_t *notifs; /* the target's counters, reachable from here */
} dcuda_put_route_t;
#define DCUDA_PUT_ROUTES 8

/*
 * Per-rank state. Lives in GPU shared memory (one per block) or on a CPU
 * rank's stack; only its own rank touches it. It keeps copies of the context
 * fields that the put/notify/wait path needs, so that path reads no global
 * memory but the target's counter. `consumed` counts the notifications
 * consumed per tag, so arrived - consumed is what is ready.
 */
typedef struct dcuda_state {
    uint32_t magic;
    int32_t device_rank;
    int32_t world_rank;
    uint32_t timer_next;                      /* timer calls made (start, stop, ...) */
    uint32_t barrier_epoch[DCUDA_COMM_COUNT]; /* barriers passed per communicator */
    int32_t result;                           /* broadcast of thread 0's result */
    uint32_t result_win;                      /* broadcast of a created window handle */
    uint64_t live_windows[DCUDA_COMM_COUNT];  /* bit per live window slot */
    const dcuda_context_t *ctx;
    int32_t world_size;  /* copies of the context's fields */
    int32_t device_size;
    int32_t world_first;
    uint32_t cmd_tag; /* tag of the rank's last command to the host */
    int32_t process_count;
    int32_t process_index;
    const dcuda_peer_t *peers;
    dcuda_notif_counters_t *notifs;
    /* Copies of the peer table's lookups: the WORLD rank of each process's
     * first rank, and its counters as this rank reaches them. */
    int32_t peer_first[DCUDA_MAX_PROCESSES];
    dcuda_notif_counters_t *peer_notifs[DCUDA_MAX_PROCESSES];
    dcuda_win_entry_t *win_entries[DCUDA_COMM_COUNT];
    dcuda_put_route_t routes[DCUDA_PUT_ROUTES];
    uint8_t win_gen[DCUDA_COMM_COUNT][DCUDA_MAX_WINDOWS];
    uint32_t consumed[DCUDA_TAG_COUNT];
} dcuda_state_t;

DCUDA_STATIC_ASSERT(sizeof(dcuda_notif_counters_t) == 4 * DCUDA_TAG_COUNT, "notif counters");
DCUDA_STATIC_ASSERT(sizeof(dcuda_barrier_t) == 128, "barrier line");
DCUDA_STATIC_ASSERT(sizeof(dcuda_win_entry_t) == 16, "window entry");
DCUDA_STATIC_ASSERT(sizeof(dcuda_timer_slot_t) == 32, "timer slot");
DCUDA_STATIC_ASSERT(sizeof(dcuda_rank_status_t) == 32, "rank status");
DCUDA_STATIC_ASSERT(sizeof(dcuda_log_entry_t) == 304, "log entry");
DCUDA_STATIC_ASSERT(offsetof(dcuda_log_entry_t, args) == 16, "log entry args");
DCUDA_STATIC_ASSERT(sizeof(dcuda_log_ring_t) == 24, "log ring");
DCUDA_STATIC_ASSERT(sizeof(dcuda_error_record_t) == 16 + sizeof(dcuda_log_entry_t), "error record");
DCUDA_STATIC_ASSERT(offsetof(dcuda_context_t, notifs) == 64, "context header");
DCUDA_STATIC_ASSERT(sizeof(dcuda_node_slot_t) == 64, "node slot");
DCUDA_STATIC_ASSERT(sizeof(dcuda_segment_t) == 32, "segment");
DCUDA_STATIC_ASSERT(sizeof(dcuda_peer_t) == 48, "peer");
DCUDA_STATIC_ASSERT(sizeof(dcuda_cmd_t) == 64, "command");
DCUDA_STATIC_ASSERT(sizeof(dcuda_cmd_ring_t) == 24, "command ring");
DCUDA_STATIC_ASSERT(sizeof(dcuda_cmd_reply_t) == 64, "command reply");
DCUDA_STATIC_ASSERT(sizeof(dcuda_context_t) == 200, "context");
DCUDA_STATIC_ASSERT(sizeof(dcuda_put_route_t) == 56, "put route");
DCUDA_STATIC_ASSERT(offsetof(dcuda_state_t, ctx) == 48, "state header");
DCUDA_STATIC_ASSERT(offsetof(dcuda_state_t, routes) == 304, "state copies of the context");
DCUDA_STATIC_ASSERT(offsetof(dcuda_state_t, consumed) == 880, "state counters");
DCUDA_STATIC_ASSERT(sizeof(dcuda_state_t) == 1904, "state fits shared memory budget");

#endif /* DCUDA_LAYOUT_H */
