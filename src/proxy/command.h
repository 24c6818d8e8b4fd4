/*
 * Checking one entry of the rank -> host command queue (layouts in
 * dcuda/shared/ring.h) before the proxy acts on it. A rank writes the
 * entries, so nothing in them is trusted: dcu_cmd_check reads a header
 * entry against the queue and the program (its sender, the entries it
 * spans, its op, target rank, window slot, size and tag) and says what the
 * proxy does with it and, when it is refused, why. It keeps no state: what
 * depends on earlier commands (WORLD barrier epochs, large puts already
 * waiting) is the proxy's to check.
 */
#ifndef DCU_PROXY_COMMAND_H
#define DCU_PROXY_COMMAND_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/shared/layout.h"

/* What a command is checked against. */
typedef struct dcu_cmd_limits {
    int ranks;                 /* device ranks that write the queue */
    uint32_t capacity;         /* entries of the queue (a power of two) */
    int world_first;           /* WORLD rank of device rank 0 (named in refusals) */
    int process_count;         /* processes of the program */
    const int32_t *proc_first; /* [process_count + 1] first WORLD rank of each */
    const uint8_t *path;       /* [process_count] dcuda_path to each */
    int net;                   /* nonzero: the network path is open */
} dcu_cmd_limits_t;

/* What the proxy does with a command. */
typedef enum dcu_cmd_verdict {
    DCU_CMD_EXECUTE = 0, /* valid: execute it */
    DCU_CMD_UNREADABLE,  /* its sender or its entries cannot be: the queue cannot be read on */
    DCU_CMD_UNKNOWN,     /* an op the proxy does not know: answered DCUDA_ERR_INVALID_ARG */
    DCU_CMD_REFUSED      /* a known op it may not carry out: the proxy fails */
} dcu_cmd_verdict_t;

/* A command as the proxy uses it once checked. */
typedef struct dcu_cmd_info {
    uint32_t entries; /* entries it spans, header included (as it claims) */
    int target;       /* PUT, PUT_READ, NOTIFY, PART, GET, ATOMIC executed: the target's process */
} dcu_cmd_info_t;

/* The verdict on the header entry `cmd`, and unless it is DCU_CMD_EXECUTE
 * why, as the proxy reports it. */
dcu_cmd_verdict_t dcu_cmd_check(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim,
                                dcu_cmd_info_t *info, char *why, size_t why_size);

#endif /* DCU_PROXY_COMMAND_H */
