/*
 * The wks provider (wks.so): shared declarations of provider.c and
 * store.c.  See docs/PROVIDER.md.
 */
#ifndef WKS_PROVIDER_PROV_H
#define WKS_PROVIDER_PROV_H

#include <openssl/core.h>
#include <openssl/core_dispatch.h>

#include <wks/fork.h>
#include <wks/uri.h>
#include <wks/wks.h>

/* Reason codes of the errors the provider puts on OpenSSL's queue; their
 * texts are in provider.c (get_reason_strings). */
#define WKSP_R_BAD_URI 1
#define WKSP_R_INTEGRITY 2
#define WKSP_R_NOT_FOUND 3
#define WKSP_R_PASSWORD 4
#define WKSP_R_LOAD 5
#define WKSP_R_NO_PASSWORD 6
#define WKSP_R_INTERNAL 7
#define WKSP_R_CONFIG 8
#define WKSP_R_BAD_SEARCH 9
#define WKSP_R_BAD_REFERENCE 10

/* After WKSP_R_INTEGRITY for a key entry that the store password did not
 * open although the store's MAC verified with it: the likely cause (the
 * key's password is not the store's), for the error's text. */
#define WKSP_OWN_KEY_PW_HINT \
	"the store password opens the store but not this key, whose " \
	"password differs (e.g. after wks passwd --store-only): make it the " \
	"store password with wks keypasswd (wks passwd changes both " \
	"together), or give the key password (keypass="

/* A gettable provider parameter (OSSL_PROVIDER_get_params()), a
 * diagnostic: the number of stores kept now (unsigned integer). */
#define WKSP_PARAM_KEPT_STORES "wks-kept-stores"
/* Another: the KEK cache hits of the stores kept now, summed (keys served
 * without a PBKDF2 run; unsigned integer). */
#define WKSP_PARAM_KEPT_CACHE_HITS "wks-kept-cache-hits"
/* Another: whether key references are read (the references setting: 1
 * yes, 0 no, -1 a bad value; integer), for `wks check-reference`. */
#define WKSP_PARAM_REFERENCES "wks-references"

#include <pthread.h>
#include <stdint.h>

typedef struct wksp_kept wksp_kept;

/* The provider context: the core's handle and its error functions, the
 * configuration from the provider's openssl.cnf section, and the stores
 * kept for reuse (keep.c). */
typedef struct {
	const OSSL_CORE_HANDLE *handle;
	/* A child of the calling application's library context
	 * (OSSL_LIB_CTX_new_child()): the stores' cryptography is fetched
	 * from it (wks_store_new_ex()), so it runs on the application's
	 * providers and default properties (FIPS included).  This provider
	 * offers only OSSL_OP_STORE, so those fetches never come back here. */
	OSSL_LIB_CTX *libctx;
	OSSL_FUNC_core_new_error_fn *new_error;
	OSSL_FUNC_core_set_error_debug_fn *set_error_debug;
	OSSL_FUNC_core_vset_error_fn *vset_error;
	OSSL_FUNC_core_set_error_mark_fn *set_error_mark;
	OSSL_FUNC_core_pop_error_to_mark_fn *pop_error_to_mark;
	OSSL_FUNC_core_clear_last_error_mark_fn *clear_last_error_mark;

	/* kek-cache = yes|no (-1: not configured, libwks's property
	 * wolfjce.keystore.kekCacheEnabled decides), kek-cache-ttl. */
	int kek_cache;
	char kek_ttl[24];
	/* A bad value in the section: OpenSSL 3.0 drops the reason of a
	 * provider that fails to activate from openssl.cnf, so the provider
	 * activates and every open fails with this reason instead. */
	char config_error[512];
	/* references = yes|no: 1 registers the key reference decoder
	 * (decoder.c); -1 (a bad value) registers it too, so that a reference
	 * fails with config_error instead of as an unknown PEM block. */
	int references;
	/* The core's BIO_gets and BIO_ctrl, for the decoder's reads of an
	 * OSSL_CORE_BIO (ctrl: tell and seek; NULL if the core lacks it). */
	OSSL_FUNC_BIO_gets_fn *bio_gets;
	OSSL_FUNC_BIO_ctrl_fn *bio_ctrl;

	pthread_mutex_t keep_lock;
	int keep_lock_ok;
	wks_fork_hook *keep_fork; /* keep.c: holds keep_lock across fork() */
	wksp_kept *kept;          /* most recently used first */
	unsigned char keep_secret[32];
} wksp_provctx;

/*
 * A loaded store for `path` and the store password (pw_len 0: none):
 * one kept from an earlier open with the same file identity and the same
 * password when the KEK cache is on, otherwise a fresh load (kept for
 * later if the cache is on, the load had a password and the file did not
 * change meanwhile).  *out is valid until wksp_keep_release(*handle).
 * Returns WKS_OK or a wks_err (the error not yet raised: the caller does).
 */
int wksp_keep_open(wksp_provctx *pc, wks_store **out, wksp_kept **handle,
		   const char *path, const char *pw, size_t pw_len);
void wksp_keep_release(wksp_provctx *pc, wksp_kept *k);
/*
 * Drop every kept store whose file is gone or changed identity, or which
 * no open has used for longer than its KEK cache TTL; run by every open
 * (store.c).  A dropped store in use is freed when its open releases it.
 */
void wksp_keep_sweep(wksp_provctx *pc);
/* How many stores are kept now (the wks-kept-stores parameter). */
size_t wksp_keep_count(wksp_provctx *pc);
/* Their KEK cache hits, summed (the wks-kept-cache-hits parameter). */
uint64_t wksp_keep_cache_hits(wksp_provctx *pc);
/* Set up / free everything kept (provider init and teardown). */
int wksp_keep_init(wksp_provctx *pc);
void wksp_keep_free_all(wksp_provctx *pc);

/*
 * The password of a source of a URI or a reference (wks_pwsrc_read()) in
 * a new buffer *pw of *pw_len bytes (NUL-terminated) that wksp_pw_free()
 * wipes and frees, like the passwords of the application's passphrase
 * callback.  0, or -1 with libwks's detail (naming `what` and the source,
 * never the password) in err.
 */
int wksp_pw_read(char **pw, size_t *pw_len, const wks_pwsrc *src,
		 const char *what, char *err, size_t errlen);
/* Wipe and free a password of wksp_pw_read() or a callback (NULL: none). */
void wksp_pw_free(char *pw, size_t len);

/* Put an error on the calling thread's OpenSSL queue through the core. */
#define wksp_raise(pc, reason, ...) \
	wksp__raise((pc), __FILE__, __LINE__, __func__, (reason), __VA_ARGS__)
void wksp__raise(const wksp_provctx *pc, const char *file, int line,
		 const char *func, int reason, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* The OSSL_OP_STORE dispatch table (store.c). */
extern const OSSL_DISPATCH wksp_store_functions[];
/* The key reference decoder, "pem" to a private key (decoder.c). */
extern const OSSL_DISPATCH wksp_ref_decoder_functions[];

#endif
