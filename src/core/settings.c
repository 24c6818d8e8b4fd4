/*
 * Settings table: parsing of DCUDA_* environment variables and --dcuda-*
 * arguments, validation, and the listing printed by dcuda_settings_print.
 */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/shared/layout.h"
#include "util/msg.h"

typedef enum { SET_INT, SET_UINT, SET_DOUBLE, SET_STRING } setting_type_t;

typedef struct setting_desc {
    const char *name; /* upper case, without the DCUDA_ prefix */
    setting_type_t type;
    const char *def;
    const char *desc;
    size_t offset;
    size_t size;
} setting_desc_t;

#define SETTING_DESC_(field, NAME, type, def, desc)                                                \
    { #NAME,                                                                                       \
      SET_##type,                                                                                  \
      def,                                                                                         \
      desc,                                                                                        \
      offsetof(dcuda_settings_t, field),                                                           \
      sizeof(((dcuda_settings_t *)0)->field) },
static const setting_desc_t settings_table[] = { DCUDA_SETTINGS_MAP(SETTING_DESC_) };
#undef SETTING_DESC_
#define SETTINGS_COUNT (sizeof(settings_table) / sizeof(settings_table[0]))

static const char *type_name(setting_type_t t)
{
    switch (t) {
    case SET_INT:
        return "int";
    case SET_UINT:
        return "uint";
    case SET_DOUBLE:
        return "double";
    default:
        return "string";
    }
}

static dcuda_status_t parse_value(const setting_desc_t *d, const char *text, const char *origin,
                                  dcuda_settings_t *s)
{
    char *end = NULL;
    void *field = (char *)s + d->offset;
    errno = 0;
    switch (d->type) {
    case SET_INT:
        *(long *)field = strtol(text, &end, 0);
        break;
    case SET_UINT:
        if (text[0] == '-')
            goto bad;
        *(unsigned long *)field = strtoul(text, &end, 0);
        break;
    case SET_DOUBLE:
        *(double *)field = strtod(text, &end);
        break;
    case SET_STRING:
        if (strlen(text) >= d->size)
            goto bad;
        strcpy((char *)field, text);
        return DCUDA_OK;
    }
    if (errno != 0 || end == text || *end != '\0')
        goto bad;
    return DCUDA_OK;
bad:
    dcu_msg_error("setting %s from %s: cannot read '%s' as %s", d->name, origin, text,
                  type_name(d->type));
    return DCUDA_ERR_SETTING;
}

/* Looks a name up case-blind, with '-' standing for '_'. */
static const setting_desc_t *find_setting(const char *name, size_t len)
{
    char norm[64];
    if (len == 0 || len >= sizeof norm)
        return NULL;
    for (size_t k = 0; k < len; k++)
        norm[k] = name[k] == '-' ? '_' : (char)toupper((unsigned char)name[k]);
    norm[len] = '\0';
    for (size_t i = 0; i < SETTINGS_COUNT; i++)
        if (strcmp(norm, settings_table[i].name) == 0)
            return &settings_table[i];
    return NULL;
}

static dcuda_status_t load_environment(dcuda_settings_t *s)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "DCUDA_", 6) != 0)
            continue;
        const char *name = *e + 6, *eq = strchr(name, '=');
        if (!eq)
            continue;
        const setting_desc_t *d = find_setting(name, (size_t)(eq - name));
        if (!d) {
            dcu_msg_warn("unknown setting %.*s ignored (dcuda_info lists them)", (int)(eq - *e),
                         *e);
            continue;
        }
        dcuda_status_t st = parse_value(d, eq + 1, "the environment", s);
        if (st != DCUDA_OK)
            return st;
    }
    return DCUDA_OK;
}

static dcuda_status_t load_arguments(int argc, char **argv, dcuda_settings_t *s)
{
    for (int i = 1; i < argc && argv; i++) {
        const char *a = argv[i];
        if (!a || strncmp(a, "--dcuda-", 8) != 0)
            continue;
        const char *name = a + 8, *eq = strchr(name, '=');
        const setting_desc_t *d = find_setting(name, eq ? (size_t)(eq - name) : strlen(name));
        if (!d || !eq) {
            dcu_msg_error("argument %s: %s (expected --dcuda-<setting>=<value>)", a,
                          d ? "missing value" : "unknown setting");
            return DCUDA_ERR_SETTING;
        }
        dcuda_status_t st = parse_value(d, eq + 1, "the command line", s);
        if (st != DCUDA_OK)
            return st;
    }
    return DCUDA_OK;
}

/* Bounds of the settings that have them. */
#define SETTING_RANKS_MAX (1L << 20)
#define SETTING_LOG_ENTRIES_MIN 16L
#define SETTING_LOG_ENTRIES_MAX (1L << 20)

static dcuda_status_t validate(const dcuda_settings_t *s)
{
    if (strcmp(s->backend, "auto") && strcmp(s->backend, "cpu") && strcmp(s->backend, "cuda")) {
        dcu_msg_error("setting BACKEND: '%s' is not auto, cpu or cuda", s->backend);
        return DCUDA_ERR_SETTING;
    }
    if (s->ranks < 0 || s->ranks > SETTING_RANKS_MAX) {
        dcu_msg_error("setting RANKS: %ld is not in 0..%ld", s->ranks, SETTING_RANKS_MAX);
        return DCUDA_ERR_SETTING;
    }
    if (s->processes < 0 || s->processes > DCUDA_MAX_PROCESSES) {
        dcu_msg_error("setting PROCESSES: %ld is not in 0..%d", s->processes, DCUDA_MAX_PROCESSES);
        return DCUDA_ERR_SETTING;
    }
    if (!(s->watchdog >= 0)) {
        dcu_msg_error("setting WATCHDOG: %g is not a number of seconds >= 0", s->watchdog);
        return DCUDA_ERR_SETTING;
    }
    if (s->log_entries < SETTING_LOG_ENTRIES_MIN || s->log_entries > SETTING_LOG_ENTRIES_MAX ||
        (s->log_entries & (s->log_entries - 1))) {
        dcu_msg_error("setting LOG_ENTRIES: %ld is not a power of two in %ld..%ld", s->log_entries,
                      SETTING_LOG_ENTRIES_MIN, SETTING_LOG_ENTRIES_MAX);
        return DCUDA_ERR_SETTING;
    }
    if (strcmp(s->net, "auto") && strcmp(s->net, "mpi") && strcmp(s->net, "ucx") &&
        strcmp(s->net, "none")) {
        dcu_msg_error("setting NET: '%s' is not auto, mpi, ucx or none", s->net);
        return DCUDA_ERR_SETTING;
    }
    if (s->net_force != 0 && s->net_force != 1) {
        dcu_msg_error("setting NET_FORCE: %ld is not 0 or 1", s->net_force);
        return DCUDA_ERR_SETTING;
    }
    if (s->notif_start > 0xffffffffUL) {
        dcu_msg_error("setting NOTIF_START: %lu does not fit 32 bits", s->notif_start);
        return DCUDA_ERR_SETTING;
    }
    return DCUDA_OK;
}

dcuda_status_t dcu_settings_load(int argc, char **argv, dcuda_settings_t *out)
{
    dcuda_settings_t s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < SETTINGS_COUNT; i++)
        if (parse_value(&settings_table[i], settings_table[i].def, "the defaults", &s))
            return DCUDA_ERR_SETTING;
    dcuda_status_t st = load_environment(&s);
    if (st == DCUDA_OK)
        st = load_arguments(argc, argv, &s);
    if (st == DCUDA_OK)
        st = validate(&s);
    if (st == DCUDA_OK)
        *out = s;
    return st;
}

void dcuda_settings_print(FILE *out)
{
    fprintf(out, "%-24s %-7s %-8s %-10s %s\n", "variable", "type", "default", "value", "meaning");
    for (size_t i = 0; i < SETTINGS_COUNT; i++) {
        const setting_desc_t *d = &settings_table[i];
        char var[64];
        snprintf(var, sizeof var, "DCUDA_%s", d->name);
        const char *value = getenv(var);
        fprintf(out, "%-24s %-7s %-8s %-10s %s\n", var, type_name(d->type), d->def,
                value ? value : "(unset)", d->desc);
    }
    fprintf(out, "Each can also be given as --dcuda-<name>=<value>, e.g. --dcuda-ranks=64.\n");
}
