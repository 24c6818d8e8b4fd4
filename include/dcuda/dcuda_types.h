/*
 * The rank API's names that the rank engine uses too, apart from the calls
 * (dcuda_rank.h) so that the engine's headers include them without it:
 * the communicators' handles, the element types and element-wise
 * operations of the reducing collectives, and the rooms the collectives
 * need in every part, which host code and rank code both compute. C11,
 * C++ and CUDA.
 */
#ifndef DCUDA_TYPES_H
#define DCUDA_TYPES_H

#include <stddef.h>

/* Communicators: all ranks, the ranks of my device, the ranks of my node
 * (of its processes, in process order), and those dcuda_comm_split makes
 * (ids 3 to 7). DCUDA_COMM_NULL: no communicator (a split's answer to a
 * rank that gave colour DCUDA_UNDEFINED). Every one takes windows,
 * notifications, barriers and the collectives. */
typedef int dcuda_comm_t;
#define DCUDA_COMM_WORLD 0
#define DCUDA_COMM_DEVICE 1
#define DCUDA_COMM_NODE 2
#define DCUDA_COMM_NULL (-1)
#define DCUDA_UNDEFINED (-1)

/* The element types of dcuda_allreduce, dcuda_reduce and
 * dcuda_reduce_scatter: 32- and 64-bit signed integers, float and double
 * (dcuda_datatype_bytes gives their sizes). */
typedef enum dcuda_datatype {
    DCUDA_INT32 = 0,
    DCUDA_INT64 = 1,
    DCUDA_FLOAT = 2,
    DCUDA_DOUBLE = 3
} dcuda_datatype_t;

/* Their element-wise operations: sum, minimum and maximum. */
typedef enum dcuda_op { DCUDA_SUM = 0, DCUDA_MIN = 1, DCUDA_MAX = 2 } dcuda_op_t;

/* The operations of dcuda_atomic on a target's 32- or 64-bit unsigned
 * word: add `operand` (modulo 2^32 or 2^64), store `operand`, or store
 * `operand` where the word equals `compare`; each returns the word's
 * value before. */
typedef enum dcuda_atomic_op {
    DCUDA_ATOMIC_FETCH_ADD = 0,
    DCUDA_ATOMIC_SWAP = 1,
    DCUDA_ATOMIC_COMPARE_SWAP = 2
} dcuda_atomic_op_t;

/* The helpers below, which host code and rank code both call (on a GPU:
 * __host__ __device__). */
#if defined(__CUDACC__)
#define DCUDA_HOST_RANK_FN static inline __host__ __device__
#else
#define DCUDA_HOST_RANK_FN static inline
#endif

/* ceil(log2(n)) for n >= 1 (0 for n <= 1). */
DCUDA_HOST_RANK_FN int dcuda_ceil_log2(int n)
{
    int k = 0;
    while (k < 31 && (1 << k) < n)
        k++;
    return k;
}

/* Bytes of one element of type (0 for none). */
DCUDA_HOST_RANK_FN size_t dcuda_datatype_bytes(dcuda_datatype_t type)
{
    return type == DCUDA_INT32 || type == DCUDA_FLOAT    ? 4u
           : type == DCUDA_INT64 || type == DCUDA_DOUBLE ? 8u
                                                         : 0u;
}

/* Bytes from its offset that dcuda_allreduce needs in every part, on a
 * communicator of comm_size ranks: count elements of type, and
 * ceil(log2(comm_size)) times as many for scratch (0 for an unknown type). */
DCUDA_HOST_RANK_FN size_t dcuda_allreduce_room(int comm_size, size_t count, dcuda_datatype_t type)
{
    return count * dcuda_datatype_bytes(type) * (1u + (size_t)dcuda_ceil_log2(comm_size));
}

/* Bytes from its offset that dcuda_reduce_scatter needs in every part: the
 * comm_size * count elements of type, and scratch as an allreduce's. */
DCUDA_HOST_RANK_FN size_t dcuda_reduce_scatter_room(int comm_size, size_t count,
                                                    dcuda_datatype_t type)
{
    return dcuda_allreduce_room(comm_size, count * (size_t)comm_size, type);
}

/* Bytes from its offset that dcuda_comm_split needs in every part, on a
 * parent of parent_size ranks: 16 a rank. */
DCUDA_HOST_RANK_FN size_t dcuda_comm_split_room(int parent_size)
{
    return 16u * (size_t)(parent_size > 0 ? parent_size : 0);
}

/* Bytes from its offset that dcuda_alltoall needs in every part: the
 * blocks sent and the blocks received, comm_size of size bytes each. */
DCUDA_HOST_RANK_FN size_t dcuda_alltoall_room(int comm_size, size_t size)
{
    return 2u * (size_t)comm_size * size;
}

#endif /* DCUDA_TYPES_H */
