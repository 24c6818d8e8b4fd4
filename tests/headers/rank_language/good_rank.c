/* docs/rank-code.md: rank code in the common language of C11 and CUDA
 * C++: a helper with DCUDA_RANK_FN, statuses kept without enum arithmetic,
 * the user data cast from void *. Compiled as C11 and, with nvcc, -x cu. */
#include "dcuda/dcuda_rank.h"

typedef struct {
    double *values;
    int count;
} lang_data_t;

DCUDA_RANK_FN void scale_mine(lang_data_t *d, int rank)
{
    for (int i = dcuda_thread_index(); i < d->count; i += dcuda_thread_count())
        d->values[i] *= (double)(rank + 1);
    dcuda_rank_sync();
}

DCUDA_KERNEL(rank_language, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    void *data = NULL;
    int rank = 0;
    dcuda_status_t s = dcuda_rank_init(ctx, &st);
    if (s == DCUDA_OK)
        s = dcuda_get_data(&st, &data);
    if (s == DCUDA_OK)
        s = dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    if (s == DCUDA_OK)
        scale_mine((lang_data_t *)data, rank);
    (void)dcuda_rank_finish(&st);
}
