/*
 * Rank code of the particle case study, written once for CPU and GPU ranks.
 * Each rank moves the particles of its segments (particles.h) and talks
 * only to the ranks owning the segments next to its range: one message to
 * each neighbour per step, as soon as its own step is done, with no
 * barrier of the device or of WORLD.
 *
 * A message to the left neighbour carries my first segment as the step
 * left it (the neighbour's halo) and the particles that moved from it into
 * the neighbour's last segment (which the neighbour appends to that
 * segment). The sender keeps its own copy of those movers and adds them to
 * its view of the neighbour's segment, so both sides see the same
 * particles in it. That needs every range to span at least 2 segments: a
 * boundary segment then receives movers from one other rank only.
 *
 * Why two parities and the waits suffice: step k reads parity k%2 and
 * writes parity (k+1)%2, whose in-messages the neighbours fill at the end
 * of their step k. A rank starts step k+1 only after both neighbours ended
 * step k, so it is at most one step ahead of them: its message of parity p
 * lands after the neighbour read the last one of parity p (two steps
 * before), and the neighbour's notification proves my earlier put of the
 * same parity left its source, which I overwrite only after that.
 */
#include "dcuda/dcuda_rank.h"
#include "particles.h"

/* A rank's view of its part. */
typedef struct view {
    char *part;
    int n, cap, first; /* segments, their capacity, my first segment */
    int left, right;   /* neighbour ranks, -1 where none */
} view_t;

DCUDA_RANK_FN int64_t *counts(const view_t *v, int p)
{
    return (int64_t *)(v->part + pt_counts_at(v->n, v->cap, p));
}

DCUDA_RANK_FN pt_particle_t *segment(const view_t *v, int p, int i)
{
    return (pt_particle_t *)(v->part + pt_segment_at(v->n, v->cap, p, i));
}

DCUDA_RANK_FN int64_t *status(const view_t *v)
{
    return (int64_t *)(v->part + pt_status_at(v->n, v->cap));
}

/* The segments whose particles act on those of my segment i (parity q):
 * mine next to it, or at the ends of my range the neighbour's boundary
 * segment as it sent it plus what I moved into it. Returns their count. */
DCUDA_RANK_FN int neighbourhood(const view_t *v, int q, int i, pt_span_t *s)
{
    int count = 0;
    for (int side = -1; side <= 1; side++) {
        int j = i + side, which = side < 0 ? PT_IN_LEFT : PT_IN_RIGHT;
        int neighbour = side < 0 ? v->left : v->right;
        if (j >= 0 && j < v->n) {
            s[count].p = segment(v, q, j);
            s[count++].n = counts(v, q)[j];
        } else if (neighbour >= 0) {
            s[count].p = pt_msg_particles(v->part, v->n, v->cap, q, which);
            s[count++].n = pt_msg_counts(v->part, v->n, v->cap, q, which)[0];
            s[count].p = pt_msg_particles(v->part, v->n, v->cap, q, which - 2) + v->cap;
            s[count++].n = pt_msg_counts(v->part, v->n, v->cap, q, which - 2)[1];
        }
    }
    return count;
}

/* Where particles moving from my segment i into segment i + d - 1 go (d in
 * 0..2): my segment, or an out-message's movers; *fill counts them. */
DCUDA_RANK_FN pt_particle_t *destination(const view_t *v, int p, int i, int d, int64_t **fill)
{
    int j = i + d - 1;
    if (j >= 0 && j < v->n) {
        *fill = counts(v, p) + j;
        return segment(v, p, j);
    }
    int which = j < 0 ? PT_OUT_LEFT : PT_OUT_RIGHT;
    *fill = pt_msg_counts(v->part, v->n, v->cap, p, which) + 1;
    return pt_msg_particles(v->part, v->n, v->cap, p, which) + v->cap;
}

/* Moves the new states in `moved` (count of them, from my segment i) to
 * their segments in parity p, keeping their order: each thread takes a
 * contiguous chunk, the chunks' counts per destination are summed in
 * order, then every thread writes its chunk. cnt: 3 x threads words. */
DCUDA_RANK_FN void scatter(const view_t *v, int h, int p, int i, const pt_particle_t *moved,
                           int64_t count, int64_t *cnt)
{
    int t = dcuda_thread_index(), threads = dcuda_thread_count();
    int64_t chunk = (count + threads - 1) / threads, lo = t * chunk;
    int64_t hi = lo + chunk < count ? lo + chunk : count, mine[3] = { 0, 0, 0 };
    int base = v->first + i - 1;
    for (int64_t j = lo; j < hi; j++)
        mine[pt_cell(moved[j].y, h) - base]++;
    for (int d = 0; d < 3; d++)
        cnt[d * threads + t] = mine[d];
    dcuda_rank_sync();
    for (int d = t; d < 3; d += threads) { /* where each chunk's particles for d start */
        int64_t *fill, at;
        destination(v, p, i, d, &fill);
        at = *fill;
        for (int c = 0; c < threads; c++) {
            int64_t n = cnt[d * threads + c];
            cnt[d * threads + c] = at;
            at += n;
        }
        if (at > v->cap)
            *status(v) = 1;
        *fill = at < v->cap ? at : v->cap;
    }
    dcuda_rank_sync();
    for (int64_t j = lo; j < hi; j++) {
        int d = pt_cell(moved[j].y, h) - base;
        int64_t *fill, at = cnt[d * threads + t]++;
        pt_particle_t *dst = destination(v, p, i, d, &fill);
        if (at < v->cap)
            dst[at] = moved[j];
    }
    dcuda_rank_sync();
}

/* Step k of my segments: parity q to parity p = 1 - q. */
DCUDA_RANK_FN void step(const view_t *v, const pt_data_t *d, int q, int64_t *cnt)
{
    int p = 1 - q, t = dcuda_thread_index(), threads = dcuda_thread_count();
    pt_particle_t *moved = (pt_particle_t *)(v->part + pt_scratch_at(v->n, v->cap));
    if (t == 0) {
        for (int i = 0; i < v->n; i++)
            counts(v, p)[i] = 0;
        pt_msg_counts(v->part, v->n, v->cap, p, PT_OUT_LEFT)[1] = 0;
        pt_msg_counts(v->part, v->n, v->cap, p, PT_OUT_RIGHT)[1] = 0;
    }
    for (int i = 0; i < v->n; i++) {
        pt_span_t s[5];
        int spans = neighbourhood(v, q, i, s);
        const pt_particle_t *mine = segment(v, q, i);
        int64_t n = counts(v, q)[i];
        for (int64_t j = t; j < n; j += threads)
            moved[j] = pt_step(mine + j, s, spans, d->w, d->h);
        dcuda_rank_sync();
        scatter(v, d->h, p, i, moved, n, cnt);
    }
}

/* Sends my boundary segment (parity p) and what moved out of my range on
 * that side to the neighbour on `side` (PT_OUT_LEFT or PT_OUT_RIGHT). */
DCUDA_RANK_FN void send(dcuda_state_t *st, dcuda_win_t win, const view_t *v, const pt_data_t *d,
                        int p, int side)
{
    int target = side == PT_OUT_LEFT ? v->left : v->right;
    int i = side == PT_OUT_LEFT ? 0 : v->n - 1,
        which = side == PT_OUT_LEFT ? PT_IN_RIGHT : PT_IN_LEFT;
    int64_t *c = pt_msg_counts(v->part, v->n, v->cap, p, side), nb = counts(v, p)[i];
    pt_particle_t *out = pt_msg_particles(v->part, v->n, v->cap, p, side);
    const pt_particle_t *boundary = segment(v, p, i);
    for (int64_t j = dcuda_thread_index(); j < nb; j += dcuda_thread_count())
        out[j] = boundary[j];
    if (dcuda_thread_index() == 0)
        c[0] = nb;
    dcuda_rank_sync();
    int tn = pt_segments(d, target);
    size_t at = pt_msg_at(tn, d->cap, p, which), head = 2 * sizeof(int64_t);
    size_t size = sizeof(pt_particle_t);
    dcuda_put(st, win, target, at, head + (size_t)nb * size, c);
    dcuda_put_notify(st, win, target, at + head + (size_t)d->cap * size, (size_t)c[1] * size,
                     out + d->cap, 2 * p + (which == PT_IN_RIGHT));
}

/* Appends what the neighbours moved into my boundary segments (parity q). */
DCUDA_RANK_FN void take_movers(const view_t *v, int q)
{
    for (int side = 0; side < 2; side++) {
        if ((side == 0 ? v->left : v->right) < 0)
            continue;
        int i = side == 0 ? 0 : v->n - 1, which = side == 0 ? PT_IN_LEFT : PT_IN_RIGHT;
        int64_t nd = pt_msg_counts(v->part, v->n, v->cap, q, which)[1], base = counts(v, q)[i];
        const pt_particle_t *in = pt_msg_particles(v->part, v->n, v->cap, q, which) + v->cap;
        pt_particle_t *seg = segment(v, q, i);
        for (int64_t j = dcuda_thread_index(); j < nd && base + j < v->cap;
             j += dcuda_thread_count())
            seg[base + j] = in[j];
        dcuda_rank_sync();
        if (dcuda_thread_index() == 0) {
            if (base + nd > v->cap)
                *status(v) = 1;
            counts(v, q)[i] = base + nd < v->cap ? base + nd : v->cap;
        }
        dcuda_rank_sync();
    }
}

DCUDA_KERNEL(particles, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED int64_t cnt[3 * PT_THREADS];
    int rank, world;
    pt_data_t *d;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &world);
    dcuda_get_data(&st, (void **)&d);
    view_t v;
    v.n = pt_segments(d, rank);
    v.cap = d->cap;
    v.first = pt_first_segment(d, rank);
    v.part = d->mem + pt_rank_offset(d, rank);
    v.left = v.n && rank > 0 ? rank - 1 : -1;
    v.right = v.n && rank + 1 < d->active ? rank + 1 : -1;
    /* My window: my whole part (empty without segments); what I send lies
     * in it, as puts require of their source. */
    dcuda_win_create(&st, DCUDA_COMM_WORLD, v.part, pt_part_bytes(v.n, v.cap), &win);
    dcuda_start_cpu_timer(&st);

    for (int k = 0; v.n && k <= d->iters; k++) {
        int q = k % 2, p = 1 - q;
        if (k > 0 && v.left >= 0)
            dcuda_wait_notifications(&st, 2 * q, 1);
        if (k > 0 && v.right >= 0)
            dcuda_wait_notifications(&st, 2 * q + 1, 1);
        dcuda_rank_sync(); /* the messages seen by all threads */
        take_movers(&v, q);
        if (k == d->iters)
            break;
        step(&v, d, q, cnt);
        if (v.left >= 0)
            send(&st, win, &v, d, p, PT_OUT_LEFT);
        if (v.right >= 0)
            send(&st, win, &v, d, p, PT_OUT_RIGHT);
    }

    dcuda_stop_cpu_timer(&st);
    /* Every message to me was waited for: none is in flight when the
     * window goes. Errors of any call are reported on the host. */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
