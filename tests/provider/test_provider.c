/*
 * The wks provider (provider/, docs/PROVIDER.md) through OpenSSL's own
 * store API, as an application sees it: OSSL_PROVIDER_load() of the built
 * wks.so, then OSSL_STORE_open_ex() with a UI method that plays the
 * user.  Also the URI parser's table of good and bad URIs.
 *
 * This program also links libwks itself (to write the stores), while
 * wks.so carries its own static copy: the two must not interfere.
 */
#define _GNU_SOURCE /* memmem */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/store.h>
#include <openssl/ui.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "prov.h"
#include "testutil.h"

#define STOREPASS "store pass"
#define KEYPASS "other key pass"

static char *dir;
static char path[512], path2[512], tampered[512];
static EVP_PKEY *rsa_key, *ec_key, *ca_key;
static X509 *ca_cert, *leaf_cert, *ec_cert;
static OSSL_PROVIDER *prov_wks, *prov_default;

/* ---- fixtures -------------------------------------------------------------- */

static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer,
		       EVP_PKEY *issuer_key, int ca)
{
	static long serial = 1;
	X509 *x = X509_new();
	X509_NAME *n = X509_get_subject_name(x);
	X509V3_CTX v3;
	X509_EXTENSION *ext;

	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 30);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n);
	X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints,
				  ca ? "critical,CA:TRUE" : "CA:FALSE");
	assert_non_null(ext);
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()) > 0);
	return x;
}

/*
 * path:  "ec" (EC key, self-signed), "root" (trusted CA certificate),
 *        "secret" (AES key), "server" (RSA key, chain leaf + CA), all
 *        under STOREPASS.
 * path2: "server" with key password KEYPASS, store password STOREPASS.
 */
static int make_files(void **state)
{
	X509 *chain[2];
	uint8_t aes[32] = { 1, 2, 3 };
	wks_store *st;
	uint8_t *data;
	size_t len;

	(void)state;
	dir = tu_tmpdir();
	snprintf(path, sizeof(path), "%s/server.wks", dir);
	snprintf(path2, sizeof(path2), "%s/keypass.wks", dir);
	snprintf(tampered, sizeof(tampered), "%s/tampered.wks", dir);

	rsa_key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	ec_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	assert_non_null(rsa_key);
	assert_non_null(ec_key);
	assert_non_null(ca_key);
	ca_cert = make_cert(ca_key, "Test Root", NULL, NULL, 1);
	leaf_cert = make_cert(rsa_key, "server", ca_cert, ca_key, 0);
	ec_cert = make_cert(ec_key, "ec", NULL, NULL, 0);

	st = tu_store_fast();
	chain[0] = leaf_cert;
	chain[1] = ca_cert;
	TU_OK(wks_store_set_pkey(st, "server", rsa_key, chain, 2, STOREPASS,
				 strlen(STOREPASS)));
	TU_OK(wks_store_set_pkey(st, "ec", ec_key, &ec_cert, 1, STOREPASS,
				 strlen(STOREPASS)));
	TU_OK(wks_store_set_cert(st, "root", ca_cert));
	TU_OK(wks_store_set_secret_key(st, "secret", "AES", aes, sizeof(aes),
				       STOREPASS, strlen(STOREPASS)));
	TU_OK(wks_store_save_file(st, path, STOREPASS, strlen(STOREPASS)));
	wks_store_free(st);

	st = tu_store_fast();
	TU_OK(wks_store_set_pkey(st, "server", rsa_key, chain, 2, KEYPASS,
				 strlen(KEYPASS)));
	TU_OK(wks_store_save_file(st, path2, STOREPASS, strlen(STOREPASS)));
	wks_store_free(st);

	/* One byte of the store MAC changed. */
	data = tu_read_file(path, &len);
	data[len - 1] ^= 1;
	tu_write_file(tampered, data, len);
	free(data);

	return 0;
}

static int setup(void **state)
{
	if (!dir)
		make_files(state);
	assert_int_equal(OSSL_PROVIDER_set_default_search_path(NULL,
							       WKS_PROVIDER_DIR), 1);
	prov_wks = OSSL_PROVIDER_load(NULL, "wks");
	if (!prov_wks)
		ERR_print_errors_fp(stdout);
	assert_non_null(prov_wks);
	prov_default = OSSL_PROVIDER_load(NULL, "default");
	assert_non_null(prov_default);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	OSSL_PROVIDER_unload(prov_wks);
	OSSL_PROVIDER_unload(prov_default);
	EVP_PKEY_free(rsa_key);
	EVP_PKEY_free(ec_key);
	EVP_PKEY_free(ca_key);
	X509_free(ca_cert);
	X509_free(leaf_cert);
	X509_free(ec_cert);
	tu_rmtree(dir);
	free(dir);
	return 0;
}

/* ---- the application side ---------------------------------------------------- */

/* What the UI method answers, and what it saw. */
typedef struct {
	const char *pw;   /* NULL: the UI fails (no terminal) */
	int calls;
	char prompt[1024];
} ui_data;

static int ui_read(UI *ui, UI_STRING *uis)
{
	ui_data *u = UI_get0_user_data(ui);

	switch (UI_get_string_type(uis)) {
	case UIT_PROMPT:
	case UIT_VERIFY:
		u->calls++;
		snprintf(u->prompt, sizeof(u->prompt), "%s",
			 UI_get0_output_string(uis));
		if (!u->pw)
			return 0;
		return UI_set_result(ui, uis, u->pw) >= 0;
	default:
		return 1;
	}
}

static UI_METHOD *ui_method(void)
{
	static UI_METHOD *m;

	if (!m) {
		m = UI_create_method("wks test");
		UI_method_set_reader(m, ui_read);
	}
	return m;
}

/* The objects one store URI gives. */
typedef struct {
	int opened;       /* OSSL_STORE_open_ex succeeded */
	int n;
	int types[16];
	EVP_PKEY *keys[16];
	X509 *certs[16];
	char errors[4096]; /* the error queue after the loads, as text */
} result;

static void result_free(result *r)
{
	for (int i = 0; i < r->n; i++) {
		EVP_PKEY_free(r->keys[i]);
		X509_free(r->certs[i]);
	}
	memset(r, 0, sizeof(*r));
}

static void drain_errors(result *r)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p;
	long n;

	ERR_print_errors(b);
	n = BIO_get_mem_data(b, &p);
	snprintf(r->errors, sizeof(r->errors), "%.*s", (int)n, p);
	BIO_free(b);
}

/* The library context and property query of load() (NULL: default). */
static OSSL_LIB_CTX *load_libctx;
static const char *load_propq;
/* A search load() applies (NULL: none), which wks: must support. */
static OSSL_STORE_SEARCH *load_criterion;

static void load(result *r, const char *uri, int expect, const char *alias,
		 ui_data *u)
{
	OSSL_STORE_CTX *ctx;
	OSSL_STORE_SEARCH *s = NULL;

	memset(r, 0, sizeof(*r));
	ERR_clear_error();
	ctx = OSSL_STORE_open_ex(uri, load_libctx, load_propq, ui_method(), u,
				 NULL, NULL, NULL);
	if (!ctx) {
		drain_errors(r);
		return;
	}
	r->opened = 1;
	if (expect)
		assert_int_equal(OSSL_STORE_expect(ctx, expect), 1);
	if (alias) {
		assert_int_equal(OSSL_STORE_supports_search(ctx,
				 OSSL_STORE_SEARCH_BY_ALIAS), 1);
		s = OSSL_STORE_SEARCH_by_alias(alias);
		assert_int_equal(OSSL_STORE_find(ctx, s), 1);
	}
	if (load_criterion) {
		assert_int_equal(OSSL_STORE_supports_search(ctx,
				 OSSL_STORE_SEARCH_get_type(load_criterion)), 1);
		assert_int_equal(OSSL_STORE_find(ctx, load_criterion), 1);
	}
	while (!OSSL_STORE_eof(ctx)) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);

		if (!info)
			continue;
		assert_true(r->n < 16);
		r->types[r->n] = OSSL_STORE_INFO_get_type(info);
		if (r->types[r->n] == OSSL_STORE_INFO_PKEY)
			r->keys[r->n] = OSSL_STORE_INFO_get1_PKEY(info);
		if (r->types[r->n] == OSSL_STORE_INFO_CERT)
			r->certs[r->n] = OSSL_STORE_INFO_get1_CERT(info);
		r->n++;
		OSSL_STORE_INFO_free(info);
	}
	OSSL_STORE_close(ctx);
	OSSL_STORE_SEARCH_free(s);
	drain_errors(r);
}

/* Objects loaded from a store, and then some errors */
static void load_all_errors(result *r, const char *uri, int expect,
			    const char *alias, ui_data *u)
{
	OSSL_STORE_CTX *ctx;

	memset(r, 0, sizeof(*r));
	ERR_clear_error();
	ctx = OSSL_STORE_open_ex(uri, NULL, NULL, ui_method(), u, NULL, NULL,
				 NULL);
	if (!ctx) {
		drain_errors(r);
		return;
	}
	r->opened = 1;
	if (expect)
		OSSL_STORE_expect(ctx, expect);
	if (alias) {
		OSSL_STORE_SEARCH *s = OSSL_STORE_SEARCH_by_alias(alias);

		OSSL_STORE_find(ctx, s);
		OSSL_STORE_SEARCH_free(s);
	}
	while (!OSSL_STORE_eof(ctx)) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);

		if (info) {
			r->types[r->n++] = OSSL_STORE_INFO_get_type(info);
			OSSL_STORE_INFO_free(info);
		}
	}
	drain_errors(r);
	OSSL_STORE_close(ctx);
}

static char *uri_of(const char *file, const char *query)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf), "wks:%s%s%s", file, query ? "?" : "",
		 query ? query : "");
	return buf;
}

/* ---- the tests ------------------------------------------------------------- */

/* Without alias: every entry in alias order, a key before its chain,
 * the chain leaf first; the secret key skipped. */
static void test_provider__all_entries(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	result r;

	(void)state;
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 6);
	assert_int_equal(r.types[0], OSSL_STORE_INFO_PKEY);   /* ec */
	assert_int_equal(EVP_PKEY_eq(r.keys[0], ec_key), 1);
	assert_int_equal(r.types[1], OSSL_STORE_INFO_CERT);
	assert_int_equal(X509_cmp(r.certs[1], ec_cert), 0);
	assert_int_equal(X509_cmp(r.certs[2], ca_cert), 0);   /* root */
	assert_int_equal(r.types[3], OSSL_STORE_INFO_PKEY);   /* server */
	assert_int_equal(EVP_PKEY_eq(r.keys[3], rsa_key), 1);
	assert_int_equal(X509_cmp(r.certs[4], leaf_cert), 0);
	assert_int_equal(X509_cmp(r.certs[5], ca_cert), 0);
	/* The prompt names the file. */
	assert_int_equal(u.calls, 1);
	assert_non_null(strstr(u.prompt, path));
	assert_string_equal(r.errors, "");
	result_free(&r);
}

static void test_provider__expect(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	result r;

	(void)state;
	load(&r, uri_of(path, NULL), OSSL_STORE_INFO_CERT, NULL, &u);
	assert_int_equal(r.n, 4);
	for (int i = 0; i < r.n; i++)
		assert_int_equal(r.types[i], OSSL_STORE_INFO_CERT);
	result_free(&r);

	load(&r, uri_of(path, NULL), OSSL_STORE_INFO_PKEY, NULL, &u);
	assert_int_equal(r.n, 2);
	assert_int_equal(EVP_PKEY_eq(r.keys[0], ec_key), 1);
	assert_int_equal(EVP_PKEY_eq(r.keys[1], rsa_key), 1);
	result_free(&r);

	/* Nothing in WKS is a CRL or a public key. */
	load(&r, uri_of(path, NULL), OSSL_STORE_INFO_CRL, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.errors, "");
	result_free(&r);
}

static void test_provider__alias(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	result r;

	(void)state;
	/* alias= in the URI */
	load(&r, uri_of(path, "alias=server"), 0, NULL, &u);
	assert_int_equal(r.n, 3);
	assert_int_equal(EVP_PKEY_eq(r.keys[0], rsa_key), 1);
	assert_int_equal(X509_cmp(r.certs[1], leaf_cert), 0);
	assert_int_equal(X509_cmp(r.certs[2], ca_cert), 0);
	result_free(&r);

	/* OSSL_STORE_SEARCH_by_alias */
	load(&r, uri_of(path, NULL), OSSL_STORE_INFO_PKEY, "ec", &u);
	assert_int_equal(r.n, 1);
	assert_int_equal(EVP_PKEY_eq(r.keys[0], ec_key), 1);
	result_free(&r);

	/* A trusted certificate entry; a secret key entry gives nothing. */
	load(&r, uri_of(path, "alias=root"), 0, NULL, &u);
	assert_int_equal(r.n, 1);
	assert_int_equal(X509_cmp(r.certs[0], ca_cert), 0);
	result_free(&r);
	load(&r, uri_of(path, "alias=secret"), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	result_free(&r);

	/* Percent-encoded alias. */
	load(&r, uri_of(path, "alias=%73erver"), OSSL_STORE_INFO_PKEY, NULL,
	     &u);
	assert_int_equal(r.n, 1);
	result_free(&r);
}

static void test_provider__missing_alias(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	result r;

	(void)state;
	load_all_errors(&r, uri_of(path, "alias=nope"), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "no such entry"));
	assert_non_null(strstr(r.errors, "nope"));
	load_all_errors(&r, uri_of(path, NULL), 0, "nope", &u);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "no such entry"));
}

static void test_provider__wrong_password(void **state)
{
	ui_data u = { "wrong", 0, "" };
	result r;

	(void)state;
	load_all_errors(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "integrity check failed: wrong "
			       "password or modified file"));
	/* Also from the URI, and with expect CERT: never a partial result. */
	load_all_errors(&r, uri_of(path, "storepass=pass:wrong"),
			OSSL_STORE_INFO_CERT, NULL, &u);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "integrity check failed"));
	/* A wrong key password (store password right). */
	load_all_errors(&r, uri_of(path2, "storepass=pass:" STOREPASS
				   "&keypass=pass:wrong"), 0, NULL, &u);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "integrity check failed"));
	assert_non_null(strstr(r.errors, "wrong key password (keypass=)"));
	/* No key password: the store password opens the store, not the key
	 * (its password is its own, as after wks passwd --store-only): the
	 * error says so and what to do. */
	load_all_errors(&r, uri_of(path2, "storepass=pass:store%20pass"), 0,
			NULL, &u);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "the store password opens the "
			       "store but not this key"));
	assert_non_null(strstr(r.errors, "wks passwd --store-only"));
	assert_non_null(strstr(r.errors, "wks keypasswd"));
}

/*
 * The provider's stores take their cryptography from a child of the
 * application's library context (OSSL_LIB_CTX_new_child()), so:
 *  - with wks and default loaded, keys load (AES, HMAC and PBKDF2 come
 *    from the default provider through the child; the wks provider in
 *    the child offers only STORE, so nothing recurses into it);
 *  - with wks alone, nothing can: the load fails cleanly (a fallback to
 *    OpenSSL's default context would have succeeded);
 *  - with default properties fips=yes (no FIPS provider on Debian 12;
 *    "-fips" lets the wks loader itself be fetched), the child follows
 *    the parent's properties and the load fails cleanly.
 */
static void test_provider__libctx(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *w, *d;
	result r;

	(void)state;
	assert_non_null(lc);
	assert_int_equal(OSSL_PROVIDER_set_default_search_path(lc,
							       WKS_PROVIDER_DIR), 1);
	assert_non_null(w = OSSL_PROVIDER_load(lc, "wks"));
	load_libctx = lc;
	load(&r, uri_of(path, "alias=server"), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "not available from the store's "
			       "OpenSSL library context"));
	result_free(&r);

	assert_non_null(d = OSSL_PROVIDER_load(lc, "default"));
	load(&r, uri_of(path, "alias=server"), 0, NULL, &u);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.types[0], OSSL_STORE_INFO_PKEY);
	assert_int_equal(EVP_PKEY_eq(r.keys[0], rsa_key), 1);
	result_free(&r);

	assert_int_equal(EVP_set_default_properties(lc, "fips=yes"), 1);
	load_propq = "-fips";
	load(&r, uri_of(path, "alias=server"), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "not available from the store's "
			       "OpenSSL library context"));
	result_free(&r);
	load_libctx = NULL;
	load_propq = NULL;
	OSSL_PROVIDER_unload(d);
	OSSL_PROVIDER_unload(w);
	OSSL_LIB_CTX_free(lc);
}

static void test_provider__tampered(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	result r;

	(void)state;
	load_all_errors(&r, uri_of(tampered, NULL), 0, NULL, &u);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "integrity check failed"));
}

/* No password (the UI fails, as without a terminal): certificates only,
 * the integrity check skipped, and no key. */
static void test_provider__no_password(void **state)
{
	ui_data u = { NULL, 0, "" };
	result r;

	(void)state;
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_int_equal(u.calls, 1);
	assert_int_equal(r.n, 4);
	for (int i = 0; i < r.n; i++)
		assert_int_equal(r.types[i], OSSL_STORE_INFO_CERT);
	/* What the UI failure raised is not left on the queue. */
	assert_string_equal(r.errors, "");
	result_free(&r);

	/* The tampered MAC is not checked without a password. */
	load(&r, uri_of(tampered, NULL), OSSL_STORE_INFO_CERT, NULL, &u);
	assert_int_equal(r.n, 4);
	result_free(&r);

	/* keypass= alone: the key (its entry MAC checked with it). */
	load(&r, uri_of(path2, "keypass=pass:other%20key%20pass"),
	     OSSL_STORE_INFO_PKEY, NULL, &u);
	assert_int_equal(r.n, 1);
	assert_int_equal(EVP_PKEY_eq(r.keys[0], rsa_key), 1);
	result_free(&r);

	/* Asking for the key alone says why there is none. */
	load_all_errors(&r, uri_of(path, "alias=server"), OSSL_STORE_INFO_PKEY,
			NULL, &u);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "password is needed"));
}

static void test_provider__uri_passwords(void **state)
{
	ui_data u = { NULL, 0, "" };
	char q[1024], pwfile[600];
	FILE *f;
	result r;

	(void)state;
	/* env: */
	setenv("WKS_TEST_STOREPASS", STOREPASS, 1);
	load(&r, uri_of(path, "alias=server&storepass=env:WKS_TEST_STOREPASS"),
	     OSSL_STORE_INFO_PKEY, NULL, &u);
	assert_int_equal(r.n, 1);
	assert_int_equal(u.calls, 0); /* the callback is not asked */
	result_free(&r);

	/* file: (first line; CRLF accepted) and a key password of its own */
	snprintf(pwfile, sizeof(pwfile), "%s/pw.txt", dir);
	f = fopen(pwfile, "w");
	assert_non_null(f);
	fputs(KEYPASS "\r\nignored\n", f);
	fclose(f);
	snprintf(q, sizeof(q), "storepass=pass:store%%20pass&keypass=file:%s",
		 pwfile);
	load(&r, uri_of(path2, q), OSSL_STORE_INFO_PKEY, NULL, &u);
	assert_int_equal(r.n, 1);
	assert_int_equal(EVP_PKEY_eq(r.keys[0], rsa_key), 1);
	result_free(&r);

	/* The key password from the URI, the store password from the UI. */
	u.pw = STOREPASS;
	load(&r, uri_of(path2, "keypass=pass:other%20key%20pass"), 0, NULL, &u);
	assert_int_equal(r.n, 3);
	result_free(&r);

	/* A source that fails: an error, nothing loaded. */
	load_all_errors(&r, uri_of(path, "storepass=env:WKS_TEST_UNSET_VAR"),
			0, NULL, &u);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "WKS_TEST_UNSET_VAR is not set"));
}

static void test_provider__bad_uri(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	const char *line, *end;
	result r;

	(void)state;
	load(&r, uri_of(path, "alais=server"), 0, NULL, &u);
	assert_false(r.opened);
	assert_non_null(strstr(r.errors, "unknown attribute"));
	load(&r, uri_of(path, "storepass=pass:secret-text&storepass=pass:x"),
	     0, NULL, &u);
	assert_false(r.opened);
	assert_non_null(strstr(r.errors, "given twice"));
	/* The provider never echoes a password.  (OpenSSL's own file
	 * loader, tried first for every URI, does repeat the whole URI in
	 * its "calling stat(...)" error: one more reason why pass: is for
	 * tests only.) */
	line = strstr(r.errors, "bad wks: URI");
	assert_non_null(line);
	end = strchr(line, '\n');
	assert_non_null(end);
	assert_null(memmem(line, (size_t)(end - line), "secret-text", 11));
	/* An unencoded '&' in a password: its tail is not repeated. */
	load(&r, uri_of(path, "storepass=pass:correct&3-horse"), 0, NULL, &u);
	assert_false(r.opened);
	line = strstr(r.errors, "bad wks: URI");
	assert_non_null(line);
	end = strchr(line, '\n');
	assert_non_null(end);
	assert_non_null(memmem(line, (size_t)(end - line), "attribute 2", 11));
	assert_null(memmem(line, (size_t)(end - line), "horse", 5));
	/* ... nor when the tail looks like an alias= that names no
	 * entry: "no entry" does not repeat it. */
	load(&r, uri_of(path, "storepass=pass:store%20pass&alias=3-horse"), 0,
	     NULL, &u);
	assert_int_equal(r.n, 0);
	assert_non_null(strstr(r.errors, "no entry named by the alias="));
	assert_null(strstr(r.errors, "horse"));
	/* An alias given before any password is named. */
	load(&r, uri_of(path, "alias=3-horse&storepass=pass:store%20pass"), 0,
	     NULL, &u);
	assert_non_null(strstr(r.errors, "no entry \"3-horse\""));
	load(&r, "wks:/nonexistent/dir/x.wks", 0, NULL, &u);
	assert_false(r.opened);
	assert_non_null(strstr(r.errors, "No such file"));
}

/* Several threads open and load at once. */
static void *thread_main(void *arg)
{
	char uri[1024];
	long ok = 0;

	(void)arg;
	snprintf(uri, sizeof(uri), "wks:%s?alias=server&storepass=pass:"
		 "store%%20pass", path);
	for (int i = 0; i < 4; i++) {
		OSSL_STORE_CTX *ctx = OSSL_STORE_open_ex(uri, NULL, NULL, NULL,
							 NULL, NULL, NULL, NULL);
		int n = 0;

		if (!ctx)
			continue;
		while (!OSSL_STORE_eof(ctx)) {
			OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);

			if (info) {
				n++;
				OSSL_STORE_INFO_free(info);
			}
		}
		OSSL_STORE_close(ctx);
		ok += n == 3;
	}
	return (void *)ok;
}

static void test_provider__threads(void **state)
{
	pthread_t t[4];
	long total = 0;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, thread_main, NULL), 0);
	for (int i = 0; i < 4; i++) {
		void *rv;

		pthread_join(t[i], &rv);
		total += (long)rv;
	}
	assert_int_equal(total, 16);
}

/*
 * The provider unloaded while a thread that used it lives on: libwks's
 * per-thread state (a pthread key destructor) and its worker threads
 * must not point into an unmapped module when that thread exits (wks.so
 * is linked with -z nodelete).  A library context of its own, so that
 * freeing it really releases the provider.
 */
typedef struct {
	OSSL_LIB_CTX *libctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int loaded, unloaded, n;
} unload_ctx;

static void *unload_thread(void *arg)
{
	unload_ctx *c = arg;
	char uri[1024];
	OSSL_STORE_CTX *ctx;

	snprintf(uri, sizeof(uri), "wks:%s?alias=server&storepass=pass:"
		 "store%%20pass", path);
	ctx = OSSL_STORE_open_ex(uri, c->libctx, NULL, NULL, NULL, NULL, NULL,
				 NULL);
	while (ctx && !OSSL_STORE_eof(ctx)) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);

		if (info) {
			c->n++;
			OSSL_STORE_INFO_free(info);
		}
	}
	OSSL_STORE_close(ctx);
	pthread_mutex_lock(&c->lock);
	c->loaded = 1;
	pthread_cond_broadcast(&c->cond);
	while (!c->unloaded)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	return NULL; /* thread-local destructors run now */
}

static void test_provider__unload(void **state)
{
	unload_ctx c;
	OSSL_PROVIDER *w, *d;
	pthread_t t;

	(void)state;
	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.lock, NULL);
	pthread_cond_init(&c.cond, NULL);
	c.libctx = OSSL_LIB_CTX_new();
	assert_non_null(c.libctx);
	assert_int_equal(OSSL_PROVIDER_set_default_search_path(c.libctx,
							       WKS_PROVIDER_DIR), 1);
	w = OSSL_PROVIDER_load(c.libctx, "wks");
	d = OSSL_PROVIDER_load(c.libctx, "default");
	assert_non_null(w);
	assert_non_null(d);
	assert_int_equal(pthread_create(&t, NULL, unload_thread, &c), 0);
	pthread_mutex_lock(&c.lock);
	while (!c.loaded)
		pthread_cond_wait(&c.cond, &c.lock);
	pthread_mutex_unlock(&c.lock);
	OSSL_PROVIDER_unload(w);
	OSSL_PROVIDER_unload(d);
	OSSL_LIB_CTX_free(c.libctx);
	pthread_mutex_lock(&c.lock);
	c.unloaded = 1;
	pthread_cond_broadcast(&c.cond);
	pthread_mutex_unlock(&c.lock);
	pthread_join(t, NULL);
	assert_int_equal(c.n, 3);
	pthread_mutex_destroy(&c.lock);
	pthread_cond_destroy(&c.cond);
}

/* ---- stores kept with the KEK cache on (kek-cache = yes) ---------------- */

static char slow[512];     /* a store at 30,000 iterations */
static OSSL_LIB_CTX *keep_ctx;

/* A library context configured from an openssl.cnf whose wks section
 * holds `settings`; NULL if the configuration failed (errors queued). */
static OSSL_LIB_CTX *ctx_with_config(const char *settings)
{
	char cnf[600];
	OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
	FILE *f;

	assert_non_null(lc);
	snprintf(cnf, sizeof(cnf), "%s/wks.cnf", dir);
	f = fopen(cnf, "w");
	assert_non_null(f);
	fprintf(f, "openssl_conf = openssl_init\n[openssl_init]\n"
		"providers = provider_sect\n[provider_sect]\n"
		"default = default_sect\nwks = wks_sect\n"
		"[default_sect]\nactivate = 1\n[wks_sect]\n"
		"module = %s/wks.so\n%s\nactivate = 1\n", WKS_PROVIDER_DIR,
		settings);
	fclose(f);
	if (!OSSL_LIB_CTX_load_config(lc, cnf) ||
	    !OSSL_PROVIDER_available(lc, "wks")) {
		OSSL_LIB_CTX_free(lc);
		return NULL;
	}
	return lc;
}

static int keep_setup(void **state)
{
	X509 *chain[2] = { leaf_cert, ca_cert };
	wks_store *st;

	(void)state;
	snprintf(slow, sizeof(slow), "%s/slow.wks", dir);
	TU_OK(wks_store_new(&st));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount",
				     "30000"));
	TU_OK(wks_store_set_pkey(st, "server", rsa_key, chain, 2, STOREPASS,
				 strlen(STOREPASS)));
	TU_OK(wks_store_save_file(st, slow, STOREPASS, strlen(STOREPASS)));
	wks_store_free(st);
	keep_ctx = ctx_with_config("kek-cache = yes\nkek-cache-ttl = 600");
	if (!keep_ctx)
		ERR_print_errors_fp(stdout);
	assert_non_null(keep_ctx);
	return 0;
}

static int keep_teardown(void **state)
{
	(void)state;
	OSSL_LIB_CTX_free(keep_ctx);
	keep_ctx = NULL;
	return 0;
}

/* Keys (and certificates) from a URI in keep_ctx; -1 if the open failed. */
static int keep_load(const char *query, ui_data *u, int expect, int *keys,
		     char *errors, size_t errlen)
{
	OSSL_STORE_CTX *ctx;
	char uri[1024];
	int n = 0;
	BIO *b;
	char *p;
	long len;

	*keys = 0;
	snprintf(uri, sizeof(uri), "wks:%s?%s", slow, query);
	ERR_clear_error();
	ctx = OSSL_STORE_open_ex(uri, keep_ctx, NULL, ui_method(), u, NULL,
				 NULL, NULL);
	if (ctx) {
		if (expect)
			OSSL_STORE_expect(ctx, expect);
		while (!OSSL_STORE_eof(ctx)) {
			OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);

			if (!info)
				continue;
			n++;
			if (OSSL_STORE_INFO_get_type(info) ==
			    OSSL_STORE_INFO_PKEY &&
			    EVP_PKEY_eq(OSSL_STORE_INFO_get0_PKEY(info),
					rsa_key) == 1)
				(*keys)++;
			OSSL_STORE_INFO_free(info);
		}
		OSSL_STORE_close(ctx);
	} else {
		n = -1;
	}
	b = BIO_new(BIO_s_mem());
	ERR_print_errors(b);
	len = BIO_get_mem_data(b, &p);
	snprintf(errors, errlen, "%.*s", (int)len, p);
	BIO_free(b);
	return n;
}

static double ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A reopen runs neither the store MAC's nor the entry's PBKDF2. */
static uint64_t kept_cache_hits(OSSL_LIB_CTX *lc);

/*
 * A reopen runs no PBKDF2, shown without timing: three reopens give the
 * key from the kept store, each a KEK cache hit (wks-kept-cache-hits
 * counts the hits of the kept stores' caches; a fresh load would make a
 * new store whose first get_key derives).  The file cannot be changed in
 * between to prove that no load happens: any write changes its ctime,
 * part of the identity (test_provider__keep_same_stat).
 */
static void test_provider__keep_reopen(void **state)
{
	ui_data u = { NULL, 0, "" };
	char err[4096];
	double t0, first, again = 1e9;
	uint64_t hits;
	int keys;

	(void)state;
	t0 = ms_now();
	assert_int_equal(keep_load("alias=server&storepass=pass:store%20pass",
				   &u, OSSL_STORE_INFO_PKEY, &keys, err,
				   sizeof(err)), 1);
	first = ms_now() - t0;
	assert_int_equal(keys, 1);
	hits = kept_cache_hits(keep_ctx);
	for (int i = 0; i < 3; i++) {
		double t;

		t0 = ms_now();
		assert_int_equal(keep_load("alias=server&storepass=pass:"
					   "store%20pass", &u,
					   OSSL_STORE_INFO_PKEY, &keys, err,
					   sizeof(err)), 1);
		t = ms_now() - t0;
		assert_int_equal(keys, 1);
		if (t < again)
			again = t;
	}
	assert_int_equal(kept_cache_hits(keep_ctx) - hits, 3);
	print_message("first open %.2f ms, reopen %.3f ms (for information)\n",
		      first, again);
	/* The same through the passphrase callback. */
	u.pw = STOREPASS;
	assert_int_equal(keep_load("alias=server", &u, 0, &keys, err,
				   sizeof(err)), 3);
	assert_int_equal(keys, 1);
}

/* A wrong password on a reopen fails exactly as on a first open; a
 * load without a password never gets a key from a kept store. */
static void test_provider__keep_rules(void **state)
{
	ui_data u = { NULL, 0, "" };
	char err[4096];
	int keys;

	(void)state;
	assert_int_equal(keep_load("alias=server&storepass=pass:store%20pass",
				   &u, 0, &keys, err, sizeof(err)), 3);
	assert_int_equal(keep_load("alias=server&storepass=pass:wrong", &u, 0,
				   &keys, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "integrity check failed"));
	/* The store password alone wrong: the store MAC must still fail
	 * (the kept store was verified with another password). */
	assert_int_equal(keep_load("alias=server&storepass=pass:wrong&keypass="
				   "pass:store%20pass", &u, 0, &keys, err,
				   sizeof(err)), 0);
	assert_non_null(strstr(err, "integrity check failed"));
	assert_int_equal(keep_load("storepass=pass:wrong", &u,
				   OSSL_STORE_INFO_CERT, &keys, err,
				   sizeof(err)), 0);
	assert_non_null(strstr(err, "integrity check failed"));
	assert_int_equal(keep_load("alias=server&storepass=pass:store%20pass"
				   "&keypass=pass:wrong", &u, 0, &keys, err,
				   sizeof(err)), 0);
	assert_non_null(strstr(err, "integrity check failed"));
	/* No password: the certificates, no key. */
	assert_int_equal(keep_load("alias=server", &u, 0, &keys, err,
				   sizeof(err)), 2);
	assert_int_equal(keys, 0);
	/* And the right password still works after all that. */
	assert_int_equal(keep_load("alias=server&storepass=pass:store%20pass",
				   &u, 0, &keys, err, sizeof(err)), 3);
	assert_int_equal(keys, 1);
}

/* Several threads reopening kept stores at once (and a wrong password
 * among them): the list is shared, stores are reference counted. */
typedef struct {
	const char *query;
	int want; /* objects each open must give */
	int loops;
	int ok;
} keep_thread_arg;

static void *keep_thread(void *varg)
{
	keep_thread_arg *a = varg;
	char uri[1024];

	snprintf(uri, sizeof(uri), "wks:%s?%s", slow, a->query);
	for (int i = 0; i < a->loops; i++) {
		OSSL_STORE_CTX *ctx = OSSL_STORE_open_ex(uri, keep_ctx, NULL,
							 NULL, NULL, NULL,
							 NULL, NULL);
		int n = 0;

		while (ctx && !OSSL_STORE_eof(ctx)) {
			OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);

			if (info) {
				n++;
				OSSL_STORE_INFO_free(info);
			}
		}
		OSSL_STORE_close(ctx);
		ERR_clear_error();
		a->ok += n == a->want;
	}
	return NULL;
}

static void test_provider__keep_threads(void **state)
{
	keep_thread_arg args[4] = {
		{ "alias=server&storepass=pass:store%20pass", 3, 50, 0 },
		{ "alias=server&storepass=pass:store%20pass", 3, 50, 0 },
		{ "storepass=pass:store%20pass", 3, 50, 0 },
		/* each of these runs the store MAC's PBKDF2 */
		{ "alias=server&storepass=pass:wrong", 0, 3, 0 },
	};
	pthread_t t[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, keep_thread,
						&args[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(args[i].ok, args[i].loops);
	}
}

/* A changed file is read again. */
static void test_provider__keep_file_changed(void **state)
{
	ui_data u = { NULL, 0, "" };
	char err[4096];
	wks_store *st;
	int keys;

	(void)state;
	assert_int_equal(keep_load("storepass=pass:store%20pass", &u,
				   OSSL_STORE_INFO_CERT, &keys, err,
				   sizeof(err)), 2);
	st = tu_store_fast();
	TU_OK(wks_store_load_file(st, slow, STOREPASS, strlen(STOREPASS)));
	TU_OK(wks_store_set_cert(st, "zz-new", ec_cert));
	TU_OK(wks_store_save_file(st, slow, STOREPASS, strlen(STOREPASS)));
	wks_store_free(st);
	assert_int_equal(keep_load("storepass=pass:store%20pass", &u,
				   OSSL_STORE_INFO_CERT, &keys, err,
				   sizeof(err)), 3);
	assert_int_equal(keep_load("alias=zz-new&storepass=pass:store%20pass",
				   &u, 0, &keys, err, sizeof(err)), 1);
}

/* ---- kept stores dropped: file changed or gone, idle past the TTL ------- */

static int find_wks(OSSL_PROVIDER *p, void *arg)
{
	if (strcmp(OSSL_PROVIDER_get0_name(p), "wks") == 0) {
		*(OSSL_PROVIDER **)arg = p;
		return 0;
	}
	return 1;
}

/* The provider's wks-kept-stores diagnostic in a library context. */
static size_t kept_stores(OSSL_LIB_CTX *lc)
{
	OSSL_PROVIDER *p = NULL;
	OSSL_PARAM params[2];
	size_t n = (size_t)-1;

	OSSL_PROVIDER_do_all(lc, find_wks, &p);
	assert_non_null(p);
	params[0] = OSSL_PARAM_construct_size_t(WKSP_PARAM_KEPT_STORES, &n);
	params[1] = OSSL_PARAM_construct_end();
	assert_int_equal(OSSL_PROVIDER_get_params(p, params), 1);
	assert_true(OSSL_PARAM_modified(&params[0]));
	return n;
}

/* The provider's wks-kept-cache-hits diagnostic in a library context. */
static uint64_t kept_cache_hits(OSSL_LIB_CTX *lc)
{
	OSSL_PROVIDER *p = NULL;
	OSSL_PARAM params[2];
	uint64_t n = UINT64_MAX;

	OSSL_PROVIDER_do_all(lc, find_wks, &p);
	assert_non_null(p);
	params[0] = OSSL_PARAM_construct_uint64(WKSP_PARAM_KEPT_CACHE_HITS,
						&n);
	params[1] = OSSL_PARAM_construct_end();
	assert_int_equal(OSSL_PROVIDER_get_params(p, params), 1);
	assert_true(OSSL_PARAM_modified(&params[0]));
	return n;
}

/* Objects from wks:FILE?QUERY in a library context (-1: the open
 * failed); *keys counts the private keys equal to rsa_key. */
static int ctx_load(OSSL_LIB_CTX *lc, const char *file, const char *query,
		    int *keys)
{
	OSSL_STORE_CTX *ctx;
	char uri[1024];
	int n = 0;

	*keys = 0;
	snprintf(uri, sizeof(uri), "wks:%s%s%s", file, query ? "?" : "",
		 query ? query : "");
	ERR_clear_error();
	ctx = OSSL_STORE_open_ex(uri, lc, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!ctx) {
		ERR_clear_error();
		return -1;
	}
	while (!OSSL_STORE_eof(ctx)) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);

		if (!info)
			continue;
		n++;
		if (OSSL_STORE_INFO_get_type(info) == OSSL_STORE_INFO_PKEY &&
		    EVP_PKEY_eq(OSSL_STORE_INFO_get0_PKEY(info), rsa_key) == 1)
			(*keys)++;
		OSSL_STORE_INFO_free(info);
	}
	OSSL_STORE_close(ctx);
	ERR_clear_error();
	return n;
}

/* A copy of `path` (fast iterations) named NAME in the temp folder. */
static void copy_store(char *out, size_t out_len, const char *name)
{
	uint8_t *data;
	size_t len;

	snprintf(out, out_len, "%s/%s", dir, name);
	data = tu_read_file(path, &len);
	tu_write_file(out, data, len);
	free(data);
}

/* Rewrite a store with one more certificate entry: another identity. */
static void change_store(const char *file, const char *alias)
{
	wks_store *st = tu_store_fast();

	TU_OK(wks_store_load_file(st, file, STOREPASS, strlen(STOREPASS)));
	TU_OK(wks_store_set_cert(st, alias, ec_cert));
	TU_OK(wks_store_save_file(st, file, STOREPASS, strlen(STOREPASS)));
	wks_store_free(st);
}

#define SERVER_PW "alias=server&storepass=pass:store%20pass"

/* A kept store whose file changed is dropped at an open of another path;
 * one whose file was deleted too, even at an open that fails. */
static void test_provider__keep_sweep_changed(void **state)
{
	char a[600], b[600];
	OSSL_LIB_CTX *lc;
	int keys;

	(void)state;
	copy_store(a, sizeof(a), "sweep-a.wks");
	copy_store(b, sizeof(b), "sweep-b.wks");
	lc = ctx_with_config("kek-cache = yes\nkek-cache-ttl = 600");
	assert_non_null(lc);
	assert_int_equal(kept_stores(lc), 0);
	assert_int_equal(ctx_load(lc, a, SERVER_PW, &keys), 3);
	assert_int_equal(keys, 1);
	assert_int_equal(kept_stores(lc), 1);
	assert_int_equal(ctx_load(lc, b, SERVER_PW, &keys), 3);
	assert_int_equal(kept_stores(lc), 2);
	/* Loads without a password are not kept. */
	assert_int_equal(ctx_load(lc, path2, NULL, &keys), 2);
	assert_int_equal(kept_stores(lc), 2);

	/* a changes: nothing happens until the next open... */
	change_store(a, "zz-sweep");
	assert_int_equal(kept_stores(lc), 2);
	/* ...of any path: b's (a reuse) drops a's store. */
	assert_int_equal(ctx_load(lc, b, SERVER_PW, &keys), 3);
	assert_int_equal(keys, 1);
	assert_int_equal(kept_stores(lc), 1);
	/* a is read again (with its new entry) and kept again. */
	assert_int_equal(ctx_load(lc, a, "alias=zz-sweep&storepass=pass:store"
				  "%20pass", &keys), 1);
	assert_int_equal(kept_stores(lc), 2);

	/* b deleted: an open that fails (no such file) drops its store. */
	assert_int_equal(unlink(b), 0);
	assert_int_equal(ctx_load(lc, b, SERVER_PW, &keys), -1);
	assert_int_equal(kept_stores(lc), 1);
	/* And a is still served from its kept store. */
	assert_int_equal(ctx_load(lc, a, SERVER_PW, &keys), 3);
	assert_int_equal(keys, 1);
	assert_int_equal(kept_stores(lc), 1);
	assert_int_equal(unlink(a), 0);
	assert_int_equal(ctx_load(lc, "/nonexistent/x.wks", NULL, &keys), -1);
	assert_int_equal(kept_stores(lc), 0);
	OSSL_LIB_CTX_free(lc);
}

/* Save a copy of `path` with one more certificate entry, ALIAS. */
static void store_with_cert(const char *file, const char *alias)
{
	wks_store *st = tu_store_fast();

	TU_OK(wks_store_load_file(st, path, STOREPASS, strlen(STOREPASS)));
	TU_OK(wks_store_set_cert(st, alias, ec_cert));
	TU_OK(wks_store_save_file(st, file, STOREPASS, strlen(STOREPASS)));
	wks_store_free(st);
}

/*
 * A file replaced by another of the same size, in place (same inode) and
 * with its modification time put back, as tar -x of a reproducible
 * archive or cp -p can leave it: device, inode, size and mtime are the
 * same, only the change time (which no unprivileged program can set)
 * tells.  The provider must load the new content, not serve the kept
 * store of the old one.
 */
static void test_provider__keep_same_stat(void **state)
{
	char a[600], b[600];
	struct stat sa, sb, s2;
	struct timespec times[2], ms10 = { 0, 10000000 };
	OSSL_LIB_CTX *lc;
	uint8_t *data;
	size_t len;
	int keys, fd, tries = 0;

	(void)state;
	snprintf(a, sizeof(a), "%s/same-a.wks", dir);
	snprintf(b, sizeof(b), "%s/same-b.wks", dir);
	store_with_cert(a, "zz-aaaa");
	store_with_cert(b, "zz-bbbb");
	assert_int_equal(stat(a, &sa), 0);
	assert_int_equal(stat(b, &sb), 0);
	assert_int_equal(sa.st_size, sb.st_size);
	lc = ctx_with_config("kek-cache = yes\nkek-cache-ttl = 600");
	assert_non_null(lc);
	assert_int_equal(ctx_load(lc, a, "alias=zz-aaaa&storepass=pass:store"
				  "%20pass", &keys), 1);
	assert_int_equal(ctx_load(lc, a, SERVER_PW, &keys), 3);
	assert_int_equal(keys, 1);
	assert_int_equal(kept_stores(lc), 1);

	/* b's bytes into a, in place, and a's times put back. */
	data = tu_read_file(b, &len);
	fd = open(a, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	free(data);
	times[0] = sa.st_atim;
	times[1] = sa.st_mtim;
	do {
		/* Each utimensat() sets the ctime to now; the kernel's clock
		 * for it is coarse (ms): wait until it differs. */
		if (tries)
			nanosleep(&ms10, NULL);
		assert_int_equal(futimens(fd, times), 0);
		assert_int_equal(fstat(fd, &s2), 0);
	} while ((s2.st_ctim.tv_sec == sa.st_ctim.tv_sec &&
		  s2.st_ctim.tv_nsec == sa.st_ctim.tv_nsec) && ++tries < 100);
	assert_int_equal(close(fd), 0);
	assert_int_equal(s2.st_dev, sa.st_dev);
	assert_int_equal(s2.st_ino, sa.st_ino);
	assert_int_equal(s2.st_size, sa.st_size);
	assert_int_equal(s2.st_mtim.tv_sec, sa.st_mtim.tv_sec);
	assert_int_equal(s2.st_mtim.tv_nsec, sa.st_mtim.tv_nsec);

	/* The new content, not the kept store of the old one. */
	assert_int_equal(ctx_load(lc, a, "alias=zz-bbbb&storepass=pass:store"
				  "%20pass", &keys), 1);
	assert_true(ctx_load(lc, a, "alias=zz-aaaa&storepass=pass:store"
			     "%20pass", &keys) <= 0);
	assert_int_equal(ctx_load(lc, a, SERVER_PW, &keys), 3);
	assert_int_equal(keys, 1);
	OSSL_LIB_CTX_free(lc);
	assert_int_equal(unlink(a), 0);
	assert_int_equal(unlink(b), 0);
}

/* A kept store no open has used for longer than kek-cache-ttl is dropped
 * at the next open (of any path). */
static void test_provider__keep_sweep_idle(void **state)
{
	struct timespec two = { 2, 200000000 };
	char a[600];
	OSSL_LIB_CTX *lc;
	int keys;

	(void)state;
	copy_store(a, sizeof(a), "idle-a.wks");
	lc = ctx_with_config("kek-cache = yes\nkek-cache-ttl = 1");
	assert_non_null(lc);
	assert_int_equal(ctx_load(lc, a, SERVER_PW, &keys), 3);
	assert_int_equal(kept_stores(lc), 1);
	/* Idle for far less than a second: kept. */
	assert_int_equal(ctx_load(lc, "/nonexistent/x.wks", NULL, &keys), -1);
	assert_int_equal(kept_stores(lc), 1);
	nanosleep(&two, NULL);
	/* The file has not changed, but the store has been idle > 1 s. */
	assert_int_equal(kept_stores(lc), 1);
	assert_int_equal(ctx_load(lc, "/nonexistent/x.wks", NULL, &keys), -1);
	assert_int_equal(kept_stores(lc), 0);
	/* The next open loads it again (and keeps it). */
	assert_int_equal(ctx_load(lc, a, SERVER_PW, &keys), 3);
	assert_int_equal(keys, 1);
	assert_int_equal(kept_stores(lc), 1);
	assert_int_equal(unlink(a), 0);
	OSSL_LIB_CTX_free(lc);
}

/*
 * keep.c itself (compiled into this program): a store in use by an open
 * is neither dropped for idleness nor freed under it when its file
 * changes; it is freed when that open releases it (ASan and valgrind
 * would see a use after free or a leak).
 */
static void test_provider__keep_in_use(void **state)
{
	struct timespec two = { 2, 200000000 };
	char x[600], y[600];
	wksp_provctx pc;
	wks_store *sx, *sy;
	wksp_kept *hx, *hy;
	wks_key *key = NULL;

	(void)state;
	copy_store(x, sizeof(x), "use-x.wks");
	copy_store(y, sizeof(y), "use-y.wks");
	memset(&pc, 0, sizeof(pc));
	pc.kek_cache = 1;
	strcpy(pc.kek_ttl, "1");
	assert_int_equal(wksp_keep_init(&pc), 1);
	TU_OK(wksp_keep_open(&pc, &sx, &hx, x, STOREPASS, strlen(STOREPASS)));
	TU_OK(wksp_keep_open(&pc, &sy, &hy, y, STOREPASS, strlen(STOREPASS)));
	wksp_keep_release(&pc, hy);
	assert_int_equal(wksp_keep_count(&pc), 2);
	nanosleep(&two, NULL);
	/* y idle past its TTL goes; x, in use, stays. */
	wksp_keep_sweep(&pc);
	assert_int_equal(wksp_keep_count(&pc), 1);
	/* x's file changes: dropped from the list, but not freed. */
	change_store(x, "zz-use");
	wksp_keep_sweep(&pc);
	assert_int_equal(wksp_keep_count(&pc), 0);
	assert_int_equal(wks_store_entry_type(sx, "server"),
			 WKS_ENTRY_PRIVATE_KEY);
	TU_OK(wks_store_get_key(&key, sx, "server", STOREPASS,
				strlen(STOREPASS)));
	wks_key_free(key);
	wksp_keep_release(&pc, hx); /* freed now */
	/* A reopen of x loads the new file. */
	TU_OK(wksp_keep_open(&pc, &sx, &hx, x, STOREPASS, strlen(STOREPASS)));
	assert_int_equal(wks_store_entry_type(sx, "zz-use"),
			 WKS_ENTRY_CERTIFICATE);
	assert_int_equal(wksp_keep_count(&pc), 1);
	wksp_keep_release(&pc, hx);
	wksp_keep_free_all(&pc);
	assert_int_equal(unlink(x), 0);
	assert_int_equal(unlink(y), 0);
}

/* Threads loading a key from a kept store while its file keeps changing
 * and other opens sweep: every load gives the key and its chain (under
 * ASan and TSan in CI). */
typedef struct {
	OSSL_LIB_CTX *lc;
	const char *file;
	int loops, ok;
} sweep_thread_arg;

static void *sweep_thread(void *varg)
{
	sweep_thread_arg *a = varg;

	for (int i = 0; i < a->loops; i++) {
		int keys;

		a->ok += ctx_load(a->lc, a->file, SERVER_PW, &keys) == 3 &&
			 keys == 1;
	}
	return NULL;
}

static void test_provider__keep_sweep_threads(void **state)
{
	char a[600], b[600];
	sweep_thread_arg args[2];
	pthread_t t[2];
	OSSL_LIB_CTX *lc;
	int keys;

	(void)state;
	copy_store(a, sizeof(a), "race-a.wks");
	copy_store(b, sizeof(b), "race-b.wks");
	lc = ctx_with_config("kek-cache = yes\nkek-cache-ttl = 600");
	assert_non_null(lc);
	for (int i = 0; i < 2; i++) {
		args[i].lc = lc;
		args[i].file = a;
		args[i].loops = 20;
		args[i].ok = 0;
		assert_int_equal(pthread_create(&t[i], NULL, sweep_thread,
						&args[i]), 0);
	}
	for (int i = 0; i < 20; i++) {
		struct timespec ts[2];

		/* A new modification time: another identity for a. */
		clock_gettime(CLOCK_REALTIME, &ts[0]);
		ts[0].tv_sec -= 1000 - i;
		ts[1] = ts[0];
		assert_int_equal(utimensat(AT_FDCWD, a, ts, 0), 0);
		assert_int_equal(ctx_load(lc, b, SERVER_PW, &keys), 3);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(args[i].ok, args[i].loops);
	}
	OSSL_LIB_CTX_free(lc);
	assert_int_equal(unlink(a), 0);
	assert_int_equal(unlink(b), 0);
}

/* ---- fork() while other threads open kept stores ---------------------- */

static atomic_int fork_stop;

typedef struct {
	wksp_provctx *pc;
	const char *file;
	int counter;
	long ok;
} fork_arg;

/* Opens and releases kept stores (the kept-store lock, each store's and
 * its KEK cache's locks), sweeps and counts them, until told to stop. */
static void *fork_opener(void *varg)
{
	fork_arg *a = varg;

	while (!atomic_load(&fork_stop)) {
		wks_store *st;
		wksp_kept *h;
		wks_key *key = NULL;

		if (a->counter) {
			/* the kept-store lock, held while each store's KEK
			 * cache statistics are read */
			a->ok += wksp_keep_count(a->pc) == 1;
			continue;
		}
		wksp_keep_sweep(a->pc);
		if (wksp_keep_open(a->pc, &st, &h, a->file, STOREPASS,
				   strlen(STOREPASS)) != WKS_OK)
			continue;
		if (wks_store_get_key(&key, st, "server", STOREPASS,
				      strlen(STOREPASS)) == WKS_OK &&
		    wksp_keep_count(a->pc) == 1)
			a->ok++;
		wks_key_free(key);
		wksp_keep_release(a->pc, h);
	}
	return NULL;
}

static int tsan_build(void)
{
#if defined(__SANITIZE_THREAD__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	return 1;
#else
	return 0;
#endif
#else
	return 0;
#endif
}

/*
 * keep.c (compiled into this program): its lock is held across fork()
 * with libwks's, so a child forked while other threads open, sweep and
 * count kept stores can sweep and count them itself and use the kept
 * store it holds; one that does not exit within 10 s is killed and fails
 * the test.  (The child does not open a URI: OpenSSL holds none of its
 * own locks across fork(), so a child of a multi-threaded process can
 * hang inside OpenSSL, e.g. in EVP_Q_mac()'s fetch or a BIO; see
 * docs/PROVIDER.md, "fork()".)
 */
static void test_provider__keep_fork(void **state)
{
	char x[600];
	wksp_provctx pc;
	wks_store *held;
	wksp_kept *hheld;
	pthread_t t[2];
	fork_arg args[2];
	int i, n, hung = 0, failed = 0;

	(void)state;
	if (tsan_build() || getenv("WKS_UNDER_VALGRIND"))
		skip();
	copy_store(x, sizeof(x), "fork-x.wks");
	memset(&pc, 0, sizeof(pc));
	pc.kek_cache = 1;
	strcpy(pc.kek_ttl, "600");
	assert_int_equal(wksp_keep_init(&pc), 1);
	TU_OK(wksp_keep_open(&pc, &held, &hheld, x, STOREPASS,
			     strlen(STOREPASS)));
	atomic_store(&fork_stop, 0);
	for (i = 0; i < 2; i++) {
		args[i].pc = &pc;
		args[i].file = x;
		args[i].counter = i == 1;
		args[i].ok = 0;
		assert_int_equal(pthread_create(&t[i], NULL, fork_opener,
						&args[i]), 0);
	}
	for (n = 0; n < 30 && !hung; n++) {
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0) {
			wks_key *key = NULL;
			int ok;

			wksp_keep_sweep(&pc);
			ok = wksp_keep_count(&pc) == 1 &&
			     wks_store_get_key(&key, held, "server", STOREPASS,
					       strlen(STOREPASS)) == WKS_OK;
			wks_key_free(key);
			_exit(ok ? 0 : 1);
		}
		status = tu_reap_bounded(pid, 10000);
		if (status == -1) {
			hung++;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			failed++;
		}
	}
	atomic_store(&fork_stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	print_message("fork: %d children, %d hung, %d failed; opens %ld %ld\n",
		      n, hung, failed, args[0].ok, args[1].ok);
	wksp_keep_release(&pc, hheld);
	wksp_keep_free_all(&pc);
	assert_int_equal(unlink(x), 0);
	assert_int_equal(hung, 0);
	assert_int_equal(failed, 0);
	assert_true(args[0].ok > 0 && args[1].ok > 0);
}

static void test_provider__bad_config(void **state)
{
	static const char *const bad[] = {
		"kek-cache = maybe", "kek-cache-ttl = 0", "kek-cache-ttl = 5s",
		"properties = /nonexistent/wks.properties",
	};
	char errors[4096];

	(void)state;
	/* The provider activates (OpenSSL 3.0 would drop the reason of a
	 * failed activation from openssl.cnf) and every open fails with it. */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char uri[1024];
		OSSL_LIB_CTX *lc;
		OSSL_STORE_CTX *sc;
		BIO *b;
		char *p;
		long len;

		ERR_clear_error();
		lc = ctx_with_config(bad[i]);
		assert_non_null(lc);
		snprintf(uri, sizeof(uri), "wks:%s?storepass=pass:x", path);
		sc = OSSL_STORE_open_ex(uri, lc, NULL, NULL, NULL, NULL, NULL,
					NULL);
		assert_null(sc);
		b = BIO_new(BIO_s_mem());
		ERR_print_errors(b);
		len = BIO_get_mem_data(b, &p);
		snprintf(errors, sizeof(errors), "%.*s", (int)len, p);
		BIO_free(b);
		if (!strstr(errors, "bad wks provider configuration") ||
		    (!strstr(errors, bad[i]) && !strstr(errors, "/nonexistent")))
			fail_msg("\"%s\": errors: %s", bad[i], errors);
		OSSL_LIB_CTX_free(lc);
	}
	/* properties = FILE is read. */
	{
		char props[600];
		FILE *f;
		OSSL_LIB_CTX *lc;

		snprintf(props, sizeof(props), "%s/ok.properties", dir);
		f = fopen(props, "w");
		assert_non_null(f);
		fputs("# nothing that changes a test\n"
		      "libwks.wks.maxIterationCount=5000000\n", f);
		fclose(f);
		snprintf(errors, sizeof(errors), "properties = %s\n"
			 "kek-cache = no", props);
		lc = ctx_with_config(errors);
		assert_non_null(lc);
		snprintf(errors, sizeof(errors), "wks:%s?storepass=pass:store%%20"
			 "pass", path);
		{
			OSSL_STORE_CTX *sc = OSSL_STORE_open_ex(errors, lc,
				NULL, NULL, NULL, NULL, NULL, NULL);

			assert_non_null(sc);
			OSSL_STORE_close(sc);
		}
		OSSL_LIB_CTX_free(lc);
	}
}

/* ---- trust lookups and searches ----------------------------------------------- */

/* Every object of r is a certificate, these in this order. */
static void assert_certs(const result *r, X509 *const *want, int n)
{
	assert_int_equal(r->n, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(r->types[i], OSSL_STORE_INFO_CERT);
		assert_int_equal(X509_cmp(r->certs[i], want[i]), 0);
	}
}

/*
 * OSSL_STORE_SEARCH_by_name, which X509_LOOKUP_store's by-subject lookup
 * uses: the certificates with that subject, never a key (none is
 * decrypted), whatever the password.
 */
static void test_provider__search_by_name(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	ui_data none = { NULL, 0, "" };
	X509 *two_ca[2] = { ca_cert, ca_cert };
	X509_NAME *nobody = X509_NAME_new();
	result r;

	(void)state;
	/* "root" and the CA of "server"'s chain; "ec" (a key entry sorted
	 * before them) gives nothing. */
	load_criterion = OSSL_STORE_SEARCH_by_name(
		X509_get_subject_name(ca_cert));
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_string_equal(r.errors, "");
	assert_certs(&r, two_ca, 2);
	result_free(&r);
	load(&r, uri_of(path, NULL), 0, NULL, &none);
	assert_certs(&r, two_ca, 2);
	result_free(&r);
	load(&r, uri_of(path, "alias=server"), 0, NULL, &u);
	assert_certs(&r, two_ca, 1);
	result_free(&r);
	load(&r, uri_of(path, NULL), OSSL_STORE_INFO_PKEY, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);

	/* A leaf by its subject. */
	load_criterion = OSSL_STORE_SEARCH_by_name(
		X509_get_subject_name(leaf_cert));
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_certs(&r, &leaf_cert, 1);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);

	/* No such subject: nothing, and no error. */
	assert_non_null(nobody);
	X509_NAME_add_entry_by_txt(nobody, "CN", MBSTRING_ASC,
				   (const unsigned char *)"nobody", -1, -1, 0);
	load_criterion = OSSL_STORE_SEARCH_by_name(nobody);
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.errors, "");
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);
	load_criterion = NULL;
	X509_NAME_free(nobody);
}

/* OSSL_STORE_SEARCH_by_issuer_serial: one certificate, by its issuer
 * and serial number. */
static void test_provider__search_by_issuer_serial(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	X509 *two_ca[2] = { ca_cert, ca_cert };
	ASN1_INTEGER *other = ASN1_INTEGER_new();
	result r;

	(void)state;
	load_criterion = OSSL_STORE_SEARCH_by_issuer_serial(
		X509_get_issuer_name(leaf_cert), X509_get_serialNumber(leaf_cert));
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_string_equal(r.errors, "");
	assert_certs(&r, &leaf_cert, 1);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);

	load_criterion = OSSL_STORE_SEARCH_by_issuer_serial(
		X509_get_issuer_name(ca_cert), X509_get_serialNumber(ca_cert));
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_certs(&r, two_ca, 2);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);

	/* The right issuer with another serial number: nothing. */
	assert_non_null(other);
	ASN1_INTEGER_set(other, 999999);
	load_criterion = OSSL_STORE_SEARCH_by_issuer_serial(
		X509_get_issuer_name(leaf_cert), other);
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);
	load_criterion = NULL;
	ASN1_INTEGER_free(other);
}

/* A fingerprint search for the digest `md` of x's DER (the first byte
 * xor `flip`).  OpenSSL 3.0's search keeps a pointer to the bytes, not a
 * copy: one search at a time. */
static unsigned char fp[EVP_MAX_MD_SIZE];

static OSSL_STORE_SEARCH *by_fingerprint(const EVP_MD *md, X509 *x, int flip)
{
	unsigned int n = 0;

	assert_int_equal(X509_digest(x, md, fp, &n), 1);
	fp[0] ^= (unsigned char)flip;
	return OSSL_STORE_SEARCH_by_key_fingerprint(md, fp, n);
}

/*
 * OSSL_STORE_SEARCH_by_key_fingerprint (openssl storeutl -fingerprint):
 * the certificates whose DER has that digest (what openssl x509
 * -fingerprint prints), never a key (none is decrypted).
 */
static void test_provider__search_by_fingerprint(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	X509 *two_ca[2] = { ca_cert, ca_cert };
	result r;

	(void)state;
	load_criterion = by_fingerprint(EVP_sha256(), leaf_cert, 0);
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_string_equal(r.errors, "");
	assert_certs(&r, &leaf_cert, 1);
	result_free(&r);
	/* Asking for keys only: nothing (the fingerprint is a
	 * certificate's). */
	load(&r, uri_of(path, NULL), OSSL_STORE_INFO_PKEY, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.errors, "");
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);

	/* SHA-1: the trusted root and the CA of "server"'s chain; with a
	 * wrong key password too, which shows that no key is decrypted. */
	load_criterion = by_fingerprint(EVP_sha1(), ca_cert, 0);
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_certs(&r, two_ca, 2);
	result_free(&r);
	load(&r, uri_of(path, "keypass=pass:wrong"), 0, NULL, &u);
	assert_string_equal(r.errors, "");
	assert_certs(&r, two_ca, 2);
	result_free(&r);
	/* In one entry only. */
	load(&r, uri_of(path, "alias=root"), 0, NULL, &u);
	assert_certs(&r, two_ca, 1);
	result_free(&r);
	load(&r, uri_of(path, "alias=ec"), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);

	/* A fingerprint of nothing in the store: nothing, no error. */
	load_criterion = by_fingerprint(EVP_sha256(), leaf_cert, 1);
	load(&r, uri_of(path, NULL), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.errors, "");
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);
	/* The right bytes under another digest of the same size: nothing. */
	{
		unsigned int n = 0;

		assert_int_equal(X509_digest(leaf_cert, EVP_sha256(), fp, &n),
				 1);
		load_criterion = OSSL_STORE_SEARCH_by_key_fingerprint(
			EVP_sha3_256(), fp, n);
		load(&r, uri_of(path, NULL), 0, NULL, &u);
		assert_true(r.opened);
		assert_int_equal(r.n, 0);
		result_free(&r);
		OSSL_STORE_SEARCH_free(load_criterion);
	}
	load_criterion = NULL;
}

/*
 * A store of many trusted certificates: each search gives exactly the
 * one that matches (bench/wks-search-bench times the same with 5,000).
 */
static void test_provider__search_many(void **state)
{
	enum { N = 300 };
	ui_data u = { STOREPASS, 0, "" };
	char many[600], name[32];
	X509 *certs[N], *want;
	wks_store *st = tu_store_fast();
	X509_NAME *subject = X509_NAME_new();
	result r;

	(void)state;
	snprintf(many, sizeof(many), "%s/many.wks", dir);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "ca-%04d", i);
		certs[i] = make_cert(ec_key, name, NULL, NULL, 1);
		TU_OK(wks_store_set_cert(st, name, certs[i]));
	}
	TU_OK(wks_store_save_file(st, many, STOREPASS, strlen(STOREPASS)));
	wks_store_free(st);

	want = certs[N / 2];
	assert_non_null(subject);
	X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
				   (const unsigned char *)"CA-0150", -1, -1, 0);
	/* By name (case folded, as X509_NAME_cmp() does). */
	load_criterion = OSSL_STORE_SEARCH_by_name(subject);
	load(&r, uri_of(many, NULL), 0, NULL, &u);
	assert_string_equal(r.errors, "");
	assert_certs(&r, &want, 1);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);
	/* By issuer and serial, by fingerprint, by alias. */
	load_criterion = OSSL_STORE_SEARCH_by_issuer_serial(
		X509_get_issuer_name(want), X509_get_serialNumber(want));
	load(&r, uri_of(many, NULL), 0, NULL, &u);
	assert_certs(&r, &want, 1);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);
	load_criterion = by_fingerprint(EVP_sha256(), want, 0);
	load(&r, uri_of(many, NULL), 0, NULL, &u);
	assert_certs(&r, &want, 1);
	result_free(&r);
	OSSL_STORE_SEARCH_free(load_criterion);
	load_criterion = NULL;
	load(&r, uri_of(many, NULL), 0, "ca-0150", &u);
	assert_certs(&r, &want, 1);
	result_free(&r);

	X509_NAME_free(subject);
	for (int i = 0; i < N; i++)
		X509_free(certs[i]);
}

/*
 * Verification through X509_LOOKUP_store, as openssl verify -CAstore and
 * SSL_CTX_load_verify_store() use it: the chain of leaf_cert must find
 * "Test Root" although the key entry "ec" comes first in the file, with
 * the store password and without.  (OpenSSL 3.0's lookup stops at the
 * first object that is not a certificate.)
 */
static int verify_with_store(const char *uri, X509 *cert)
{
	X509_STORE *xs = X509_STORE_new();
	X509_STORE_CTX *vc = X509_STORE_CTX_new();
	int ok;

	assert_non_null(xs);
	assert_non_null(vc);
	assert_int_equal(X509_STORE_load_store(xs, uri), 1);
	assert_int_equal(X509_STORE_CTX_init(vc, xs, cert, NULL), 1);
	ok = X509_verify_cert(vc);
	X509_STORE_CTX_free(vc);
	X509_STORE_free(xs);
	ERR_clear_error();
	return ok;
}

static void test_provider__trust_lookup(void **state)
{
	X509_STORE *xs;
	X509_LOOKUP *lu;
	char uri[1024];

	(void)state;
	snprintf(uri, sizeof(uri), "wks:%s?storepass=pass:%s", path,
		 "store%20pass");
	assert_int_equal(verify_with_store(uri, leaf_cert), 1);
	assert_int_equal(verify_with_store(uri_of(path, NULL), leaf_cert), 1);
	snprintf(uri, sizeof(uri), "wks:%s?storepass=pass:wrong", path);
	assert_int_equal(verify_with_store(uri, leaf_cert), 0);

	/* A bulk load (X509_LOOKUP_load_store: no search, no expected type)
	 * takes every certificate with only=certs. */
	snprintf(uri, sizeof(uri), "wks:%s?storepass=pass:%s&only=certs",
		 path, "store%20pass");
	xs = X509_STORE_new();
	assert_non_null(xs);
	lu = X509_STORE_add_lookup(xs, X509_LOOKUP_store());
	assert_non_null(lu);
	assert_int_equal(X509_LOOKUP_load_store(lu, uri), 1);
	/* ec_cert, ca_cert (twice), leaf_cert: three different */
	assert_int_equal(sk_X509_OBJECT_num(X509_STORE_get0_objects(xs)), 3);
	X509_STORE_free(xs);
}

/* only=issuers: a key entry's chain without its leaf; only=certs: every
 * certificate and no key. */
static void test_provider__only(void **state)
{
	ui_data u = { STOREPASS, 0, "" };
	ui_data none = { NULL, 0, "" };
	X509 *all[4] = { ec_cert, ca_cert, leaf_cert, ca_cert };
	result r;

	(void)state;
	load(&r, uri_of(path, "alias=server&only=issuers"), 0, NULL, &u);
	assert_string_equal(r.errors, "");
	assert_certs(&r, &ca_cert, 1);
	result_free(&r);
	/* No key is decrypted, so no password is needed. */
	load(&r, uri_of(path, "alias=server&only=issuers"), 0, NULL, &none);
	assert_string_equal(r.errors, "");
	assert_certs(&r, &ca_cert, 1);
	result_free(&r);
	/* The whole file: "ec" is self-signed and "root" a trusted
	 * certificate, so only "server"'s CA. */
	load(&r, uri_of(path, "only=issuers"), 0, NULL, &u);
	assert_certs(&r, &ca_cert, 1);
	result_free(&r);
	load(&r, uri_of(path, "alias=ec&only=issuers"), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	result_free(&r);
	load(&r, uri_of(path, "alias=root&only=issuers"), 0, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	result_free(&r);

	load(&r, uri_of(path, "only=certs"), 0, NULL, &u);
	assert_string_equal(r.errors, "");
	assert_certs(&r, all, 4);
	result_free(&r);
	load(&r, uri_of(path, "only=certs"), OSSL_STORE_INFO_PKEY, NULL, &u);
	assert_true(r.opened);
	assert_int_equal(r.n, 0);
	assert_string_equal(r.errors, "");
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_provider__all_entries),
		cmocka_unit_test(test_provider__expect),
		cmocka_unit_test(test_provider__alias),
		cmocka_unit_test(test_provider__missing_alias),
		cmocka_unit_test(test_provider__wrong_password),
		cmocka_unit_test(test_provider__tampered),
		cmocka_unit_test(test_provider__libctx),
		cmocka_unit_test(test_provider__no_password),
		cmocka_unit_test(test_provider__uri_passwords),
		cmocka_unit_test(test_provider__bad_uri),
		cmocka_unit_test(test_provider__search_by_name),
		cmocka_unit_test(test_provider__search_by_issuer_serial),
		cmocka_unit_test(test_provider__search_by_fingerprint),
		cmocka_unit_test(test_provider__search_many),
		cmocka_unit_test(test_provider__trust_lookup),
		cmocka_unit_test(test_provider__only),
		cmocka_unit_test(test_provider__threads),
	};
	const struct CMUnitTest keep_tests[] = {
		cmocka_unit_test(test_provider__keep_reopen),
		cmocka_unit_test(test_provider__keep_rules),
		cmocka_unit_test(test_provider__keep_threads),
		cmocka_unit_test(test_provider__keep_file_changed),
		cmocka_unit_test(test_provider__keep_sweep_changed),
		cmocka_unit_test(test_provider__keep_same_stat),
		cmocka_unit_test(test_provider__keep_sweep_idle),
		cmocka_unit_test(test_provider__keep_in_use),
		cmocka_unit_test(test_provider__keep_sweep_threads),
		cmocka_unit_test(test_provider__keep_fork),
		cmocka_unit_test(test_provider__bad_config),
	};
	/* Before anything loads wks.so into the default library context,
	 * which would keep it mapped. */
	const struct CMUnitTest unload_tests[] = {
		cmocka_unit_test(test_provider__unload),
	};
	int rc = cmocka_run_group_tests_name("provider_unload", unload_tests,
					     make_files, NULL);

	rc |= cmocka_run_group_tests_name("provider", tests, setup, NULL);
	rc |= cmocka_run_group_tests_name("provider_keep", keep_tests,
					  keep_setup, keep_teardown);
	teardown(NULL);
	return rc;
}
