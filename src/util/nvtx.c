/*
 * dcuda's NVTX domain (util/nvtx.h): built only with DCUDA_NVTX, over the
 * header-only NVTX v3 of the CUDA toolkit (nvtx3/nvToolsExt.h, which loads
 * a tool with dlopen). The domain and its names are made once, at the first
 * call of any thread; without a tool NVTX hands back a NULL domain, and
 * every call after that returns at its first test.
 */
#include "util/nvtx.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

/* Each range's name, and a colour a group (ARGB). */
static const struct {
    const char *text;
    uint32_t color;
} names[DCU_NVTX_NAMES] = {
    [DCU_NVTX_INIT] = { "dcuda_init", 0xff4c8bf5u },
    [DCU_NVTX_INIT_BOOTSTRAP] = { "dcuda_init: bootstrap", 0xff4c8bf5u },
    [DCU_NVTX_INIT_AGREE] = { "dcuda_init: agree", 0xff7baaf7u },
    [DCU_NVTX_INIT_NODE] = { "dcuda_init: node", 0xff4c8bf5u },
    [DCU_NVTX_INIT_BACKEND] = { "dcuda_init: backend", 0xff4c8bf5u },
    [DCU_NVTX_INIT_PEERS] = { "dcuda_init: peers", 0xff4c8bf5u },
    [DCU_NVTX_INIT_PLUGIN] = { "dcuda_init: network plugin", 0xff7baaf7u },
    [DCU_NVTX_INIT_CONTEXT] = { "dcuda_init: context", 0xff4c8bf5u },
    [DCU_NVTX_INIT_PROXY] = { "dcuda_init: proxy start", 0xff4c8bf5u },
    [DCU_NVTX_RUN] = { "run", 0xff34a853u },
    [DCU_NVTX_RUN_PREPARE] = { "run: prepare", 0xff81c995u },
    [DCU_NVTX_RUN_LAUNCH] = { "run: launch", 0xff81c995u },
    [DCU_NVTX_RUN_SERVE] = { "run: serve", 0xff81c995u },
    [DCU_NVTX_RUN_CONCLUDE] = { "run: conclude", 0xff81c995u },
    [DCU_NVTX_FINISH] = { "dcuda_finish", 0xff9e9e9eu },
    [DCU_NVTX_PROXY_SERVE] = { "proxy: serve", 0xfffb8c00u },
    [DCU_NVTX_PROXY_RECEIVE] = { "proxy: receive", 0xffffb74du },
    [DCU_NVTX_PROXY_DRAIN] = { "proxy: drain", 0xfffb8c00u },
};
#define MARK_COLOR 0xffe53935u

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int opened;         /* 1: domain and handles are final */
static nvtxDomainHandle_t domain; /* NULL: no tool listens */
static nvtxStringHandle_t handles[DCU_NVTX_NAMES];

static void open_domain(void)
{
    domain = nvtxDomainCreateA("dcuda");
    for (int i = 0; domain && i < DCU_NVTX_NAMES; i++)
        handles[i] = nvtxDomainRegisterStringA(domain, names[i].text);
    atomic_store_explicit(&opened, 1, memory_order_release);
}

/* 1 when a tool listens (the domain is made at the first call); after
 * that an acquire load (a plain load on x86) and a test. */
static int listening(void)
{
    if (!atomic_load_explicit(&opened, memory_order_acquire))
        pthread_once(&once, open_domain);
    return domain != NULL;
}

static nvtxEventAttributes_t attributes(uint32_t color)
{
    nvtxEventAttributes_t a = { 0 };
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = color;
    return a;
}

static nvtxEventAttributes_t named(dcu_nvtx_name_t name)
{
    nvtxEventAttributes_t a = attributes(names[name].color);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = handles[name];
    return a;
}

void dcu_nvtx_push(dcu_nvtx_name_t name)
{
    if (!listening())
        return;
    nvtxEventAttributes_t a = named(name);
    nvtxDomainRangePushEx(domain, &a);
}

void dcu_nvtx_pop(void)
{
    if (listening())
        nvtxDomainRangePop(domain);
}

uint64_t dcu_nvtx_start(dcu_nvtx_name_t name)
{
    if (!listening())
        return 0;
    nvtxEventAttributes_t a = named(name);
    return nvtxDomainRangeStartEx(domain, &a);
}

void dcu_nvtx_end(uint64_t range)
{
    if (listening())
        nvtxDomainRangeEnd(domain, range);
}

void dcu_nvtx_mark(const char *fmt, ...)
{
    if (!listening())
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    nvtxEventAttributes_t a = attributes(MARK_COLOR);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = text;
    nvtxDomainMarkEx(domain, &a);
}
