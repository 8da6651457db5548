/*
 * The key reference decoder of wks.so (provider/decoder.c, docs/PROVIDER.md
 * "Key references") in-process, as servers reach it:
 * PEM_read_bio_PrivateKey_ex() and OSSL_DECODER on memory BIOs, in
 * library contexts whose openssl.cnf loads the built wks.so with and
 * without references = yes.  Runs in the plain, ASan+UBSan, TSan and
 * valgrind builds (the shell tests cannot: they load wks.so into the
 * uninstrumented openssl tool).
 *
 *   key          a reference gives the store's key (and the KEK cache
 *                path: a second read with kek-cache = yes)
 *   off          references off: no key, "unsupported", and a reference
 *                to a missing store is not even looked at
 *   other PEM    ordinary keys, a long note line and other blocks before
 *                a reference, CRLF line ends
 *   passwords    the passphrase callback asked with info naming key and
 *                store; the key password asked after the store password
 *                failed it; wrong passwords fail without echo
 *   refused      pass:, only=, no alias, bad base64, too long, no END
 *   two blocks   a file holding two references (a forged one first) is
 *                refused; other PEM text after one is not
 *   threads      8 threads reading references at once
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/x509.h>

#include "testutil.h"

#define STOREPASS "ref store pass"
#define KEYPASS "ref own key pass"

static char *dir;
static char store_path[300], pw_path[300];
static EVP_PKEY *key_a, *key_b;
static OSSL_LIB_CTX *ctx_on, *ctx_off, *ctx_cache;

static X509 *self_signed(EVP_PKEY *key)
{
	X509 *x = X509_new();
	X509_NAME *n = X509_get_subject_name(x);

	assert_non_null(x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400L);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
				   (const unsigned char *)"ref", -1, -1, 0);
	X509_set_issuer_name(x, n);
	assert_true(X509_sign(x, key, EVP_sha256()) > 0);
	return x;
}

static OSSL_LIB_CTX *ctx_with(const char *settings)
{
	char cnf[600];
	OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
	FILE *f;

	assert_non_null(lc);
	snprintf(cnf, sizeof(cnf), "%s/ref.cnf", dir);
	assert_non_null(f = fopen(cnf, "w"));
	fprintf(f, "openssl_conf = openssl_init\n[openssl_init]\n"
		"providers = provider_sect\n[provider_sect]\n"
		"default = default_sect\nwks = wks_sect\n"
		"[default_sect]\nactivate = 1\n[wks_sect]\n"
		"module = %s/wks.so\n%s\nactivate = 1\n", WKS_PROVIDER_DIR,
		settings);
	fclose(f);
	assert_true(OSSL_LIB_CTX_load_config(lc, cnf));
	assert_true(OSSL_PROVIDER_available(lc, "wks"));
	return lc;
}

/* A reference block for `uri`, base64 in lines of `width`, with `eol`. */
static char *ref_pem(const char *uri, int width, const char *eol)
{
	size_t n = strlen(uri), cap = 4 * n + 256;
	unsigned char *b64 = malloc(4 * n / 3 + 8);
	char *out = malloc(cap), *o;
	int len;

	assert_non_null(b64);
	assert_non_null(out);
	len = EVP_EncodeBlock(b64, (const unsigned char *)uri, (int)n);
	o = out + sprintf(out, "-----BEGIN WKS KEY REFERENCE-----%s", eol);
	for (int i = 0; i < len; i += width)
		o += sprintf(o, "%.*s%s", width, (const char *)b64 + i, eol);
	sprintf(o, "-----END WKS KEY REFERENCE-----%s", eol);
	free(b64);
	return out;
}

static EVP_PKEY *read_pem(OSSL_LIB_CTX *lc, const char *pem,
			  pem_password_cb *cb, void *arg)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k;

	assert_non_null(b);
	k = PEM_read_bio_PrivateKey_ex(b, NULL, cb, arg, lc, NULL);
	BIO_free(b);
	return k;
}

/* Whether the error queue holds `text` somewhere in its data or reason;
 * the queue is cleared. */
static int queue_has(const char *text)
{
	BIO *m = BIO_new(BIO_s_mem());
	char *p;
	long n;
	int found;

	ERR_print_errors(m);
	BIO_write(m, "", 1); /* NUL-terminated for strstr */
	n = BIO_get_mem_data(m, &p);
	found = n > 0 && strstr(p, text) != NULL;
	if (!found)
		print_message("error queue: %.*s\n", (int)n, n > 0 ? p : "");
	BIO_free(m);
	return found;
}

static int queue_lacks(const char *text)
{
	BIO *m = BIO_new(BIO_s_mem());
	char *p;
	long n;
	int absent;

	ERR_print_errors(m);
	BIO_write(m, "", 1);
	n = BIO_get_mem_data(m, &p);
	absent = n <= 0 || strstr(p, text) == NULL;
	BIO_free(m);
	ERR_clear_error();
	return absent;
}

static int setup(void **state)
{
	wks_store *st = tu_store_fast();
	X509 *ca, *cb;
	FILE *f;

	(void)state;
	assert_non_null(dir = tu_tmpdir());
	snprintf(store_path, sizeof(store_path), "%s/s.wks", dir);
	snprintf(pw_path, sizeof(pw_path), "%s/storepw", dir);
	assert_non_null(key_a = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"));
	assert_non_null(key_b = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"));
	ca = self_signed(key_a);
	cb = self_signed(key_b);
	TU_OK(wks_store_set_pkey(st, "a", key_a, &ca, 1, STOREPASS,
				 strlen(STOREPASS)));
	TU_OK(wks_store_set_pkey(st, "own", key_b, &cb, 1, KEYPASS,
				 strlen(KEYPASS)));
	TU_OK(wks_store_save_file(st, store_path, STOREPASS, strlen(STOREPASS)));
	wks_store_free(st);
	X509_free(ca);
	X509_free(cb);
	assert_non_null(f = fopen(pw_path, "w"));
	fprintf(f, "%s\n", STOREPASS);
	fclose(f);
	ctx_on = ctx_with("references = yes\nkek-cache = no");
	ctx_off = ctx_with("kek-cache = no");
	ctx_cache = ctx_with("references = yes\nkek-cache = yes");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	OSSL_LIB_CTX_free(ctx_on);
	OSSL_LIB_CTX_free(ctx_off);
	OSSL_LIB_CTX_free(ctx_cache);
	EVP_PKEY_free(key_a);
	EVP_PKEY_free(key_b);
	tu_rmtree(dir);
	free(dir);
	return 0;
}

static char *ref_for(const char *alias, const char *extra)
{
	char uri[2600];

	snprintf(uri, sizeof(uri), "wks:%s?alias=%s%s", store_path, alias,
		 extra);
	return ref_pem(uri, 64, "\n");
}

static void test_reference__key(void **state)
{
	char extra[1200];
	char *pem;
	EVP_PKEY *k;

	(void)state;
	snprintf(extra, sizeof(extra), "&storepass=file:%s", pw_path);
	pem = ref_for("a", extra);
	assert_non_null(k = read_pem(ctx_on, pem, NULL, NULL));
	assert_int_equal(EVP_PKEY_eq(k, key_a), 1);
	EVP_PKEY_free(k);
	/* kek-cache = yes: twice, the second from the kept store. */
	for (int i = 0; i < 2; i++) {
		assert_non_null(k = read_pem(ctx_cache, pem, NULL, NULL));
		assert_int_equal(EVP_PKEY_eq(k, key_a), 1);
		EVP_PKEY_free(k);
	}
	free(pem);
}

static void test_reference__off(void **state)
{
	char extra[1200];
	char *pem, *gone;
	EVP_PKEY *k;

	(void)state;
	snprintf(extra, sizeof(extra), "&storepass=file:%s", pw_path);
	pem = ref_for("a", extra);
	ERR_clear_error();
	assert_null(k = read_pem(ctx_off, pem, NULL, NULL));
	assert_true(queue_lacks("wks"));
	/* A reference to a missing store: with references on, the decoder
	 * says so; off, it is an unknown PEM block and nothing is opened. */
	gone = ref_pem("wks:/nonexistent/gone.wks?alias=a", 64, "\n");
	assert_null(read_pem(ctx_on, gone, NULL, NULL));
	assert_true(queue_has("/nonexistent/gone.wks"));
	assert_null(read_pem(ctx_off, gone, NULL, NULL));
	assert_true(queue_lacks("gone.wks"));
	free(gone);
	free(pem);
}

static void test_reference__other_pem(void **state)
{
	char extra[1200], *pem, *ref, *all;
	BIO *b = BIO_new(BIO_s_mem());
	EVP_PKEY *k;
	long n;
	size_t len;

	(void)state;
	assert_true(PEM_write_bio_PrivateKey(b, key_b, NULL, NULL, 0, NULL,
					     NULL));
	n = BIO_get_mem_data(b, &pem);
	all = calloc(1, (size_t)n + 1);
	assert_non_null(all);
	memcpy(all, pem, (size_t)n);
	assert_non_null(k = read_pem(ctx_on, all, NULL, NULL));
	assert_int_equal(EVP_PKEY_eq(k, key_b), 1);
	EVP_PKEY_free(k);
	free(all);
	BIO_free(b);

	/* A note with a line longer than the decoder's line buffer, and a
	 * certificate-like block of another label, then a reference with
	 * CRLF line ends and short base64 lines. */
	snprintf(extra, sizeof(extra), "wks:%s?alias=a&storepass=file:%s",
		 store_path, pw_path);
	ref = ref_pem(extra, 16, "\r\n");
	len = strlen(ref) + 2000;
	assert_non_null(all = malloc(len));
	memset(all, 'x', 600);
	all[0] = '#';
	all[600] = 0;
	strcat(all, "\n-----BEGIN WKS KEY REFERENCE----- not it\n"
	       "-----BEGIN OTHER THING-----\nAAAA\n"
	       "-----END OTHER THING-----\n");
	strcat(all, ref);
	assert_non_null(k = read_pem(ctx_on, all, NULL, NULL));
	assert_int_equal(EVP_PKEY_eq(k, key_a), 1);
	EVP_PKEY_free(k);
	free(all);
	free(ref);
}

typedef struct {
	int calls;
	char info[512];
	const char *give;
} pw_probe;

static int probe_cb(char *buf, size_t size, size_t *len,
		    const OSSL_PARAM params[], void *arg)
{
	pw_probe *p = arg;
	const OSSL_PARAM *i = OSSL_PARAM_locate_const(params,
						       OSSL_PASSPHRASE_PARAM_INFO);
	const char *s = NULL;

	p->calls++;
	if (i && OSSL_PARAM_get_utf8_string_ptr(i, &s))
		snprintf(p->info, sizeof(p->info), "%s", s);
	if (!p->give || strlen(p->give) > size)
		return 0;
	memcpy(buf, p->give, strlen(p->give));
	*len = strlen(p->give);
	return 1;
}

/* Decode with OSSL_DECODER and a passphrase callback that sees the info. */
static EVP_PKEY *decode_probe(const char *pem, pw_probe *p)
{
	EVP_PKEY *k = NULL;
	OSSL_DECODER_CTX *d = OSSL_DECODER_CTX_new_for_pkey(
		&k, "PEM", NULL, NULL, EVP_PKEY_KEYPAIR, ctx_on, NULL);
	const unsigned char *data = (const unsigned char *)pem;
	size_t len = strlen(pem);

	assert_non_null(d);
	assert_true(OSSL_DECODER_CTX_set_passphrase_cb(d, probe_cb, p));
	(void)OSSL_DECODER_from_data(d, &data, &len);
	OSSL_DECODER_CTX_free(d);
	return k;
}

static int pem_cb(char *buf, int size, int rw, void *arg)
{
	const char *pw = arg;

	(void)rw;
	if (!pw || (int)strlen(pw) > size)
		return -1;
	memcpy(buf, pw, strlen(pw));
	return (int)strlen(pw);
}

static void test_reference__passwords(void **state)
{
	char extra[1200], want[700], *pem;
	pw_probe p;
	EVP_PKEY *k;

	(void)state;
	/* No storepass=: the callback gives it, naming key and store. */
	pem = ref_for("a", "");
	memset(&p, 0, sizeof(p));
	p.give = STOREPASS;
	assert_non_null(k = decode_probe(pem, &p));
	assert_int_equal(EVP_PKEY_eq(k, key_a), 1);
	EVP_PKEY_free(k);
	assert_int_equal(p.calls, 1);
	snprintf(want, sizeof(want), "key \"a\" in %s", store_path);
	assert_string_equal(p.info, want);
	/* Through a pem_password_cb, as servers pass theirs. */
	assert_non_null(k = read_pem(ctx_on, pem, pem_cb, (void *)STOREPASS));
	EVP_PKEY_free(k);
	/* None: an error naming store and alias. */
	ERR_clear_error();
	assert_null(read_pem(ctx_on, pem, pem_cb, NULL));
	assert_true(queue_has("no password was given"));
	/* A wrong one: no echo. */
	assert_null(read_pem(ctx_on, pem, pem_cb, (void *)"Zz-wrong-pw"));
	assert_true(queue_lacks("Zz-wrong-pw"));
	free(pem);

	/* storepass= in the reference, a key password of its own: asked
	 * after the store password failed the key, with the same info. */
	snprintf(extra, sizeof(extra), "&storepass=file:%s", pw_path);
	pem = ref_for("own", extra);
	memset(&p, 0, sizeof(p));
	p.give = KEYPASS;
	assert_non_null(k = decode_probe(pem, &p));
	assert_int_equal(EVP_PKEY_eq(k, key_b), 1);
	EVP_PKEY_free(k);
	assert_int_equal(p.calls, 1);
	snprintf(want, sizeof(want), "key \"own\" in %s", store_path);
	assert_string_equal(p.info, want);
	ERR_clear_error();
	assert_null(read_pem(ctx_on, pem, pem_cb, (void *)"Zz-wrong-key"));
	assert_true(queue_has("key entry \"own\""));
	assert_null(read_pem(ctx_on, pem, pem_cb, (void *)"Zz-wrong-key"));
	assert_true(queue_lacks("Zz-wrong-key"));
	/* No key password from anywhere: the error names the likely cause
	 * (a store password changed alone) and the ways out. */
	assert_null(read_pem(ctx_on, pem, pem_cb, NULL));
	assert_true(queue_has("opens the store but not this key"));
	assert_null(read_pem(ctx_on, pem, pem_cb, NULL));
	assert_true(queue_has("wks passwd --store-only"));
	assert_null(read_pem(ctx_on, pem, pem_cb, NULL));
	assert_true(queue_has("wks keypasswd"));
	/* The key password as the store's (key "a"): no callback at all. */
	free(pem);
	pem = ref_for("a", extra);
	memset(&p, 0, sizeof(p));
	assert_non_null(k = decode_probe(pem, &p));
	EVP_PKEY_free(k);
	assert_int_equal(p.calls, 0);
	free(pem);
}

static void test_reference__refused(void **state)
{
	static const struct {
		const char *uri_tail, *reason;
	} bad[] = {
		{ "?alias=a&storepass=pass:Zz-secret-text", "is not allowed" },
		{ "?alias=a&keypass=pass:Zz-secret-text", "is not allowed" },
		{ "?alias=a&only=certs", "only= is not allowed" },
		{ "?storepass=env:X", "alias= is required" },
		{ "?alias=a&alais=b", "unknown attribute" },
		{ "?alias=nope&storepass=pass:x", "is not allowed" },
	};
	char uri[1200], *pem, *long_uri;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(uri, sizeof(uri), "wks:%s%s", store_path,
			 bad[i].uri_tail);
		pem = ref_pem(uri, 64, "\n");
		ERR_clear_error();
		assert_null(read_pem(ctx_on, pem, NULL, NULL));
		assert_true(queue_has(bad[i].reason));
		assert_null(read_pem(ctx_on, pem, NULL, NULL));
		assert_true(queue_lacks("Zz-secret"));
		free(pem);
	}
	ERR_clear_error();
	assert_null(read_pem(ctx_on, "-----BEGIN WKS KEY REFERENCE-----\n"
			     "d2tz*zo=\n-----END WKS KEY REFERENCE-----\n",
			     NULL, NULL));
	assert_true(queue_has("bad base64"));
	assert_null(read_pem(ctx_on, "-----BEGIN WKS KEY REFERENCE-----\n"
			     "d2tzOi9zP2FsaWFzPWE=\n", NULL, NULL));
	assert_true(queue_has("no -----END"));
	/* Longer than the limit. */
	n = 6000;
	assert_non_null(long_uri = malloc(n + 64));
	memcpy(long_uri, "wks:/", 5);
	memset(long_uri + 5, 'a', n);
	strcpy(long_uri + 5 + n, "?alias=a");
	pem = ref_pem(long_uri, 64, "\n");
	assert_null(read_pem(ctx_on, pem, NULL, NULL));
	assert_true(queue_has("longer than"));
	free(pem);
	free(long_uri);
	/* The missing alias, named with the store. */
	snprintf(uri, sizeof(uri), "wks:%s?alias=nope&storepass=file:%s",
		 store_path, pw_path);
	pem = ref_pem(uri, 64, "\n");
	assert_null(read_pem(ctx_on, pem, NULL, NULL));
	assert_true(queue_has("no entry \"nope\""));
	free(pem);
}

/*
 * A file with two reference blocks: what export-key wrote before its note
 * was escaped, for a store in a folder whose name holds a whole forged
 * block (a second BEGIN line in the note, above the real block).  The
 * decoder takes the first block, so it must refuse the file instead of
 * opening the forged store with the password file the forger chose.
 */
static void test_reference__two_blocks(void **state)
{
	char extra[1200], *real, *forged, *file;
	size_t n;

	(void)state;
	snprintf(extra, sizeof(extra), "&storepass=file:%s", pw_path);
	real = ref_for("a", extra);
	/* The forged one names a store and a password file that work (here
	 * the same): a decoder taking the first block gives a key. */
	forged = ref_for("a", extra);
	n = strlen(real) + strlen(forged) + 256;
	assert_non_null(file = malloc(n));
	snprintf(file, n, "# wks key reference: the private key \"a\" of the "
		 "store\n# /srv/x\n%sy/s.wks.  It holds no password\n%s",
		 forged, real);
	ERR_clear_error();
	assert_null(read_pem(ctx_on, file, NULL, NULL));
	assert_true(queue_has("a second -----BEGIN WKS KEY REFERENCE----- "
			      "line"));
	/* The same with another block between them, through OSSL_DECODER. */
	snprintf(file, n, "%s-----BEGIN CERTIFICATE-----\nAAAA\n"
		 "-----END CERTIFICATE-----\n%s", real, forged);
	ERR_clear_error();
	assert_null(read_pem(ctx_on, file, NULL, NULL));
	assert_true(queue_has("a second"));
	/* One block followed by other PEM text: still read. */
	snprintf(file, n, "%s-----BEGIN CERTIFICATE-----\nAAAA\n"
		 "-----END CERTIFICATE-----\n", real);
	{
		EVP_PKEY *k = read_pem(ctx_on, file, NULL, NULL);

		assert_non_null(k);
		assert_int_equal(EVP_PKEY_eq(k, key_a), 1);
		EVP_PKEY_free(k);
	}
	free(file);
	free(forged);
	free(real);
}

static char *thread_pem;

static void *reader(void *arg)
{
	int ok = 1;

	(void)arg;
	for (int i = 0; i < 4; i++) {
		OSSL_LIB_CTX *lc = i % 2 ? ctx_on : ctx_cache;
		EVP_PKEY *k = read_pem(lc, thread_pem, NULL, NULL);

		ok &= k && EVP_PKEY_eq(k, key_a) == 1;
		EVP_PKEY_free(k);
	}
	ERR_clear_error();
	return ok ? (void *)1 : NULL;
}

static void test_reference__threads(void **state)
{
	pthread_t t[8];
	char extra[1200];

	(void)state;
	snprintf(extra, sizeof(extra), "&storepass=file:%s", pw_path);
	thread_pem = ref_for("a", extra);
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, NULL), 0);
	for (int i = 0; i < 8; i++) {
		void *r;

		assert_int_equal(pthread_join(t[i], &r), 0);
		assert_non_null(r);
	}
	free(thread_pem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference__key),
		cmocka_unit_test(test_reference__off),
		cmocka_unit_test(test_reference__other_pem),
		cmocka_unit_test(test_reference__passwords),
		cmocka_unit_test(test_reference__refused),
		cmocka_unit_test(test_reference__two_blocks),
		cmocka_unit_test(test_reference__threads),
	};

	return cmocka_run_group_tests_name("provider_reference_decoder", tests,
					   setup, teardown);
}
