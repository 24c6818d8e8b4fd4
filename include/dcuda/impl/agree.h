/*
 * Agreement of the calls ranks make together (shared/layout.h: call
 * records). Every such call counts itself on its communicator and
 * publishes its record in the rank's library part (dcu_call_begin). A
 * rank then compares a member's record with its own before it reads or
 * writes that member's part: the notification that tells a rank a member
 * is in (and that it may write into that member's part) carries the
 * member's record into the rank's mailbox (impl/coll_base.h:
 * dcu_call_push), which the rank compares once the notification is
 * counted (dcu_call_check_boxes). The member waits for that write, so its
 * record stays put until the rank has read it. Where ranks read each
 * other's parts between two barriers, each first compares its right
 * neighbour's record (pushed the same way): once all are past the first
 * barrier, every record is known equal to every other, at one
 * notification a rank.
 * A difference is reported in the user's words, names both calls (or the
 * argument that differs) and ends the run in every process
 * (DCUDA_ERR_MISMATCH): no data moves between ranks that disagree.
 */
#ifndef DCUDA_IMPL_AGREE_H
#define DCUDA_IMPL_AGREE_H

#include "checks.h"
#include "prims.h"
#include "report.h"
#include "ring.h"

/* ---- records --------------------------------------------------------------------- */

DCU_FN const char *dcu_call_name(int kind)
{
    switch (kind) {
#define DCU_CALL_CASE_(name, value, api)                                                           \
    case DCUDA_CALL_##name:                                                                        \
        return api;
        DCUDA_CALL_MAP(DCU_CALL_CASE_)
#undef DCU_CALL_CASE_
    }
    return "no call";
}

DCU_FN uint32_t dcu_call_seq_of(const uint64_t *w) { return (uint32_t)w[0]; }
DCU_FN int dcu_call_kind_of(const uint64_t *w) { return (int)((w[0] >> 32) & 0xffu); }
DCU_FN int dcu_call_comm_of(const uint64_t *w) { return (int)((w[0] >> 40) & 0xffu); }
DCU_FN int dcu_call_slot_of(const uint64_t *w) { return (int)((w[0] >> 48) & 0xffu); }
DCU_FN int dcu_call_prev_of(const uint64_t *w) { return (int)(w[0] >> DCUDA_CALL_PREV_SHIFT); }
DCU_FN int dcu_call_type_of(const uint64_t *w) { return (int)(w[1] & 0xffu); }
DCU_FN int dcu_call_op_of(const uint64_t *w) { return (int)((w[1] >> 8) & 0xffu); }
DCU_FN int dcu_call_root_of(const uint64_t *w) { return (int)(int32_t)(uint32_t)(w[1] >> 32); }

/* Do two records name the same call (the previous call's kind aside)? */
DCU_FN int dcu_call_same(const uint64_t *a, const uint64_t *b)
{
    const uint64_t mask = ~((uint64_t)0xffu << DCUDA_CALL_PREV_SHIFT);
    return ((a[0] ^ b[0]) & mask) == 0 && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

/* My device's rank d's library part (shared/layout.h: lib_stride bytes
 * a rank). */
DCU_FN dcuda_lib_part_t *dcu_lib_of(const dcuda_state_t *st, int d)
{
    return (dcuda_lib_part_t *)((char *)st->lib + (size_t)d * st->lib_stride);
}

/* WORLD rank `world`'s library part, of process q of my node. */
DCU_FN char *dcu_lib_peer(const dcuda_state_t *st, const dcuda_peer_t *q, int world)
{
    const uint64_t stride = dcu_lib_stride(st->world_size, dcu_node_size(st), q->rank_count);
    return (char *)q->lib + (size_t)(world - q->world_first) * (size_t)stride;
}

/* Calls are numbered modulo 2^24 on each communicator (st->call_seq
 * keeps the last one's kind above). */
#define DCU_CALL_SEQ_MASK 0xffffffu

/* Leader: the record of my next call on comm (its arguments as given;
 * slot DCUDA_CALL_NO_SLOT when it takes no window) into st->call, counted,
 * and published in my library part for the members that read it. */
DCU_FN void dcu_call_record(dcuda_state_t *st, int kind, int comm, int slot, int type, int op,
                            int root, uint64_t n, uint64_t offset)
{
    dcuda_call_words_t *mine = &dcu_lib_of(st, st->device_rank)->calls[comm];
    const uint32_t last = st->call_seq[comm]; /* number | kind << 24 of the last call */
    const uint64_t prev = last >> 24;
    const uint32_t seq = (last + 1u) & DCU_CALL_SEQ_MASK;
    st->call_seq[comm] = seq | (uint32_t)kind << 24;
    st->call[0] = (uint64_t)seq | (uint64_t)(uint32_t)kind << 32 | (uint64_t)(comm & 0xff) << 40 |
                  (uint64_t)(slot & 0xff) << 48 | prev << DCUDA_CALL_PREV_SHIFT;
    st->call[1] = (uint64_t)((uint32_t)type & 0xffu) | (uint64_t)((uint32_t)op & 0xffu) << 8 |
                  (uint64_t)(uint32_t)root << 32;
    st->call[2] = n;
    st->call[3] = offset;
    for (int i = 0; i < DCUDA_CALL_WORDS; i++)
        dcu_st_u64(&mine->w[i], st->call[i]);
}

/* Leader, at rank init: no call yet on any communicator (a member that
 * reads my record before my first call sees none). */
DCU_FN void dcu_call_reset(dcuda_state_t *st)
{
    dcuda_lib_part_t *mine = dcu_lib_of(st, st->device_rank);
    for (int c = 0; c < DCUDA_COMM_IDS; c++) {
        st->call_seq[c] = 0;
        for (int i = 0; i < DCUDA_CALL_WORDS; i++)
            dcu_st_u64(&mine->calls[c].w[i], 0u);
    }
    for (int i = 0; i < DCUDA_CALL_WORDS; i++)
        st->call[i] = 0u;
}

/* ---- the words of a report --------------------------------------------------------- */

/* A bounded text being written (no snprintf in device code). */
typedef struct dcu_text {
    char *s;
    int len, cap;
} dcu_text_t;

DCU_FN_COLD void dcu_text_str(dcu_text_t *t, const char *s)
{
    while (s && *s && t->len < t->cap - 1)
        t->s[t->len++] = *s++;
    t->s[t->len] = '\0';
}

DCU_FN_COLD void dcu_text_u64(dcu_text_t *t, uint64_t v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v);
    while (n > 0 && t->len < t->cap - 1)
        t->s[t->len++] = digits[--n];
    t->s[t->len] = '\0';
}

DCU_FN_COLD void dcu_text_i64(dcu_text_t *t, int64_t v)
{
    if (v < 0) {
        dcu_text_str(t, "-");
        dcu_text_u64(t, (uint64_t)0 - (uint64_t)v);
    } else {
        dcu_text_u64(t, (uint64_t)v);
    }
}

/* A datatype and an op by their values in dcuda_rank.h (dcuda_datatype_t:
 * INT32, INT64, FLOAT, DOUBLE; dcuda_op_t: SUM, MIN, MAX), which this
 * header does not include. */
DCU_FN_COLD const char *dcu_type_word(int type)
{
    return type == 0   ? "int32"
           : type == 1 ? "int64"
           : type == 2 ? "float"
           : type == 3 ? "double"
                       : "an unknown datatype";
}

DCU_FN_COLD const char *dcu_op_word(int op)
{
    return op == 0 ? "sum" : op == 1 ? "min" : op == 2 ? "max" : "an unknown op";
}

DCU_FN int dcu_call_reduces(int kind)
{
    return kind == DCUDA_CALL_REDUCE || kind == DCUDA_CALL_ALLREDUCE ||
           kind == DCUDA_CALL_REDUCE_SCATTER;
}

DCU_FN int dcu_call_rooted(int kind)
{
    return kind == DCUDA_CALL_BROADCAST || kind == DCUDA_CALL_REDUCE;
}

/* "dcuda_allreduce(16 x int32, sum)": the call and the arguments that
 * tell it from others. */
DCU_FN_COLD void dcu_call_describe(dcu_text_t *t, const uint64_t *w)
{
    const int kind = dcu_call_kind_of(w);
    dcu_text_str(t, dcu_call_name(kind));
    if (kind == DCUDA_CALL_NONE || kind == DCUDA_CALL_BARRIER || kind == DCUDA_CALL_FINISH ||
        kind == DCUDA_CALL_WIN_CREATE)
        return;
    dcu_text_str(t, "(");
    if (kind == DCUDA_CALL_WIN_FREE || kind == DCUDA_CALL_SPLIT) {
        dcu_text_str(t, "window ");
        dcu_text_u64(t, (uint64_t)dcu_call_slot_of(w));
    } else if (dcu_call_reduces(kind)) {
        dcu_text_u64(t, w[2]);
        dcu_text_str(t, " x ");
        dcu_text_str(t, dcu_type_word(dcu_call_type_of(w)));
        dcu_text_str(t, ", ");
        dcu_text_str(t, dcu_op_word(dcu_call_op_of(w)));
    } else {
        dcu_text_u64(t, w[2]);
        dcu_text_str(t, kind == DCUDA_CALL_BROADCAST ? " bytes" : " bytes a rank");
    }
    if (dcu_call_rooted(kind)) {
        dcu_text_str(t, ", root ");
        dcu_text_i64(t, dcu_call_root_of(w));
    }
    dcu_text_str(t, ")");
}

/* "WORLD", "DEVICE", "NODE", "communicator 5" */
DCU_FN_COLD void dcu_text_comm(dcu_text_t *t, int comm)
{
    if (comm >= 0 && comm <= DCU_COMM_NODE) {
        dcu_text_str(t, dcu_comm_name(comm));
        return;
    }
    dcu_text_str(t, "communicator ");
    dcu_text_i64(t, comm);
}

/* "rank 3" (of WORLD), "rank 3 of DEVICE" */
DCU_FN_COLD void dcu_text_rank(dcu_text_t *t, int rank, int comm)
{
    dcu_text_str(t, "rank ");
    dcu_text_i64(t, rank);
    if (comm != DCU_COMM_WORLD) {
        dcu_text_str(t, " of ");
        dcu_text_comm(t, comm);
    }
}

/* The first argument in which two records of one call (same kind and
 * number) differ, as "op max where rank 0 gives sum" needs it: its name,
 * and each side's value in text. 0 when none does. */
DCU_FN_COLD int dcu_call_diff(const uint64_t *a, const uint64_t *b, dcu_text_t *name,
                              dcu_text_t *va, dcu_text_t *vb)
{
    const int kind = dcu_call_kind_of(a);
    if (dcu_call_slot_of(a) != dcu_call_slot_of(b)) {
        dcu_text_str(name, "window");
        dcu_text_u64(va, (uint64_t)dcu_call_slot_of(a));
        dcu_text_u64(vb, (uint64_t)dcu_call_slot_of(b));
    } else if (dcu_call_comm_of(a) != dcu_call_comm_of(b)) {
        dcu_text_str(name, "communicator");
        dcu_text_str(va, dcu_comm_name(dcu_call_comm_of(a)));
        dcu_text_str(vb, dcu_comm_name(dcu_call_comm_of(b)));
    } else if (a[2] != b[2]) {
        dcu_text_str(name, dcu_call_reduces(kind) ? "count" : "size");
        dcu_text_u64(va, a[2]);
        dcu_text_u64(vb, b[2]);
    } else if (dcu_call_type_of(a) != dcu_call_type_of(b)) {
        dcu_text_str(name, "datatype");
        dcu_text_str(va, dcu_type_word(dcu_call_type_of(a)));
        dcu_text_str(vb, dcu_type_word(dcu_call_type_of(b)));
    } else if (dcu_call_op_of(a) != dcu_call_op_of(b)) {
        dcu_text_str(name, "op");
        dcu_text_str(va, dcu_op_word(dcu_call_op_of(a)));
        dcu_text_str(vb, dcu_op_word(dcu_call_op_of(b)));
    } else if (dcu_call_root_of(a) != dcu_call_root_of(b)) {
        dcu_text_str(name, "root");
        dcu_text_i64(va, dcu_call_root_of(a));
        dcu_text_i64(vb, dcu_call_root_of(b));
    } else if (a[3] != b[3]) {
        dcu_text_str(name, "offset");
        dcu_text_u64(va, a[3]);
        dcu_text_u64(vb, b[3]);
    } else {
        return 0;
    }
    return 1;
}

/* The mismatch between member `rank` of comm (its record `theirs`) and
 * me, in words: "rank 3 of WORLD calls dcuda_broadcast(64 bytes, root 1)
 * where rank 0 of WORLD calls dcuda_allreduce(16 x int32, sum) (call 5 on
 * WORLD)", or, for one call with an argument that differs,
 * "dcuda_allreduce, call 5 on WORLD: rank 3 of WORLD gives op max where
 * rank 0 of WORLD gives sum". */
DCU_FN_COLD void dcu_call_mismatch_text(dcu_text_t *t, int comm, int rank, const uint64_t *theirs,
                                        int me, const uint64_t *mine)
{
    char name[16], va[48], vb[48];
    dcu_text_t n = { name, 0, (int)sizeof name }, a = { va, 0, (int)sizeof va },
               b = { vb, 0, (int)sizeof vb };
    const uint32_t seq = dcu_call_seq_of(mine), their_seq = dcu_call_seq_of(theirs);
    if (seq == their_seq && dcu_call_kind_of(mine) == dcu_call_kind_of(theirs) &&
        dcu_call_diff(theirs, mine, &n, &a, &b)) {
        dcu_text_str(t, dcu_call_name(dcu_call_kind_of(mine)));
        dcu_text_str(t, ", call ");
        dcu_text_u64(t, seq);
        dcu_text_str(t, " on ");
        dcu_text_comm(t, comm);
        dcu_text_str(t, ": ");
        dcu_text_rank(t, rank, comm);
        dcu_text_str(t, " gives ");
        dcu_text_str(t, name);
        dcu_text_str(t, " ");
        dcu_text_str(t, va);
        dcu_text_str(t, " where ");
        dcu_text_rank(t, me, comm);
        dcu_text_str(t, " gives ");
        dcu_text_str(t, vb);
        return;
    }
    dcu_text_rank(t, rank, comm);
    if (their_seq == 0) {
        dcu_text_str(t, " has made no call on it");
    } else {
        dcu_text_str(t, their_seq == seq ? " calls " : " is at its call ");
        if (their_seq != seq) {
            dcu_text_u64(t, their_seq);
            dcu_text_str(t, ", ");
        }
        dcu_call_describe(t, theirs);
        if (their_seq == seq + 1u) {
            dcu_text_str(t, " (its call ");
            dcu_text_u64(t, seq);
            dcu_text_str(t, " was ");
            dcu_text_str(t, dcu_call_name(dcu_call_prev_of(theirs)));
            dcu_text_str(t, ")");
        }
    }
    dcu_text_str(t, " where ");
    dcu_text_rank(t, me, comm);
    dcu_text_str(t, " calls ");
    dcu_call_describe(t, mine);
    dcu_text_str(t, " (call ");
    dcu_text_u64(t, seq);
    dcu_text_str(t, " on ");
    dcu_text_comm(t, comm);
    dcu_text_str(t, ")");
}

/* Leader: reports that member `rank` of comm disagrees (its record
 * `theirs`) and ends the run in every process. */
DCU_FN_COLD dcuda_status_t dcu_call_mismatch(dcuda_state_t *st, int comm, int rank,
                                             const uint64_t *theirs, const char *call)
{
    char text[200];
    dcu_text_t t = { text, 0, (int)sizeof text };
    text[0] = '\0';
    dcu_call_mismatch_text(&t, comm, rank, theirs, dcu_comm_rank(st, comm), st->call);
    (void)call; /* named by the record: a split's exchange is a collective of its own */
    dcuda_status_t s =
        DCU_REPORT(st, DCUDA_ERR_MISMATCH, dcu_call_name(dcu_call_kind_of(st->call)), "%s", text);
    dcu_error_end_run(st->ctx, 1);
    st->ended = DCUDA_ERR_ABORTED;
    return s;
}

/* A record as stored (4 words), read afresh: another rank, GPU or the
 * proxy wrote it. */
DCU_FN void dcu_call_load(const dcuda_call_words_t *r, uint64_t *w)
{
    for (int i = 0; i < DCUDA_CALL_WORDS; i++)
        w[i] = dcu_ld_u64(&r->w[i]);
}

/* ---- mailboxes: records that came with a notification -------------------------------- */

/* Which boxes a wait checks once its notifications are counted: boxes
 * first .. first + n - 1 of communicator comm (0: none). */
DCU_FN uint32_t dcu_boxes(int comm, int first, int n)
{
    return (uint32_t)comm | (uint32_t)first << 8 | (uint32_t)n << 16;
}

/* A wait's check of the push slots of comm (impl/coll_push.h): those of
 * every other member, of the given parity. */
#define DCU_BOXES_PUSH 0xffu
DCU_FN uint32_t dcu_push_boxes(int comm, uint32_t parity)
{
    return (uint32_t)comm | DCU_BOXES_PUSH << 8 | (parity + 1u) << 16;
}

/* Who sent me what lies in box `box` of comm (I am `me` of `size`). */
DCU_FN int dcu_box_sender(int box, int me, int size)
{
    if (box == DCUDA_MAILBOX_PARENT)
        return me & (me - 1);
    if (box == DCUDA_MAILBOX_RIGHT)
        return (me + 1) % size;
    if (box == DCUDA_MAILBOX_ROOT)
        return 0;
    if (box >= DCUDA_MAILBOX_ALL_IN)
        return (me - (box - DCUDA_MAILBOX_ALL_IN + 1) % size + size) % size;
    return me + (1 << (box - DCUDA_MAILBOX_CHILD));
}

/* Leader, once the notifications that carried them are counted: the
 * records in `boxes` against mine. */
DCU_FN_COLD dcuda_status_t dcu_call_check_boxes(dcuda_state_t *st, uint32_t boxes, const char *call)
{
    const int comm = (int)(boxes & 0xffu), first = (int)((boxes >> 8) & 0xffu);
    const int n = (int)(boxes >> 16), me = dcu_comm_rank(st, comm), size = dcu_comm_size(st, comm);
    const dcuda_lib_part_t *mine = dcu_lib_of(st, st->device_rank);
    uint64_t w[DCUDA_CALL_WORDS];
    if (first == (int)DCU_BOXES_PUSH) { /* n is the parity + 1 */
        const uint64_t at = dcu_push_at(comm, st->world_size, dcu_node_size(st));
        for (int j = 0; j < size; j++) {
            const char *slot =
                (const char *)mine + at + ((uint64_t)j * 2u + (uint64_t)(n - 1)) * DCUDA_PUSH_SLOT;
            if (j == me)
                continue;
            dcu_call_load((const dcuda_call_words_t *)slot, w);
            if (!dcu_call_same(w, st->call))
                return dcu_call_mismatch(st, comm, j, w, call);
        }
        return DCUDA_OK;
    }
    for (int b = first; b < first + n; b++) {
        dcu_call_load(&mine->mailbox[comm][b], w);
        if (!dcu_call_same(w, st->call))
            return dcu_call_mismatch(st, comm, dcu_box_sender(b, me, size), w, call);
    }
    return DCUDA_OK;
}

#endif /* DCUDA_IMPL_AGREE_H */
