/*
 * Growing arrays.
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
