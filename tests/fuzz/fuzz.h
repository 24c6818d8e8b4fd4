/*
 * Shared by the fuzz harnesses of tests/fuzz. Each harness feeds bytes to
 * one decoder of outside data through LLVMFuzzerTestOneInput and checks
 * what comes out against its own reading of the format; it also builds a
 * few valid inputs (its seeds) and names tokens worth inserting. The same
 * file is linked either with libFuzzer (clang, DCUDA_FUZZ=ON) or with
 * replay.c, a plain driver that runs the seeds and a fixed number of
 * deterministic mutations of them in every build.
 *
 * A broken property is reported by FUZZ_CHECK: a line saying what broke,
 * then abort(), which both drivers treat as a crash (libFuzzer keeps the
 * input; the replay driver prints it in hex first).
 */
#ifndef DCUDA_TESTS_FUZZ_H
#define DCUDA_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The harness: one input. Returns 0 (libFuzzer's convention). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's seeds: emit(arg, bytes, size) once for each. */
typedef void (*fuzz_emit_fn)(void *arg, const void *data, size_t size);
void fuzz_seeds(fuzz_emit_fn emit, void *arg);

/* The harness's tokens (NULL-terminated): text the replay driver inserts
 * into inputs and writes as a libFuzzer dictionary. */
extern const char *const fuzz_tokens[];

/* The harness's name, and how many mutations the replay driver runs (a
 * second or two under the sanitizers). */
extern const char fuzz_name[];
extern const unsigned fuzz_replay_rounds;

/* Defined by the replay driver only: prints the input being run. */
void fuzz_replay_dump(void) __attribute__((weak));

static inline void fuzz_fail(const char *file, int line, const char *cond)
{
    fprintf(stderr, "FUZZ FAIL %s:%d: %s\n", file, line, cond);
}

/* FUZZ_CHECK(cond, printf-format, args...): ends the program when cond is
 * false, after saying what broke. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fuzz_fail(__FILE__, __LINE__, #cond);                                                  \
            fprintf(stderr, "     ");                                                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            if (fuzz_replay_dump)                                                                  \
                fuzz_replay_dump();                                                                \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Reads little-endian fields from an input, zero past its end. */
typedef struct fuzz_reader {
    const uint8_t *data;
    size_t size, at;
} fuzz_reader_t;

static inline uint64_t fuzz_read(fuzz_reader_t *r, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++, r->at++)
        if (r->at < r->size)
            v |= (uint64_t)r->data[r->at] << (8 * i);
    return v;
}

#endif /* DCUDA_TESTS_FUZZ_H */
