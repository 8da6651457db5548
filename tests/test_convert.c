/*
 * The conversions API (include/wks/convert.h) on keystores made by the
 * stock keytool (OpenJDK) in a temporary folder at the start: a JKS with
 * two EC keys (one under the store password, one under its own) and a
 * trusted certificate, and a JCEKS with an AES key and an EC key.
 * Checked: type detection, the entry-by-entry reader (aliases, kinds,
 * chains, keys that match their certificate, wrong passwords, modified and
 * truncated files), and wks_convert_read() into a store (keys stored
 * under the password that opened them, the per-alias password callback,
 * the skip report, aliases the store has already, bad arguments), and
 * wks_convert_write_p12() (one entry read back by OpenSSL's PKCS12_parse,
 * the whole store by keytool; skips and errors), PKCS#12 entry by entry
 * (wks_p12_*, wks_convert_write_p12_keys()), and that OpenSSL's
 * error queue is left as the caller had it.
 *
 * Without keytool on PATH every test is skipped.  About 6 s of CPU, nearly
 * all of it the six keytool runs (JVM starts) of the setup.
 * WKS_JCEKS_ITERATIONS: the JCEKS seal's iteration count (see kt()).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "wks/convert.h"

#define STOREPW "storepass1"
#define KEYPW2 "k2-own-pass"

static char *dir;
static uint8_t *jks, *jceks;
static size_t jks_len, jceks_len;
static int have_keytool;

static int kt(const char *args)
{
	/* (a JVM that starts quickly: no optimising compiler, serial GC)
	 * JCEKS keys are sealed with keytool's default of 200000 PBE
	 * iterations in the full mode, 10000 in the default one, and
	 * WKS_JCEKS_ITERATIONS when set (CI's valgrind stage: 100): each
	 * of read_jceks's 17 password attempts runs 2 x that many MD5s. */
	return tu_system("cd '%s' && keytool -J-XX:TieredStopAtLevel=1 "
			 "-J-XX:+UseSerialGC -J-Djdk.jceks.iterationCount=%zu "
			 "%s >/dev/null 2>&1", dir,
			 tu_env_count("WKS_JCEKS_ITERATIONS", 10000, 200000),
			 args);
}

static int group_setup(void **state)
{
	char path[4096];

	(void)state;
	if (tu_system("command -v keytool >/dev/null 2>&1") != 0)
		return 0;
	dir = tu_tmpdir();
	if (kt("-genkeypair -storetype JKS -keystore t.jks -storepass " STOREPW
	       " -keypass " STOREPW " -alias k1 -keyalg EC -groupname "
	       "secp256r1 -dname CN=k1 -validity 30") != 0 ||
	    kt("-genkeypair -storetype JKS -keystore t.jks -storepass " STOREPW
	       " -keypass " KEYPW2 " -alias k2 -keyalg EC -groupname "
	       "secp256r1 -dname CN=k2 -validity 30") != 0 ||
	    kt("-exportcert -keystore t.jks -storepass " STOREPW
	       " -alias k1 -file k1.cer") != 0 ||
	    kt("-importcert -noprompt -storetype JKS -keystore t.jks "
	       "-storepass " STOREPW " -alias ca -file k1.cer") != 0 ||
	    kt("-genseckey -storetype JCEKS -keystore t.jceks -storepass "
	       STOREPW " -keypass " STOREPW " -alias s1 -keyalg AES "
	       "-keysize 128") != 0 ||
	    kt("-genkeypair -storetype JCEKS -keystore t.jceks -storepass "
	       STOREPW " -keypass " KEYPW2 " -alias k2 -keyalg EC -groupname "
	       "secp256r1 -dname CN=k2 -validity 30") != 0) {
		fprintf(stderr, "keytool failed\n");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/t.jks", dir);
	jks = tu_read_file(path, &jks_len);
	snprintf(path, sizeof(path), "%s/t.jceks", dir);
	jceks = tu_read_file(path, &jceks_len);
	have_keytool = jks && jceks;
	return have_keytool ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	free(jks);
	free(jceks);
	if (dir) {
		tu_rmtree(dir);
		free(dir);
	}
	return 0;
}

#define NEED_KEYTOOL() do { if (!have_keytool) skip(); } while (0)

static size_t index_of(const wks_java_store *js, const char *alias)
{
	for (size_t i = 0; i < wks_java_count(js); i++)
		if (!strcmp(wks_java_alias(js, i), alias))
			return i;
	fail_msg("no alias %s", alias);
	return 0;
}

/* The PKCS#8 key belongs to the DER certificate. */
static void assert_key_matches(const uint8_t *pkcs8, size_t n,
			       const uint8_t *cert, size_t cert_len)
{
	const unsigned char *p = pkcs8, *q = cert;
	EVP_PKEY *k = d2i_AutoPrivateKey(NULL, &p, (long)n);
	X509 *x = d2i_X509(NULL, &q, (long)cert_len);

	assert_non_null(k);
	assert_non_null(x);
	assert_int_equal(X509_check_private_key(x, k), 1);
	EVP_PKEY_free(k);
	X509_free(x);
}

static void test_convert__detect(void **state)
{
	wks_store *st = tu_store_fast();
	uint8_t *buf = NULL;
	size_t len = 0;

	(void)state;
	NEED_KEYTOOL();
	assert_int_equal(wks_keystore_detect(jks, jks_len), WKS_KEYSTORE_JKS);
	assert_int_equal(wks_keystore_detect(jceks, jceks_len),
			 WKS_KEYSTORE_JCEKS);
	TU_OK(wks_store_save_buffer(st, &buf, &len, "pw", 2));
	assert_int_equal(wks_keystore_detect(buf, len), WKS_KEYSTORE_WKS);
	assert_int_equal(wks_keystore_detect((const uint8_t *)"\x30\x82", 2),
			 WKS_KEYSTORE_PKCS12);
	assert_int_equal(wks_keystore_detect((const uint8_t *)"abcd", 4),
			 WKS_KEYSTORE_UNKNOWN);
	assert_int_equal(wks_keystore_detect(NULL, 0), WKS_KEYSTORE_UNKNOWN);
	assert_string_equal(wks_keystore_type_name(WKS_KEYSTORE_JCEKS), "JCEKS");
	assert_string_equal(wks_keystore_type_name(WKS_KEYSTORE_PKCS12),
			    "PKCS12");
	wks_free(buf);
	wks_store_free(st);
}

static void test_convert__java_entries(void **state)
{
	wks_java_store *js = NULL;
	uint8_t *k = NULL;
	size_t n = 0, cl = 0, i1, i2, ica;
	const uint8_t *c;

	(void)state;
	NEED_KEYTOOL();
	TU_OK(wks_java_parse(&js, jks, jks_len, STOREPW, strlen(STOREPW)));
	assert_int_equal(wks_java_type(js), WKS_KEYSTORE_JKS);
	assert_int_equal(wks_java_version(js), 2);
	assert_int_equal(wks_java_count(js), 3);
	i1 = index_of(js, "k1");
	i2 = index_of(js, "k2");
	ica = index_of(js, "ca");
	assert_int_equal(wks_java_entry_type(js, i1), WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_java_entry_type(js, ica), WKS_ENTRY_CERTIFICATE);
	assert_int_equal(wks_java_cert_count(js, i1), 1);
	assert_int_equal(wks_java_cert_count(js, ica), 1);
	assert_int_equal(wks_java_certs_x509(js, i1), 1);
	assert_true(wks_java_creation_time(js, i1) > 1600000000000LL);
	/* k1's certificate is the trusted one. */
	{
		size_t l1 = 0, l2 = 0;
		const uint8_t *a = wks_java_cert_der(js, i1, 0, &l1);
		const uint8_t *b = wks_java_cert_der(js, ica, 0, &l2);

		assert_int_equal(l1, l2);
		assert_memory_equal(a, b, l1);
	}
	/* Out of range. */
	assert_null(wks_java_alias(js, 3));
	assert_int_equal(wks_java_entry_type(js, 3), WKS_ENTRY_NONE);
	assert_null(wks_java_cert_der(js, i1, 1, &cl));
	assert_int_equal(cl, 0);

	TU_OK(wks_java_get_key(&k, &n, js, i1, STOREPW, strlen(STOREPW)));
	c = wks_java_cert_der(js, i1, 0, &cl);
	assert_key_matches(k, n, c, cl);
	wks_free(k);
	/* k2 has its own password. */
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_get_key(&k, &n, js, i2, STOREPW,
						      strlen(STOREPW)));
	assert_null(k);
	TU_OK(wks_java_get_key(&k, &n, js, i2, KEYPW2, strlen(KEYPW2)));
	c = wks_java_cert_der(js, i2, 0, &cl);
	assert_key_matches(k, n, c, cl);
	wks_free(k);
	/* A certificate has no key. */
	TU_EXPECT(WKS_ERR_INVALID, wks_java_get_key(&k, &n, js, ica, STOREPW,
						    strlen(STOREPW)));
	wks_java_free(js);
}

static void test_convert__jceks_secret(void **state)
{
	wks_java_store *js = NULL;
	uint8_t *k = NULL;
	char *alg = NULL;
	size_t n = 0, is;

	(void)state;
	NEED_KEYTOOL();
	TU_OK(wks_java_parse(&js, jceks, jceks_len, STOREPW, strlen(STOREPW)));
	assert_int_equal(wks_java_type(js), WKS_KEYSTORE_JCEKS);
	is = index_of(js, "s1");
	assert_int_equal(wks_java_entry_type(js, is), WKS_ENTRY_SECRET_KEY);
	assert_int_equal(wks_java_cert_count(js, is), 0);
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_get_secret(&k, &n, &alg, js, is,
							 "wrong", 5));
	TU_OK(wks_java_get_secret(&k, &n, &alg, js, is, STOREPW,
				  strlen(STOREPW)));
	assert_string_equal(alg, "AES");
	assert_int_equal(n, 16);
	wks_free(k);
	wks_free(alg);
	wks_java_free(js);
}

static void test_convert__java_bad_input(void **state)
{
	wks_java_store *js = NULL;
	uint8_t *d;

	(void)state;
	NEED_KEYTOOL();
	TU_EXPECT(WKS_ERR_INTEGRITY,
		  wks_java_parse(&js, jks, jks_len, "wrong", 5));
	assert_null(js);
	/* Without a password the digest is not checked. */
	TU_OK(wks_java_parse(&js, jks, jks_len, NULL, 0));
	assert_int_equal(wks_java_count(js), 3);
	wks_java_free(js);
	js = NULL;
	/* One byte changed in the middle: the digest catches it. */
	d = malloc(jks_len + 1);
	assert_non_null(d);
	memcpy(d, jks, jks_len);
	d[jks_len / 2] ^= 1;
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_parse(&js, d, jks_len, STOREPW,
						    strlen(STOREPW)));
	/* Truncated, and a byte after the digest (unchecked parse). */
	memcpy(d, jks, jks_len);
	TU_EXPECT(WKS_ERR_FORMAT, wks_java_parse(&js, d, jks_len - 30, NULL,
						 0));
	d[jks_len] = 0;
	TU_EXPECT(WKS_ERR_FORMAT, wks_java_parse(&js, d, jks_len + 1, NULL,
						 0));
	TU_EXPECT(WKS_ERR_FORMAT, wks_java_parse(&js, d, 3, NULL, 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_java_parse(NULL, d, jks_len, NULL, 0));
	/* A password that is not UTF-8. */
	TU_EXPECT(WKS_ERR_INVALID, wks_java_parse(&js, jks, jks_len,
						  "\xff\xfe", 2));
	assert_null(js);
	free(d);
}

/* The password callback: hands out cb_pw[0], cb_pw[1], ... then gives up;
 * counts its calls and remembers the aliases. */
struct cb_state {
	const char *pw[4];
	unsigned calls;
	char alias[64];
	unsigned last_attempt;
};

static int cb(void *arg, const char *alias, unsigned attempt, char *buf,
	      size_t size, size_t *len)
{
	struct cb_state *s = arg;
	const char *pw;

	s->calls++;
	s->last_attempt = attempt;
	snprintf(s->alias, sizeof(s->alias), "%s", alias);
	if (attempt < 1 || attempt > 4 || !(pw = s->pw[attempt - 1]))
		return 1;
	assert_true(strlen(pw) <= size);
	memcpy(buf, pw, strlen(pw));
	*len = strlen(pw);
	return 0;
}

static void test_convert__read_skip_report(void **state)
{
	wks_store *st = tu_store_fast();
	wks_convert_report *r = NULL;
	wks_key *key = NULL;

	(void)state;
	NEED_KEYTOOL();
	/* No callback: k2 (its own password) is skipped, the rest taken. */
	TU_OK(wks_convert_read(st, jks, jks_len, STOREPW, strlen(STOREPW), 0,
			       NULL, NULL, &r));
	assert_int_equal(wks_convert_report_done(r), 2);
	assert_int_equal(wks_convert_report_skipped(r), 1);
	assert_string_equal(wks_convert_report_alias(r, 0), "k2");
	assert_int_equal(wks_convert_report_reason(r, 0), WKS_ERR_INTEGRITY);
	assert_non_null(strstr(wks_convert_report_detail(r, 0), "password"));
	assert_null(strstr(wks_convert_report_detail(r, 0), STOREPW));
	assert_null(wks_convert_report_alias(r, 1));
	assert_int_equal(wks_convert_report_reason(r, 1), 0);
	wks_convert_report_free(r);
	r = NULL;
	assert_int_equal(wks_store_size(st), 2);
	assert_int_equal(wks_store_entry_type(st, "ca"), WKS_ENTRY_CERTIFICATE);
	assert_int_equal(wks_store_entry_type(st, "k2"), WKS_ENTRY_NONE);
	/* k1 is stored under the password that opened it. */
	TU_OK(wks_store_get_key(&key, st, "k1", STOREPW, strlen(STOREPW)));
	wks_key_free(key);
	key = NULL;

	/* Again into the same store: what it has is skipped (never
	 * replaced), k2 still has no password. */
	TU_OK(wks_convert_read(st, jks, jks_len, STOREPW, strlen(STOREPW), 0,
			       NULL, NULL, &r));
	assert_int_equal(wks_convert_report_done(r), 0);
	assert_int_equal(wks_convert_report_skipped(r), 3);
	for (size_t i = 0; i < 3; i++)
		if (strcmp(wks_convert_report_alias(r, i), "k2"))
			assert_int_equal(wks_convert_report_reason(r, i),
					 WKS_ERR_EXISTS);
	wks_convert_report_free(r);
	wks_store_free(st);
}

static void test_convert__read_callback(void **state)
{
	wks_store *st = tu_store_fast();
	wks_convert_report *r = NULL;
	wks_key *key = NULL;
	struct cb_state s = { { "nope", KEYPW2, NULL, NULL }, 0, "", 0 };
	size_t n = 0;

	(void)state;
	NEED_KEYTOOL();
	TU_OK(wks_convert_read(st, jks, jks_len, STOREPW, strlen(STOREPW), 0,
			       cb, &s, &r));
	/* Asked for k2 only (k1 opened with the store password): a wrong
	 * one, then the right one. */
	assert_int_equal(s.calls, 2);
	assert_int_equal(s.last_attempt, 2);
	assert_string_equal(s.alias, "k2");
	assert_int_equal(wks_convert_report_done(r), 3);
	assert_int_equal(wks_convert_report_skipped(r), 0);
	wks_convert_report_free(r);
	r = NULL;
	/* k2 is stored under its own password, not the store's. */
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&key, st, "k2", STOREPW,
						       strlen(STOREPW)));
	TU_OK(wks_store_get_key(&key, st, "k2", KEYPW2, strlen(KEYPW2)));
	wks_key_free(key);
	key = NULL;
	TU_OK(wks_store_cert_count(&n, st, "k2"));
	assert_int_equal(n, 1);
	wks_store_free(st);

	/* A callback that gives up at once: asked once, k2 skipped. */
	st = tu_store_fast();
	memset(&s, 0, sizeof(s));
	TU_OK(wks_convert_read(st, jks, jks_len, STOREPW, strlen(STOREPW), 0,
			       cb, &s, &r));
	assert_int_equal(s.calls, 1);
	assert_int_equal(wks_convert_report_skipped(r), 1);
	assert_int_equal(wks_convert_report_reason(r, 0), WKS_ERR_INTEGRITY);
	wks_convert_report_free(r);
	wks_store_free(st);
}

/* A callback that never gives up (always a wrong password). */
static int cb_forever(void *arg, const char *alias, unsigned attempt,
		      char *buf, size_t size, size_t *len)
{
	unsigned *calls = arg;

	(void)alias;
	(void)attempt;
	(void)size;
	(*calls)++;
	memcpy(buf, "wrong", 5);
	*len = 5;
	return 0;
}

static void test_convert__read_jceks(void **state)
{
	wks_store *st = tu_store_fast();
	wks_convert_report *r = NULL;
	wks_key *key = NULL;
	unsigned calls = 0;
	size_t n = 0;

	(void)state;
	NEED_KEYTOOL();
	TU_OK(wks_convert_read(st, jceks, jceks_len, STOREPW, strlen(STOREPW),
			       0, cb_forever, &calls, &r));
	/* The callback is not asked without end. */
	assert_true(calls >= 1 && calls <= 16);
	assert_int_equal(wks_convert_report_done(r), 1);
	assert_int_equal(wks_convert_report_skipped(r), 1);
	assert_string_equal(wks_convert_report_alias(r, 0), "k2");
	wks_convert_report_free(r);
	assert_int_equal(wks_store_entry_type(st, "s1"), WKS_ENTRY_SECRET_KEY);
	TU_OK(wks_store_get_key(&key, st, "s1", STOREPW, strlen(STOREPW)));
	assert_string_equal(wks_key_algorithm(key), "AES");
	(void)wks_key_data(key, &n);
	assert_int_equal(n, 16);
	wks_key_free(key);
	wks_store_free(st);
}

static void test_convert__read_errors(void **state)
{
	wks_store *st = tu_store_fast(), *w = tu_store_fast();
	wks_convert_report *r = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;

	(void)state;
	NEED_KEYTOOL();
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_convert_read(st, jks, jks_len, "x", 1,
						      0, NULL, NULL, &r));
	assert_non_null(r); /* set on failure too */
	assert_int_equal(wks_convert_report_done(r), 0);
	wks_convert_report_free(r);
	assert_int_equal(wks_store_size(st), 0);
	TU_EXPECT(WKS_ERR_FORMAT, wks_convert_read(st, (const uint8_t *)"junk",
						   4, NULL, 0, 0, NULL, NULL,
						   NULL));
	TU_OK(wks_store_save_buffer(w, &buf, &len, "pw", 2));
	TU_EXPECT(WKS_ERR_UNSUPPORTED, wks_convert_read(st, buf, len, "pw", 2,
							0, NULL, NULL, NULL));
	TU_EXPECT(WKS_ERR_FORMAT,
		  wks_convert_read(st, (const uint8_t *)"\x30\x03\x02\x01\x03",
				   5, "pw", 2, 0, NULL, NULL, NULL));
	TU_EXPECT(WKS_ERR_INVALID, wks_convert_read(st, jks, jks_len, NULL, 0,
						    2, NULL, NULL, NULL));
	TU_EXPECT(WKS_ERR_INVALID, wks_convert_read(NULL, jks, jks_len, NULL,
						    0, 0, NULL, NULL, NULL));
	TU_EXPECT(WKS_ERR_INVALID, wks_convert_read(st, jks, jks_len, NULL, 3,
						    0, NULL, NULL, NULL));
	/* No store password: the digest is skipped, every key needs the
	 * callback (none here): only the certificate comes. */
	TU_OK(wks_convert_read(st, jks, jks_len, NULL, 0, 0, NULL, NULL, &r));
	assert_int_equal(wks_convert_report_done(r), 1);
	assert_int_equal(wks_convert_report_skipped(r), 2);
	wks_convert_report_free(r);
	wks_free(buf);
	wks_store_free(w);
	wks_store_free(st);
}

/* A store with what the PKCS#12 writer meets: k1, k2 (its own password),
 * ca, s1 (AES, from the JCEKS) and a secret key whose algorithm has no
 * OID.  (A private key without a certificate, which the writer skips too,
 * comes only from a file: wks_store_set_private_key() refuses one.) */
static wks_store *mixed_store(void)
{
	wks_store *st = tu_store_fast();
	struct cb_state s = { { KEYPW2, NULL, NULL, NULL }, 0, "", 0 };
	TU_OK(wks_convert_read(st, jks, jks_len, STOREPW, strlen(STOREPW), 0,
			       cb, &s, NULL));
	TU_OK(wks_convert_read(st, jceks, jceks_len, STOREPW, strlen(STOREPW),
			       0, NULL, NULL, NULL)); /* s1; k2 exists */
	TU_OK(wks_store_set_secret_key(st, "odd", "NoSuchAlg",
				       (const uint8_t *)"0123456789abcdef", 16,
				       STOREPW, strlen(STOREPW)));
	assert_int_equal(wks_store_size(st), 5);
	return st;
}

static void test_convert__write_p12_one(void **state)
{
	wks_store *st;
	uint8_t *out = NULL, *cder = NULL, *der = NULL;
	size_t len = 0, clen = 0;
	const unsigned char *p;
	PKCS12 *p12;
	EVP_PKEY *pk = NULL, *orig = NULL;
	X509 *x = NULL;
	STACK_OF(X509) *ca = NULL;
	int dlen;

	(void)state;
	NEED_KEYTOOL();
	st = mixed_store();
	TU_OK(wks_convert_write_p12(&out, &len, st, "k1", STOREPW,
				    strlen(STOREPW), "p12pass", 7, 1000, NULL,
				    NULL, NULL));
	p = out;
	assert_non_null(p12 = d2i_PKCS12(NULL, &p, (long)len));
	assert_int_equal(PKCS12_verify_mac(p12, "p12pass", 7), 1);
	assert_int_equal(PKCS12_verify_mac(p12, "p12pasX", 7), 0);
	assert_int_equal(PKCS12_parse(p12, "p12pass", &pk, &x, &ca), 1);
	/* The key and certificate are the store's. */
	TU_OK(wks_store_get_pkey(&orig, st, "k1", STOREPW, strlen(STOREPW)));
	assert_int_equal(EVP_PKEY_eq(pk, orig), 1);
	TU_OK(wks_store_get_cert_der(&cder, &clen, st, "k1", 0));
	dlen = i2d_X509(x, &der);
	assert_int_equal((size_t)dlen, clen);
	assert_memory_equal(der, cder, clen);
	assert_true(ca == NULL || sk_X509_num(ca) == 0); /* no chain */
	OPENSSL_free(der);
	wks_free(cder);
	EVP_PKEY_free(pk);
	EVP_PKEY_free(orig);
	X509_free(x);
	sk_X509_pop_free(ca, X509_free);
	PKCS12_free(p12);
	wks_free(out);
	out = NULL;

	/* One entry that cannot be written is the call's error. */
	TU_EXPECT(WKS_ERR_UNSUPPORTED,
		  wks_convert_write_p12(&out, &len, st, "odd", STOREPW,
					strlen(STOREPW), "p12pass", 7, 1000,
					NULL, NULL, NULL));
	TU_EXPECT(WKS_ERR_INTEGRITY,
		  wks_convert_write_p12(&out, &len, st, "k2", STOREPW,
					strlen(STOREPW), "p12pass", 7, 1000,
					NULL, NULL, NULL));
	TU_EXPECT(WKS_ERR_NOTFOUND,
		  wks_convert_write_p12(&out, &len, st, "nope", NULL, 0,
					"p12pass", 7, 1000, NULL, NULL, NULL));
	TU_EXPECT(WKS_ERR_INVALID,
		  wks_convert_write_p12(&out, &len, st, NULL, NULL, 0, NULL, 0,
					1000, NULL, NULL, NULL));
	assert_null(out);
	wks_store_free(st);
	/* Nothing to write. */
	st = tu_store_fast();
	TU_EXPECT(WKS_ERR_INVALID,
		  wks_convert_write_p12(&out, &len, st, NULL, NULL, 0, "pw", 2,
					1000, NULL, NULL, NULL));
	wks_store_free(st);
}

/* The whole store as PKCS#12, read back by keytool. */
static void test_convert__write_p12_store_keytool(void **state)
{
	wks_store *st;
	wks_convert_report *r = NULL;
	struct cb_state s = { { KEYPW2, NULL, NULL, NULL }, 0, "", 0 };
	uint8_t *out = NULL;
	size_t len = 0;
	char path[4096];

	(void)state;
	NEED_KEYTOOL();
	st = mixed_store();
	TU_OK(wks_convert_write_p12(&out, &len, st, NULL, STOREPW,
				    strlen(STOREPW), "p12pass", 7, 1000, cb,
				    &s, &r));
	/* k1, k2 (the callback's password), ca, s1; odd skipped. */
	assert_int_equal(wks_convert_report_done(r), 4);
	assert_int_equal(wks_convert_report_skipped(r), 1);
	assert_string_equal(wks_convert_report_alias(r, 0), "odd");
	assert_int_equal(wks_convert_report_reason(r, 0), WKS_ERR_UNSUPPORTED);
	assert_non_null(strstr(wks_convert_report_detail(r, 0), "no OID"));
	assert_string_equal(s.alias, "k2");
	wks_convert_report_free(r);
	snprintf(path, sizeof(path), "%s/out.p12", dir);
	tu_write_file(path, out, len);
	assert_int_equal(tu_system("cd '%s' && keytool -J-XX:TieredStopAtLevel=1 "
				   "-list -storetype PKCS12 -keystore out.p12 "
				   "-storepass p12pass > list.txt 2>&1", dir), 0);
	assert_int_equal(tu_system("cd '%s' && grep -q '^k1, .*PrivateKeyEntry' "
				   "list.txt && grep -q '^k2, .*PrivateKeyEntry'"
				   " list.txt && grep -q '^ca, .*trustedCertEntry'"
				   " list.txt && grep -q '^s1, .*SecretKeyEntry' "
				   "list.txt && grep -q 'contains 4 entries' "
				   "list.txt", dir), 0);
	wks_free(out);
	wks_store_free(st);
}

/* The caller's OpenSSL errors stay; libwks's own do not pile up. */
static void test_convert__errqueue(void **state)
{
	wks_java_store *js = NULL, *bad = NULL;
	wks_store *st;
	uint8_t *k = NULL, *out = NULL;
	size_t n = 0;

	(void)state;
	NEED_KEYTOOL();
	st = mixed_store();
	ERR_clear_error();
	ERR_raise(ERR_LIB_USER, 42);
	TU_OK(wks_java_parse(&js, jceks, jceks_len, STOREPW, strlen(STOREPW)));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_get_key(&k, &n, js,
						      index_of(js, "k2"),
						      "wrong", 5));
	TU_EXPECT(WKS_ERR_FORMAT, wks_java_parse(&bad, jceks, 40, NULL, 0));
	assert_null(bad);
	TU_EXPECT(WKS_ERR_UNSUPPORTED,
		  wks_convert_write_p12(&out, &n, st, "odd", STOREPW,
					strlen(STOREPW), "p12pass", 7, 1000,
					NULL, NULL, NULL));
	TU_OK(wks_convert_write_p12(&out, &n, st, "k1", STOREPW,
				    strlen(STOREPW), "p12pass", 7, 1000, NULL,
				    NULL, NULL));
	assert_int_equal(ERR_GET_REASON(ERR_get_error()), 42);
	assert_int_equal(ERR_get_error(), 0);
	wks_free(out);
	wks_java_free(js);
	wks_store_free(st);
}

/* wks_convert_write_p12() and back with wks_convert_read(). */
static void test_convert__p12_round_trip(void **state)
{
	wks_store *st, *back = tu_store_fast();
	wks_convert_report *r = NULL;
	struct cb_state s = { { KEYPW2, NULL, NULL, NULL }, 0, "", 0 };
	EVP_PKEY *a = NULL, *b = NULL;
	wks_key *ka = NULL, *kb = NULL;
	uint8_t *out = NULL;
	size_t len = 0, n = 0, na = 0, nb = 0;
	const uint8_t *da, *db;

	(void)state;
	NEED_KEYTOOL();
	st = mixed_store();
	TU_OK(wks_convert_write_p12(&out, &len, st, NULL, STOREPW,
				    strlen(STOREPW), "p12pass", 7, 1000, cb,
				    &s, NULL));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_convert_read(back, out, len, "nope", 4,
						      0, NULL, NULL, NULL));
	assert_int_equal(wks_store_size(back), 0);
	TU_OK(wks_convert_read(back, out, len, "p12pass", 7, 0, NULL, NULL, &r));
	assert_int_equal(wks_convert_report_done(r), 4);
	assert_int_equal(wks_convert_report_skipped(r), 0);
	wks_convert_report_free(r);
	assert_int_equal(wks_store_size(back), 4);
	assert_int_equal(wks_store_entry_type(back, "k1"), WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_store_entry_type(back, "k2"), WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_store_entry_type(back, "ca"), WKS_ENTRY_CERTIFICATE);
	assert_int_equal(wks_store_entry_type(back, "s1"), WKS_ENTRY_SECRET_KEY);
	TU_OK(wks_store_cert_count(&n, back, "k1"));
	assert_int_equal(n, 1);
	/* The keys are the same, now under the PKCS#12 password. */
	TU_OK(wks_store_get_pkey(&a, st, "k2", KEYPW2, strlen(KEYPW2)));
	TU_OK(wks_store_get_pkey(&b, back, "k2", "p12pass", 7));
	assert_int_equal(EVP_PKEY_eq(a, b), 1);
	TU_OK(wks_store_get_key(&ka, st, "s1", STOREPW, strlen(STOREPW)));
	TU_OK(wks_store_get_key(&kb, back, "s1", "p12pass", 7));
	da = wks_key_data(ka, &na);
	db = wks_key_data(kb, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(da, db, na);
	assert_string_equal(wks_key_algorithm(kb), "AES");
	/* Once more into the same store: everything exists already. */
	TU_OK(wks_convert_read(back, out, len, "p12pass", 7, 0, NULL, NULL, &r));
	assert_int_equal(wks_convert_report_done(r), 0);
	assert_int_equal(wks_convert_report_skipped(r), 4);
	assert_int_equal(wks_convert_report_reason(r, 0), WKS_ERR_EXISTS);
	wks_convert_report_free(r);
	/* A byte after the structure. */
	{
		uint8_t *t = malloc(len + 1);

		assert_non_null(t);
		memcpy(t, out, len);
		t[len] = 0;
		TU_EXPECT(WKS_ERR_FORMAT, wks_convert_read(back, t, len + 1,
							   "p12pass", 7, 0,
							   NULL, NULL, NULL));
		free(t);
	}
	wks_key_free(ka);
	wks_key_free(kb);
	EVP_PKEY_free(a);
	EVP_PKEY_free(b);
	wks_free(out);
	wks_store_free(back);
	wks_store_free(st);
}

static uint8_t *p12_file(const char *name, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return tu_read_file(path, len);
}

/* PKCS#12 files made by the stock openssl: a key with a chain of two (a
 * CA and a leaf), without friendlyName; without a MAC; with an iteration
 * count above the limit. */
static void test_convert__p12_openssl(void **state)
{
	wks_store *st = tu_store_fast();
	wks_convert_report *r = NULL;
	uint8_t *d;
	size_t len = 0, n = 0;

	(void)state;
	NEED_KEYTOOL();
	assert_int_equal(tu_system(
		"cd '%s' && O=openssl && "
		"$O req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
		"-nodes -keyout ca.key -out ca.pem -subj /CN=ca -days 30 "
		"2>/dev/null && "
		"$O req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
		"-nodes -keyout leaf.key -out leaf.csr -subj /CN=leaf "
		"2>/dev/null && "
		"$O x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key "
		"-CAcreateserial -out leaf.pem -days 30 2>/dev/null && "
		"$O pkcs12 -export -inkey leaf.key -in leaf.pem -certfile ca.pem "
		"-passout pass:pw -iter 1000 -maciter -out chain.p12 && "
		"$O pkcs12 -export -inkey leaf.key -in leaf.pem -name nomac "
		"-passout pass:pw -iter 1000 -nomac -out nomac.p12 && "
		"$O pkcs12 -export -inkey leaf.key -in leaf.pem -name big "
		"-passout pass:pw -iter 20000 -maciter -out big.p12", dir), 0);

	d = p12_file("chain.p12", &len);
	TU_OK(wks_convert_read(st, d, len, "pw", 2, 0, NULL, NULL, &r));
	/* One key entry, named "1", with the CA in its chain (not an entry
	 * of its own). */
	assert_int_equal(wks_convert_report_done(r), 1);
	assert_int_equal(wks_store_size(st), 1);
	assert_int_equal(wks_store_entry_type(st, "1"), WKS_ENTRY_PRIVATE_KEY);
	TU_OK(wks_store_cert_count(&n, st, "1"));
	assert_int_equal(n, 2);
	wks_convert_report_free(r);
	free(d);

	d = p12_file("nomac.p12", &len);
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_convert_read(st, d, len, "pw", 2, 0,
						      NULL, NULL, NULL));
	assert_non_null(strstr(wks_error_detail(), "MAC"));
	TU_OK(wks_convert_read(st, d, len, "pw", 2, WKS_CONVERT_NO_MAC_OK,
			       NULL, NULL, NULL));
	assert_int_equal(wks_store_entry_type(st, "nomac"),
			 WKS_ENTRY_PRIVATE_KEY);
	/* Without a MAC a wrong password shows only as contents that do
	 * not decrypt. */
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_convert_read(st, d, len, "px", 2,
						      WKS_CONVERT_NO_MAC_OK,
						      NULL, NULL, NULL));
	free(d);

	d = p12_file("big.p12", &len);
	TU_OK(wks_set_property("libwks.wks.maxIterationCount", "10000"));
	TU_EXPECT(WKS_ERR_LIMIT, wks_convert_read(st, d, len, "pw", 2, 0, NULL,
						  NULL, NULL));
	TU_OK(wks_set_property("libwks.wks.maxIterationCount", NULL));
	TU_OK(wks_convert_read(st, d, len, "pw", 2, 0, NULL, NULL, NULL));
	assert_int_equal(wks_store_entry_type(st, "big"), WKS_ENTRY_PRIVATE_KEY);
	free(d);
	wks_store_free(st);
}

/* The key source of wks_convert_write_p12_keys(): k2 under its own
 * password, the others under the store's; `fail` names an alias to
 * refuse. */
struct key_src {
	wks_store *st;
	const char *fail;
	unsigned calls;
};

static int key_src_get(void *arg, const char *alias, wks_key **key)
{
	struct key_src *k = arg;
	const char *pw = strcmp(alias, "k2") ? STOREPW : KEYPW2;

	k->calls++;
	if (k->fail && !strcmp(alias, k->fail))
		return WKS_ERR_INTEGRITY;
	return wks_store_get_key(key, k->st, alias, pw, strlen(pw));
}

/* PKCS#12 entry by entry (wks_p12_*) on what wks_convert_write_p12_keys()
 * wrote: two keys with one certificate (two leaf bags with one
 * localKeyID: neither is an entry of its own), a secret key whose
 * algorithm reads back by its JCA name (PBEWithMD5AndDES), the skip of a
 * key PKCS#12 cannot hold, and a key source that gives up. */
static void test_convert__p12_entries(void **state)
{
	wks_store *st, *back = tu_store_fast();
	struct key_src ks = { NULL, NULL, 0 };
	wks_convert_report *r = NULL;
	wks_p12_file *f = NULL;
	wks_key *k1 = NULL;
	X509 *leaf = NULL, *x;
	unsigned char *cder = NULL;
	const uint8_t *ders[1], *kd, *pd;
	size_t lens[1], kl = 0, pl = 0, len = 0;
	uint8_t *out = NULL;
	int seen = 0;

	(void)state;
	NEED_KEYTOOL();
	st = mixed_store();
	ks.st = st;
	TU_OK(wks_store_get_key(&k1, st, "k1", STOREPW, strlen(STOREPW)));
	TU_OK(wks_store_get_cert(&leaf, st, "k1", 0));
	lens[0] = (size_t)i2d_X509(leaf, &cder);
	ders[0] = cder;
	kd = wks_key_data(k1, &kl);
	TU_OK(wks_store_set_private_key(st, "k1b", kd, kl, ders, lens, 1,
					STOREPW, strlen(STOREPW)));
	TU_OK(wks_store_set_secret_key(st, "pbe", "PBEWithMD5AndDES",
				       (const uint8_t *)"password", 8, STOREPW,
				       strlen(STOREPW)));

	/* A key source that gives up ends the call: nothing is skipped. */
	ks.fail = "k2";
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_convert_write_p12_keys(&out, &len, st,
			NULL, key_src_get, &ks, "p12pass", 7, 1000, &r));
	assert_null(out);
	assert_int_equal(wks_convert_report_skipped(r), 0);
	wks_convert_report_free(r);
	ks.fail = NULL;
	ks.calls = 0;
	TU_OK(wks_convert_write_p12_keys(&out, &len, st, NULL, key_src_get, &ks,
					 "p12pass", 7, 1000, &r));
	assert_int_equal(ks.calls, 6); /* k1, k1b, k2, s1, odd, pbe */
	assert_int_equal(wks_convert_report_done(r), 6);
	assert_int_equal(wks_convert_report_skipped(r), 1);
	assert_string_equal(wks_convert_report_alias(r, 0), "odd");
	assert_int_equal(wks_convert_report_reason(r, 0), WKS_ERR_UNSUPPORTED);
	assert_non_null(strstr(wks_convert_report_detail(r, 0),
			       "algorithm \"NoSuchAlg\" has no OID"));
	wks_convert_report_free(r);
	TU_EXPECT(WKS_ERR_INVALID, wks_convert_write_p12_keys(&out, &len, st,
			NULL, NULL, NULL, "p12pass", 7, 1000, NULL));

	assert_int_equal(wks_p12_has_mac(out, len), 1);
	TU_EXPECT(WKS_ERR_FORMAT, wks_p12_has_mac((const uint8_t *)"xx", 2));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_p12_parse(&f, out, len, "nope", 4, 0));
	assert_null(f);
	TU_OK(wks_p12_parse(&f, out, len, "p12pass", 7, 0));
	assert_int_equal(wks_convert_report_skipped(wks_p12_skipped(f)), 0);
	/* Keys, secret keys, certificates: k1, k1b, k2, s1, pbe, ca. */
	assert_int_equal(wks_p12_count(f), 6);
	for (size_t i = 0; i < wks_p12_count(f); i++) {
		const char *a = wks_p12_alias(f, i);

		assert_non_null(a);
		if (wks_p12_entry_type(f, i) == WKS_ENTRY_CERTIFICATE) {
			assert_string_equal(a, "ca");
			assert_int_equal(wks_p12_cert_count(f, i), 1);
			seen |= 1;
		}
		if (!strcmp(a, "k1b")) {
			assert_int_equal(wks_p12_entry_type(f, i),
					 WKS_ENTRY_PRIVATE_KEY);
			assert_int_equal(wks_p12_cert_count(f, i), 1);
			assert_non_null(x = wks_p12_get_cert(f, i, 0));
			assert_int_equal(X509_cmp(x, leaf), 0);
			X509_free(x);
			assert_null(wks_p12_get_cert(f, i, 1));
			pd = wks_p12_key(f, i, &pl);
			assert_int_equal(pl, kl);
			assert_memory_equal(pd, kd, kl);
			seen |= 2;
		}
		if (!strcmp(a, "pbe")) {
			assert_int_equal(wks_p12_entry_type(f, i),
					 WKS_ENTRY_SECRET_KEY);
			assert_string_equal(wks_p12_secret_algorithm(f, i),
					    "PBEWithMD5AndDES");
			pd = wks_p12_key(f, i, &pl);
			assert_int_equal(pl, 8);
			assert_memory_equal(pd, "password", 8);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	assert_null(wks_p12_alias(f, 6));
	assert_int_equal(wks_p12_entry_type(f, 6), WKS_ENTRY_NONE);
	wks_p12_free(f);
	/* The same through wks_convert_read(): every entry, nothing
	 * skipped (no second "k1b" as a certificate). */
	TU_OK(wks_convert_read(back, out, len, "p12pass", 7, 0, NULL, NULL, &r));
	assert_int_equal(wks_convert_report_done(r), 6);
	assert_int_equal(wks_convert_report_skipped(r), 0);
	wks_convert_report_free(r);
	wks_free(out);
	OPENSSL_free(cder);
	X509_free(leaf);
	wks_key_free(k1);
	wks_store_free(back);
	wks_store_free(st);
}

/* wks_pbe_iterations(): PBES2 with PBKDF2, PKCS#12 PBE, nothing. */
static void test_convert__pbe_iterations(void **state)
{
	X509_ALGOR *a = PKCS5_pbe2_set(EVP_aes_256_cbc(), 1234, NULL, 0);
	X509_ALGOR *b = PKCS5_pbe_set(NID_pbe_WithSHA1And3_Key_TripleDES_CBC,
				      777, NULL, 0);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(wks_pbe_iterations(a), 1234);
	assert_int_equal(wks_pbe_iterations(b), 777);
	assert_int_equal(wks_pbe_iterations(NULL), -1);
	X509_ALGOR_free(a);
	X509_ALGOR_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convert__detect),
		cmocka_unit_test(test_convert__java_entries),
		cmocka_unit_test(test_convert__jceks_secret),
		cmocka_unit_test(test_convert__java_bad_input),
		cmocka_unit_test(test_convert__read_skip_report),
		cmocka_unit_test(test_convert__read_callback),
		cmocka_unit_test(test_convert__read_jceks),
		cmocka_unit_test(test_convert__read_errors),
		cmocka_unit_test(test_convert__write_p12_one),
		cmocka_unit_test(test_convert__write_p12_store_keytool),
		cmocka_unit_test(test_convert__errqueue),
		cmocka_unit_test(test_convert__p12_round_trip),
		cmocka_unit_test(test_convert__p12_openssl),
		cmocka_unit_test(test_convert__p12_entries),
		cmocka_unit_test(test_convert__pbe_iterations),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
