/*
 * Growing arrays, and the ranges of a table of starts.
 */
#include "array.h"

#include <stdlib.h>

#define DCU_ARRAY_FIRST_CAP 32

int dcu_array_room(void **array, int count, int *cap, size_t elem)
{
    if (count < *cap)
        return 1;
    int grown = *cap ? 2 * *cap : DCU_ARRAY_FIRST_CAP;
    void *m = realloc(*array, (size_t)grown * elem);
    if (!m)
        return 0;
    *array = m;
    *cap = grown;
    return 1;
}

int dcu_array_range_of(const int32_t *first, int count, int64_t value)
{
    int lo = 0, hi = count;
    if (count <= 0 || value < first[0] || value >= first[count])
        return -1;
    while (hi - lo > 1) { /* first[lo] <= value < first[hi] */
        int mid = lo + (hi - lo) / 2;
        if (value >= first[mid])
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
