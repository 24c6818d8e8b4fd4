/*
 * The module's side of the plugin contract (plugin_side.c): a module's
 * dcuda_plugin_init keeps what the library lent it, if of its version.
 */
#ifndef DCU_PLUGIN_PLUGIN_SIDE_H
#define DCU_PLUGIN_PLUGIN_SIDE_H

#include "plugin.h"

/* The one symbol a module exports. */
#define DCU_PLUGIN_EXPORT __attribute__((visibility("default")))

/* 1 if `lent` is of this contract's version (kept), else 0. */
int dcu_plugin_side_accept(const dcu_plugin_host_t *lent);

#endif /* DCU_PLUGIN_PLUGIN_SIDE_H */
