/*
 * The host's formatting of log lines that GPU ranks ship as a format and
 * typed arguments (src/util/logfmt.h): dcuda_test_logfmt <case>.
 *  valid: exact outputs of valid formats, and cut to every buffer size;
 *  refused: formats that write memory (%n), mismatch their arguments or
 *    are not plain conversions print the raw format and a refusal marker;
 *  fuzz: formats built at random from valid and bad pieces: the output is
 *    what the C library makes of the valid pieces (this file's own reading),
 *    or the raw format and the marker when a bad piece is in it; formats of
 *    random bytes never write outside the buffer. Deterministic, under a
 *    second.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util/logfmt.h"

#define MARKER " [dcuda: log format refused at "
#define FUZZ_ROUNDS 20000

/* ---- building entries ---------------------------------------------------------- */

typedef struct entry_builder {
    dcuda_log_entry_t e;
    size_t len; /* text used: the format, its NUL, then strings */
} entry_builder_t;

static void eb_start(entry_builder_t *b, const char *fmt)
{
    memset(b, 0, sizeof *b);
    b->e.kind = DCUDA_LOG_FORMAT_KIND;
    b->len = strlen(fmt) + 1;
    memcpy(b->e.text, fmt, b->len);
}

static void eb_arg(entry_builder_t *b, unsigned type, uint64_t bits)
{
    int i = b->e.nargs++;
    b->e.args[i] = bits;
    b->e.arg_types |= type << (4 * i);
}

static void eb_int(entry_builder_t *b, long long v) { eb_arg(b, DCUDA_LOG_ARG_INT, (uint64_t)v); }
static void eb_uint(entry_builder_t *b, unsigned long long v) { eb_arg(b, DCUDA_LOG_ARG_UINT, v); }
static void eb_double(entry_builder_t *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    eb_arg(b, DCUDA_LOG_ARG_DOUBLE, bits);
}
static void eb_ptr(entry_builder_t *b, uint64_t v) { eb_arg(b, DCUDA_LOG_ARG_PTR, v); }
static void eb_str(entry_builder_t *b, const char *s)
{
    eb_arg(b, DCUDA_LOG_ARG_STR, b->len);
    memcpy(b->e.text + b->len, s, strlen(s) + 1);
    b->len += strlen(s) + 1;
}

static const char *text_of(const entry_builder_t *b)
{
    static char out[1024];
    dcu_log_entry_text(&b->e, out, sizeof out);
    return out;
}

static void expect_text(const entry_builder_t *b, const char *want)
{
    const char *got = text_of(b);
    TEST_CHECK(strcmp(got, want) == 0, "format '%s': got '%s', expected '%s'", b->e.text, got,
               want);
}

/* The raw format, then the marker naming `spec` and, if not NULL, `why`. */
static void expect_refused(const entry_builder_t *b, const char *spec, const char *why)
{
    const char *got = text_of(b), *fmt = b->e.text;
    char marker[128];
    snprintf(marker, sizeof marker, "%s\"%s\"", MARKER, spec);
    size_t n = strlen(fmt);
    TEST_CHECK(strncmp(got, fmt, n) == 0 && strncmp(got + n, marker, strlen(marker)) == 0,
               "format '%s': got '%s', expected the format then '%s'", fmt, got, marker);
    if (why)
        TEST_CHECK(strstr(got + n, why) != NULL, "format '%s': '%s' does not say '%s'", fmt, got,
                   why);
}

/* ---- valid ---------------------------------------------------------------------- */

/* A string argument that runs to the end of the entry without a terminator,
 * printed with precisions 0 and 3 and none: the text stops at the entry's
 * end, and nothing past the entry is read (it is allocated alone, so a
 * sanitizer build sees such a read, as a C library that looks for the
 * terminator past the precision would make). */
static int unterminated_string(void)
{
    dcuda_log_entry_t *e = malloc(sizeof *e);
    const char *fmt = "%.0s|%.3s|%s";
    size_t at = 32, tail = DCUDA_LOG_TEXT - at;
    char want[DCUDA_LOG_TEXT + 8], got[512];
    if (!e)
        return 1;
    memset(e, 0, sizeof *e);
    e->kind = DCUDA_LOG_FORMAT_KIND;
    memcpy(e->text, fmt, strlen(fmt) + 1);
    memset(e->text + at, 'q', tail);
    for (int i = 0; i < 3; i++)
        e->args[e->nargs++] = at;
    e->arg_types = DCUDA_LOG_ARG_STR | DCUDA_LOG_ARG_STR << 4 | DCUDA_LOG_ARG_STR << 8;
    snprintf(want, sizeof want, "|qqq|%.*s", (int)tail, e->text + at);
    dcu_log_entry_text(e, got, sizeof got);
    TEST_CHECK(strcmp(got, want) == 0, "unterminated string: got '%s', expected '%s'", got, want);
    free(e);
    return 0;
}

static int case_valid(int argc, char **argv)
{
    entry_builder_t b;
    (void)argc, (void)argv;
    eb_start(&b, "rank %d of %u: %5.2f%% done, %s at %p [%-4x|%#o|%c]");
    eb_int(&b, -3);
    eb_uint(&b, 16);
    eb_double(&b, 42.125);
    eb_str(&b, "phase two");
    eb_ptr(&b, 0x1000);
    eb_int(&b, 255);
    eb_uint(&b, 8);
    eb_int(&b, 'Z');
    expect_text(&b, "rank -3 of 16: 42.12% done, phase two at 0x1000 [ff  |010|Z]");
    /* Length modifiers are read and checked; the recorded type decides. */
    eb_start(&b, "%lld %zu %hhd %ld %ju %td %Lg %lf");
    eb_int(&b, -9000000000LL);
    eb_uint(&b, 18446744073709551615ULL);
    eb_int(&b, 300);
    eb_int(&b, 7);
    eb_uint(&b, 1);
    eb_int(&b, -2);
    eb_double(&b, 0.5);
    eb_double(&b, 1.0);
    expect_text(&b, "-9000000000 18446744073709551615 300 7 1 -2 0.5 1.000000");
    eb_start(&b, "[%+05d] [% d] [%.3s] [%10s] [%-6.1e] [%G] [%c]");
    eb_int(&b, 42);
    eb_int(&b, 7);
    eb_str(&b, "abcdef");
    eb_str(&b, "r");
    eb_double(&b, 12345.678);
    eb_double(&b, 1e-10);
    eb_int(&b, 7); /* not printable */
    expect_text(&b, "[+0042] [ 7] [abc] [         r] [1.2e+04] [1E-10] [?]");
    eb_start(&b, "no conversions, 100%% plain");
    expect_text(&b, "no conversions, 100% plain");
    eb_start(&b, "fewer conversions than arguments: %d");
    eb_int(&b, 1);
    eb_int(&b, 2);
    expect_text(&b, "fewer conversions than arguments: 1");
    /* Cut to every buffer size: a NUL-terminated prefix, nothing beyond. */
    eb_start(&b, "%s=%08.3f (%x)");
    eb_str(&b, "value");
    eb_double(&b, -3.14159);
    eb_uint(&b, 48879);
    const char *full = "value=-003.142 (beef)";
    for (size_t size = 1; size <= strlen(full) + 2; size++) {
        char buf[64];
        memset(buf, 0x55, sizeof buf);
        dcu_log_entry_text(&b.e, buf, size);
        size_t want = size - 1 < strlen(full) ? size - 1 : strlen(full);
        TEST_CHECK(strlen(buf) == want && strncmp(buf, full, want) == 0 &&
                       (unsigned char)buf[size] == 0x55,
                   "size %zu: got '%s'", size, buf);
    }
    return unterminated_string();
}

/* ---- refused -------------------------------------------------------------------- */

static int case_refused(int argc, char **argv)
{
    entry_builder_t b;
    int slot = 0;
    (void)argc, (void)argv;
    eb_start(&b, "wrote %d bytes%n");
    eb_int(&b, 5);
    eb_ptr(&b, (uint64_t)(uintptr_t)&slot);
    expect_refused(&b, "%n", "writes to memory");
    TEST_CHECK(slot == 0, "%%n wrote %d", slot);
    eb_start(&b, "%hhn");
    eb_ptr(&b, (uint64_t)(uintptr_t)&slot);
    expect_refused(&b, "%hhn", "writes to memory");
    eb_start(&b, "%s");
    eb_int(&b, 0x1234); /* an integer read as a string */
    expect_refused(&b, "%s", "argument 1 is an integer");
    eb_start(&b, "%d");
    eb_double(&b, 1.5);
    expect_refused(&b, "%d", "argument 1 is a double");
    eb_start(&b, "%f");
    eb_ptr(&b, 1);
    expect_refused(&b, "%f", "argument 1 is a pointer");
    eb_start(&b, "%p");
    eb_str(&b, "x");
    expect_refused(&b, "%p", "argument 1 is a string");
    eb_start(&b, "%d and %d");
    eb_int(&b, 1);
    expect_refused(&b, "%d", "no argument");
    eb_start(&b, "%*d");
    eb_int(&b, 5);
    eb_int(&b, 6);
    expect_refused(&b, "%*", "'*'");
    eb_start(&b, "%.*s");
    eb_int(&b, 2);
    eb_str(&b, "abc");
    expect_refused(&b, "%.*", "'*'");
    eb_start(&b, "%1$d");
    eb_int(&b, 1);
    expect_refused(&b, "%1$", NULL);
    eb_start(&b, "%lls %Ld %ls %lc %qf %I64d %wd");
    expect_refused(&b, "%lls", "length");
    eb_start(&b, "%m %C %S %Z");
    expect_refused(&b, "%m", "unknown conversion");
    eb_start(&b, "%99999d");
    eb_int(&b, 1);
    expect_refused(&b, "%99999d", "width");
    eb_start(&b, "%.10000f");
    eb_double(&b, 1);
    expect_refused(&b, "%.10000f", "precision");
    eb_start(&b, "ends in %");
    expect_refused(&b, "%", "incomplete");
    eb_start(&b, "%d");
    eb_arg(&b, 9, 1); /* an argument type no rank records */
    expect_refused(&b, "%d", "argument 1 is of unknown type 9");
    eb_start(&b, "%s");
    eb_arg(&b, DCUDA_LOG_ARG_STR, DCUDA_LOG_TEXT + 5); /* outside the entry */
    expect_refused(&b, "%s", "outside the entry");
    /* More arguments claimed than an entry holds. */
    eb_start(&b, "%d %d %d %d %d %d %d %d %d");
    for (int i = 0; i < DCUDA_LOG_MAX_ARGS; i++)
        eb_int(&b, i);
    b.e.nargs = 200;
    expect_refused(&b, "%d", "no argument");
    return 0;
}

/* ---- fuzz ------------------------------------------------------------------------ */

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t next(uint32_t n) { return (uint32_t)(test_rng(&rng) % n); }

/* The arguments of a format being built. */
typedef struct fuzz_args {
    int n;
    unsigned type[DCUDA_LOG_MAX_ARGS];
    uint64_t bits[DCUDA_LOG_MAX_ARGS];
    const char *str[DCUDA_LOG_MAX_ARGS];
} fuzz_args_t;

static void fa_add(fuzz_args_t *a, unsigned type, uint64_t bits, const char *str)
{
    a->type[a->n] = type;
    a->bits[a->n] = bits;
    a->str[a->n++] = str;
}

/* Appends a valid conversion to fmt and its argument to a, and what the C
 * library prints for it to `want`. */
static void valid_piece(fuzz_args_t *a, char *fmt, char *want, size_t want_size)
{
    static const char flags[] = "-+ #0";
    char spec[32] = "%", out[512];
    size_t n = 1;
    for (uint32_t k = next(3); k > 0; k--)
        spec[n++] = flags[next(5)];
    if (next(2))
        n += (size_t)snprintf(spec + n, sizeof spec - n, "%u", 1 + next(40));
    if (next(3) == 0)
        n += (size_t)snprintf(spec + n, sizeof spec - n, ".%u", next(12));
    switch (next(4)) {
    case 0: { /* integers, with a length modifier that is checked, then ignored */
        static const char *mods[] = { "", "l", "ll", "h", "hh", "z", "j", "t" };
        static const char convs[] = "diuoxX";
        char conv = convs[next(6)], ref[40];
        long long v = (long long)(((uint64_t)next(1u << 31) << 33) ^ next(1u << 31)) - next(3);
        snprintf(spec + n, sizeof spec - n, "%s%c", mods[next(8)], conv);
        snprintf(ref, sizeof ref, "%.*sll%c", (int)n, spec, conv);
        if (conv == 'd' || conv == 'i')
            snprintf(out, sizeof out, ref, v);
        else
            snprintf(out, sizeof out, ref, (unsigned long long)v);
        fa_add(a, next(2) ? DCUDA_LOG_ARG_INT : DCUDA_LOG_ARG_UINT, (uint64_t)v, NULL);
        break;
    }
    case 1: { /* doubles */
        static const char convs[] = "fFeEgGaA";
        double v = ((double)next(2000000) - 1e6) / (1 + next(1000));
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        snprintf(spec + n, sizeof spec - n, "%s%c", next(2) ? "" : "l", convs[next(8)]);
        snprintf(out, sizeof out, spec, v);
        fa_add(a, DCUDA_LOG_ARG_DOUBLE, bits, NULL);
        break;
    }
    case 2: { /* strings, with the flags a string takes */
        static const char *words[] = { "", "a", "rank", "notification", "x y z" };
        const char *w = words[next(5)];
        if (strpbrk(spec, "#0+ "))
            snprintf(spec, sizeof spec, "%%-%us", next(20));
        else
            snprintf(spec + n, sizeof spec - n, "s");
        snprintf(out, sizeof out, spec, w);
        fa_add(a, DCUDA_LOG_ARG_STR, 0, w);
        break;
    }
    default:
        snprintf(spec, sizeof spec, "%%%%");
        snprintf(out, sizeof out, "%%");
        break;
    }
    strcat(fmt, spec);
    strncat(want, out, want_size - strlen(want) - 1);
}

/* Appends a piece that must be refused, whatever the arguments. */
static void bad_piece(fuzz_args_t *a, char *fmt)
{
    static const char *bad[] = { "%n",      "%ln", "%*d",   "%.*f", "%1$d", "%m",  "%lls", "%Lx",
                                 "%ls",     "%lc", "%I64d", "%w",   "%C",   "%S",  "%#5n", "%5000d",
                                 "%.9999f", "%k",  "%-%",   "%hhp", "%zs",  "%'d", "%Ls" };
    strcat(fmt, bad[next(sizeof bad / sizeof bad[0])]);
    if (a->n < DCUDA_LOG_MAX_ARGS)
        fa_add(a, DCUDA_LOG_ARG_INT, 1, NULL);
}

static int fuzz_valid_and_bad(void)
{
    for (int round = 0; round < FUZZ_ROUNDS; round++) {
        fuzz_args_t a;
        char fmt[DCUDA_LOG_TEXT] = "", want[1024] = "";
        memset(&a, 0, sizeof a);
        int pieces = 1 + (int)next(5), bad_at = next(4) == 0 ? (int)next((uint32_t)pieces) : -1;
        for (int p = 0; p < pieces; p++) {
            if (next(2)) {
                strcat(fmt, " lit ");
                strcat(want, " lit ");
            }
            if (p == bad_at)
                bad_piece(&a, fmt);
            else if (a.n < DCUDA_LOG_MAX_ARGS)
                valid_piece(&a, fmt, want, sizeof want);
        }
        entry_builder_t b;
        eb_start(&b, fmt);
        for (int i = 0; i < a.n; i++) {
            if (a.type[i] == DCUDA_LOG_ARG_STR)
                eb_str(&b, a.str[i]);
            else
                eb_arg(&b, a.type[i], a.bits[i]);
        }
        const char *got = text_of(&b);
        if (bad_at < 0)
            TEST_CHECK(strcmp(got, want) == 0, "format '%s': got '%s', expected '%s'", fmt, got,
                       want);
        else
            TEST_CHECK(strncmp(got, fmt, strlen(fmt)) == 0 &&
                           strncmp(got + strlen(fmt), MARKER, strlen(MARKER)) == 0,
                       "format '%s' (bad piece %d): got '%s'", fmt, bad_at, got);
        if (test_failures > 20)
            return 1;
    }
    return 0;
}

/* Random bytes as format, types and arguments: the output stays inside the
 * buffer and is terminated. */
static void fuzz_bytes(void)
{
    static const char alphabet[] = "%%%%dsnpfxcl*.$0123456789-+ #hLzjtq'IC\x01 ab";
    for (int round = 0; round < FUZZ_ROUNDS; round++) {
        dcuda_log_entry_t e;
        memset(&e, 0, sizeof e);
        e.kind = DCUDA_LOG_FORMAT_KIND;
        size_t len = next(DCUDA_LOG_TEXT + 1);
        for (size_t i = 0; i < len && i < DCUDA_LOG_TEXT; i++)
            e.text[i] = next(8) ? alphabet[next(sizeof alphabet - 1)] : (char)next(256);
        e.nargs = (uint16_t)next(12);
        e.arg_types = (uint32_t)next(0xffffffffu);
        for (int i = 0; i < DCUDA_LOG_MAX_ARGS; i++)
            e.args[i] = next(3) ? next(DCUDA_LOG_TEXT + 8) : ((uint64_t)next(1u << 30) << 34);
        char buf[300];
        size_t size = 1 + next(sizeof buf - 44);
        memset(buf, 0x55, sizeof buf);
        dcu_log_entry_text(&e, buf, size);
        int ok = memchr(buf, '\0', size) != NULL;
        for (size_t i = size; i < sizeof buf && ok; i++)
            ok = (unsigned char)buf[i] == 0x55;
        TEST_CHECK(ok, "round %d: output not terminated inside %zu bytes, or written beyond", round,
                   size);
        if (test_failures > 20)
            return;
    }
}

static int case_fuzz(int argc, char **argv)
{
    (void)argc, (void)argv;
    if (fuzz_valid_and_bad() == 0)
        fuzz_bytes();
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "valid", case_valid },
        { "refused", case_refused },
        { "fuzz", case_fuzz },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
