/*
 * The text of a log entry. CPU ranks write finished lines; GPU ranks cannot
 * call vsnprintf, so they ship the format text and up to DCUDA_LOG_MAX_ARGS
 * typed 64-bit arguments (strings copied inline after the format); the host
 * formats them here.
 *
 * The format comes from rank code and is read as untrusted input: only
 * plain conversions that print an argument of the type the rank recorded
 * reach the C library (that type decides the width: length modifiers are
 * checked, then ignored). Anything else (%n, '*' widths, positional
 * arguments, a conversion without its argument or with one of another
 * type, unknown conversions or length modifiers, widths or precisions above
 * LOGFMT_MAX_FIELD) prints the raw format followed by a marker that names
 * the refused conversion and why.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "logfmt.h"

/* The largest width or precision a conversion may ask for. */
#define LOGFMT_MAX_FIELD 999
/* Characters of a refused conversion quoted in the marker. */
#define LOGFMT_QUOTE_MAX 16

/* One conversion of the format, as read. */
typedef struct conv_spec {
    char flags[6];  /* each of "-+ #0" at most once */
    int width;      /* -1: none */
    int precision;  /* -1: none */
    char length[3]; /* "", "hh", "l", ... */
    char conv;      /* conversion character */
    size_t len;     /* characters of the format it spans, from '%' */
} conv_spec_t;

enum conv_class { CONV_INT, CONV_FLOAT, CONV_CHAR, CONV_STR, CONV_PTR, CONV_BAD };

static enum conv_class class_of(char conv)
{
    if (conv && strchr("diuoxX", conv))
        return CONV_INT;
    if (conv && strchr("fFeEgGaA", conv))
        return CONV_FLOAT;
    return conv == 'c' ? CONV_CHAR : conv == 's' ? CONV_STR : conv == 'p' ? CONV_PTR : CONV_BAD;
}

static unsigned arg_type(const dcuda_log_entry_t *e, int i)
{
    return (e->arg_types >> (4 * i)) & 0xfu;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Reads digits at f[*i] into a number, saturating above LOGFMT_MAX_FIELD. */
static int read_field(const char *f, size_t n, size_t *i)
{
    int v = 0;
    for (; *i < n && is_digit(f[*i]); (*i)++)
        v = v > LOGFMT_MAX_FIELD ? v : v * 10 + (f[*i] - '0');
    return v;
}

/* Reads a length modifier at f[*i] (the longest known one). */
static void read_length(const char *f, size_t n, size_t *i, char length[3])
{
    static const char *const known[] = { "hh", "ll", "h", "l", "j", "z", "t", "L", "q" };
    length[0] = '\0';
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        size_t len = strlen(known[k]);
        if (*i + len <= n && strncmp(f + *i, known[k], len) == 0) {
            memcpy(length, known[k], len + 1);
            *i += len;
            return;
        }
    }
}

/* May length modifier `length` go with conversion class c? */
static int length_fits(const char *length, enum conv_class c)
{
    if (!length[0])
        return 1;
    if (c == CONV_INT)
        return strcmp(length, "L") != 0;
    if (c == CONV_FLOAT)
        return strcmp(length, "l") == 0 || strcmp(length, "L") == 0;
    return 0;
}

/* Reads the conversion at f[0] == '%' (n characters of format from there).
 * Returns NULL, or why it is refused; c->len is how far it was read. */
static const char *read_spec(const char *f, size_t n, conv_spec_t *c)
{
    size_t i = 1, nf = 0;
    memset(c, 0, sizeof *c);
    c->width = c->precision = -1;
    for (; i < n && f[i] && strchr("-+ #0", f[i]); i++)
        if (!memchr(c->flags, f[i], nf))
            c->flags[nf++] = f[i];
    if (i < n && is_digit(f[i]))
        c->width = read_field(f, n, &i);
    if (i < n && (f[i] == '*' || f[i] == '$')) {
        c->len = i + 1;
        return f[i] == '*' ? "'*' widths and precisions are not carried"
                           : "positional arguments are not carried";
    }
    if (i < n && f[i] == '.') {
        i++;
        if (i < n && f[i] == '*') {
            c->len = i + 1;
            return "'*' widths and precisions are not carried";
        }
        c->precision = read_field(f, n, &i);
    }
    read_length(f, n, &i, c->length);
    c->len = i < n ? i + 1 : n;
    if (i >= n)
        return "incomplete conversion at the end of the format";
    c->conv = f[i];
    if (c->conv == 'n')
        return "%n writes to memory";
    if (strchr("hlLqjzt", c->conv))
        return "unknown length modifier";
    if (class_of(c->conv) == CONV_BAD)
        return "unknown conversion";
    if (!length_fits(c->length, class_of(c->conv)))
        return "length modifier does not go with the conversion";
    if (c->width > LOGFMT_MAX_FIELD)
        return "width above 999";
    if (c->precision > LOGFMT_MAX_FIELD)
        return "precision above 999";
    return NULL;
}

static const char *type_words(unsigned type)
{
    switch (type) {
    case DCUDA_LOG_ARG_INT:
    case DCUDA_LOG_ARG_UINT:
        return "an integer";
    case DCUDA_LOG_ARG_DOUBLE:
        return "a double";
    case DCUDA_LOG_ARG_PTR:
        return "a pointer";
    case DCUDA_LOG_ARG_STR:
        return "a string";
    default:
        return NULL;
    }
}

/* Does argument i of e suit conversion c? NULL, or why not (in why). */
static const char *arg_problem(const dcuda_log_entry_t *e, int nargs, int i, const conv_spec_t *c,
                               char *why, size_t why_size)
{
    if (i >= nargs)
        return "no argument for it";
    unsigned type = arg_type(e, i);
    enum conv_class k = class_of(c->conv);
    int ok = (k == CONV_INT || k == CONV_CHAR)
                 ? type == DCUDA_LOG_ARG_INT || type == DCUDA_LOG_ARG_UINT
             : k == CONV_FLOAT ? type == DCUDA_LOG_ARG_DOUBLE
             : k == CONV_STR   ? type == DCUDA_LOG_ARG_STR
                               : type == DCUDA_LOG_ARG_PTR;
    if (ok && type == DCUDA_LOG_ARG_STR && e->args[i] >= DCUDA_LOG_TEXT)
        return "its string lies outside the entry";
    if (ok)
        return NULL;
    if (type_words(type))
        snprintf(why, why_size, "argument %d is %s", i + 1, type_words(type));
    else
        snprintf(why, why_size, "argument %d is of unknown type %u", i + 1, type);
    return why;
}

/* Checks every conversion of the format. 0 if all are fine; else 1, with
 * the refused one's offset, length and reason. */
static int check_format(const dcuda_log_entry_t *e, size_t n, size_t *at, size_t *len, char *why,
                        size_t why_size)
{
    const char *f = e->text;
    int nargs = e->nargs < DCUDA_LOG_MAX_ARGS ? e->nargs : DCUDA_LOG_MAX_ARGS, arg = 0;
    for (size_t i = 0; i < n;) {
        if (f[i] != '%' || (i + 1 < n && f[i + 1] == '%')) {
            i += f[i] == '%' ? 2 : 1;
            continue;
        }
        conv_spec_t c;
        const char *problem = read_spec(f + i, n - i, &c);
        if (!problem)
            problem = arg_problem(e, nargs, arg++, &c, why, why_size);
        if (problem) {
            if (problem != why)
                snprintf(why, why_size, "%s", problem);
            *at = i;
            *len = c.len;
            return 1;
        }
        i += c.len;
    }
    return 0;
}

/* Appends text to out[*o], keeping the terminator inside size. */
static void put_text(char *out, size_t size, size_t *o, const char *text, size_t n)
{
    size_t room = size - 1 - *o;
    n = n < room ? n : room;
    memcpy(out + *o, text, n);
    *o += n;
    out[*o] = '\0';
}

/* The raw format and the marker naming the refused conversion. */
static void refuse(const dcuda_log_entry_t *e, size_t n, size_t at, size_t len, const char *why,
                   char *out, size_t size)
{
    char quote[LOGFMT_QUOTE_MAX + 1], marker[160];
    size_t q = len < LOGFMT_QUOTE_MAX ? len : LOGFMT_QUOTE_MAX, o = 0;
    for (size_t k = 0; k < q; k++) {
        char ch = e->text[at + k];
        quote[k] = ch >= 0x20 && ch < 0x7f && ch != '"' ? ch : '?';
    }
    quote[q] = '\0';
    int m =
        snprintf(marker, sizeof marker, " [dcuda: log format refused at \"%s\": %s]", quote, why);
    out[0] = '\0';
    put_text(out, size, &o, e->text, n);
    put_text(out, size, &o, marker, m > 0 ? (size_t)m : 0);
}

/* The C library's format for a checked conversion; ll for integers. */
static void c_format(const conv_spec_t *c, int with_precision, const char *length, char *f,
                     size_t size)
{
    int n = snprintf(f, size, "%%%s", c->flags);
    if (c->width >= 0)
        n += snprintf(f + n, size - (size_t)n, "%d", c->width);
    if (with_precision && c->precision >= 0)
        n += snprintf(f + n, size - (size_t)n, ".%d", c->precision);
    snprintf(f + n, size - (size_t)n, "%s%c", length, c->conv);
}

/* Formats argument i of e with checked conversion c into out. */
static int format_arg(const dcuda_log_entry_t *e, int i, const conv_spec_t *c, char *out,
                      size_t size)
{
    char f[32];
    uint64_t v = e->args[i];
    switch (class_of(c->conv)) {
    case CONV_INT:
        c_format(c, 1, "ll", f, sizeof f);
        return strchr("di", c->conv) ? snprintf(out, size, f, (long long)v)
                                     : snprintf(out, size, f, (unsigned long long)v);
    case CONV_FLOAT: {
        double d;
        memcpy(&d, &v, sizeof d);
        c_format(c, 1, "", f, sizeof f);
        return snprintf(out, size, f, d);
    }
    case CONV_CHAR:
        c_format(c, 0, "", f, sizeof f);
        return snprintf(out, size, f, v >= 0x20 && v < 0x7f ? (int)v : '?');
    case CONV_STR: {
        /* A terminated copy: the string may run to the entry's end, and a
         * C library (or a sanitizer's check of its arguments) may look for
         * the terminator past the precision. */
        char s[DCUDA_LOG_TEXT + 1];
        size_t len = strnlen(e->text + v, DCUDA_LOG_TEXT - (size_t)v);
        memcpy(s, e->text + v, len);
        s[len] = '\0';
        c_format(c, 1, "", f, sizeof f);
        return snprintf(out, size, f, s);
    }
    default:
        c_format(c, 0, "", f, sizeof f);
        return snprintf(out, size, f, (void *)(uintptr_t)v);
    }
}

/* Formats a format entry whose conversions all passed check_format. */
static void format_checked(const dcuda_log_entry_t *e, size_t n, char *out, size_t size)
{
    const char *f = e->text;
    size_t o = 0;
    int arg = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && o + 1 < size;) {
        if (f[i] != '%') {
            const char *pct = memchr(f + i, '%', n - i);
            size_t run = pct ? (size_t)(pct - (f + i)) : n - i;
            put_text(out, size, &o, f + i, run);
            i += run;
            continue;
        }
        if (i + 1 < n && f[i + 1] == '%') {
            put_text(out, size, &o, "%", 1);
            i += 2;
            continue;
        }
        conv_spec_t c;
        read_spec(f + i, n - i, &c);
        int w = format_arg(e, arg++, &c, out + o, size - o);
        if (w > 0)
            o += (size_t)w < size - o ? (size_t)w : size - o - 1;
        i += c.len;
    }
}

void dcu_log_entry_text(const dcuda_log_entry_t *e, char *text, size_t size)
{
    if (size == 0)
        return;
    size_t n = strnlen(e->text, DCUDA_LOG_TEXT);
    if (e->kind & DCUDA_LOG_FORMAT_KIND) {
        size_t at = 0, len = 0;
        char why[96];
        if (check_format(e, n, &at, &len, why, sizeof why))
            refuse(e, n, at, len, why, text, size);
        else
            format_checked(e, n, text, size);
        return;
    }
    size_t o = 0;
    put_text(text, size, &o, e->text, n);
}
