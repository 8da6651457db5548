/*
 * wks.so: an OpenSSL 3 provider whose main operation is an OSSL_STORE
 * loader for wks: URIs (store.c), so that any OpenSSL application can take
 * keys and certificates from a WKS keystore: `-key 'wks:server.wks?alias=
 * server'`, `-CAstore wks:cacerts.wks`; with references = yes also a
 * decoder for key reference files (decoder.c), so that programs reading
 * their key as a PEM file can too.  docs/PROVIDER.md tells how to load it
 * and what is not done yet.
 *
 * The provider is one more client of libwks (include/wks/wks.h), like the
 * wks tool; it performs no key operation itself: keys go back to OpenSSL
 * as PKCS#8 DER and OpenSSL's decoders build ordinary keys of whichever
 * provider the application uses.  It has no global state: everything is
 * in the provider context or the loader context.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include <wks/wks.h>

#include "prov.h"

#define WKSP_NAME "wks: WKS keystores (libwks " WKS_VERSION_STRING ")"

void wksp__raise(const wksp_provctx *pc, const char *file, int line,
		 const char *func, int reason, const char *fmt, ...)
{
	va_list ap;

	if (!pc || !pc->new_error || !pc->vset_error)
		return;
	pc->new_error(pc->handle);
	if (pc->set_error_debug)
		pc->set_error_debug(pc->handle, file, line, func);
	va_start(ap, fmt);
	pc->vset_error(pc->handle, (uint32_t)reason, fmt, ap);
	va_end(ap);
}

static const OSSL_ITEM reason_strings[] = {
	{ WKSP_R_BAD_URI, "bad wks: URI" },
	{ WKSP_R_INTEGRITY,
	  "integrity check failed: wrong password or modified file" },
	{ WKSP_R_NOT_FOUND, "no such entry" },
	{ WKSP_R_PASSWORD, "cannot get the password" },
	{ WKSP_R_LOAD, "cannot load the keystore" },
	{ WKSP_R_NO_PASSWORD, "a password is needed for the private key" },
	{ WKSP_R_INTERNAL, "internal error" },
	{ WKSP_R_CONFIG, "bad wks provider configuration" },
	{ WKSP_R_BAD_SEARCH, "bad search parameter" },
	{ WKSP_R_BAD_REFERENCE, "bad wks key reference" },
	{ 0, NULL }
};

static const OSSL_ITEM *get_reason_strings(void *provctx)
{
	(void)provctx;
	return reason_strings;
}

static const OSSL_ALGORITHM store_algorithms[] = {
	{ "wks", "provider=wks,fips=yes", wksp_store_functions,
	  "WKS keystores (wolfJCE), read with libwks" },
	{ NULL, NULL, NULL, NULL }
};

/* Key reference files (decoder.c), offered only with references = yes:
 * PEM to PEM (named "pem" for input "pem"), so that
 * PEM_read_bio_PrivateKey() and SSL_CTX_use_PrivateKey_file() try it
 * before OpenSSL's own PEM decoder, which takes what it gives. */
static const OSSL_ALGORITHM decoder_algorithms[] = {
	{ "pem", "provider=wks,fips=yes,input=pem", wksp_ref_decoder_functions,
	  "WKS key references (PEM \"WKS KEY REFERENCE\")" },
	{ NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *query_operation(void *provctx, int operation_id,
					     int *no_store)
{
	const wksp_provctx *pc = provctx;

	*no_store = 0;
	if (operation_id == OSSL_OP_STORE)
		return store_algorithms;
	if (operation_id == OSSL_OP_DECODER && pc && pc->references)
		return decoder_algorithms;
	return NULL;
}

static const OSSL_PARAM param_types[] = {
	OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),
	OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),
	OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL,
			0),
	OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),
	OSSL_PARAM_DEFN(WKSP_PARAM_KEPT_STORES, OSSL_PARAM_UNSIGNED_INTEGER,
			NULL, 0),
	OSSL_PARAM_DEFN(WKSP_PARAM_KEPT_CACHE_HITS,
			OSSL_PARAM_UNSIGNED_INTEGER, NULL, 0),
	OSSL_PARAM_DEFN(WKSP_PARAM_REFERENCES, OSSL_PARAM_INTEGER, NULL, 0),
	OSSL_PARAM_END
};

static const OSSL_PARAM *gettable_params(void *provctx)
{
	(void)provctx;
	return param_types;
}

static int get_params(void *provctx, OSSL_PARAM params[])
{
	OSSL_PARAM *p;

	p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME);
	if (p && !OSSL_PARAM_set_utf8_ptr(p, WKSP_NAME))
		return 0;
	p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION);
	if (p && !OSSL_PARAM_set_utf8_ptr(p, WKS_VERSION_STRING))
		return 0;
	p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO);
	if (p && !OSSL_PARAM_set_utf8_ptr(p, "libwks " WKS_VERSION_STRING))
		return 0;
	p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS);
	if (p && !OSSL_PARAM_set_int(p, 1))
		return 0;
	/* A diagnostic (docs/PROVIDER.md, "Kept stores"). */
	p = OSSL_PARAM_locate(params, WKSP_PARAM_KEPT_STORES);
	if (p && !OSSL_PARAM_set_size_t(p, provctx ? wksp_keep_count(provctx)
							: 0))
		return 0;
	p = OSSL_PARAM_locate(params, WKSP_PARAM_KEPT_CACHE_HITS);
	if (p && !OSSL_PARAM_set_uint64(p, provctx ?
					wksp_keep_cache_hits(provctx) : 0))
		return 0;
	p = OSSL_PARAM_locate(params, WKSP_PARAM_REFERENCES);
	if (p && !OSSL_PARAM_set_int(p, provctx ?
				     ((const wksp_provctx *)provctx)->references :
				     0))
		return 0;
	return 1;
}

static void teardown(void *provctx)
{
	if (provctx) {
		wksp_provctx *pc = provctx;

		/* The kept stores hold algorithms fetched from the child
		 * context: free them first. */
		wksp_keep_free_all(pc);
		OSSL_LIB_CTX_free(pc->libctx);
		memset(provctx, 0, sizeof(wksp_provctx));
		OPENSSL_free(provctx);
	}
}

static const OSSL_DISPATCH provider_functions[] = {
	{ OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))teardown },
	{ OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))gettable_params },
	{ OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))get_params },
	{ OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))query_operation },
	{ OSSL_FUNC_PROVIDER_GET_REASON_STRINGS,
	  (void (*)(void))get_reason_strings },
	{ 0, NULL }
};

/* yes/true/on/1: 1; no/false/off/0: 0; anything else: -1. */
static int yes_no(const char *v)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") ||
	    !strcasecmp(v, "on") || !strcmp(v, "1"))
		return 1;
	if (!strcasecmp(v, "no") || !strcasecmp(v, "false") ||
	    !strcasecmp(v, "off") || !strcmp(v, "0"))
		return 0;
	return -1;
}

/*
 * The provider's section of openssl.cnf (docs/PROVIDER.md):
 *   kek-cache = yes|no        keep opened stores with libwks's KEK cache
 *                             on (default: wolfjce.keystore.kekCacheEnabled)
 *   kek-cache-ttl = SECONDS   wolfjce.keystore.kekCacheTtlSec of those
 *   properties = FILE         a libwks properties file, read now
 *   references = yes|no       decode key reference files (default no)
 * A bad value makes every open fail with the reason (config_error).
 */
static int configure(wksp_provctx *pc, OSSL_FUNC_core_get_params_fn *get)
{
	const char *kc = NULL, *ttl = NULL, *props = NULL, *refs = NULL;
	OSSL_PARAM params[5];
	int err, b;

	pc->kek_cache = -1;
	if (!get)
		return 1;
	params[0] = OSSL_PARAM_construct_utf8_ptr("kek-cache", (char **)&kc, 0);
	params[1] = OSSL_PARAM_construct_utf8_ptr("kek-cache-ttl",
						  (char **)&ttl, 0);
	params[2] = OSSL_PARAM_construct_utf8_ptr("properties",
						  (char **)&props, 0);
	params[3] = OSSL_PARAM_construct_utf8_ptr("references",
						  (char **)&refs, 0);
	params[4] = OSSL_PARAM_construct_end();
	if (!get(pc->handle, params))
		return 1;
	if (refs) {
		if ((b = yes_no(refs)) < 0) {
			pc->references = -1;
			snprintf(pc->config_error, sizeof(pc->config_error),
				 "references = %.40s: expected yes or no",
				 refs);
			return 1;
		}
		pc->references = b;
	}
	if (kc) {
		if (!strcasecmp(kc, "yes") || !strcasecmp(kc, "true") ||
		    !strcasecmp(kc, "on") || !strcmp(kc, "1")) {
			pc->kek_cache = 1;
		} else if (!strcasecmp(kc, "no") || !strcasecmp(kc, "false") ||
			   !strcasecmp(kc, "off") || !strcmp(kc, "0")) {
			pc->kek_cache = 0;
		} else {
			snprintf(pc->config_error, sizeof(pc->config_error),
				 "kek-cache = %.40s: expected yes or no", kc);
			return 1;
		}
	}
	if (ttl) {
		size_t n = strspn(ttl, "0123456789");

		if (n == 0 || ttl[n] || n > 9 || strspn(ttl, "0") == n) {
			snprintf(pc->config_error, sizeof(pc->config_error),
				 "kek-cache-ttl = %.40s: expected seconds (1 to "
				 "999999999)", ttl);
			return 1;
		}
		memcpy(pc->kek_ttl, ttl, n + 1);
	}
	if (props && (err = wks_load_properties_file(props)) < 0) {
		snprintf(pc->config_error, sizeof(pc->config_error),
			 "properties = %s: %s: %s", props, wks_strerror(err),
			 wks_error_detail());
		return 1;
	}
	return 1;
}

/* The only exported symbol of wks.so (provider/wks.map). */
__attribute__((visibility("default")))
int OSSL_provider_init(const OSSL_CORE_HANDLE *handle,
		       const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
		       void **provctx);

int OSSL_provider_init(const OSSL_CORE_HANDLE *handle,
		       const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
		       void **provctx)
{
	wksp_provctx *pc = OPENSSL_zalloc(sizeof(*pc));
	OSSL_FUNC_core_get_params_fn *get_params_fn = NULL;
	const OSSL_DISPATCH *in0 = in;

	if (!pc)
		return 0;
	pc->handle = handle;
	for (; in->function_id != 0; in++) {
		switch (in->function_id) {
		case OSSL_FUNC_CORE_NEW_ERROR:
			pc->new_error = OSSL_FUNC_core_new_error(in);
			break;
		case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
			pc->set_error_debug = OSSL_FUNC_core_set_error_debug(in);
			break;
		case OSSL_FUNC_CORE_GET_PARAMS:
			get_params_fn = OSSL_FUNC_core_get_params(in);
			break;
		case OSSL_FUNC_BIO_GETS:
			pc->bio_gets = OSSL_FUNC_BIO_gets(in);
			break;
		case OSSL_FUNC_BIO_CTRL:
			pc->bio_ctrl = OSSL_FUNC_BIO_ctrl(in);
			break;
		case OSSL_FUNC_CORE_VSET_ERROR:
			pc->vset_error = OSSL_FUNC_core_vset_error(in);
			break;
		case OSSL_FUNC_CORE_SET_ERROR_MARK:
			pc->set_error_mark = OSSL_FUNC_core_set_error_mark(in);
			break;
		case OSSL_FUNC_CORE_POP_ERROR_TO_MARK:
			pc->pop_error_to_mark =
				OSSL_FUNC_core_pop_error_to_mark(in);
			break;
		case OSSL_FUNC_CORE_CLEAR_LAST_ERROR_MARK:
			pc->clear_last_error_mark =
				OSSL_FUNC_core_clear_last_error_mark(in);
			break;
		default:
			break;
		}
	}
	/* The child context follows the parent's providers and default
	 * properties as they change (a provider the application loads
	 * after this one appears in it too). */
	if (!(pc->libctx = OSSL_LIB_CTX_new_child(handle, in0)) ||
	    !configure(pc, get_params_fn) || !wksp_keep_init(pc)) {
		wksp_keep_free_all(pc);
		OSSL_LIB_CTX_free(pc->libctx);
		OPENSSL_free(pc);
		return 0;
	}
	*out = provider_functions;
	*provctx = pc;
	return 1;
}
