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
/* The lowest PBKDF2 iteration count a file or property may carry (wolfJCE's
 * minimum).  Fuzz builds (-DWKS_FUZZ=ON, docs/FUZZING.md) accept any count
 * from 1, so that the fuzzers can load with the password and reach the code
 * behind the MACs at thousands of inputs per second; no other build can. */
#ifdef WKS_FUZZING
#define WKS_MIN_ITERATIONS 1
#else
#define WKS_MIN_ITERATIONS 10000
#endif
#define WKS_DEFAULT_MAX_CHAIN 100
#define WKS_DEFAULT_MAX_ENTRY_SIZE 10485760
#define WKS_DEFAULT_MAX_ITERATIONS 5000000
#define WKS_DEFAULT_CACHE_TTL_SEC 300
#define WKS_DEFAULT_CACHE_MAX 1024
/* libwks.wks.maxFileSize: the largest keystore file a load reads and a
 * save writes (256 MiB: 25 entries of the largest default maxEntrySize,
 * or hundreds of thousands of ordinary ones). */
#define WKS_DEFAULT_MAX_FILE_SIZE 268435456
/* libwks.convert.maxKdfIterations: the key-derivation work one conversion
 * call may do (src/convert/kdfmeter.h): the sum of the iteration counts of
 * the derivations it runs, 20 derivations at the default
 * maxIterationCount. */
#define WKS_DEFAULT_MAX_KDF_ITERATIONS 100000000
#define WKS_MAX_KDF_THREADS 16

/* The settings in force, resolved from the properties. */
typedef struct {
	int32_t iteration_count;  /* wolfjce.wks.iterationCount */
	int32_t max_chain;        /* wolfjce.wks.maxCertChainLength */
	int32_t max_entry_size;   /* wolfjce.wks.maxEntrySize */
	int32_t max_iterations;   /* libwks.wks.maxIterationCount */
	uint64_t max_file_size;   /* libwks.wks.maxFileSize (bytes) */
	uint64_t max_kdf_iterations; /* libwks.convert.maxKdfIterations */
	int require_integrity;    /* libwks.wks.requireIntegrity */
	int cache_enabled;        /* wolfjce.keystore.kekCacheEnabled */
	uint64_t cache_ttl_ms;    /* wolfjce.keystore.kekCacheTtlSec * 1000, saturating */
	uint64_t cache_idle_ms;   /* libwks.keystore.kekCacheIdleSec * 1000; 0 = off */
	size_t cache_max_entries; /* libwks.keystore.kekCacheMaxEntries */
	wks_kdf_impl kdf_impl;    /* libwks.kdf.impl */
	int kdf_threads;          /* libwks.kdf.threads, 0 = auto */
	/* Not a property: the store's library context (wks_store_new_ex();
	 * NULL = OpenSSL's default), set by wks__store_settings(). */
	const struct wks_crypto_ctx *crypto;
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

/* ---- Internal to src/config (values.c, props.c, parse.c) ---------------- */

/* The known properties, in a fixed order. */
enum {
	WKS_P_ITERATIONS,        /* wolfjce.wks.iterationCount */
	WKS_P_MAX_CHAIN,         /* wolfjce.wks.maxCertChainLength */
	WKS_P_MAX_ENTRY,         /* wolfjce.wks.maxEntrySize */
	WKS_P_CACHE_ENABLED,     /* wolfjce.keystore.kekCacheEnabled */
	WKS_P_CACHE_TTL,         /* wolfjce.keystore.kekCacheTtlSec */
	WKS_P_MAX_ITERATIONS,    /* libwks.wks.maxIterationCount */
	WKS_P_REQUIRE_INTEGRITY, /* libwks.wks.requireIntegrity */
	WKS_P_CACHE_MAX,         /* libwks.keystore.kekCacheMaxEntries */
	WKS_P_CACHE_IDLE,        /* libwks.keystore.kekCacheIdleSec */
	WKS_P_KDF_IMPL,          /* libwks.kdf.impl */
	WKS_P_KDF_THREADS,       /* libwks.kdf.threads */
	WKS_P_MAX_FILE,          /* libwks.wks.maxFileSize */
	WKS_P_MAX_KDF_ITER,      /* libwks.convert.maxKdfIterations */
	WKS_PROP_COUNT
};

/* How a value is parsed.  Every value is first trimmed as Java's
 * String.trim() does (Security.getProperty() returns it so): every
 * leading and trailing character <= U+0020 goes (see wks__prop_trim). */
enum {
	WKS_PK_INT,      /* Integer.parseInt */
	WKS_PK_LONG,     /* Long.parseLong */
	WKS_PK_BOOL,     /* "true" in any case; else false */
	WKS_PK_KDF_IMPL  /* "native" | "openssl", any case */
};

typedef struct {
	const char *name;
	int kind;
	int64_t def;      /* the default, also used for bad values */
	int64_t min, max; /* valid range (inclusive) */
} wks_prop_desc;

extern const wks_prop_desc wks__prop_descs[WKS_PROP_COUNT];

/* Index of a known property, or -1. */
int wks__prop_find(const char *name);

/* The bounds [*start, *start + *len) of s[0..len) without what Java's
 * String.trim() removes: every leading and trailing byte <= 0x20, and the
 * modified-UTF-8 U+0000 (C0 80, how the properties parser and the API
 * spell a NUL) at either end. */
void wks__prop_trim(const char *s, size_t len, size_t *start, size_t *out_len);

/* The value in force for text `v` (NULL, "" or blank = unset) of property
 * `id`; `v` is trimmed first (wks__prop_trim).
 * A bad value gives the default and a reason in why ("" if good). */
int64_t wks__prop_eval(int id, const char *v, char *why, size_t why_len);

/* The text of value `v` of property `id` ("true", "native", "300"...). */
void wks__prop_format(char *buf, size_t buf_len, int id, int64_t v);

/* Fill settings from the values of all known properties. */
void wks__settings_from_values(wks_settings *s, const int64_t v[WKS_PROP_COUNT]);

/* For tests: forget every process-wide property (the API and the file
 * layers).  The $WKS_PROPERTIES file is not read again. */
void wks__props_reset_process(void);

/* Upper bound on the size of a properties file. */
#define WKS_PROPS_FILE_MAX (4u << 20)

#endif
