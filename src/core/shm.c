/*
 * Shared memory that peer processes map: one memfd per allocation, mapped
 * by its owner and, through /proc/<owner pid>/fd/<fd>, by each peer. Used
 * for CPU ranks' memory and for GPU ranks that reach each other through
 * host memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host_internal.h"
#include "hostlog.h"

static size_t shm_bytes(uint64_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return size ? ((size_t)size + page - 1) / page * page : page;
}

dcuda_status_t dcuda_shm_alloc(size_t size, void **ptr, dcuda_export_t *ex)
{
    int fd = memfd_create("dcuda-mem", 0);
    void *p = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)shm_bytes(size)) == 0)
        p = mmap(NULL, shm_bytes(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        dcuda_hostlog_error("cannot allocate %zu bytes of shared memory: %s", size,
                            strerror(err));
        if (fd >= 0)
            close(fd);
        return err == ENOMEM || err == ENOSPC ? DCUDA_ERR_NO_MEMORY : DCUDA_ERR_SYSTEM;
    }
    ex->kind = DCUDA_EXPORT_MEMFD;
    ex->fd = fd;
    *ptr = p;
    return DCUDA_OK;
}

void dcuda_shm_free(void *ptr, const dcuda_export_t *ex)
{
    munmap(ptr, shm_bytes(ex->size));
    close(ex->fd);
}

dcuda_status_t dcuda_shm_import(int proc, const dcuda_export_t *ex, void **local)
{
    char path[64];
    pid_t pid = (pid_t)dcuda_procs_node()->procs[proc].pid;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, ex->fd);
    int fd = open(path, O_RDWR);
    void *p = fd < 0 ? MAP_FAILED
                     : mmap(NULL, shm_bytes(ex->size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (p == MAP_FAILED) {
        dcuda_hostlog_error("cannot map %llu bytes of process %d's memory (%s): %s",
                            (unsigned long long)ex->size, proc, path, strerror(err));
        return DCUDA_ERR_SYSTEM;
    }
    *local = p;
    return DCUDA_OK;
}

void dcuda_shm_unimport(void *local, uint64_t size) { munmap(local, shm_bytes(size)); }
