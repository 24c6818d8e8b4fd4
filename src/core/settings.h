/*
 * Settings: one table of name, type, default and meaning.
 *
 * Each setting NAME is read from the environment variable DCUDA_NAME and
 * from the argument --dcuda-name=value (arguments win). Unknown DCUDA_*
 * variables draw a warning, unknown --dcuda-* arguments (and misspelt
 * prefixes such as --dcuda_name) an error; both name the setting meant when
 * the name is a near miss.
 */
#ifndef DCUDA_CORE_SETTINGS_H
#define DCUDA_CORE_SETTINGS_H

#include <stdio.h>

#include "backend/backend.h"
#include "dcuda/dcuda_status.h"
#include "net/net.h"

/* X(field, NAME, type, default, description); type is INT, UINT, BOOL (0 or 1),
 * DOUBLE or STRING. Integers are decimal; 0x starts a hexadecimal one. */
/* clang-format off */
#define DCUDA_SETTINGS_MAP(X)                                                                  \
    X(backend, BACKEND, STRING, "auto", "auto, cpu or cuda: where ranks run (auto: a GPU if "  \
                                        "the kernel was built for one and one is present)")    \
    X(ranks, RANKS, INT, "0", "CPU ranks per process (0: 8 per online core, at most 256; "     \
                              "never more than 8192); on a GPU, an upper bound on ranks (0: " \
                              "as many as fit)")                                              \
    X(processes, PROCESSES, INT, "0", "processes (one device each) when not started by "      \
                                      "mpirun: the first dcuda_host_init forks the others "    \
                                      "(0: one per visible GPU, or 1 for CPU ranks); with "   \
                                      "DCUDA_BOOT_ADDR, the size of a group whose processes " \
                                      "were started by anything")                              \
    X(watchdog, WATCHDOG, DOUBLE, "10", "seconds a rank may stay blocked before the watchdog " \
                                        "reports all blocked ranks (0, off, inf: never)")      \
    X(watchdog_cancel, WATCHDOG_CANCEL, BOOL, "0", "1: after a watchdog report, blocked waits " \
                                                  "and barriers fail with DCUDA_ERR_TIMEOUT")  \
    X(on_error, ON_ERROR, STRING, "abort", "abort: a rank's first error ends the run (blocked " \
                                          "waits, here and in every process, end with "          \
                                          "DCUDA_ERR_ABORTED); continue: the run goes on")       \
    X(log_entries, LOG_ENTRIES, INT, "1024", "entries in each log ring (a power of two)")      \
    X(notif_start, NOTIF_START, UINT, "0", "initial value of every notification counter "      \
                                           "(testing wrap-around)")                            \
    X(net, NET, STRING, "auto", "network manager for processes on other nodes: auto (mpi "  \
                                "under mpirun, else ucx), mpi, ucx or none")               \
    X(net_if, NET_IF, STRING, "", "network interface(s) between nodes, e.g. eth1 or ib0,eth1 " \
                                  "(empty: the managers choose); given to UCX as "            \
                                  "NET_DEVICES, to Open MPI's TCP transport as "              \
                                  "btl_tcp_if_include; may differ by process")               \
    X(net_force, NET_FORCE, BOOL, "0", "1: every other process counts as on another node, so " \
                                      "the network path runs between processes of one host") \
    X(net_loopback, NET_LOOPBACK, BOOL, "0", "1: every put, notification and WORLD barrier " \
                                            "goes through the proxies and the network "     \
                                            "manager, even to a rank of the same process "  \
                                            "(implies NET_FORCE): the whole network path "  \
                                            "with one process")                             \
    X(net_credit, NET_CREDIT, UINT, "4194304", "bytes of puts and notifications a process "  \
                                              "may have sent another over the network path " \
                                              "before that one took them into its ranks' "    \
                                              "inboxes (what each sender may hold of its "    \
                                              "memory; one message always goes), 4096..2^32") \
    X(net_inbox_max, NET_INBOX_MAX, UINT, "12288", "largest put (bytes) a proxy hands to its " \
                                                  "rank through the rank's inbox, which the "  \
                                                  "rank copies (one message up to 16268 "      \
                                                  "bytes, pieces of equal size above); a "      \
                                                  "larger one the proxy copies into rank "      \
                                                  "memory itself, 4096..1048576")               \
    X(proxy_lanes, PROXY_LANES, INT, "1", "proxy threads of a process on the network path, "  \
                                          "1..16: its ranks split among them, each lane a "   \
                                          "process to the network (several need NET=ucx and " \
                                          "a rank a lane in every process)")                  \
    X(deadlock, DEADLOCK, BOOL, "1", "1: a run whose ranks are all blocked with nothing in "    \
                                     "flight, in every process, ends with DCUDA_ERR_DEADLOCK "  \
                                     "and a report (0: it waits; the watchdog reports)")        \
    X(node_reads, NODE_READS, BOOL, "1", "1: small WORLD collectives of several processes of " \
                                        "one node without a network path read the other "    \
                                        "ranks' parts (NVLink, shared memory); 0: they take " \
                                        "the trees, rings and chain of notified puts")        \
    X(verbose, VERBOSE, BOOL, "0", "1: the host runtime reports what it chose and did "     \
                                   "(LOG_LEVEL info)")                                      \
    X(log_level, LOG_LEVEL, STRING, "warn", "the library's messages shown: error, warn, "   \
                                            "info (what it chose and did) or debug")       \
    X(log_file, LOG_FILE, STRING, "", "a file that takes the library's messages and "       \
                                      "reports (%p: the process's index; errors go to "    \
                                      "stderr too); empty: stderr")
/* clang-format on */

/* A WATCHDOG above this many seconds (about 31 years; inf included) means
 * never, as 0 does. */
#define DCU_WATCHDOG_MAX_S 1e9

typedef struct dcuda_settings {
    char backend[16];
    long ranks;
    long processes;
    double watchdog;
    long watchdog_cancel;
    char on_error[16];
    long log_entries;
    unsigned long notif_start;
    char net[16];
    char net_if[64];
    long net_force;
    long net_loopback;
    unsigned long net_credit;
    unsigned long net_inbox_max;
    long proxy_lanes;
    long deadlock;
    long node_reads;
    long verbose;
    char log_level[16];
    char log_file[256];
    /* The choices BACKEND and NET name, parsed once by dcu_settings_load
     * (their text stays for messages): nothing else compares the names. */
    int backend_auto;                /* BACKEND=auto */
    dcu_backend_kind_t backend_kind; /* BACKEND=cpu or cuda */
    dcu_net_choice_t net_choice;
} dcuda_settings_t;

/* Defaults, then environment, then --dcuda-* arguments. */
dcuda_status_t dcu_settings_load(int argc, char **argv, dcuda_settings_t *out);
/* The defaults alone. */
void dcu_settings_defaults(dcuda_settings_t *out);
/* A step of every process (after the group started): the settings that
 * shape how processes talk to each other (NET, NET_FORCE, ON_ERROR,
 * DEADLOCK, PROXY_LANES, ...) must be the same everywhere; DCUDA_ERR_SETTING in every
 * process, naming the setting and the processes, when they are not. */
dcuda_status_t dcu_settings_agree(const dcuda_settings_t *s);

#endif /* DCUDA_CORE_SETTINGS_H */
