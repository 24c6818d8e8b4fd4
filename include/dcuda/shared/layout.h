/*
 * Layouts shared by rank code (GPU blocks or CPU threads), the host runtime
 * and the proxy: notification counters, barrier counters, window tables,
 * timer slots, the watchdog's view of each rank, the error record, the
 * tables that reach other processes, the context every rank starts from,
 * and the per-rank state that lives in GPU shared memory.
 *
 * Everything a rank touches on the put/notify/wait path lives here, in plain
 * fixed-size structs with asserted sizes, so that the CPU backend and the
 * CUDA backend use the very same memory image. No locks anywhere: producers
 * and consumers agree through counters that only grow (modulo 2^32) and
 * per-slot sequence numbers.
 */
#ifndef DCUDA_SHARED_LAYOUT_H
#define DCUDA_SHARED_LAYOUT_H

#include "base.h"
#include "ring.h"

#define DCUDA_LAYOUT_VERSION 28u
/* Proxy lanes (threads) a process may have (PROXY_LANES). */
#define DCUDA_MAX_PROXY_LANES 16
/* The first of `ranks` ranks that lane `lane` of `lanes` serves (each lane
 * a contiguous share; lane `lanes` is where the ranks end). */
#define DCUDA_LANE_FIRST(ranks, lane, lanes)                                                       \
    ((int32_t)((int64_t)(ranks) * (int64_t)(lane) / (int64_t)(lanes)))
#define DCUDA_CONTEXT_MAGIC 0x64637564u /* "dcud" */
#define DCUDA_STATE_MAGIC 0x72616e6bu   /* "rank" */

/* Processes (one device each) of one node: what the node segment holds.
 * A job has any number of nodes; a host that runs more processes is split
 * into nodes of this many, which reach each other over the network path. */
#define DCUDA_MAX_NODE_PROCESSES 64
/* Rank-visible allocations of one process that peers can map. */
#define DCUDA_MAX_SEGMENTS 256

/* Notification tags are 0..DCUDA_TAG_COUNT-1 (the thesis' 8-bit tags).
 * The library's own tags follow them: a rank counts DCUDA_TAG_SLOTS tags,
 * and rank code can name only the first 256. Of the library's, the
 * collectives take the first 96 (12 a communicator id: impl/coll_base.h),
 * the communicators' barriers and splits the next 24 (impl/comm.h), a
 * blocking get's completion the last (DCUDA_TAG_GET); the rest are spare
 * (a rank's counters stay whole cache lines). */
#define DCUDA_TAG_COUNT 256
#define DCUDA_TAG_LIBRARY 128
#define DCUDA_TAG_SLOTS (DCUDA_TAG_COUNT + DCUDA_TAG_LIBRARY)
#define DCUDA_TAG_GET (DCUDA_TAG_SLOTS - 1)
/* A set of tags' `need` (dcuda_wait_notification_set): every tag of it. */
#define DCUDA_SET_ALL (-1)
/* The collectives' tags: 12 a communicator id, from DCUDA_TAG_COUNT. */
#define DCUDA_TAG_COLL_KINDS 12
/* The communicators' tags (impl/comm.h): 3 an id, from this one. */
#define DCUDA_TAG_COMM_FIRST (DCUDA_TAG_COUNT + DCUDA_TAG_COLL_KINDS * 8)
#define DCUDA_TAG_COMM_KINDS 3
/* Communicators with tables of their own (window tables, barrier
 * counters): WORLD and DEVICE. */
#define DCUDA_COMM_COUNT 2
/* Communicator ids: WORLD 0, DEVICE 1, NODE 2, and splits 3 to 7
 * (impl/comm.h); a rank keeps what it knows of ids 2 and up in its state. */
#define DCUDA_COMM_IDS 8
DCUDA_STATIC_ASSERT(DCUDA_TAG_COMM_FIRST == DCUDA_TAG_COUNT + DCUDA_TAG_COLL_KINDS * DCUDA_COMM_IDS,
                    "collective tags for every communicator id");
#define DCUDA_COMM_FIRST_SPLIT 3
/* Live windows per communicator at one time: WORLD and DEVICE 64 each,
 * NODE and each split DCUDA_COMM_WINDOWS. */
#define DCUDA_MAX_WINDOWS 64
#define DCUDA_COMM_WINDOWS 16
/* Slots of WORLD's window table: WORLD's own, then DCUDA_COMM_WINDOWS for
 * each id from NODE up (a window of such a communicator is a slot of
 * WORLD's table: its parts are reached as WORLD's are, on every path),
 * then the library's own (DCUDA_LIB_SLOT: every rank's dcuda_lib_part_t,
 * which the library puts into on every path; no handle of rank code
 * names it). */
#define DCUDA_WIN_TABLE_SLOTS (DCUDA_MAX_WINDOWS + (DCUDA_COMM_IDS - 2) * DCUDA_COMM_WINDOWS + 1)
#define DCUDA_LIB_SLOT (DCUDA_WIN_TABLE_SLOTS - 1)
/* Start/stop timer pairs per kernel run. */
#define DCUDA_MAX_TIMERS 64

/*
 * Window handles are 32-bit values: slot in bits 0..7, communicator in bits
 * 8..11, generation of the slot in bits 16..23. The generation catches use of
 * a handle after its window was freed (and its slot reused).
 */
#define DCUDA_WIN_NONE 0xffffffffu
#define DCUDA_WIN_SLOT_BITS 8
#define DCUDA_WIN_COMM_SHIFT 8
#define DCUDA_WIN_GEN_SHIFT 16

/* A tag's arrivals at a rank since the start, modulo 2^32: from ranks
 * (any rank that can reach this memory adds, a release), and from hosts
 * (dcuda_host_notify: only the rank's own process's host thread writes
 * it, a copy of the count). Together in 8 bytes, so that a wait reads both
 * in one load; read only by the owning rank. */
typedef struct dcuda_notif_count {
    DCUDA_ATOMIC(uint32_t) ranks;
    DCUDA_ATOMIC(uint32_t) host;
} dcuda_notif_count_t;

/* Notification counters of one rank, a tag each (the library's included). */
typedef struct dcuda_notif_counters {
    dcuda_notif_count_t arrived[DCUDA_TAG_SLOTS];
} dcuda_notif_counters_t;

/* A count a tag (what a blocked rank had consumed of each). */
typedef struct dcuda_tag_counts {
    DCUDA_ATOMIC(uint32_t) count[DCUDA_TAG_SLOTS];
} dcuda_tag_counts_t;

/* A rank's notifications to its host (dcuda_notify_host): per user tag,
 * how many it sent this run. Mapped host memory: the rank's leader is
 * the only writer (a release store of the next count), the host reads. */
typedef struct dcuda_to_host {
    DCUDA_ATOMIC(uint32_t) count[DCUDA_TAG_COUNT];
} dcuda_to_host_t;

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

/* ---- call records: what several ranks call together ------------------------- */
/*
 * Every call that the ranks of a communicator make together (a collective,
 * a split, a barrier, a window's creation and free, the finish) is counted
 * per communicator at each rank and described by a record: which call, its
 * number on the communicator, and the arguments that must agree. Before a
 * rank reads or writes another's part for a collective, it compares that
 * rank's record with its own (impl/agree.h): where loads reach every
 * member, it reads their published records (dcuda_lib_part_t.calls); else
 * the record comes with the notification that says a member is in
 * (dcuda_lib_part_t.mailbox). A difference ends the run with
 * DCUDA_ERR_MISMATCH and a report that names both calls.
 */
/* X(name, value, the API's name of the call) */
#define DCUDA_CALL_MAP(X)                                                                          \
    X(NONE, 0, "no call")                                                                          \
    X(BARRIER, 1, "dcuda_comm_barrier")                                                            \
    X(WIN_CREATE, 2, "dcuda_win_create")                                                           \
    X(WIN_FREE, 3, "dcuda_win_free")                                                               \
    X(SPLIT, 4, "dcuda_comm_split")                                                                \
    X(BROADCAST, 5, "dcuda_broadcast")                                                             \
    X(REDUCE, 6, "dcuda_reduce")                                                                   \
    X(ALLREDUCE, 7, "dcuda_allreduce")                                                             \
    X(ALLGATHER, 8, "dcuda_allgather")                                                             \
    X(REDUCE_SCATTER, 9, "dcuda_reduce_scatter")                                                   \
    X(ALLTOALL, 10, "dcuda_alltoall")                                                              \
    X(FINISH, 11, "dcuda_rank_finish")

enum dcuda_call_kind {
#define DCUDA_CALL_ENUM_(name, value, api) DCUDA_CALL_##name = (value),
    DCUDA_CALL_MAP(DCUDA_CALL_ENUM_)
#undef DCUDA_CALL_ENUM_
        DCUDA_CALL_KINDS = 12
};

/* A record in four 8-byte words (stored and loaded whole words at a time):
 * [0] seq (calls on the communicator, this one included) | kind << 32 |
 * communicator << 40 | window slot << 48 (0xff: none) | the kind of the
 * call before it on the communicator << 56 (not compared); [1] datatype |
 * op << 8 | (uint32_t)root << 32, as given; [2] count or size, as given;
 * [3] offset. */
#define DCUDA_CALL_WORDS 4
#define DCUDA_CALL_PREV_SHIFT 56
#define DCUDA_CALL_NO_SLOT 0xffu
typedef struct dcuda_call_words {
    DCUDA_ATOMIC(uint64_t) w[DCUDA_CALL_WORDS];
} dcuda_call_words_t;

/* Records a rank receives, per communicator, by who sent them: its
 * parent in the communicator's tree, its child at tree slot k, its right
 * in a ring, the rank 0 of a broadcast from another root, and the next
 * one to three ranks of a small communicator's all-in exchange. */
enum dcuda_mailbox_slot {
    DCUDA_MAILBOX_PARENT = 0,
    DCUDA_MAILBOX_CHILD = 1, /* + the child's tree slot (at most 23) */
    DCUDA_MAILBOX_RIGHT = 25,
    DCUDA_MAILBOX_ROOT = 26,
    DCUDA_MAILBOX_ALL_IN = 27, /* + k - 1 for the rank k after me */
    DCUDA_MAILBOX_SLOTS = 32
};

/* The library's part of one rank (window slot DCUDA_LIB_SLOT): its
 * current call on each communicator, which other ranks read, and the
 * records others pushed to it; then, for each of WORLD, NODE and DEVICE
 * (in that order) that has 2 to DCUDA_PUSH_MAX_RANKS ranks, the slots the
 * small collectives push into (impl/coll_push.h): one a member and a
 * parity of the call, each a record and up to DCUDA_PUSH_BYTES. A
 * rank's part is dcu_lib_stride() bytes (impl/common.h): the same for
 * every process's WORLD and NODE slots, which come first. */
typedef struct dcuda_lib_part {
    dcuda_call_words_t calls[DCUDA_COMM_IDS];
    dcuda_call_words_t mailbox[DCUDA_COMM_IDS][DCUDA_MAILBOX_SLOTS];
} dcuda_lib_part_t;
#define DCUDA_PUSH_MAX_RANKS 8
#define DCUDA_PUSH_BYTES 4096u
#define DCUDA_PUSH_SLOT (DCUDA_PUSH_BYTES + 64u) /* a record, the data, 64-byte aligned */
/* After a process's ranks' library parts, its node scratch: where its
 * device rank 0 leaves its device's share of a WORLD allreduce that goes
 * through the devices (impl/coll_local.h: dcu_node_allreduce), read by
 * every rank of the node. */
#define DCUDA_NODE_SCRATCH_BYTES 16384u

/* How a rank reaches another: the path id of its put routes and of each
 * process in the peer table. The rank engine routes every put and notify by
 * a switch on it. */
enum dcuda_path {
    DCUDA_PATH_DEVICE = 0, /* a rank of my device (my process): device-scope release */
    DCUDA_PATH_SHM = 1,    /* CPU ranks of another process: shared memory */
    DCUDA_PATH_P2P = 2,    /* GPU ranks of another process: its GPU's memory over NVLink/PCIe */
    DCUDA_PATH_NET = 3     /* ranks of a process on another node: commands to the proxies */
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
 * translated to addresses this process reaches; a process on the network
 * path has neither here (NULL): its parts are asked of the proxy
 * (DCUDA_CMD_PART), which asks their owner once. */
typedef struct dcuda_peer {
    int32_t world_first;    /* WORLD rank of its first rank */
    int32_t rank_count;     /* its ranks */
    uint32_t path;          /* dcuda_path */
    uint32_t segment_first; /* its allocations: segments[first .. first + count) */
    uint32_t segment_count;
    uint32_t reserved;
    struct dcuda_notif_counters *notifs; /* [rank_count] */
    struct dcuda_win_entry *win_world;   /* its WORLD table [DCUDA_WIN_TABLE_SLOTS][rank_count] */
    /* Its WORLD barrier slots, in its memory, one a process of the node:
     * process i writes slot i (dcu_node_barrier). */
    DCUDA_ATOMIC(uint32_t) * node_push;
    struct dcuda_lib_part *lib; /* [rank_count]: the library's parts of its ranks */
    uint64_t reserved_lib;
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

/* Why the blocked waits of a run were cancelled (the context's cancel
 * flag): they fail with DCUDA_ERR_TIMEOUT, DCUDA_ERR_PEER or, quietly (the
 * cause was reported already), DCUDA_ERR_ABORTED. */
enum dcuda_cancel_reason {
    DCUDA_CANCEL_NONE = 0,
    DCUDA_CANCEL_WATCHDOG = 1, /* WATCHDOG_CANCEL after a report */
    DCUDA_CANCEL_PEER = 2,     /* a peer process died */
    DCUDA_CANCEL_ERROR = 3,    /* a rank's error ended the run (ON_ERROR=abort), here or in
                                * another process, or ranks could not start or ended early,
                                * or the application aborted it */
    DCUDA_CANCEL_DEADLOCK = 4  /* every rank of every process was blocked, nothing in flight */
};

/* The counter a blocked rank waits on (dcuda_rank_status_t.waits): the
 * kind in the low byte, an index above it (DCUDA_WAITS_ON). */
enum dcuda_waits_on {
    DCUDA_WAITS_NOTIF = 0,    /* its notification counter of the tag it waits for */
    DCUDA_WAITS_ARRIVED = 1,  /* barriers[index].arrived: a barrier of its device */
    DCUDA_WAITS_RELEASED = 2, /* barriers[WORLD].released: its device's last rank's step */
    DCUDA_WAITS_NODE = 3,     /* node_slots[index].arrived: process index's WORLD arrivals */
    DCUDA_WAITS_NET = 4,      /* net_barrier: WORLD barriers the proxies completed */
    DCUDA_WAITS_SET = 5       /* a set of tags: how many of them have a notification ready
                               * (tag: its first tag, count: its mask, target: how many) */
};
#define DCUDA_WAITS_ON(kind, index) ((uint32_t)(kind) | (uint32_t)(index) << 8)

/* The context's on_error: what the first rank error of a run does. */
enum dcuda_on_error {
    DCUDA_ON_ERROR_CONTINUE = 0, /* the call returns its error; the run goes on */
    DCUDA_ON_ERROR_ABORT = 1     /* ... and the run ends: blocked waits end with ABORTED */
};

/* What a rank is doing, as the watchdog sees it (host-visible memory). */
enum dcuda_rank_phase {
    DCUDA_PHASE_IDLE = 0,     /* not started */
    DCUDA_PHASE_RUNNING = 1,  /* computing or communicating */
    DCUDA_PHASE_WAITING = 2,  /* blocked in wait_notifications */
    DCUDA_PHASE_BARRIER = 3,  /* blocked in a barrier (or window create/free) */
    DCUDA_PHASE_FINISHED = 4, /* returned from the kernel */
    DCUDA_PHASE_DONE = 5      /* returned from dcuda_rank_finish (not from the kernel yet) */
};

/* A rank writes these fields only when it starts to block (after a short
 * spin), then bumps `episode` with release; while it stays blocked it
 * writes `seen` again (and bumps `episode`) whenever the counter it waits
 * on shows a new value. The watchdog and the deadlock detector read
 * `episode`, the fields, and `episode` again: a blocked rank whose counter
 * still holds `seen` has nothing new to look at. */
typedef struct dcuda_rank_status {
    DCUDA_ATOMIC(uint32_t) phase;
    DCUDA_ATOMIC(uint32_t) episode;
    DCUDA_ATOMIC(uint32_t) tag;   /* WAITING: tag (a set: its first tag) */
    DCUDA_ATOMIC(uint32_t) count; /* WAITING: count asked for (a set: its mask) */
    DCUDA_ATOMIC(uint32_t)
    consumed;                    /* WAITING: consumed counter of the tag (a set: of
                                      * its first tag; consumed_seen has them all) */
    DCUDA_ATOMIC(uint32_t) comm; /* BARRIER: communicator */
    DCUDA_ATOMIC(uint32_t)
    target; /* the value of the counter waited for (a set: how
                                      * many of its tags) */
    DCUDA_ATOMIC(uint32_t)
    seen;                         /* the counter's value when the rank last looked (a
                                      * set: how many of its tags were ready) */
    DCUDA_ATOMIC(uint32_t) waits; /* the counter: DCUDA_WAITS_ON(kind, index) */
    /* The call it is blocked in (a library tag or a barrier): kind |
     * communicator << 8 (dcuda_call_kind; 0: none), and its number on
     * that communicator. */
    DCUDA_ATOMIC(uint32_t) call;
    DCUDA_ATOMIC(uint32_t) call_seq;
    uint32_t reserved;
} dcuda_rank_status_t;

/* First error reported by any rank during a run, and how many there were.
 * The rank that records the status first also leaves its report in `first`,
 * so the host's message always matches the status it returns. */
typedef struct dcuda_error_record {
    DCUDA_ATOMIC(int32_t) status;
    DCUDA_ATOMIC(int32_t) rank;
    DCUDA_ATOMIC(uint32_t) count;
    /* 1 once `first` is written (a release by the rank that claimed the
     * record): the host reads `first` while ranks run only after it. */
    DCUDA_ATOMIC(uint32_t) filled;
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
    int32_t world_size;             /* ranks in WORLD */
    int32_t world_first;            /* WORLD rank of this device's rank 0 */
    int32_t device_size;            /* ranks in DEVICE (ranks of this device) */
    int32_t device_index;           /* which device of the world this is */
    uint32_t notif_start;           /* initial value of every notification counter */
    int32_t process_count;          /* processes (devices) of the program */
    int32_t process_index;          /* this one */
    uint32_t node_base;             /* node_slots' value for WORLD barrier 0 of this run */
    dcuda_peer_t *peers;            /* [process_count], mine included (path DEVICE) */
    dcuda_segment_t *segments;      /* peers' allocations reachable from here */
    dcuda_node_slot_t *node_slots;  /* [node processes], shared host memory */
    dcuda_notif_counters_t *notifs; /* [device_size] */
    dcuda_barrier_t *barriers;      /* [DCUDA_COMM_COUNT] */
    /* WORLD's [DCUDA_WIN_TABLE_SLOTS][device_size], DEVICE's [MAX_WINDOWS][device_size] */
    dcuda_win_entry_t *win_entries[DCUDA_COMM_COUNT];
    dcuda_timer_slot_t *timers;       /* [DCUDA_MAX_TIMERS] */
    dcuda_rank_status_t *rank_status; /* [device_size], host-visible */
    dcuda_error_record_t *error;      /* read by the host after a run */
    DCUDA_ATOMIC(uint32_t) * cancel;  /* host-visible, set by the watchdog */
    void *user_data;
    uint64_t user_size;
    dcuda_ring_t log;           /* log lines and misuse reports */
    dcuda_ring_t cmd;           /* commands to the host runtime */
    dcuda_cmd_reply_t *replies; /* [device_size], mapped host memory */
    /* The network path (docs/remote-path.md). */
    dcuda_inbox_entry_t *inbox;           /* mapped: [device_size][DCUDA_INBOX_ENTRIES] */
    DCUDA_ATOMIC(uint32_t) * inbox_tail;  /* mapped: [device_size] inbox entries consumed */
    DCUDA_ATOMIC(uint32_t) * cmd_tail;    /* mapped: commands the proxy has consumed */
    DCUDA_ATOMIC(uint32_t) * net_barrier; /* mapped: WORLD barriers the proxies completed */
    uint32_t net;                         /* nonzero: some process is on the network path */
    uint32_t on_error;                    /* dcuda_on_error */
    /* Host-visible: what a rank had consumed of each tag when it last began
     * to block ([device_size]; the watchdog's "ready" counts). */
    dcuda_tag_counts_t *consumed_seen;
    /* Each rank's scratch memory (dcuda_rank_shared): its bytes, and for
     * CPU ranks where the ranks' parts start, `shared_stride` apart (GPU
     * ranks: dynamic shared memory, base NULL). */
    uint64_t shared_bytes;
    char *shared_base;
    uint64_t shared_stride;
    /* Several processes: the node's word that says which run the deadlock
     * detector found deadlocked (shared host memory), and this run's
     * mark; a blocked wait that completes compares them (NULL: alone). */
    DCUDA_ATOMIC(uint32_t) * node_deadlock;
    uint32_t run_mark;
    uint32_t reserved_mark;
    /* Several processes of one node and no network path: every WORLD
     * rank's part of each window slot as this process reaches it
     * ([DCUDA_MAX_WINDOWS][world_size], filled by this device's ranks when
     * a WORLD window is created), and per slot the handle of the last
     * window one of whose parts no load reaches ([DCUDA_MAX_WINDOWS];
     * DCUDA_WIN_NONE at a run's start). NULL otherwise. */
    dcuda_win_entry_t *node_parts;
    DCUDA_ATOMIC(uint32_t) * node_unreachable;
    /* Proxy lanes (PROXY_LANES, src/proxy/proxies.h): more than 1, the
     * device's ranks are split into that many contiguous shares (lane l
     * from device_size * l / proxy_lanes), each writing the command ring
     * of its lane and the count its proxy consumed ([0]: cmd, cmd_tail);
     * a WORLD barrier goes to every lane's ring. */
    uint32_t proxy_lanes;
    uint32_t reserved_lanes;
    dcuda_ring_t cmd_lanes[DCUDA_MAX_PROXY_LANES];
    DCUDA_ATOMIC(uint32_t) * cmd_lane_tails[DCUDA_MAX_PROXY_LANES];
    /* DCUDA_COMM_NODE: the WORLD ranks of the processes of my node, in
     * process order ([node_size]), and the NODE rank of my device rank 0. */
    const int32_t *node_members;
    int32_t node_size;
    int32_t node_first;
    /* Splits: each rank's member lists, one a split id
     * ([device_size][DCUDA_COMM_IDS - 3][comm_list_cap]), for parents of
     * up to comm_list_cap ranks. */
    int32_t *comm_lists;
    int32_t comm_list_cap;
    /* The library's part of each rank (window slot DCUDA_LIB_SLOT), in
     * memory the other processes of the node map: lib_stride bytes a
     * rank, device_size of them. */
    uint32_t lib_stride;
    dcuda_lib_part_t *lib;
    /* The ranks' notifications to the host: the counts the host reads
     * (mapped, [device_size]), and each rank's own copy of what it sent
     * (rank memory, [device_size]: the rank reads no host memory). */
    dcuda_to_host_t *to_host;
    uint32_t *to_host_sent; /* [device_size][DCUDA_TAG_COUNT] */
} dcuda_context_t;

/* What a rank knows of a communicator beyond WORLD and DEVICE: its size,
 * my rank in it, whose barrier serves it (WORLD's or DEVICE's when it has
 * their ranks, else its own id), its members' WORLD ranks in its rank
 * order (NODE's in the context; a split's in the slot the context keeps
 * for the rank and id), and its windows: bit i of live_windows for its
 * i-th window slot (WORLD table slot dcu_win_first(id) + i), and each
 * slot's generation. The generations outlive the communicator, so a
 * handle of a window of a freed one stays refused after its id is reused. */
typedef struct dcuda_comm_info {
    int32_t size;
    int32_t rank;
    int32_t barrier;
    uint32_t live_windows;
    const int32_t *members;
    uint8_t win_gen[DCUDA_COMM_WINDOWS];
} dcuda_comm_info_t;

/* A put route the rank has checked once: the target's part of one window
 * and the rank's own part (of a window of the same communicator) that held
 * the source. Parts do not change while their window lives (its
 * routes are dropped when it is freed), so later puts along the same route
 * skip the window table in global memory and most of the checks. */
typedef struct dcuda_put_route {
    uint32_t win;      /* handle, DCUDA_WIN_NONE when empty */
    int32_t rank;      /* target rank in the window's communicator */
    uint32_t src_slot; /* window slot of the source part, comm << 8 | slot */
    uint32_t path;     /* dcuda_path to the target */
    int32_t world;     /* the target's WORLD rank */
    uint32_t reserved;
    uint64_t target_base; /* translated: where this process reaches it */
    uint64_t target_size;
    uint64_t mine_base; /* my part that held the source */
    uint64_t mine_size;
    dcuda_notif_counters_t *notifs; /* the target's counters, reachable from here (NULL: NET) */
} dcuda_put_route_t;
#define DCUDA_PUT_ROUTES 8

/* A pushed collective's way to one member: its library part and counters
 * as a rank reaches them by stores; part NULL: the network path. */
typedef struct dcuda_push_member {
    char *part;
    dcuda_notif_counters_t *notifs;
} dcuda_push_member_t;

/* The last pushed collective whose checks passed (impl/coll_push.h): its
 * window, arguments (dcu_local_args), offset and count, and what its
 * checks found. A call with the same arguments on the same live window
 * takes them from here; freeing the window forgets it. */
typedef struct dcuda_push_memo {
    uint32_t win;      /* handle, DCUDA_WIN_NONE when empty */
    int16_t me, ranks; /* my rank in the window's communicator, its size */
    uint64_t args;
    uint64_t offset;
    uint64_t n;
    char *data;     /* the call's data in my part */
    uint64_t bytes; /* a member's share (dcu_push_t) */
} dcuda_push_memo_t;

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
    int32_t world_size; /* copies of the context's fields */
    int32_t device_size;
    int32_t world_first;
    uint32_t cmd_tag; /* tag of the rank's last command to the host */
    int32_t process_count;
    int32_t process_index;
    const dcuda_peer_t *peers;
    dcuda_notif_counters_t *notifs;
    const dcuda_inbox_entry_t *inbox; /* mine (NULL: no process on the network path) */
    dcuda_win_entry_t *win_entries[DCUDA_COMM_COUNT];
    dcuda_put_route_t routes[DCUDA_PUT_ROUTES];
    uint8_t win_gen[DCUDA_COMM_COUNT][DCUDA_MAX_WINDOWS];
    uint32_t cmd_consumed; /* commands known consumed by the proxy */
    uint32_t inbox_pos;    /* inbox entries consumed */
    uint32_t consumed[DCUDA_TAG_SLOTS];
    /* The last part the proxy told of a rank on the network path. */
    uint64_t net_part_size;
    uint32_t net_part_win; /* its window handle (DCUDA_WIN_NONE: none) */
    int32_t net_part_rank; /* its WORLD rank */
    /* NET_LOOPBACK: my process is on its own network path (peers[me].path),
     * so WORLD targets of my device are reached through the proxies too. */
    uint32_t loopback;
    int32_t cmd_rank; /* my device rank as my proxy lane numbers its ranks */
    /* Communicators NODE and up (ids 2 to DCUDA_COMM_IDS - 1): bit per
     * live id; whether a command went to the proxies since the last
     * fence (a barrier of a split waits for its acknowledgement). */
    uint32_t live_comms;
    uint32_t net_unfenced;
    dcuda_comm_info_t comms[DCUDA_COMM_IDS - 2];
    /* Copies of the command ring's descriptor and the proxy's consumed
     * count (the context lies in global memory, and a rank's waits
     * acquire, which drops what its SM cached: each command would read
     * them again from L2). */
    DCUDA_ATOMIC(uint32_t) * cmd_tail;
    dcuda_ring_t cmd;
    /* Calls made on each communicator (impl/agree.h: the last one's
     * number, modulo 2^24, | its kind << 24), and the record of the last
     * call (dcuda_call_words_t's words). */
    uint32_t call_seq[DCUDA_COMM_IDS];
    uint64_t call[DCUDA_CALL_WORDS];
    dcuda_lib_part_t *lib; /* the library's parts of my device's ranks (the context's) */
    /* Once this rank knows the run ended (it reported a mismatch, or a
     * wait of its was cancelled), the status its later barriers and
     * collectives fail with at once, arriving nowhere, so that no member
     * of a call it left passes a barrier on its account (0: it goes on). */
    int32_t ended;
    uint32_t lib_stride;  /* bytes a rank's library part takes (the context's) */
    uint32_t push_seq[3]; /* the pushed collectives made on WORLD, DEVICE, NODE */
    /* The members of WORLD, DEVICE and NODE as this rank's pushed calls
     * reach them, found at its first pushed call on each (impl/coll_push.h):
     * push_to[c][k] is member (me + k) % P of comm c; bit c of push_planned
     * says comm c's are found, bit k of push_sys[c] that member k's release
     * is at system scope (another process). */
    uint32_t push_planned;
    uint32_t push_sys[3];
    dcuda_push_member_t push_to[3][DCUDA_PUSH_MAX_RANKS];
    /* The last remote atomic's target reached by stores (impl/atomic.h),
     * as a put route without a source part; win DCUDA_WIN_NONE: none. */
    dcuda_put_route_t atomic_route;
    dcuda_push_memo_t push_memo;
} dcuda_state_t;

DCUDA_STATIC_ASSERT(sizeof(dcuda_notif_counters_t) == 8 * DCUDA_TAG_SLOTS, "notif counters");
DCUDA_STATIC_ASSERT(sizeof(dcuda_barrier_t) == 128, "barrier line");
DCUDA_STATIC_ASSERT(sizeof(dcuda_win_entry_t) == 16, "window entry");
DCUDA_STATIC_ASSERT(sizeof(dcuda_timer_slot_t) == 32, "timer slot");
DCUDA_STATIC_ASSERT(sizeof(dcuda_rank_status_t) == 48, "rank status");
DCUDA_STATIC_ASSERT(sizeof(dcuda_error_record_t) == 16 + sizeof(dcuda_log_entry_t), "error record");
DCUDA_STATIC_ASSERT(offsetof(dcuda_context_t, notifs) == 64, "context header");
DCUDA_STATIC_ASSERT(sizeof(dcuda_node_slot_t) == 64, "node slot");
DCUDA_STATIC_ASSERT(sizeof(dcuda_segment_t) == 32, "segment");
DCUDA_STATIC_ASSERT(sizeof(dcuda_peer_t) == 64, "peer");
DCUDA_STATIC_ASSERT(sizeof(dcuda_context_t) == 880, "context");
DCUDA_STATIC_ASSERT(sizeof(dcuda_to_host_t) == 4 * DCUDA_TAG_COUNT, "notifications to the host");
DCUDA_STATIC_ASSERT(sizeof(dcuda_put_route_t) == 64, "put route");
DCUDA_STATIC_ASSERT(sizeof(dcuda_comm_info_t) == 40, "communicator");
DCUDA_STATIC_ASSERT(DCUDA_WIN_TABLE_SLOTS < (1 << DCUDA_WIN_SLOT_BITS), "table slots fit a handle");
DCUDA_STATIC_ASSERT(offsetof(dcuda_state_t, ctx) == 48, "state header");
DCUDA_STATIC_ASSERT(offsetof(dcuda_state_t, routes) == 120, "state copies of the context");
DCUDA_STATIC_ASSERT(offsetof(dcuda_state_t, consumed) == 768, "state counters");
DCUDA_STATIC_ASSERT(sizeof(dcuda_state_t) == 3216, "state fits shared memory budget");
DCUDA_STATIC_ASSERT(sizeof(dcuda_push_memo_t) == 48, "push memo");
DCUDA_STATIC_ASSERT(sizeof(dcuda_call_words_t) == 32, "call record");
DCUDA_STATIC_ASSERT(sizeof(dcuda_lib_part_t) == 32 * DCUDA_COMM_IDS * (1 + DCUDA_MAILBOX_SLOTS),
                    "library part");
DCUDA_STATIC_ASSERT(sizeof(dcuda_lib_part_t) % 64 == 0 && DCUDA_PUSH_SLOT % 64 == 0,
                    "push slots 64-byte aligned");
DCUDA_STATIC_ASSERT(offsetof(dcuda_state_t, call) % 8 == 0, "state's record aligned");

#endif /* DCUDA_SHARED_LAYOUT_H */
