/*
 * Shared memory between the processes of a node: memfds that a peer opens
 * through /proc/<pid>/fd. Every descriptor is close-on-exec (a program the
 * application starts does not inherit the job's memory), and a memfd is
 * sealed at its size, so no holder can shrink it under the others' mappings
 * (which would end them with SIGBUS) or grow it.
 */
#ifndef DCU_UTIL_MEMFD_H
#define DCU_UTIL_MEMFD_H

#include <stddef.h>
#include <sys/types.h>

/* A memfd of `size` bytes (zero-filled), sealed; -1 with errno on failure. */
int dcu_memfd_create(const char *name, size_t size);
/* Opens descriptor `fd` of process `pid` read-write; -1 with errno. */
int dcu_memfd_open_peer(pid_t pid, int fd, char *path, size_t path_size);

#endif /* DCU_UTIL_MEMFD_H */
