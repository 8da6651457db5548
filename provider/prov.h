/*
 * The wks provider (wks.so): shared declarations of provider.c and
 * store.c.  See docs/PROVIDER.md.
 */
#ifndef WKS_PROVIDER_PROV_H
#define WKS_PROVIDER_PROV_H

#include <openssl/core.h>
#include <openssl/core_dispatch.h>

/* Reason codes of the errors the provider puts on OpenSSL's queue; their
 * texts are in provider.c (get_reason_strings). */
#define WKSP_R_BAD_URI 1
#define WKSP_R_INTEGRITY 2
#define WKSP_R_NOT_FOUND 3
#define WKSP_R_PASSWORD 4
#define WKSP_R_LOAD 5
#define WKSP_R_NO_PASSWORD 6
#define WKSP_R_INTERNAL 7

/* The provider context: the core's handle and its error functions. */
typedef struct {
	const OSSL_CORE_HANDLE *handle;
	OSSL_FUNC_core_new_error_fn *new_error;
	OSSL_FUNC_core_set_error_debug_fn *set_error_debug;
	OSSL_FUNC_core_vset_error_fn *vset_error;
	OSSL_FUNC_core_set_error_mark_fn *set_error_mark;
	OSSL_FUNC_core_pop_error_to_mark_fn *pop_error_to_mark;
	OSSL_FUNC_core_clear_last_error_mark_fn *clear_last_error_mark;
} wksp_provctx;

/* Put an error on the calling thread's OpenSSL queue through the core. */
#define wksp_raise(pc, reason, ...) \
	wksp__raise((pc), __FILE__, __LINE__, __func__, (reason), __VA_ARGS__)
void wksp__raise(const wksp_provctx *pc, const char *file, int line,
		 const char *func, int reason, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* The OSSL_OP_STORE dispatch table (store.c). */
extern const OSSL_DISPATCH wksp_store_functions[];

#endif
