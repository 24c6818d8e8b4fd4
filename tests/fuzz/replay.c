/*
 * The replay driver of a fuzz harness (see fuzz.h), for builds without
 * libFuzzer: runs the harness's seeds, then a fixed number of deterministic
 * pseudo-random mutations of them (bit flips, interesting values, inserted
 * and deleted ranges, tokens, splices), keeping some mutants to mutate
 * further. No coverage feedback: it is the bounded, repeatable part of the
 * fuzzing that every build's tests run.
 *
 *   dcuda_fuzz_<name>_replay [--rounds N] [FILE|DIR ...]
 *       also runs the given inputs (a directory: each file in it) first;
 *   dcuda_fuzz_<name>_replay --write-seeds DIR [--write-dict FILE]
 *       writes the seeds (and the tokens as a libFuzzer dictionary).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#define REPLAY_MAX_INPUT 4096 /* bytes of one input */
#define REPLAY_POOL 64        /* inputs kept to mutate */

typedef struct input {
    uint8_t *data;
    size_t size;
} input_t;

typedef struct pool {
    input_t in[REPLAY_POOL];
    int count, seeds; /* the first `seeds` are never replaced */
} pool_t;

/* The input being run, for fuzz_replay_dump. */
static const uint8_t *current;
static size_t current_size;

void fuzz_replay_dump(void)
{
    fprintf(stderr, "     input (%zu bytes):", current_size);
    for (size_t i = 0; i < current_size; i++)
        fprintf(stderr, "%s%02x", i % 32 ? "" : "\n     ", current[i]);
    fputc('\n', stderr);
}

/* Runs one input from a buffer of exactly its size, so that a sanitizer
 * sees any read past its end. */
static void run_one(const uint8_t *data, size_t size)
{
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact) {
        fprintf(stderr, "replay: out of memory\n");
        exit(1);
    }
    memcpy(exact, data, size);
    current = exact;
    current_size = size;
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
}

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

static void pool_add(void *arg, const void *data, size_t size)
{
    pool_t *p = arg;
    input_t *slot;
    size = size < REPLAY_MAX_INPUT ? size : REPLAY_MAX_INPUT;
    if (p->count < REPLAY_POOL)
        slot = &p->in[p->count++];
    else
        slot = &p->in[p->seeds + (int)below((size_t)(REPLAY_POOL - p->seeds))];
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) {
        fprintf(stderr, "replay: out of memory\n");
        exit(1);
    }
    memcpy(copy, data, size);
    free(slot->data);
    slot->data = copy;
    slot->size = size;
}

/* Values that sit at the edges of the fields decoders check. */
static uint64_t interesting(void)
{
    static const uint64_t v[] = { 0,
                                  1,
                                  2,
                                  3,
                                  4,
                                  7,
                                  8,
                                  15,
                                  16,
                                  63,
                                  64,
                                  127,
                                  128,
                                  224,
                                  255,
                                  256,
                                  257,
                                  1023,
                                  1024,
                                  4096,
                                  32768,
                                  65535,
                                  65536,
                                  0x7fffffff,
                                  0x80000000,
                                  0xffffffff,
                                  0x100000000ull,
                                  0x7fffffffffffffffull,
                                  0x8000000000000000ull,
                                  0xffffffffffffffffull };
    uint64_t x = v[below(sizeof v / sizeof v[0])];
    return rng() % 4 == 0 ? x - 1 : x;
}

/* Where a field of w bytes may start in an input of `size` bytes: most
 * often aligned to w, as the fields of the layouts are. */
static size_t field_at(size_t size, size_t w)
{
    size_t at = below(size - w + 1);
    return rng() % 4 ? at - at % w : at;
}

static void put_le(uint8_t *p, size_t w, uint64_t v)
{
    for (size_t i = 0; i < w; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t w)
{
    uint64_t v = 0;
    for (size_t i = 0; i < w; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Inserts a token, or writes it over the input. */
static void put_token(uint8_t *buf, size_t *n)
{
    size_t count = 0, size = *n;
    while (fuzz_tokens[count])
        count++;
    if (!count)
        return;
    const char *tok = fuzz_tokens[below(count)];
    size_t len = strlen(tok), at = below(size + 1);
    if (rng() % 2 && size + len <= REPLAY_MAX_INPUT) {
        memmove(buf + at + len, buf + at, size - at);
        *n = size + len;
    } else if (at + len > size) {
        return;
    }
    memcpy(buf + at, tok, len);
}

/* One mutation that keeps the size of buf (size bytes). */
static void mutate_in_place(uint8_t *buf, size_t size)
{
    size_t w = (size_t)1 << below(4);
    if (!size)
        return;
    switch (rng() % 5) {
    case 0: /* flip a bit */
        buf[below(size)] ^= (uint8_t)(1u << below(8));
        break;
    case 1: /* a random byte */
        buf[below(size)] = (uint8_t)rng();
        break;
    case 2: /* an interesting value in a field of 1, 2, 4 or 8 bytes */
        if (size >= w)
            put_le(buf + field_at(size, w), w, interesting());
        break;
    case 3: /* a field plus or minus a little */
        if (size >= w) {
            uint8_t *f = buf + field_at(size, w);
            put_le(f, w, get_le(f, w) + (uint64_t)((int64_t)below(33) - 16));
        }
        break;
    default: { /* copy a range within */
        size_t from = below(size), to = below(size), len = 1 + below(16);
        if (from + len <= size && to + len <= size)
            memmove(buf + to, buf + from, len);
        break;
    }
    }
}

/* One mutation of buf (size *n, room REPLAY_MAX_INPUT). */
static void mutate_once(uint8_t *buf, size_t *n, const pool_t *p)
{
    size_t size = *n;
    switch (rng() % 8) {
    case 0: { /* delete a range */
        size_t at = below(size), len = 1 + below(size - at < 16 ? size - at : 16);
        if (size) {
            memmove(buf + at, buf + at + len, size - at - len);
            *n = size - len;
        }
        break;
    }
    case 1: { /* insert random bytes */
        size_t at = below(size + 1), len = 1 + below(8);
        if (size + len <= REPLAY_MAX_INPUT) {
            memmove(buf + at + len, buf + at, size - at);
            for (size_t i = 0; i < len; i++)
                buf[at + i] = (uint8_t)rng();
            *n = size + len;
        }
        break;
    }
    case 2:
        put_token(buf, n);
        break;
    case 3: { /* splice: the tail of another input */
        const input_t *o = &p->in[below((size_t)p->count)];
        size_t at = below(size + 1), from = below(o->size + 1), len = o->size - from;
        if (at + len > REPLAY_MAX_INPUT)
            len = REPLAY_MAX_INPUT - at;
        memcpy(buf + at, o->data + from, len);
        *n = at + len;
        break;
    }
    case 4: /* cut */
        *n = below(size + 1);
        break;
    default:
        mutate_in_place(buf, size);
        break;
    }
}

/* Runs a file, or each file of a directory. The number of inputs run. */
static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        struct dirent *e;
        int runs = 0;
        while (dir && (e = readdir(dir)) != NULL) {
            char sub[4096];
            if (e->d_name[0] == '.')
                continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            runs += run_path(sub);
        }
        if (dir)
            closedir(dir);
        return runs;
    }
    FILE *f = fopen(path, "rb");
    static uint8_t buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fclose(f);
    run_one(buf, n);
    return 1;
}

typedef struct seed_writer {
    const char *dir;
    int count;
} seed_writer_t;

static void write_seed(void *arg, const void *data, size_t size)
{
    seed_writer_t *w = arg;
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%02d", w->dir, w->count++);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "replay: cannot write %s\n", path);
        exit(1);
    }
}

/* A libFuzzer dictionary: one "token" a line, escaped. */
static void write_dict(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "replay: cannot write %s\n", path);
        exit(1);
    }
    for (int i = 0; fuzz_tokens[i]; i++) {
        fputc('"', f);
        for (const unsigned char *c = (const unsigned char *)fuzz_tokens[i]; *c; c++)
            if (*c < 0x20 || *c >= 0x7f || *c == '"' || *c == '\\')
                fprintf(f, "\\x%02x", *c);
            else
                fputc(*c, f);
        fputs("\"\n", f);
    }
    fclose(f);
}

static int usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [--rounds N] [FILE|DIR ...]\n"
            "       %s [--write-seeds DIR] [--write-dict FILE]\n",
            prog, prog);
    return 2;
}

/* Seeds and mutations; the pool is freed at the end. */
static void run_mutations(unsigned rounds, pool_t *pool)
{
    static uint8_t buf[REPLAY_MAX_INPUT];
    fuzz_seeds(pool_add, pool);
    pool->seeds = pool->count;
    for (int i = 0; i < pool->seeds; i++)
        run_one(pool->in[i].data, pool->in[i].size);
    for (unsigned r = 0; r < rounds; r++) {
        const input_t *base = &pool->in[below((size_t)pool->count)];
        size_t n = base->size;
        memcpy(buf, base->data, n);
        for (int m = 1 + (int)below(4); m > 0; m--)
            mutate_once(buf, &n, pool);
        run_one(buf, n);
        if (rng() % 8 == 0)
            pool_add(pool, buf, n);
    }
    for (int i = 0; i < pool->count; i++)
        free(pool->in[i].data);
}

int main(int argc, char **argv)
{
    unsigned rounds = fuzz_replay_rounds;
    const char *seed_dir = NULL, *dict = NULL;
    int files = 0, a = 1;
    static pool_t pool;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a += 2) {
        if (a + 1 >= argc)
            return usage(argv[0]);
        if (strcmp(argv[a], "--write-seeds") == 0)
            seed_dir = argv[a + 1];
        else if (strcmp(argv[a], "--write-dict") == 0)
            dict = argv[a + 1];
        else if (strcmp(argv[a], "--rounds") == 0)
            rounds = (unsigned)strtoul(argv[a + 1], NULL, 10);
        else
            return usage(argv[0]);
    }
    if (seed_dir || dict) {
        seed_writer_t w = { seed_dir, 0 };
        if (seed_dir)
            fuzz_seeds(write_seed, &w);
        if (dict)
            write_dict(dict);
        return 0;
    }
    for (; a < argc; a++)
        files += run_path(argv[a]);
    run_mutations(rounds, &pool);
    printf("fuzz %s: %d given inputs, %d seeds and %u mutations ran, every check held\n", fuzz_name,
           files, pool.seeds, rounds);
    return 0;
}
