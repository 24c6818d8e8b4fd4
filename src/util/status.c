/*
 * Names and messages of dcuda_status_t, generated from DCUDA_STATUS_MAP
 * (public: dcuda_status_name, dcuda_status_string).
 */
#include "dcuda/dcuda_status.h"

const char *dcuda_status_name(dcuda_status_t status)
{
    switch (status) {
#define STATUS_NAME_(name, value, msg)                                                             \
    case DCUDA_##name:                                                                             \
        return "DCUDA_" #name;
        DCUDA_STATUS_MAP(STATUS_NAME_)
#undef STATUS_NAME_
    }
    return "DCUDA_(unknown status)";
}

const char *dcuda_status_string(dcuda_status_t status)
{
    switch (status) {
#define STATUS_STRING_(name, value, msg)                                                           \
    case DCUDA_##name:                                                                             \
        return msg;
        DCUDA_STATUS_MAP(STATUS_STRING_)
#undef STATUS_STRING_
    }
    return "unknown status";
}
