/*
 * The text of a log entry. CPU ranks write finished lines; GPU ranks cannot
 * call vsnprintf, so they ship the format text and up to DCUDA_LOG_MAX_ARGS
 * typed 64-bit arguments (strings copied inline after the format); the host formats them
 * here. Length modifiers in the format are ignored: each argument's own type,
 * recorded by the device, decides how it is printed.
 */
#include <stdio.h>
#include <string.h>

#include "logfmt.h"

static unsigned arg_type(const dcuda_log_entry_t *e, int i)
{
    return (e->arg_types >> (4 * i)) & 0xfu;
}

/* Formats one argument with the conversion spec [spec, spec + len) minus
 * length modifiers, conversion char conv. */
static int format_arg(const dcuda_log_entry_t *e, int i, const char *spec, size_t len, char conv,
                      char *out, size_t size)
{
    char f[32];
    size_t n = 0;
    for (size_t k = 0; k < len && n + 4 < sizeof f; k++)
        if (!strchr("hlLqjzt", spec[k]))
            f[n++] = spec[k];
    union {
        uint64_t u;
        double d;
    } v;
    v.u = e->args[i];
    switch (arg_type(e, i)) {
    case DCUDA_LOG_ARG_INT:
    case DCUDA_LOG_ARG_UINT:
        if (strchr("fFeEgGaA", conv))
            conv = 'd';
        if (conv == 's' || conv == 'p')
            conv = arg_type(e, i) == DCUDA_LOG_ARG_INT ? 'd' : 'u';
        f[n++] = 'l';
        f[n++] = 'l';
        f[n++] = conv;
        f[n] = '\0';
        return arg_type(e, i) == DCUDA_LOG_ARG_INT
                   ? snprintf(out, size, f, (long long)v.u)
                   : snprintf(out, size, f, (unsigned long long)v.u);
    case DCUDA_LOG_ARG_DOUBLE:
        f[n++] = strchr("fFeEgGaA", conv) ? conv : 'g';
        f[n] = '\0';
        return snprintf(out, size, f, v.d);
    case DCUDA_LOG_ARG_PTR:
        return snprintf(out, size, "%p", (void *)(uintptr_t)v.u);
    case DCUDA_LOG_ARG_STR:
        f[n++] = 's';
        f[n] = '\0';
        return snprintf(out, size, f, v.u < DCUDA_LOG_TEXT ? e->text + v.u : "(bad string)");
    default:
        return snprintf(out, size, "(?)");
    }
}

static void format_entry(const dcuda_log_entry_t *e, char *out, size_t out_size)
{
    const char *fmt = e->text;
    size_t fmt_len = strnlen(e->text, DCUDA_LOG_TEXT), o = 0;
    int arg = 0;
    for (size_t i = 0; i < fmt_len && o + 1 < out_size;) {
        if (fmt[i] != '%') {
            out[o++] = fmt[i++];
            continue;
        }
        if (i + 1 < fmt_len && fmt[i + 1] == '%') {
            out[o++] = '%';
            i += 2;
            continue;
        }
        size_t j = i + 1;
        while (j < fmt_len && strchr("-+ #0123456789.hlLqjzt", fmt[j]))
            j++;
        if (j >= fmt_len)
            break;
        int w = arg < e->nargs && arg < DCUDA_LOG_MAX_ARGS
                    ? format_arg(e, arg, fmt + i, j - i, fmt[j], out + o, out_size - o)
                    : snprintf(out + o, out_size - o, "(missing)");
        arg++;
        if (w > 0)
            o += (size_t)w < out_size - o ? (size_t)w : out_size - o - 1;
        i = j + 1;
    }
    out[o < out_size ? o : out_size - 1] = '\0';
}

void dcu_log_entry_text(const dcuda_log_entry_t *e, char *text, size_t size)
{
    if (e->kind & DCUDA_LOG_FORMAT_KIND) {
        format_entry(e, text, size);
        return;
    }
    size_t n = strnlen(e->text, DCUDA_LOG_TEXT);
    n = n < size ? n : size - 1;
    memcpy(text, e->text, n);
    text[n] = '\0';
}
