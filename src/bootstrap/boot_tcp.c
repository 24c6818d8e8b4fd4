/*
 * Rendezvous mode: processes started by anything (a shell loop, ssh, a
 * container orchestrator, a Slurm step without PMI), each told its index,
 * the group's size and where process 0 listens (launch_env.c reads the
 * plan). Process 0 listens on that port (or the first of the plan's
 * candidate ports it can take) and accepts one TCP connection from every
 * other process; each says hello (its index, the size it was told, its pid
 * and host, the group's key), which process 0 acknowledges at once, and is
 * welcomed once all are there, or refused with the reason (an index taken
 * twice, another size). A listener that does not acknowledge, or closes
 * (another group's process 0), sends the process on to the next candidate;
 * a process that comes again (its acknowledgment was slow) replaces its
 * first connection. A step is a star:
 * every other process sends its record to process 0, which sends every
 * process all of them. A closed connection is a process that ended: the
 * step fails naming it, and process 0 tells the others why before it
 * stops. Every wait is bounded at the start (DCU_TCP_START_S) and reported
 * while it lasts in the steps after.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "boot.h"
#include "modes.h"
#include "util/clock.h"
#include "util/msg.h"

/* How long the processes may take to meet at the start (DCUDA_BOOT_TIMEOUT
 * seconds may say otherwise), and how often a process that cannot connect
 * yet tries again. */
#define DCU_TCP_START_S 60
#define TCP_RETRY_NS (50 * DCU_NS_PER_MS)
/* How long a process waits for process 0 to acknowledge its hello on a
 * port that is one of several candidates (on the only one: the start's
 * bound). */
#define TCP_ACK_NS (3 * DCU_NS_PER_S)
#define TCP_MAGIC 0x64637562u /* "dcub" */
#define TCP_VERSION 2u
#define TCP_HOST_BYTES 64

/* Version 1's hello ended at `host`; the key follows, in two words so that
 * the struct has no padding. */
typedef struct tcp_hello {
    uint32_t magic, version;
    int32_t index, count, pid;
    char host[TCP_HOST_BYTES];
    uint32_t key_low, key_high;
} tcp_hello_t;
#define TCP_HELLO_V1_BYTES offsetof(tcp_hello_t, key_low)

/* A frame: its kind, then `length` bytes (a step's records, or why a
 * step failed). */
enum { FRAME_DATA = 1, FRAME_FAIL = 2, FRAME_WELCOME = 3, FRAME_ACK = 4 };
typedef struct tcp_frame {
    uint32_t kind, length;
} tcp_frame_t;

static struct {
    int index, count;
    int *fd;           /* process 0: [count], the others' connections; else fd[0]: to 0 */
    tcp_hello_t *peer; /* process 0: [count], who each is */
    char where[448];   /* "10.0.0.1:29500 (DCUDA_BOOT_ADDR)" */
    uint64_t key;      /* the group's (the plan's group_key) */
    int exit_registered;
    int start_s; /* the start's bound */
} tc;

/* ---- bytes ------------------------------------------------------------------------ */

/* Waits until fd is readable (or writable); 0 when `deadline` (0: none)
 * passed. Serves what must go on meanwhile (boot.h). */
static int await_fd(int fd, short events, uint64_t deadline)
{
    for (;;) {
        struct pollfd pfd = { fd, events, 0 };
        int n = poll(&pfd, 1, 1);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return 1; /* the call that follows reports it */
        dcu_boot_waiting();
        if (deadline && dcu_clock_ns() >= deadline)
            return 0;
    }
}

/* The rest of `size` bytes, *got of them in already; 0 once all are,
 * else -1 (the peer closed: errno 0) or -2 (the deadline passed; *got
 * says how far it came, so that a later call goes on from there). */
static int recv_more(int fd, void *buf, size_t size, size_t *got, uint64_t deadline)
{
    while (*got < size) {
        if (!await_fd(fd, POLLIN, deadline))
            return -2;
        ssize_t n = recv(fd, (char *)buf + *got, size - *got, 0);
        if (n == 0) {
            errno = 0;
            return -1;
        }
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            return -1;
        *got += n > 0 ? (size_t)n : 0u;
    }
    return 0;
}

static int recv_all(int fd, void *buf, size_t size, uint64_t deadline)
{
    size_t got = 0;
    return recv_more(fd, buf, size, &got, deadline);
}

static int send_all(int fd, const void *buf, size_t size)
{
    size_t sent = 0;
    while (sent < size) {
        ssize_t n = send(fd, (const char *)buf + sent, size - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            return -1;
        if (n < 0)
            await_fd(fd, POLLOUT, 0);
        sent += n > 0 ? (size_t)n : 0u;
    }
    return 0;
}

static int send_frame(int fd, uint32_t kind, const void *body, size_t length)
{
    tcp_frame_t f = { kind, (uint32_t)length };
    return send_all(fd, &f, sizeof f) || send_all(fd, body, length) ? -1 : 0;
}

/* "process 2 (pid 77 on node3)", from its hello. */
static void describe_peer(int p, char *out, size_t size)
{
    if (tc.peer && p > 0 && p < tc.count && tc.peer[p].pid)
        snprintf(out, size, "process %d (pid %d on %s)", p, (int)tc.peer[p].pid, tc.peer[p].host);
    else
        snprintf(out, size, "process %d", p);
}

/* ---- process 0 -------------------------------------------------------------------- */

static int listen_on(const char *port, char *why, size_t why_size)
{
    struct addrinfo hints = { 0 }, *res = NULL;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int err = getaddrinfo(NULL, port, &hints, &res);
    if (err) {
        snprintf(why, why_size, "port %s: %s", port, gai_strerror(err));
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 128) != 0) {
        snprintf(why, why_size, "cannot listen on port %s: %s", port, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* How many candidate ports the plan names (its port_tries, at least 1). */
static int plan_tries(const dcu_boot_tcp_plan_t *plan)
{
    return plan->port_tries > 1 ? plan->port_tries : 1;
}

/* The number of a plan of several candidates' port i: the port i after
 * its first (a derived range that ends below 32768: a 16-bit number). */
static unsigned short plan_port_number(const dcu_boot_tcp_plan_t *plan, int i)
{
    return (unsigned short)(strtol(plan->port, NULL, 10) + i);
}

/* The plan's candidate port i into port[16]: its port itself where it
 * names one alone, else plan_port_number's. */
static void plan_port(const dcu_boot_tcp_plan_t *plan, int i, char *port)
{
    if (plan_tries(plan) == 1)
        snprintf(port, 16, "%s", plan->port);
    else
        snprintf(port, 16, "%hu", plan_port_number(plan, i));
}

/* Process 0 listens on the first of the plan's candidate ports it can take
 * and says which in tc.where; why names them all when none is free. */
static int listen_first(const dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    const int tries = plan_tries(plan);
    if (tries == 1)
        return listen_on(plan->port, why, why_size);
    const unsigned short first = plan_port_number(plan, 0);
    int err = 0;
    for (int i = 0; i < tries; i++) {
        char port[16], taken[40];
        plan_port(plan, i, port);
        int fd = listen_on(port, why, why_size);
        err = errno;
        if (fd < 0)
            continue;
        if (i == 1)
            snprintf(taken, sizeof taken, "; port %hu was taken", first);
        else if (i > 1)
            snprintf(taken, sizeof taken, "; ports %hu to %hu were taken", first,
                     plan_port_number(plan, i - 1));
        else
            taken[0] = '\0';
        snprintf(tc.where, sizeof tc.where, "%s:%s (%s%s)", plan->host, port, plan->source, taken);
        return fd;
    }
    snprintf(why, why_size, "cannot listen on any of ports %hu to %hu: %s", first,
             plan_port_number(plan, tries - 1), strerror(err));
    return -1;
}

/* The group's key in a hello. */
static uint64_t hello_key(const tcp_hello_t *h) { return (uint64_t)h->key_high << 32 | h->key_low; }

/* Takes one hello from a new connection; the process's index, -1 for a
 * dcuda process that must not join (why: the refusal), or -2 for a
 * connection that is no process's of this group (another program's,
 * another group's). A process that comes again (same index, pid and
 * host) is taken again: its first connection is dropped by the caller. */
static int take_hello(int fd, uint64_t deadline, char *why, size_t why_size)
{
    tcp_hello_t h;
    memset(&h, 0, sizeof h);
    uint64_t soon = dcu_clock_ns() + DCU_NS_PER_S; /* a hello follows its connection at once */
    if (soon > deadline)
        soon = deadline;
    if (recv_all(fd, &h, TCP_HELLO_V1_BYTES, soon) != 0 || h.magic != TCP_MAGIC)
        return -2;
    h.host[TCP_HOST_BYTES - 1] = '\0';
    if (h.version == TCP_VERSION &&
        (recv_all(fd, &h.key_low, sizeof h - TCP_HELLO_V1_BYTES, soon) != 0 ||
         hello_key(&h) != tc.key))
        return -2;
    int again = h.index > 0 && h.index < tc.count && tc.fd[h.index] >= 0 &&
                tc.peer[h.index].pid == h.pid && strcmp(tc.peer[h.index].host, h.host) == 0;
    if (again) {
        tc.peer[h.index] = h;
        return h.index;
    }
    if (h.version != TCP_VERSION)
        snprintf(why, why_size,
                 "process %d (pid %d on %s) speaks rendezvous version %u, "
                 "process 0 version %u (another dcuda build)",
                 h.index, h.pid, h.host, h.version, TCP_VERSION);
    else if (h.count != tc.count)
        snprintf(why, why_size,
                 "process %d (pid %d on %s) was told the group has %d "
                 "processes, process 0 that it has %d",
                 h.index, h.pid, h.host, h.count, tc.count);
    else if (h.index <= 0 || h.index >= tc.count)
        snprintf(why, why_size,
                 "a process (pid %d on %s) says its index is %d, not one of "
                 "1..%d",
                 h.pid, h.host, h.index, tc.count - 1);
    else if (tc.fd[h.index] >= 0)
        snprintf(why, why_size,
                 "two processes say they are process %d (pid %d on %s and "
                 "pid %d on %s)",
                 h.index, tc.peer[h.index].pid, tc.peer[h.index].host, h.pid, h.host);
    else {
        tc.peer[h.index] = h;
        return h.index;
    }
    return -1;
}

/* Tells every connected process why the start (or a step) failed. */
static void tell_all(uint32_t kind, const char *text)
{
    for (int p = 1; p < tc.count; p++)
        if (tc.fd[p] >= 0)
            (void)send_frame(tc.fd[p], kind, text, strlen(text) + 1);
}

/* Names the processes that have not connected, for a message. */
static void missing(char *out, size_t size)
{
    size_t used = 0;
    int listed = 0;
    out[0] = '\0';
    for (int p = 1; p < tc.count && used + 16 < size; p++)
        if (tc.fd[p] < 0) {
            int n = snprintf(out + used, size - used, "%s%d", listed++ ? ", " : "", p);
            used += n > 0 ? (size_t)n : 0u;
        }
}

static dcuda_status_t accept_all(int lfd, char *why, size_t why_size)
{
    uint64_t deadline = dcu_clock_ns() + (uint64_t)tc.start_s * DCU_NS_PER_S;
    for (int joined = 1; joined < tc.count;) {
        if (!await_fd(lfd, POLLIN, deadline)) {
            char who[256];
            missing(who, sizeof who);
            snprintf(why, why_size,
                     "process 0 waited %d s at %s for process(es) %s to "
                     "connect",
                     tc.start_s, tc.where, who);
            return DCUDA_ERR_PEER;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int p = take_hello(fd, deadline, why, why_size);
        if (p == -1) { /* a dcuda process that must not join: the group fails */
            (void)send_frame(fd, FRAME_FAIL, why, strlen(why) + 1);
            close(fd);
            return DCUDA_ERR_SETTING;
        }
        if (p < 0 || send_frame(fd, FRAME_ACK, NULL, 0) != 0) {
            close(fd); /* a stray connection, or one that closed: ignored */
            continue;
        }
        if (tc.fd[p] >= 0)
            close(tc.fd[p]); /* the process came again */
        else
            joined++;
        tc.fd[p] = fd;
    }
    return DCUDA_OK;
}

/* ---- the other processes ------------------------------------------------------------ */

/* A connection to host:port, or -1 (last: why). */
static int connect_port(const char *host, const char *port, char *last, size_t last_size)
{
    struct addrinfo hints = { 0 }, *res = NULL;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    int err = getaddrinfo(host, port, &hints, &res);
    if (err) {
        snprintf(last, last_size, "%s", gai_strerror(err));
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
        freeaddrinfo(res);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return fd;
    }
    snprintf(last, last_size, "%s", strerror(errno));
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return -1;
}

/* The body of frame f, whose header was read (malloc'd, NUL-terminated). */
static int recv_body(int fd, uint64_t deadline, const tcp_frame_t *f, char **body)
{
    *body = malloc((size_t)f->length + 1);
    if (!*body)
        return -1;
    int rc = recv_all(fd, *body, f->length, deadline);
    (*body)[f->length] = '\0';
    return rc;
}

/* A frame from process 0: its kind and body (malloc'd, NUL-terminated). */
static int recv_frame(int fd, uint64_t deadline, tcp_frame_t *f, char **body)
{
    *body = NULL;
    int rc = recv_all(fd, f, sizeof *f, deadline);
    return rc != 0 ? rc : recv_body(fd, deadline, f, body);
}

/* This process's hello. */
static void make_hello(tcp_hello_t *h)
{
    memset(h, 0, sizeof *h);
    h->magic = TCP_MAGIC;
    h->version = TCP_VERSION;
    h->index = tc.index;
    h->count = tc.count;
    h->pid = (int32_t)getpid();
    h->key_low = (uint32_t)tc.key;
    h->key_high = (uint32_t)(tc.key >> 32);
    if (gethostname(h->host, sizeof h->host - 1) != 0)
        snprintf(h->host, sizeof h->host, "an unnamed host");
}

/* One try at one candidate port: the connection once process 0 of this
 * group acknowledged the hello; -1 when the port has no such listener
 * (last: why); -2 when process 0 refused this process (why: its reason). */
static int try_port(const char *host, const char *port, uint64_t ack_ns, char *last,
                    size_t last_size, char *why, size_t why_size)
{
    int fd = connect_port(host, port, last, last_size);
    if (fd < 0)
        return -1;
    tcp_hello_t h;
    make_hello(&h);
    tcp_frame_t f;
    char *body = NULL;
    int rc = send_all(fd, &h, sizeof h);
    if (rc == 0)
        rc = recv_frame(fd, dcu_clock_ns() + ack_ns, &f, &body);
    if (rc == 0 && f.kind == FRAME_ACK) {
        free(body);
        return fd;
    }
    if (rc == 0 && f.kind == FRAME_FAIL)
        snprintf(why, why_size, "%s", body ? body : "process 0 refused this process");
    else
        snprintf(last, last_size, "port %s %s", port,
                 rc == -2 ? "did not answer as this group's process 0"
                          : "closed the connection (another group's or program's)");
    free(body);
    close(fd);
    return rc == 0 && f.kind == FRAME_FAIL ? -2 : -1;
}

/* Tries the plan's candidate ports in turn until process 0 of this group
 * acknowledges, within the start's bound. */
static dcuda_status_t connect_to_zero(const dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    const int tries = plan_tries(plan);
    uint64_t bound = (uint64_t)tc.start_s * DCU_NS_PER_S;
    uint64_t deadline = dcu_clock_ns() + bound;
    char last[200] = "no attempt";
    while (dcu_clock_ns() < deadline) {
        for (int i = 0; i < tries; i++) {
            char port[16];
            plan_port(plan, i, port);
            int fd = try_port(plan->host, port, tries > 1 ? TCP_ACK_NS : bound, last, sizeof last,
                              why, why_size);
            if (fd >= 0) {
                tc.fd[0] = fd;
                return DCUDA_OK;
            }
            if (fd == -2)
                return DCUDA_ERR_SETTING;
        }
        dcu_clock_sleep_ns(TCP_RETRY_NS);
    }
    snprintf(why, why_size, "process %d could not reach process 0 at %s within %d s (%s)", tc.index,
             tc.where, tc.start_s, last);
    return DCUDA_ERR_PEER;
}

/* Connected and acknowledged, then welcomed once every process is. */
static dcuda_status_t join_zero(const dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    dcuda_status_t st = connect_to_zero(plan, why, why_size);
    if (st != DCUDA_OK)
        return st;
    tcp_frame_t f;
    char *body = NULL;
    uint64_t deadline = dcu_clock_ns() + (uint64_t)tc.start_s * 2 * DCU_NS_PER_S;
    int rc = recv_frame(tc.fd[0], deadline, &f, &body);
    if (rc != 0)
        snprintf(why, why_size, "process 0 at %s %s before the group started", tc.where,
                 rc == -2 ? "did not answer" : "closed the connection");
    else if (f.kind != FRAME_WELCOME)
        snprintf(why, why_size, "%s", body ? body : "process 0 refused this process");
    st = rc != 0 || f.kind != FRAME_WELCOME ? (rc == 0 ? DCUDA_ERR_SETTING : DCUDA_ERR_PEER)
                                            : DCUDA_OK;
    free(body);
    return st;
}

/* ---- start -------------------------------------------------------------------------- */

static void tcp_at_exit(void)
{
    for (int p = 0; tc.fd && p < tc.count; p++)
        if (tc.fd[p] >= 0) {
            close(tc.fd[p]);
            tc.fd[p] = -1;
        }
}

dcuda_status_t dcu_boot_tcp_start(const dcu_boot_tcp_plan_t *plan)
{
    char why[512] = "";
    tc.index = plan->index;
    tc.count = plan->count;
    tc.start_s = plan->timeout_s > 0 ? plan->timeout_s : DCU_TCP_START_S;
    tc.key = plan->group_key;
    if (plan_tries(plan) > 1)
        snprintf(tc.where, sizeof tc.where, "%s:%s-%hu (%s)", plan->host, plan->port,
                 plan_port_number(plan, plan_tries(plan) - 1), plan->source);
    else
        snprintf(tc.where, sizeof tc.where, "%s:%s (%s)", plan->host, plan->port, plan->source);
    tc.fd = malloc((size_t)tc.count * sizeof *tc.fd);
    tc.peer = calloc((size_t)tc.count, sizeof *tc.peer);
    if (!tc.fd || !tc.peer)
        return DCUDA_ERR_NO_MEMORY;
    for (int p = 0; p < tc.count; p++)
        tc.fd[p] = -1;
    dcuda_status_t st = DCUDA_OK;
    if (tc.index == 0) {
        int lfd = plan->listening ? plan->listen_fd : listen_first(plan, why, sizeof why);
        st = lfd < 0 ? DCUDA_ERR_SYSTEM : accept_all(lfd, why, sizeof why);
        if (lfd >= 0)
            close(lfd);
        if (st == DCUDA_OK) {
            tell_all(FRAME_WELCOME, "welcome");
            dcu_msg_info("rendezvous at %s: %d processes met", tc.where, tc.count);
        } else {
            tell_all(FRAME_FAIL, why);
        }
    } else {
        st = join_zero(plan, why, sizeof why);
    }
    if (!tc.exit_registered) {
        tc.exit_registered = 1;
        atexit(tcp_at_exit);
    }
    if (st != DCUDA_OK) {
        dcu_msg_error("rendezvous at %s: %s", tc.where, why);
        tcp_at_exit();
    }
    return st;
}

/* ---- steps -------------------------------------------------------------------------- */

/* A long wait is reported now and then. */
static void warn_waiting(uint64_t *start, uint64_t *warned, const char *what, const char *where)
{
    uint64_t now = dcu_clock_ns();
    if (!*start)
        *start = *warned = now;
    if (now - *warned >= DCU_BOOT_WARN_NS) {
        dcu_msg_warn("process %d has waited %.0f s for %s in %s", tc.index,
                     (double)(now - *start) / DCU_NS_PER_S, what, where);
        *warned = now;
    }
}

/* Process 0: every record in, then all of them out. */
static dcuda_status_t gather_at_zero(const void *mine, void *all, size_t size, const char *where,
                                     char *why, size_t why_size)
{
    memcpy(all, mine, size);
    uint64_t start = 0, warned = 0;
    for (int p = 1; p < tc.count; p++) {
        char who[160];
        int rc;
        size_t got = 0;
        while ((rc = recv_more(tc.fd[p], (char *)all + (size_t)p * size, size, &got,
                               dcu_clock_ns() + DCU_NS_PER_S)) == -2) {
            describe_peer(p, who, sizeof who);
            warn_waiting(&start, &warned, who, where);
        }
        if (rc != 0) {
            describe_peer(p, who, sizeof who);
            snprintf(why, why_size,
                     "%s ended (its connection to process 0 closed) while "
                     "process 0 waits for it in %s",
                     who, where);
            close(tc.fd[p]);
            tc.fd[p] = -1;
            tell_all(FRAME_FAIL, why);
            return DCUDA_ERR_PEER;
        }
    }
    for (int p = 1; p < tc.count; p++)
        if (send_frame(tc.fd[p], FRAME_DATA, all, (size_t)tc.count * size) != 0) {
            char who[160];
            describe_peer(p, who, sizeof who);
            snprintf(why, why_size, "%s ended (its connection to process 0 closed) in %s", who,
                     where);
            tell_all(FRAME_FAIL, why);
            return DCUDA_ERR_PEER;
        }
    return DCUDA_OK;
}

/* The others: my record to process 0, every record back (or why not). */
static dcuda_status_t gather_via_zero(const void *mine, void *all, size_t size, const char *where,
                                      char *why, size_t why_size)
{
    int fd = tc.fd[0];
    snprintf(why, why_size,
             "process 0 ended (its connection closed) while process %d waits "
             "for it in %s",
             tc.index, where);
    if (fd < 0 || send_all(fd, mine, size) != 0)
        return DCUDA_ERR_PEER;
    uint64_t start = 0, warned = 0;
    tcp_frame_t f;
    int rc;
    size_t got = 0;
    while ((rc = recv_more(fd, &f, sizeof f, &got, dcu_clock_ns() + DCU_NS_PER_S)) == -2)
        warn_waiting(&start, &warned, "the other processes (through process 0)", where);
    if (rc != 0)
        return DCUDA_ERR_PEER;
    if (f.kind == FRAME_DATA && f.length == (size_t)tc.count * size)
        return recv_all(fd, all, f.length, 0) == 0 ? DCUDA_OK : DCUDA_ERR_PEER;
    char *body = NULL; /* a failure: process 0 says why */
    if (recv_body(fd, 0, &f, &body) == 0)
        snprintf(why, why_size, "%s", body);
    free(body);
    return DCUDA_ERR_PEER;
}

static dcuda_status_t tcp_allgather(const void *mine, void *all, size_t size, const char *where,
                                    char *why, size_t why_size)
{
    if (tc.index == 0)
        return gather_at_zero(mine, all, size, where, why, why_size);
    return gather_via_zero(mine, all, size, where, why, why_size);
}

static int tcp_exit_status(int status) { return status; }

const dcu_boot_ops_t dcu_boot_tcp_ops = {
    .version = DCU_BOOT_OPS_VERSION,
    .name = "rendezvous",
    .allgather = tcp_allgather,
    .node_key = NULL, /* found from what each process tells of its host */
    .usable = NULL,
    .abandon = NULL,
    .exit_status = tcp_exit_status,
    .child_status = NULL,
};
