/*
 * Processes: whether another one has ended, read from /proc/<pid>/stat;
 * whether this one has initialised CUDA, asked of the driver library when
 * it is loaded (never loading it); whether the calling thread is main's
 * (on Linux its thread id is the process id); the cores it may run on.
 */
#include "proc.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int dcu_proc_ended(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re"); /* close-on-exec */
    if (!f)
        return errno == ENOENT || errno == ESRCH;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    /* "pid (name) S ...": the state follows the last parenthesis. */
    const char *close_paren = strrchr(text, ')');
    return close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

/* The driver's answer to cuCtxGetCurrent before cuInit. */
#define CUDA_ERROR_NOT_INITIALIZED 3

int dcu_proc_cuda_initialised(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return 0; /* never loaded: no CUDA call was made */
    int (*current)(void **) = NULL;
    *(void **)&current = dlsym(lib, "cuCtxGetCurrent");
    void *ctx = NULL;
    int initialised = current && current(&ctx) != CUDA_ERROR_NOT_INITIALIZED;
    dlclose(lib);
    return initialised;
}

int dcu_proc_on_main_thread(void) { return (pid_t)syscall(SYS_gettid) == getpid(); }

int dcu_proc_cores(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}
