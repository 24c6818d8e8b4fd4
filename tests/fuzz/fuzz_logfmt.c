/*
 * Fuzz harness of the host's formatter of rank log entries
 * (src/util/logfmt.h): GPU ranks ship a printf format and typed arguments
 * through the log ring, and the host formats them.
 *
 * Input: a dcuda_log_entry_t in parts: kind (2 bytes), argument count (2),
 * argument types (4), the size of a second output buffer (2; 0 .. 1023),
 * spare bytes up to byte 32, eight 8-byte arguments, then the text (format
 * and inline strings, up to DCUDA_LOG_TEXT bytes, not necessarily
 * terminated).
 *
 * Checked against this file's own reading of logfmt.h: an entry is either
 * formatted, and then reads exactly as the C library prints each plain
 * conversion with its argument, or refused, and then reads as the raw
 * format followed by the refusal marker; a conversion the formatter is
 * documented to refuse (%n, '*', positional arguments, an argument of
 * another type, unknown conversions or length modifiers, widths and
 * precisions above 999) never reaches the C library. Whatever the buffer's
 * size, the output is the start of that text, terminated inside the buffer,
 * and nothing is written beyond it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util/logfmt.h"

const char fuzz_name[] = "logfmt";
const unsigned fuzz_replay_rounds = 150000;
const char *const fuzz_tokens[] = { "%d",  "%s",  "%n",     "%p",   "%f",    "%c",    "%x",   "%%",
                                    "%ll", "%hh", "%L",     "%z",   "%j",    "%t",    "%q",   "%*",
                                    "%1$", "%.*", "%-+ #0", "%999", "%.999", "%1000", "%5.2", "%#o",
                                    "%a",  "%G",  "%lc",    "%ls",  NULL };

#define HEAD 32    /* bytes of the input before the arguments */
#define FULL 16384 /* an output buffer no entry fills */
#define GUARD 64   /* bytes after a buffer that must stay untouched */
#define MARKER " [dcuda: log format refused at \""

static void read_entry(const uint8_t *data, size_t size, dcuda_log_entry_t *e, size_t *out_size)
{
    fuzz_reader_t r = { data, size, 0 };
    memset(e, 0, sizeof *e);
    e->kind = (uint16_t)fuzz_read(&r, 2);
    e->nargs = (uint16_t)fuzz_read(&r, 2);
    e->arg_types = (uint32_t)fuzz_read(&r, 4);
    *out_size = (size_t)fuzz_read(&r, 2) % 1024u;
    r.at = HEAD;
    for (int i = 0; i < DCUDA_LOG_MAX_ARGS; i++)
        e->args[i] = fuzz_read(&r, 8);
    for (size_t i = 0; i < DCUDA_LOG_TEXT && r.at < size; i++)
        e->text[i] = (char)fuzz_read(&r, 1);
}

/* ---- the reference ---------------------------------------------------------------- */

/* The output being built. */
typedef struct text {
    char s[FULL];
    size_t n;
} text_t;

static void add(text_t *t, const char *s, size_t n)
{
    FUZZ_CHECK(t->n + n < sizeof t->s, "the reference ran out of room");
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

/* One conversion as read: "%" flags width .precision length conv. */
typedef struct spec {
    char flags[8];         /* each at most once */
    long width, precision; /* -1: none */
    char length[3];
    char conv;
    size_t len; /* characters from '%' through conv */
} spec_t;

static long digits(const char *f, size_t n, size_t *i)
{
    long v = 0;
    for (; *i < n && f[*i] >= '0' && f[*i] <= '9'; (*i)++)
        v = v > 100000 ? v : v * 10 + (f[*i] - '0');
    return v;
}

/* Reads the conversion at f[0] == '%'; 0 if it is not a plain one
 * (incomplete, '*' or '$', or no conversion character after the length). */
static int read_spec(const char *f, size_t n, spec_t *s)
{
    static const char *const lengths[] = { "hh", "ll", "h", "l", "j", "z", "t", "L", "q" };
    size_t i = 1, nf = 0;
    memset(s, 0, sizeof *s);
    s->width = s->precision = -1;
    for (; i < n && f[i] && strchr("-+ #0", f[i]); i++) /* a repeated flag says nothing more */
        if (!strchr(s->flags, f[i]))
            s->flags[nf++] = f[i];
    if (i < n && f[i] >= '0' && f[i] <= '9')
        s->width = digits(f, n, &i);
    if (i < n && f[i] == '.') {
        i++;
        s->precision = i < n && f[i] >= '0' && f[i] <= '9' ? digits(f, n, &i) : 0;
    }
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        size_t len = strlen(lengths[k]);
        if (i + len <= n && memcmp(f + i, lengths[k], len) == 0) {
            memcpy(s->length, lengths[k], len);
            i += len;
            break;
        }
    }
    if (i >= n)
        return 0;
    s->conv = f[i];
    s->len = i + 1;
    return 1;
}

/* Does the length modifier go with the conversion? (Integers take any
 * but L; doubles none, l or L; c, s and p none.) */
static int length_ok(const spec_t *s)
{
    if (!s->length[0])
        return 1;
    if (strchr("diuoxX", s->conv))
        return strcmp(s->length, "L") != 0;
    if (strchr("fFeEgGaA", s->conv))
        return strcmp(s->length, "l") == 0 || strcmp(s->length, "L") == 0;
    return 0;
}

/* The C format of a checked conversion (c and p without precision). */
static void c_spec(const spec_t *s, const char *length, char *out, size_t size)
{
    int with_precision = s->precision >= 0 && !strchr("cp", s->conv);
    char prec[24] = "", width[24] = "";
    if (s->width >= 0)
        snprintf(width, sizeof width, "%ld", s->width);
    if (with_precision)
        snprintf(prec, sizeof prec, ".%ld", s->precision);
    snprintf(out, size, "%%%s%s%s%s%c", s->flags, width, prec, length, s->conv);
}

/* Prints conversion s with argument k of e into t; 0 if it must be
 * refused. */
static int ref_conversion(const dcuda_log_entry_t *e, int nargs, int k, const spec_t *s, text_t *t)
{
    char f[64], out[4096];
    int type = k < nargs ? (int)((e->arg_types >> (4 * k)) & 0xfu) : -1, n = 0;
    int integer = type == DCUDA_LOG_ARG_INT || type == DCUDA_LOG_ARG_UINT;
    uint64_t v = k < nargs ? e->args[k] : 0;
    if (!s->conv || !length_ok(s) || s->width > 999 || s->precision > 999)
        return 0;
    if (strchr("diuoxX", s->conv) && integer) {
        c_spec(s, "ll", f, sizeof f);
        n = strchr("di", s->conv) ? snprintf(out, sizeof out, f, (long long)v)
                                  : snprintf(out, sizeof out, f, (unsigned long long)v);
    } else if (strchr("fFeEgGaA", s->conv) && type == DCUDA_LOG_ARG_DOUBLE) {
        double d;
        memcpy(&d, &v, sizeof d);
        c_spec(s, "", f, sizeof f);
        n = snprintf(out, sizeof out, f, d);
    } else if (s->conv == 'c' && integer) {
        c_spec(s, "", f, sizeof f);
        n = snprintf(out, sizeof out, f, v >= 0x20 && v < 0x7f ? (int)v : '?');
    } else if (s->conv == 's' && type == DCUDA_LOG_ARG_STR && v < DCUDA_LOG_TEXT) {
        char str[DCUDA_LOG_TEXT + 1]; /* the inline string, cut at the entry's end */
        memcpy(str, e->text + v, DCUDA_LOG_TEXT - (size_t)v);
        str[DCUDA_LOG_TEXT - v] = '\0';
        c_spec(s, "", f, sizeof f);
        n = snprintf(out, sizeof out, f, str);
    } else if (s->conv == 'p' && type == DCUDA_LOG_ARG_PTR) {
        c_spec(s, "", f, sizeof f);
        n = snprintf(out, sizeof out, f, (void *)(uintptr_t)v);
    } else {
        return 0; /* no argument, one of another type, or not a plain conversion */
    }
    FUZZ_CHECK(n >= 0 && (size_t)n < sizeof out, "the reference's conversion '%s' gave %d", f, n);
    add(t, out, (size_t)n);
    return 1;
}

/* The entry's text as logfmt.h says it reads; 0 if it must be refused. */
static int reference(const dcuda_log_entry_t *e, text_t *t)
{
    const char *f = e->text;
    size_t n = strnlen(f, DCUDA_LOG_TEXT);
    int nargs = e->nargs < DCUDA_LOG_MAX_ARGS ? e->nargs : DCUDA_LOG_MAX_ARGS, k = 0;
    t->n = 0;
    t->s[0] = '\0';
    if (!(e->kind & DCUDA_LOG_FORMAT_KIND)) {
        add(t, f, n);
        return 1;
    }
    for (size_t i = 0; i < n;) {
        spec_t s;
        if (f[i] != '%') {
            add(t, f + i++, 1);
        } else if (i + 1 < n && f[i + 1] == '%') {
            add(t, "%", 1);
            i += 2;
        } else if (read_spec(f + i, n - i, &s) && ref_conversion(e, nargs, k++, &s, t)) {
            i += s.len;
        } else {
            return 0;
        }
    }
    return 1;
}

/* ---- checking ----------------------------------------------------------------------- */

/* dcu_log_entry_text into a buffer of `size` bytes followed by a guard. */
static void format_into(const dcuda_log_entry_t *e, char *buf, size_t size)
{
    memset(buf, 0x55, size + GUARD);
    dcu_log_entry_text(e, buf, size);
    if (size > 0)
        FUZZ_CHECK(memchr(buf, '\0', size) != NULL, "output not terminated inside %zu bytes", size);
    for (size_t i = size; i < size + GUARD; i++)
        FUZZ_CHECK((unsigned char)buf[i] == 0x55, "byte %zu written, beyond a buffer of %zu", i,
                   size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static text_t want;
    static char full[FULL + GUARD], cut[1024 + GUARD];
    dcuda_log_entry_t e;
    size_t cut_size;
    read_entry(data, size, &e, &cut_size);
    int formatted = reference(&e, &want);
    format_into(&e, full, FULL);
    if (formatted) {
        FUZZ_CHECK(strcmp(full, want.s) == 0, "format '%.*s': got '%s', expected '%s'",
                   DCUDA_LOG_TEXT, e.text, full, want.s);
    } else {
        size_t n = strnlen(e.text, DCUDA_LOG_TEXT), len = strlen(full);
        FUZZ_CHECK(strncmp(full, e.text, n) == 0 &&
                       strncmp(full + n, MARKER, strlen(MARKER)) == 0 && full[len - 1] == ']',
                   "format '%.*s' should be refused: got '%s'", DCUDA_LOG_TEXT, e.text, full);
    }
    format_into(&e, cut, cut_size);
    if (cut_size > 0) {
        size_t expect = strlen(full) < cut_size - 1 ? strlen(full) : cut_size - 1;
        FUZZ_CHECK(strlen(cut) == expect && strncmp(cut, full, expect) == 0,
                   "cut to %zu bytes: got '%s', the full text is '%s'", cut_size, cut, full);
    }
    return 0;
}

/* ---- seeds -------------------------------------------------------------------------- */

typedef struct seed_builder {
    uint8_t b[HEAD + 8 * DCUDA_LOG_MAX_ARGS + DCUDA_LOG_TEXT];
    size_t text; /* bytes of text used */
    int nargs;
} seed_builder_t;

static void sb_start(seed_builder_t *s, const char *fmt, uint16_t out_size)
{
    memset(s, 0, sizeof *s);
    s->b[0] = DCUDA_LOG_FORMAT_KIND;
    memcpy(s->b + 8, &out_size, 2);
    s->text = strlen(fmt) + 1;
    memcpy(s->b + HEAD + 8 * DCUDA_LOG_MAX_ARGS, fmt, s->text);
}

static void sb_arg(seed_builder_t *s, unsigned type, uint64_t v)
{
    uint32_t types;
    memcpy(&types, s->b + 4, 4);
    types |= type << (4 * s->nargs);
    memcpy(s->b + 4, &types, 4);
    memcpy(s->b + HEAD + 8 * s->nargs, &v, 8);
    s->nargs++;
    s->b[2] = (uint8_t)s->nargs;
}

static void sb_str(seed_builder_t *s, const char *str)
{
    sb_arg(s, DCUDA_LOG_ARG_STR, s->text);
    memcpy(s->b + HEAD + 8 * DCUDA_LOG_MAX_ARGS + s->text, str, strlen(str) + 1);
    s->text += strlen(str) + 1;
}

static void sb_emit(seed_builder_t *s, fuzz_emit_fn emit, void *arg)
{
    emit(arg, s->b, HEAD + 8 * DCUDA_LOG_MAX_ARGS + s->text);
}

void fuzz_seeds(fuzz_emit_fn emit, void *arg)
{
    seed_builder_t s;
    double half = 0.5;
    uint64_t bits;
    memcpy(&bits, &half, sizeof bits);
    sb_start(&s, "rank %d of %u: %5.2f%% done, %s at %p [%-4x|%#o|%c]", 200);
    sb_arg(&s, DCUDA_LOG_ARG_INT, (uint64_t)-3);
    sb_arg(&s, DCUDA_LOG_ARG_UINT, 16);
    sb_arg(&s, DCUDA_LOG_ARG_DOUBLE, bits);
    sb_str(&s, "phase two");
    sb_arg(&s, DCUDA_LOG_ARG_PTR, 0x1000);
    sb_arg(&s, DCUDA_LOG_ARG_INT, 255);
    sb_arg(&s, DCUDA_LOG_ARG_UINT, 8);
    sb_arg(&s, DCUDA_LOG_ARG_INT, 'Z');
    sb_emit(&s, emit, arg);
    sb_start(&s, "%lld %zu %hhd %Lg [%+05d] [%.3s] [%-10s]", 17);
    sb_arg(&s, DCUDA_LOG_ARG_INT, (uint64_t)-9000000000LL);
    sb_arg(&s, DCUDA_LOG_ARG_UINT, UINT64_MAX);
    sb_arg(&s, DCUDA_LOG_ARG_INT, 300);
    sb_arg(&s, DCUDA_LOG_ARG_DOUBLE, bits);
    sb_arg(&s, DCUDA_LOG_ARG_INT, 42);
    sb_str(&s, "abcdef");
    sb_str(&s, "r");
    sb_emit(&s, emit, arg);
    sb_start(&s, "wrote %d bytes%n", 64);
    sb_arg(&s, DCUDA_LOG_ARG_INT, 5);
    sb_arg(&s, DCUDA_LOG_ARG_PTR, 0x1000);
    sb_emit(&s, emit, arg);
    sb_start(&s, "plain text, 100%% of it", 9);
    s.b[0] = 0;
    sb_emit(&s, emit, arg);
}
