/*
 * A module that claims to be a dcuda plugin of another contract version
 * (the plugin tests load it through DCUDA_PLUGIN_PATH): the library must
 * refuse it, naming both versions, and never call its table.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct fake_plugin {
    uint32_t version;
    const char *name;
} fake_plugin_t;

static const fake_plugin_t fake = { 999u, "ucx" };

__attribute__((visibility("default"))) const void *dcuda_plugin_init(const void *lent)
{
    (void)lent;
    return &fake;
}
