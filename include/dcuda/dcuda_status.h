/*
 * dcuda status codes.
 *
 * One status type for the whole library, host and rank side alike: 0 is
 * success, errors are negative. The list below is the single source of the
 * enum, its names and its messages (dcuda_status_name/_string in the host
 * library). This header is self-contained and compiles as C11, C++ and CUDA.
 */
#ifndef DCUDA_STATUS_H
#define DCUDA_STATUS_H

/* X(name, value, message) */
/* clang-format off */
#define DCUDA_STATUS_MAP(X)                                                              \
    X(OK, 0, "success")                                                                  \
    X(ERR_INVALID_ARG, -1, "invalid argument")                                           \
    X(ERR_NOT_INITIALIZED, -2, "call before initialisation")                             \
    X(ERR_NO_MEMORY, -3, "out of memory")                                                \
    X(ERR_COMM, -4, "invalid communicator")                                              \
    X(ERR_RANK, -5, "rank out of range for the communicator")                            \
    X(ERR_TAG, -6, "tag out of range 0..255")                                            \
    X(ERR_COUNT, -7, "notification count must be at least 1")                            \
    X(ERR_WIN, -8, "invalid or freed window")                                            \
    X(ERR_WIN_COMM, -9, "window belongs to another communicator")                        \
    X(ERR_WIN_LIMIT, -10, "too many windows on the communicator")                        \
    X(ERR_BOUNDS, -11, "access outside the target window")                               \
    X(ERR_OVERFLOW, -12, "offset plus size overflows")                                   \
    X(ERR_SOURCE, -13, "source buffer not inside a window of the calling rank")          \
    X(ERR_OVERLAP, -14, "source and target overlap partially")                           \
    X(ERR_TIMER, -15, "timer calls unbalanced or too many timers")                       \
    X(ERR_TIMEOUT, -16, "wait cancelled by the watchdog")                                \
    X(ERR_SETTING, -17, "invalid setting")                                               \
    X(ERR_BACKEND, -18, "backend unavailable or failed")                                 \
    X(ERR_RANK_FAILED, -19, "a rank reported an error")                                  \
    X(ERR_SYSTEM, -20, "operating system call failed")                                   \
    X(ERR_UNSUPPORTED, -21, "operation not supported by this build")                    \
    X(ERR_PEER, -22, "a peer process died or left")                                      \
    X(ERR_UNREACHABLE, -23, "target memory cannot be reached from this process")        \
    X(ERR_ABORTED, -24, "the run was ended by an earlier error")                         \
    X(ERR_RANK_LEFT, -25, "a rank left the kernel without dcuda_rank_finish")             \
    X(ERR_IN_PROGRESS, -26, "a run is in flight (dcuda_host_run_start, or another thread)")   \
    X(ERR_DEADLOCK, -27, "deadlock: every rank is blocked and nothing is in flight")       \
    X(ERR_COMM_LIMIT, -28, "too many live communicators")                              \
    X(ERR_MISMATCH, -29, "ranks disagree on a collective call")                          \
    X(ERR_CANCELED, -30, "the task was cancelled before it ran")
/* clang-format on */

/* DCUDA_<name> = value for each entry of DCUDA_STATUS_MAP: DCUDA_OK (0)
 * and the errors (negative). */
typedef enum dcuda_status {
#define DCUDA_STATUS_ENUM_(name, value, msg) DCUDA_##name = (value),
    DCUDA_STATUS_MAP(DCUDA_STATUS_ENUM_)
#undef DCUDA_STATUS_ENUM_
} dcuda_status_t;

/* What libdcuda exports: its public functions and nothing else. */
#if defined(__GNUC__)
#define DCUDA_API __attribute__((visibility("default")))
#else
#define DCUDA_API
#endif

/* Host functions (libdcuda): "DCUDA_ERR_TAG" and "tag out of range 0..255". */
#if defined(__cplusplus)
extern "C" {
#endif
DCUDA_API const char *dcuda_status_name(dcuda_status_t status);
DCUDA_API const char *dcuda_status_string(dcuda_status_t status);
#if defined(__cplusplus)
}
#endif

#endif /* DCUDA_STATUS_H */
