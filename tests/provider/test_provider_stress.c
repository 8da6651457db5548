/*
 * The wks provider under many threads (issue 10 item 7): "many threads
 * may open and load wks: URIs at once (OpenSSL applications do); no
 * global lock is held during PBKDF2."
 *
 * provider_stress__threads: WKS_STRESS_THREADS threads (default 16) open
 * wks: URIs through OSSL_STORE_open_ex() for WKS_STRESS_SECONDS (default
 * 5), each open in one of two shared application library contexts (wks +
 * default from an openssl.cnf): one with kek-cache = yes (stores kept
 * between opens, KEK cache on), one with kek-cache = no.  The opens are a
 * table of cases: RSA and EC key entries with their chains, a truststore,
 * with and without alias= (and by OSSL_STORE_SEARCH_by_alias), passwords
 * from the URI and from the UI method, a key password of its own, expect
 * filters, no password, wrong passwords, a missing alias.  Every open
 * must give exactly the expected objects (count, types, and identity: the
 * DER of each certificate, the public key DER of each key) with nothing
 * on the error queue, or, for the bad cases, nothing at all and the
 * expected reason: never a partial result.  Meanwhile a writer thread
 * saves the truststore again and again (libwks saves by rename),
 * alternating between two versions (one more trusted certificate in the
 * second): every open of it gives one version or the other, complete.
 *
 * provider_stress__no_lock_during_pbkdf2: thread A opens a key of a store
 * at a very high iteration count; once A's passphrase callback has been
 * called (it runs just before the store is loaded, so before any
 * PBKDF2), thread B makes three opens of keys at 10,000 iterations.  B
 * must finish before A: a global lock held during PBKDF2 (in libwks, in
 * the provider, in its kept-store list) would make B wait for A.  Twice:
 * with kek-cache = no (A's store MAC is the slow PBKDF2; B opens another
 * store), and with kek-cache = yes on one kept store (A derives its
 * entry's key in the kept store while B derives three other entries'
 * keys in the same store).  The slow iteration count is sized on the
 * machine and build at hand: one slow PBKDF2 takes 20 times as long as
 * B's three opens done alone (5 times under valgrind), at least 0.5 s, so
 * the order does not hang on timing luck; the times are printed.
 *
 * Environment: WKS_STRESS_THREADS (default 16), WKS_STRESS_SECONDS
 * (default 2, 5 in full mode, WKS_TEST_FULL=1; CI's TSan stage sets 10,
 * its valgrind stage 2),
 * WKS_STRESS_SLOW_ITER (the slow iteration count, instead of measuring),
 * WKS_UNDER_VALGRIND (set by CI's valgrind stage).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/store.h>
#include <openssl/ui.h>
#include <openssl/x509.h>

#include "testutil.h"

#define SP "store pass"
#define SP_URI "store%20pass"
#define TP "trust pass"
#define TP_URI "trust%20pass"
#define KP "key pass"
#define MAX_OBJ 12
#define N_FAST 3 /* thread B's opens */

/* ---- expected objects ---------------------------------------------------- */

typedef struct {
	int type;          /* OSSL_STORE_INFO_PKEY or _CERT */
	const uint8_t *der; /* public key DER of a key, DER of a certificate */
	size_t len;
} obj;

typedef struct {
	int n;
	obj o[MAX_OBJ];
} objset;

static tu_der *rsa_chain, *ec_chain, *ca_rsa, *ca_ec, *extra;
static size_t n_rsa_chain, n_ec_chain, n_ca_rsa, n_ca_ec, n_extra;
static uint8_t *rsa_pub, *ec_pub;
static size_t rsa_pub_len, ec_pub_len;

static objset keys_all, keys_certs, keys_keys, rsa_entry, rsa_certs, ec_only,
	trust_a, trust_b, trust_ca_rsa, trust_extra, slow_entry, fast_entry,
	none;

static void add_obj(objset *s, int type, const uint8_t *der, size_t len)
{
	assert_true(s->n < MAX_OBJ);
	s->o[s->n].type = type;
	s->o[s->n].der = der;
	s->o[s->n].len = len;
	s->n++;
}

static void add_key_entry(objset *s, int keys, int certs, const uint8_t *pub,
			  size_t pub_len, const tu_der *chain, size_t n)
{
	if (keys)
		add_obj(s, OSSL_STORE_INFO_PKEY, pub, pub_len);
	for (size_t i = 0; certs && i < n; i++)
		add_obj(s, OSSL_STORE_INFO_CERT, chain[i].der, chain[i].len);
}

/* The SubjectPublicKeyInfo DER of the PKCS#8 key in inputs/name. */
static uint8_t *pub_of(const char *name, size_t *len)
{
	tu_der *k = NULL;
	size_t nk = tu_pem_ders(&k, tu_input(name), "PRIVATE KEY");
	const unsigned char *p = k[0].der;
	EVP_PKEY *pk = d2i_AutoPrivateKey(NULL, &p, (long)k[0].len);
	unsigned char *der = NULL;
	int n;

	assert_non_null(pk);
	n = i2d_PUBKEY(pk, &der);
	assert_true(n > 0);
	*len = (size_t)n;
	EVP_PKEY_free(pk);
	tu_ders_free(k, nk);
	return der;
}

/* ---- fixtures -------------------------------------------------------------- */

static char *dir;
static char keys_path[512], kp_path[512], trust_path[512], slow_path[512],
	keep_path[512];
static OSSL_LIB_CTX *ctx_on, *ctx_off;
static UI_METHOD *ui_meth;
static wks_store *trust_st[2]; /* the truststore's two versions */
static int32_t slow_iter;

static int under_valgrind(void)
{
	return getenv("WKS_UNDER_VALGRIND") != NULL;
}

static long env_long(const char *name, long dflt, long min, long max)
{
	const char *e = getenv(name);
	char *end;
	long v;

	if (!e || !*e)
		return dflt;
	v = strtol(e, &end, 10);
	if (*end || v < min || v > max)
		fail_msg("%s=%s: expected an integer from %ld to %ld", name, e,
			 min, max);
	return v;
}

static void set_iter(wks_store *st, long iter)
{
	char v[32];

	snprintf(v, sizeof(v), "%ld", iter);
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", v));
}

static void set_certs(wks_store *st, const char *alias, const tu_der *c)
{
	TU_OK(wks_store_set_cert_der(st, alias, c->der, c->len));
}

/* A library context configured from an openssl.cnf that loads wks (with
 * `settings` in its section) and default. */
static OSSL_LIB_CTX *ctx_with_config(const char *name, const char *settings)
{
	char cnf[600];
	OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
	FILE *f;

	assert_non_null(lc);
	snprintf(cnf, sizeof(cnf), "%s/%s.cnf", dir, name);
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
		ERR_print_errors_fp(stdout);
		fail_msg("cannot configure a library context with %s", cnf);
	}
	return lc;
}

static int ui_read(UI *ui, UI_STRING *uis);

/*
 * keys.wks (SP, 10,000 iterations): "ec" (EC key, chain of 3), "rsa"
 *     (RSA key, chain of 3), "secret" (AES key: skipped by the loader).
 * keypass.wks (SP): "rsa" under the key password KP.
 * trust.wks (TP): version 0 "ca-ec", "ca-rsa"; version 1 the same and
 *     "zz-extra".  The writer thread alternates them.
 * (slow.wks and keep.wks: see make_slow_stores().)
 */
static int setup(void **state)
{
	uint8_t aes[32] = { 7, 7, 7 };
	wks_store *st;

	(void)state;
	dir = tu_tmpdir();
	snprintf(keys_path, sizeof(keys_path), "%s/keys.wks", dir);
	snprintf(kp_path, sizeof(kp_path), "%s/keypass.wks", dir);
	snprintf(trust_path, sizeof(trust_path), "%s/trust.wks", dir);
	snprintf(slow_path, sizeof(slow_path), "%s/slow.wks", dir);
	snprintf(keep_path, sizeof(keep_path), "%s/keep.wks", dir);

	n_rsa_chain = tu_pem_ders(&rsa_chain, tu_input("server-int-rsa-chain3.pem"),
				  "CERTIFICATE");
	n_ec_chain = tu_pem_ders(&ec_chain, tu_input("server-int-ecc-chain3.pem"),
				 "CERTIFICATE");
	n_ca_rsa = tu_pem_ders(&ca_rsa, tu_input("ca-cert.pem"), "CERTIFICATE");
	n_ca_ec = tu_pem_ders(&ca_ec, tu_input("ca-ecc-cert.pem"), "CERTIFICATE");
	n_extra = tu_pem_ders(&extra, tu_input("trusted-200.pem"), "CERTIFICATE");
	rsa_pub = pub_of("server-key.pem", &rsa_pub_len);
	ec_pub = pub_of("ecc-key.pem", &ec_pub_len);

	/* What each open must give (aliases in byte order). */
	add_key_entry(&keys_all, 1, 1, ec_pub, ec_pub_len, ec_chain, n_ec_chain);
	add_key_entry(&keys_all, 1, 1, rsa_pub, rsa_pub_len, rsa_chain,
		      n_rsa_chain);
	add_key_entry(&keys_certs, 0, 1, ec_pub, ec_pub_len, ec_chain,
		      n_ec_chain);
	add_key_entry(&keys_certs, 0, 1, rsa_pub, rsa_pub_len, rsa_chain,
		      n_rsa_chain);
	add_key_entry(&keys_keys, 1, 0, ec_pub, ec_pub_len, ec_chain, n_ec_chain);
	add_key_entry(&keys_keys, 1, 0, rsa_pub, rsa_pub_len, rsa_chain,
		      n_rsa_chain);
	add_key_entry(&rsa_entry, 1, 1, rsa_pub, rsa_pub_len, rsa_chain,
		      n_rsa_chain);
	add_key_entry(&rsa_certs, 0, 1, rsa_pub, rsa_pub_len, rsa_chain,
		      n_rsa_chain);
	add_key_entry(&ec_only, 1, 0, ec_pub, ec_pub_len, ec_chain, n_ec_chain);
	add_obj(&trust_a, OSSL_STORE_INFO_CERT, ca_ec[0].der, ca_ec[0].len);
	add_obj(&trust_a, OSSL_STORE_INFO_CERT, ca_rsa[0].der, ca_rsa[0].len);
	trust_b = trust_a;
	add_obj(&trust_b, OSSL_STORE_INFO_CERT, extra[0].der, extra[0].len);
	add_obj(&trust_ca_rsa, OSSL_STORE_INFO_CERT, ca_rsa[0].der,
		ca_rsa[0].len);
	add_obj(&trust_extra, OSSL_STORE_INFO_CERT, extra[0].der, extra[0].len);
	add_key_entry(&slow_entry, 1, 1, ec_pub, ec_pub_len, ec_chain,
		      n_ec_chain);
	add_key_entry(&fast_entry, 1, 0, ec_pub, ec_pub_len, ec_chain,
		      n_ec_chain);

	st = tu_store_fast();
	TU_OK(tu_set_key_files(st, "ec", "ecc-key.pem",
			       "server-int-ecc-chain3.pem", SP));
	TU_OK(tu_set_key_files(st, "rsa", "server-key.pem",
			       "server-int-rsa-chain3.pem", SP));
	TU_OK(wks_store_set_secret_key(st, "secret", "AES", aes, sizeof(aes),
				       SP, strlen(SP)));
	TU_OK(wks_store_save_file(st, keys_path, SP, strlen(SP)));
	wks_store_free(st);

	st = tu_store_fast();
	TU_OK(tu_set_key_files(st, "rsa", "server-key.pem",
			       "server-int-rsa-chain3.pem", KP));
	TU_OK(wks_store_save_file(st, kp_path, SP, strlen(SP)));
	wks_store_free(st);

	for (int v = 0; v < 2; v++) {
		trust_st[v] = tu_store_fast();
		set_certs(trust_st[v], "ca-ec", &ca_ec[0]);
		set_certs(trust_st[v], "ca-rsa", &ca_rsa[0]);
		if (v)
			set_certs(trust_st[v], "zz-extra", &extra[0]);
	}
	TU_OK(wks_store_save_file(trust_st[0], trust_path, TP, strlen(TP)));

	assert_int_equal(OSSL_PROVIDER_set_default_search_path(NULL,
							       WKS_PROVIDER_DIR), 1);
	ctx_on = ctx_with_config("on", "kek-cache = yes\nkek-cache-ttl = 600");
	ctx_off = ctx_with_config("off", "kek-cache = no");
	ui_meth = UI_create_method("wks stress");
	assert_non_null(ui_meth);
	UI_method_set_reader(ui_meth, ui_read);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	OSSL_LIB_CTX_free(ctx_on);
	OSSL_LIB_CTX_free(ctx_off);
	UI_destroy_method(ui_meth);
	wks_store_free(trust_st[0]);
	wks_store_free(trust_st[1]);
	tu_ders_free(rsa_chain, n_rsa_chain);
	tu_ders_free(ec_chain, n_ec_chain);
	tu_ders_free(ca_rsa, n_ca_rsa);
	tu_ders_free(ca_ec, n_ca_ec);
	tu_ders_free(extra, n_extra);
	OPENSSL_free(rsa_pub);
	OPENSSL_free(ec_pub);
	tu_rmtree(dir);
	free(dir);
	return 0;
}

/* ---- one open ------------------------------------------------------------------ */

/* What the UI method answers; on_prompt (if set) is called first. */
typedef struct {
	const char *pw; /* NULL: the UI fails (no terminal) */
	void (*on_prompt)(void *arg);
	void *arg;
} ui_data;

static int ui_read(UI *ui, UI_STRING *uis)
{
	ui_data *u = UI_get0_user_data(ui);

	switch (UI_get_string_type(uis)) {
	case UIT_PROMPT:
	case UIT_VERIFY:
		if (u->on_prompt)
			u->on_prompt(u->arg);
		if (!u->pw)
			return 0;
		return UI_set_result(ui, uis, u->pw) >= 0;
	default:
		return 1;
	}
}

typedef struct {
	int opened;
	int n;
	int types[MAX_OBJ + 1];
	uint8_t *der[MAX_OBJ + 1];
	size_t len[MAX_OBJ + 1];
	char errors[2048];
} result;

static void result_free(result *r)
{
	for (int i = 0; i < r->n; i++)
		OPENSSL_free(r->der[i]);
	r->n = 0;
}

static void drain_errors(result *r)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p = NULL;
	long n;

	r->errors[0] = 0;
	if (!b) {
		ERR_clear_error();
		snprintf(r->errors, sizeof(r->errors), "(no BIO)");
		return;
	}
	ERR_print_errors(b);
	n = BIO_get_mem_data(b, &p);
	if (n > 0)
		snprintf(r->errors, sizeof(r->errors), "%.*s", (int)n, p);
	BIO_free(b);
}

/* Open `uri` in lc and load everything, as an application does.  Safe in
 * any thread (no cmocka assertion). */
static void open_load(result *r, OSSL_LIB_CTX *lc, const char *uri,
		      int expect, const char *search, ui_data *u)
{
	OSSL_STORE_CTX *ctx;
	OSSL_STORE_SEARCH *s = NULL;

	memset(r, 0, sizeof(*r));
	ERR_clear_error();
	ctx = OSSL_STORE_open_ex(uri, lc, NULL, ui_meth, u, NULL, NULL, NULL);
	if (!ctx) {
		drain_errors(r);
		return;
	}
	r->opened = 1;
	if (expect && OSSL_STORE_expect(ctx, expect) != 1)
		r->opened = 0;
	if (search && ((s = OSSL_STORE_SEARCH_by_alias(search)) == NULL ||
		       OSSL_STORE_find(ctx, s) != 1))
		r->opened = 0;
	/* (A bound, so that a loader that never reaches EOF fails.) */
	for (int tries = 0; r->opened && tries < 64 && !OSSL_STORE_eof(ctx);
	     tries++) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(ctx);
		unsigned char *der = NULL;
		int type, len = -1;

		if (!info)
			continue;
		type = OSSL_STORE_INFO_get_type(info);
		if (type == OSSL_STORE_INFO_PKEY)
			len = i2d_PUBKEY(OSSL_STORE_INFO_get0_PKEY(info), &der);
		else if (type == OSSL_STORE_INFO_CERT)
			len = i2d_X509(OSSL_STORE_INFO_get0_CERT(info), &der);
		OSSL_STORE_INFO_free(info);
		if (r->n <= MAX_OBJ) {
			r->types[r->n] = type;
			r->der[r->n] = der;
			r->len[r->n] = len > 0 ? (size_t)len : 0;
			r->n++;
		} else {
			OPENSSL_free(der);
		}
	}
	if (r->opened && !OSSL_STORE_eof(ctx))
		r->opened = 0;
	OSSL_STORE_close(ctx);
	OSSL_STORE_SEARCH_free(s);
	drain_errors(r);
}

static int matches(const result *r, const objset *want)
{
	if (!want || r->n != want->n)
		return 0;
	for (int i = 0; i < r->n; i++)
		if (r->types[i] != want->o[i].type ||
		    r->len[i] != want->o[i].len ||
		    memcmp(r->der[i], want->o[i].der, r->len[i]) != 0)
			return 0;
	return 1;
}

/* ---- the cases ----------------------------------------------------------------- */

typedef struct {
	const char *name;
	const char *file;    /* one of the paths above */
	const char *query;   /* the URI's query, or NULL */
	const char *ui_pw;   /* what the UI answers (NULL: it fails) */
	int expect;
	const char *search;  /* OSSL_STORE_SEARCH_by_alias */
	const objset *want;  /* the objects, or NULL */
	const objset *want2; /* the other acceptable objects, or NULL */
	const char *err;     /* or: no object, this in the errors */
} op_case;

#define N_CASES 21
static op_case cases[N_CASES];

static void make_cases(void)
{
	const op_case c[N_CASES] = {
		{ "keys, URI storepass", keys_path, "storepass=pass:" SP_URI,
		  NULL, 0, NULL, &keys_all, NULL, NULL },
		{ "keys, UI", keys_path, NULL, SP, 0, NULL, &keys_all, NULL, NULL },
		{ "keys alias=rsa, UI", keys_path, "alias=rsa", SP, 0, NULL,
		  &rsa_entry, NULL, NULL },
		{ "keys alias=ec, expect PKEY", keys_path, "alias=ec&storepass="
		  "pass:" SP_URI, NULL, OSSL_STORE_INFO_PKEY, NULL, &ec_only,
		  NULL, NULL },
		{ "keys search rsa, expect CERT", keys_path, NULL, SP,
		  OSSL_STORE_INFO_CERT, "rsa", &rsa_certs, NULL, NULL },
		{ "keys, expect CERT", keys_path, "storepass=pass:" SP_URI,
		  NULL, OSSL_STORE_INFO_CERT, NULL, &keys_certs, NULL, NULL },
		{ "keys, expect PKEY, UI", keys_path, NULL, SP,
		  OSSL_STORE_INFO_PKEY, NULL, &keys_keys, NULL, NULL },
		{ "keys, no password", keys_path, NULL, NULL, 0, NULL,
		  &keys_certs, NULL, NULL },
		{ "keys, wrong UI password", keys_path, NULL, "wrong", 0, NULL,
		  NULL, NULL, "integrity check failed" },
		{ "keys alias=ec, wrong URI password", keys_path,
		  "alias=ec&storepass=pass:wrong", SP, 0, NULL, NULL, NULL,
		  "integrity check failed" },
		{ "keys alias=nope", keys_path, "alias=nope", SP, 0, NULL, NULL,
		  NULL, "no such entry" },
		{ "keys search nope", keys_path, "storepass=pass:" SP_URI, NULL,
		  0, "nope", NULL, NULL, "no such entry" },
		{ "keypass alias=rsa", kp_path, "alias=rsa&keypass=pass:key%20"
		  "pass", SP, 0, NULL, &rsa_entry, NULL, NULL },
		{ "keypass, wrong key password", kp_path, "alias=rsa&keypass="
		  "pass:wrong", SP, 0, NULL, NULL, NULL, "integrity check failed" },
		{ "trust, UI", trust_path, NULL, TP, 0, NULL, &trust_a, &trust_b,
		  NULL },
		{ "trust, expect CERT", trust_path, "storepass=pass:" TP_URI,
		  NULL, OSSL_STORE_INFO_CERT, NULL, &trust_a, &trust_b, NULL },
		{ "trust, no password", trust_path, NULL, NULL, 0, NULL, &trust_a,
		  &trust_b, NULL },
		{ "trust, wrong password", trust_path, NULL, SP, 0, NULL, NULL,
		  NULL, "integrity check failed" },
		{ "trust alias=ca-rsa", trust_path, "alias=ca-rsa&storepass=pass:"
		  TP_URI, NULL, 0, NULL, &trust_ca_rsa, NULL, NULL },
		{ "trust alias=zz-extra", trust_path, "alias=zz-extra", TP, 0,
		  NULL, &trust_extra, NULL, "no such entry" },
		{ "trust, expect PKEY", trust_path, NULL, TP,
		  OSSL_STORE_INFO_PKEY, NULL, &none, NULL, NULL },
	};

	for (int i = 0; i < N_CASES; i++)
		cases[i] = c[i];
}

static void uri_of(char *out, size_t len, const char *file, const char *query)
{
	snprintf(out, len, "wks:%s%s%s", file, query ? "?" : "",
		 query ? query : "");
}

/*
 * Run case c in lc; 0 if the outcome is acceptable (*version: 0 or 1 for
 * trust_a/trust_b, -1 for anything else), else -1 with why filled in.
 */
static int run_case(const op_case *c, OSSL_LIB_CTX *lc, int *version,
		    char *why, size_t why_len)
{
	char uri[1024];
	ui_data u = { c->ui_pw, NULL, NULL };
	result r;
	int ok = 0;

	*version = -1;
	uri_of(uri, sizeof(uri), c->file, c->query);
	open_load(&r, lc, uri, c->expect, c->search, &u);
	if (!r.opened) {
		snprintf(why, why_len, "%s (kek-cache %s): the open failed: %.1500s",
			 c->name, lc == ctx_on ? "on" : "off", r.errors);
		result_free(&r);
		return -1;
	}
	if (matches(&r, c->want) || matches(&r, c->want2)) {
		/* A success leaves nothing on the error queue. */
		ok = r.errors[0] == 0;
		if (c->want == &trust_a)
			*version = matches(&r, &trust_a) ? 0 : 1;
	} else if (c->err && r.n == 0) {
		ok = strstr(r.errors, c->err) != NULL;
	}
	if (!ok)
		snprintf(why, why_len, "%s (kek-cache %s): %d objects (want %d%s%s)"
			 ", errors: %.1500s", c->name, lc == ctx_on ? "on" : "off",
			 r.n, c->want ? c->want->n : 0, c->err ? ", or failing "
			 "with: " : "", c->err ? c->err : "", r.errors);
	result_free(&r);
	return ok ? 0 : -1;
}

/* ---- many threads ---------------------------------------------------------- */

static atomic_int g_stop, g_failed;
static char g_fail_msg[3072];
static atomic_ulong g_ops[N_CASES][2], g_versions[2], g_saves;

static void stress_fail(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

/* The first failure is kept and reported by the main thread (cmocka's
 * fail_msg must not be called from other threads). */
static void stress_fail(const char *fmt, ...)
{
	va_list ap;
	int expected = 0;

	if (!atomic_compare_exchange_strong(&g_failed, &expected, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(g_fail_msg, sizeof(g_fail_msg), fmt, ap);
	va_end(ap);
	atomic_store(&g_stop, 1);
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

typedef struct {
	unsigned seed;
	unsigned long ops;
} reader_arg;

static void *reader_main(void *varg)
{
	reader_arg *a = varg;
	char why[2048];

	do {
		unsigned i = rnd(&a->seed) % N_CASES, on = rnd(&a->seed) % 2;
		int version;

		if (run_case(&cases[i], on ? ctx_on : ctx_off, &version, why,
			     sizeof(why)) < 0)
			stress_fail("%s", why);
		atomic_fetch_add(&g_ops[i][on], 1);
		if (version >= 0)
			atomic_fetch_add(&g_versions[version], 1);
		a->ops++;
	} while (!atomic_load(&g_stop));
	return NULL;
}

static void *writer_main(void *arg)
{
	int v = 0, rc;

	(void)arg;
	do {
		v ^= 1;
		rc = wks_store_save_file(trust_st[v], trust_path, TP, strlen(TP));
		if (rc != WKS_OK)
			stress_fail("saving the truststore: %s: %s",
				    wks_strerror(rc), wks_error_detail());
		atomic_fetch_add(&g_saves, 1);
	} while (!atomic_load(&g_stop));
	return NULL;
}

/* A main-thread check of one case in both contexts. */
static void check_case(const op_case *c, int want_version)
{
	OSSL_LIB_CTX *ctxs[2] = { ctx_off, ctx_on };
	char why[2048];

	for (int k = 0; k < 2; k++) {
		int version;

		if (run_case(c, ctxs[k], &version, why, sizeof(why)) < 0)
			fail_msg("%s", why);
		if (want_version >= 0)
			assert_int_equal(version, want_version);
	}
}

static void test_provider_stress__threads(void **state)
{
	long nthreads = env_long("WKS_STRESS_THREADS", 16, 1, 256);
	const char *e = getenv("WKS_STRESS_SECONDS");
	double secs = e && *e ? atof(e) : tu_full_mode() ? 5.0 : 2.0;
	pthread_t *th = calloc((size_t)nthreads + 1, sizeof(*th));
	reader_arg *args = calloc((size_t)nthreads, sizeof(*args));
	unsigned long total = 0;
	struct timespec ts;

	(void)state;
	assert_non_null(th);
	assert_non_null(args);
	make_cases();
	/* Each case once in each context first (and the kept stores made). */
	for (int i = 0; i < N_CASES; i++)
		check_case(&cases[i], cases[i].want == &trust_a ? 0 : -1);

	for (long i = 0; i < nthreads; i++) {
		args[i].seed = (unsigned)(i * 7919 + 1);
		assert_int_equal(pthread_create(&th[i], NULL, reader_main,
						&args[i]), 0);
	}
	assert_int_equal(pthread_create(&th[nthreads], NULL, writer_main, NULL),
			 0);
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && !atomic_load(&g_stop))
		;
	atomic_store(&g_stop, 1);
	for (long i = 0; i <= nthreads; i++)
		pthread_join(th[i], NULL);
	if (atomic_load(&g_failed))
		fail_msg("%s", g_fail_msg);

	for (long i = 0; i < nthreads; i++) {
		assert_true(args[i].ops >= 1);
		total += args[i].ops;
	}
	print_message("provider stress: %ld threads, %.1f s: %lu opens "
		      "(truststore: %lu of version 0, %lu of version 1; %lu "
		      "saves of it meanwhile)\n", nthreads, secs, total,
		      atomic_load(&g_versions[0]), atomic_load(&g_versions[1]),
		      atomic_load(&g_saves));
	for (int i = 0; i < N_CASES; i++)
		print_message("  %-36s kek-cache off %5lu, on %5lu\n",
			      cases[i].name, atomic_load(&g_ops[i][0]),
			      atomic_load(&g_ops[i][1]));
	assert_true(atomic_load(&g_saves) >= 1);

	/* Quiet again: each version of the truststore, once saved, is what
	 * both contexts see (the kept store of the other version is not
	 * used for the changed file). */
	for (int v = 0; v < 2; v++) {
		TU_OK(wks_store_save_file(trust_st[v], trust_path, TP,
					  strlen(TP)));
		for (int i = 0; i < N_CASES; i++)
			if (cases[i].want == &trust_a)
				check_case(&cases[i], v);
	}
	free(th);
	free(args);
}

/* ---- no global lock during PBKDF2 ------------------------------------------ */

typedef struct {
	OSSL_LIB_CTX *lc;
	char a_uri[1024];
	char b_uri[N_FAST][1024];
	const objset *b_want;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int a_prompted;
	atomic_int seq;
	int a_seq, b_seq;  /* order of finishing (1 = first) */
	int a_ok, b_ok;
	double a_ms, b_ms; /* from A's prompt */
	double t0;
	char why[2048];
} race;

static double ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void a_prompted(void *arg)
{
	race *r = arg;

	pthread_mutex_lock(&r->mu);
	if (!r->a_prompted) {
		r->a_prompted = 1;
		r->t0 = ms_now();
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

static void *thread_a(void *arg)
{
	race *r = arg;
	ui_data u = { SP, a_prompted, r };
	result res;

	open_load(&res, r->lc, r->a_uri, 0, NULL, &u);
	r->a_seq = atomic_fetch_add(&r->seq, 1) + 1;
	r->a_ms = ms_now() - r->t0;
	r->a_ok = res.opened && matches(&res, &slow_entry) && !res.errors[0];
	if (!r->a_ok)
		snprintf(r->why, sizeof(r->why), "A: %d objects, errors: %.1900s",
			 res.n, res.errors);
	result_free(&res);
	/* (If the prompt never came, B is not left waiting.) */
	a_prompted(r);
	return NULL;
}

static void *thread_b(void *arg)
{
	race *r = arg;
	int ok = 1;

	pthread_mutex_lock(&r->mu);
	while (!r->a_prompted)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < N_FAST; i++) {
		ui_data u = { NULL, NULL, NULL };
		result res;

		open_load(&res, r->lc, r->b_uri[i], OSSL_STORE_INFO_PKEY, NULL,
			  &u);
		ok &= res.opened && matches(&res, r->b_want) && !res.errors[0];
		result_free(&res);
	}
	r->b_seq = atomic_fetch_add(&r->seq, 1) + 1;
	r->b_ms = ms_now() - r->t0;
	r->b_ok = ok;
	return NULL;
}

static void run_race(race *r, const char *what)
{
	pthread_t a, b;

	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	assert_int_equal(pthread_create(&b, NULL, thread_b, r), 0);
	assert_int_equal(pthread_create(&a, NULL, thread_a, r), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	print_message("%s: A (%ld iterations) %.0f ms after its prompt; B "
		      "(%d opens at 10,000) done after %.0f ms\n", what,
		      (long)slow_iter, r->a_ms, N_FAST, r->b_ms);
	if (!r->a_ok)
		fail_msg("%s: %s", what, r->why);
	assert_true(r->b_ok);
	if (r->b_seq > r->a_seq)
		fail_msg("%s: B's %d opens finished after A's slow open: "
			 "something held a lock across A's PBKDF2", what, N_FAST);
}

/* Thread B's work alone (ms): its three opens of keys.wks's EC key in
 * ctx_off, as in the first race. */
static double time_b_alone(void)
{
	ui_data u = { NULL, NULL, NULL };
	char uri[1024];
	double t0;
	result res;

	uri_of(uri, sizeof(uri), keys_path, "alias=ec&storepass=pass:" SP_URI);
	t0 = ms_now();
	for (int i = 0; i < N_FAST; i++) {
		open_load(&res, ctx_off, uri, OSSL_STORE_INFO_PKEY, NULL, &u);
		assert_true(matches(&res, &ec_only));
		result_free(&res);
	}
	return ms_now() - t0;
}

/* ms per PBKDF2 iteration of this libwks (a store MAC: one thread). */
static double ms_per_iter(void)
{
	wks_store *st = tu_store_fast();
	uint8_t *buf = NULL;
	size_t len;
	double t0, t;

	set_iter(st, 100000);
	t0 = ms_now();
	TU_OK(wks_store_save_buffer(st, &buf, &len, SP, strlen(SP)));
	t = ms_now() - t0;
	wks_free(buf);
	wks_store_free(st);
	return t / 100000;
}

/*
 * slow.wks (SP): "ec" (EC key, chain of 3) at 10,000 iterations, the
 *     store MAC at slow_iter: A's open in ctx_off.
 * keep.wks (SP, store MAC at 10,000): "slow" (EC key) at slow_iter,
 *     "fast-0".."fast-2" (EC key) at 10,000: kept in ctx_on, A opens
 *     "slow" and B the others.
 */
static void make_slow_stores(void)
{
	wks_store *st = tu_store_fast();
	char alias[16];

	for (int i = 0; i < N_FAST; i++) {
		snprintf(alias, sizeof(alias), "fast-%d", i);
		TU_OK(tu_set_key_files(st, alias, "ecc-key.pem",
				       "server-int-ecc-chain3.pem", SP));
	}
	set_iter(st, slow_iter);
	TU_OK(tu_set_key_files(st, "slow", "ecc-key.pem",
			       "server-int-ecc-chain3.pem", SP));
	set_iter(st, 10000);
	TU_OK(wks_store_save_file(st, keep_path, SP, strlen(SP)));
	wks_store_free(st);

	st = tu_store_fast();
	TU_OK(tu_set_key_files(st, "ec", "ecc-key.pem",
			       "server-int-ecc-chain3.pem", SP));
	set_iter(st, slow_iter);
	TU_OK(wks_store_save_file(st, slow_path, SP, strlen(SP)));
	wks_store_free(st);
}

static void test_provider_stress__no_lock_during_pbkdf2(void **state)
{
	race *r = calloc(1, sizeof(*r));
	char uri[1024];
	result res;
	ui_data u = { NULL, NULL, NULL };
	double per_iter, b_alone, target, margin;
	long iter;

	(void)state;
	assert_non_null(r);
	/*
	 * The slow PBKDF2 is sized on this machine and build: one run of it
	 * takes `margin` times as long as B's whole work alone (and at
	 * least 0.5 s), so that B, sharing the CPUs with A, still finishes
	 * well before A unless it waits for A.  (Under valgrind, which runs
	 * one thread at a time, fairly, a smaller margin keeps the run
	 * short.)  WKS_STRESS_SLOW_ITER sets the count instead.
	 */
	(void)time_b_alone(); /* warm-up: fetches, decoders */
	b_alone = time_b_alone();
	per_iter = ms_per_iter();
	if ((target = ms_per_iter()) < per_iter)
		per_iter = target;
	margin = under_valgrind() ? 5 : 20;
	target = margin * b_alone > 500 ? margin * b_alone : 500;
	iter = (long)(target / per_iter);
	if (iter < 100000)
		iter = 100000;
	if (iter > 5000000)
		iter = 5000000; /* libwks.wks.maxIterationCount */
	slow_iter = (int32_t)env_long("WKS_STRESS_SLOW_ITER", iter, 10000,
				      5000000);
	print_message("B's work alone %.0f ms; PBKDF2 %.2f us per iteration; "
		      "slow store at %ld iterations (about %.0f ms a run)\n",
		      b_alone, per_iter * 1e3, (long)slow_iter,
		      per_iter * (double)slow_iter);
	make_slow_stores();

	/* kek-cache = no: A runs slow.wks's store MAC's PBKDF2; B opens
	 * keys.wks (store MAC and entry at 10,000). */
	r->lc = ctx_off;
	uri_of(r->a_uri, sizeof(r->a_uri), slow_path, "alias=ec");
	for (int i = 0; i < N_FAST; i++)
		uri_of(r->b_uri[i], sizeof(r->b_uri[i]), keys_path,
		       "alias=ec&storepass=pass:" SP_URI);
	r->b_want = &ec_only;
	run_race(r, "kek-cache off, store MAC, two stores");

	/* kek-cache = yes: keep.wks kept (its certificates opened once:
	 * no key decrypted), then A derives "slow"'s key in the kept
	 * store while B derives fast-0, fast-1, fast-2's in the same one. */
	memset(r, 0, sizeof(*r));
	uri_of(uri, sizeof(uri), keep_path, "storepass=pass:" SP_URI);
	open_load(&res, ctx_on, uri, OSSL_STORE_INFO_CERT, NULL, &u);
	assert_true(res.opened);
	assert_int_equal(res.n, 3 * (N_FAST + 1));
	result_free(&res);
	r->lc = ctx_on;
	uri_of(r->a_uri, sizeof(r->a_uri), keep_path, "alias=slow");
	for (int i = 0; i < N_FAST; i++) {
		char q[128];

		snprintf(q, sizeof(q), "alias=fast-%d&storepass=pass:%s", i,
			 SP_URI);
		uri_of(r->b_uri[i], sizeof(r->b_uri[i]), keep_path, q);
	}
	r->b_want = &fast_entry;
	run_race(r, "kek-cache on, entry keys, one kept store");
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_provider_stress__threads),
		cmocka_unit_test(test_provider_stress__no_lock_during_pbkdf2),
	};

	return cmocka_run_group_tests_name("provider_stress", tests, setup,
					   teardown);
}
