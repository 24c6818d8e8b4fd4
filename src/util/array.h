/*
 * Growing arrays: room for one more element, doubling.
 */
#ifndef DCU_UTIL_ARRAY_H
#define DCU_UTIL_ARRAY_H

#include <stddef.h>

/* Makes room for element number `count` in *array (capacity *cap elements
 * of `elem` bytes), growing it; 0 when memory runs out (the array is then
 * unchanged). */
int dcu_array_room(void **array, int count, int *cap, size_t elem);

#endif /* DCU_UTIL_ARRAY_H */
