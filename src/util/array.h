/*
 * Arrays: room for one more element, doubling; which range of a table of
 * ascending starts holds a value.
 */
#ifndef DCU_UTIL_ARRAY_H
#define DCU_UTIL_ARRAY_H

#include <stddef.h>
#include <stdint.h>

/* Makes room for element number `count` in *array (capacity *cap elements
 * of `elem` bytes), growing it; 0 when memory runs out (the array is then
 * unchanged). */
int dcu_array_room(void **array, int count, int *cap, size_t elem);

/* The i with first[i] <= value < first[i + 1] (first: count + 1 ascending
 * starts, as the processes' first WORLD ranks), or -1 when none has it. */
int dcu_array_range_of(const int32_t *first, int count, int64_t value);

#endif /* DCU_UTIL_ARRAY_H */
