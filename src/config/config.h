/* Properties: names, defaults, parsing, and the resolved settings a store
 * uses.  See the table in include/wks/wks.h and docs/PROPERTIES.md.
 *
 * Resolution order for each property: the store's own value, else the
 * process-wide value set through the API, else the process-wide properties
 * file ($WKS_PROPERTIES, read once at first use, or
 * wks_load_properties_file()), else the default.  Bad values fall back
 * exactly as wolfJCE's (spec section 8) and produce one warning when they
 * are set (not at every use). */
#ifndef WKS_CONFIG_CONFIG_H
#define WKS_CONFIG_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "crypto/crypto.h"

#define WKS_DEFAULT_ITERATIONS 210000
#define WKS_MIN_ITERATIONS 10000
#define WKS_DEFAULT_MAX_CHAIN 100
#define WKS_DEFAULT_MAX_ENTRY_SIZE 10485760
#define WKS_DEFAULT_MAX_ITERATIONS 5000000
#define WKS_DEFAULT_CACHE_TTL_SEC 300
#define WKS_DEFAULT_CACHE_MAX 1024
#define WKS_MAX_KDF_THREADS 16

/* The settings in force, resolved from the properties. */
typedef struct {
	int32_t iteration_count;  /* wolfjce.wks.iterationCount */
	int32_t max_chain;        /* wolfjce.wks.maxCertChainLength */
	int32_t max_entry_size;   /* wolfjce.wks.maxEntrySize */
	int32_t max_iterations;   /* libwks.wks.maxIterationCount */
	int require_integrity;    /* libwks.wks.requireIntegrity */
	int cache_enabled;        /* wolfjce.keystore.kekCacheEnabled */
	uint64_t cache_ttl_ms;    /* wolfjce.keystore.kekCacheTtlSec * 1000, saturating */
	uint64_t cache_idle_ms;   /* libwks.keystore.kekCacheIdleSec * 1000; 0 = off */
	size_t cache_max_entries; /* libwks.keystore.kekCacheMaxEntries */
	wks_kdf_impl kdf_impl;    /* libwks.kdf.impl */
	int kdf_threads;          /* libwks.kdf.threads, 0 = auto */
} wks_settings;

/* A set of name=value properties (one per store, plus the process-wide
 * ones).  Internally locked; all functions are thread-safe. */
typedef struct wks_props wks_props;

int wks__props_new(wks_props **out);
void wks__props_free(wks_props *p);
/* value NULL unsets.  Validates known names and warns on bad values. */
int wks__props_set(wks_props *p, const char *name, const char *value);

/*
 * Resolve the settings for a store with properties `store_props` (may be
 * NULL for the process-wide view).  Fast when nothing changed since the
 * last call (generation counters): the hit path of get_key calls it.
 */
void wks__settings_get(wks_settings *out, wks_props *store_props);

/* Text of the value in force for `name` (see wks_get_property()). */
int wks__property_text(char *buf, size_t buf_len, wks_props *store_props,
                       const char *name);

/* Send a warning to the handler set with wks_set_warning_handler(). */
void wks__warn(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

/* Parse java.security-style properties text, calling fn for each pair.
 * Bounded: no recursion, at most `len` bytes examined.  Returns WKS_OK or
 * WKS_ERR_FORMAT (with the line number in the detail). */
typedef int (*wks_prop_fn)(const char *name, const char *value, void *ctx);
int wks__props_parse(const char *text, size_t len, wks_prop_fn fn, void *ctx);

#endif
