/*
 * Bouncy Castle keystores in (include/wks/convert.h: wks_keystore_detect,
 * wks_java_*, wks_convert_read), on the stores keytool and Bouncy Castle
 * 1.72 made in tests/data/bc (README there; no JVM needed here):
 *  - detection of BKS (versions 1 and 2), BCFKS and UBER;
 *  - every entry of BKS v1, v2 and BCFKS: alias, kind, chain, creation
 *    date (the day keytool -list -v shows), and each key byte for byte
 *    the one keytool exported into PKCS#12 (read by wks_p12_parse, i.e.
 *    OpenSSL's PKCS#12 code);
 *  - BCFKS under scrypt with AES key wrap and HMAC-SHA3-512, under PBKDF2
 *    with key wrap, and a signed BCFKS; UBER refused with the command
 *    that converts it;
 *  - wks_convert_read(): the key password callback, the report, the
 *    source's creation times kept;
 *  - wrong passwords, the iteration limit (scrypt counted as Bouncy
 *    Castle runs it, p = r) and the per-store derivation budget, counted;
 *  - truncations and single-byte changes (BKS also with its MAC
 *    recomputed, so that the entries parser sees them): refused cleanly,
 *    never a crash.  Every length and byte with WKS_TEST_FULL=1; a sample
 *    (the header, then every 61st) by default.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "wks/convert.h"
#include "convert/kdfmeter.h"

#define SP "störe-pass€𝄞"

static const struct {
	const char *alias;
	wks_entry_type type;
	const char *pw;  /* key password */
	const char *alg; /* secret keys */
	size_t len;
} want[] = {
	{ "root ca", WKS_ENTRY_CERTIFICATE, NULL, NULL, 0 },
	{ "clé-rsa", WKS_ENTRY_PRIVATE_KEY, "rsa-key-pass", NULL, 0 },
	{ "ec-ü", WKS_ENTRY_PRIVATE_KEY, "kéy-€𝄞", NULL, 0 },
	{ "aes", WKS_ENTRY_SECRET_KEY, "aes-key-pass", "AES", 32 },
	{ "hmac", WKS_ENTRY_SECRET_KEY, SP, "HmacSHA256", 32 },
	{ "3des", WKS_ENTRY_SECRET_KEY, SP, "DESede", 24 },
};
#define NWANT (sizeof(want) / sizeof(want[0]))

static uint8_t *fixture(const char *name, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/data/bc/%s", WKS_SOURCE_DIR,
		 name);
	return tu_read_file(path, len);
}

static size_t find(const wks_java_store *js, const char *alias)
{
	for (size_t i = 0; i < wks_java_count(js); i++)
		if (!strcmp(wks_java_alias(js, i), alias))
			return i;
	fail_msg("no alias %s", alias);
	return 0;
}

static int p12_find(const wks_p12_file *f, const char *alias, size_t *out)
{
	for (size_t i = 0; i < wks_p12_count(f); i++)
		if (wks_p12_alias(f, i) && !strcmp(wks_p12_alias(f, i), alias)) {
			*out = i;
			return 1;
		}
	return 0;
}

/* The day keytool -list -v shows for `alias` ("Dec 2, 2026"), from the
 * listing; "" if absent. */
static void listed_day(char *out, size_t n, const char *listing,
		       const char *alias)
{
	char head[512];
	const char *p, *q;

	snprintf(head, sizeof(head), "Alias name: %s\nCreation date: ", alias);
	out[0] = 0;
	if (!(p = strstr(listing, head)))
		return;
	p += strlen(head);
	q = strchr(p, '\n');
	snprintf(out, n, "%.*s", (int)(q ? q - p : 0), p);
}

static void day_of(char *out, size_t n, int64_t ms)
{
	static const char *mon[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(out, n, "%s %d, %d", mon[tm.tm_mon], tm.tm_mday,
		 tm.tm_year + 1900);
}

/* keytool's BCFKS (PBKDF2 at 51200 iterations), or under valgrind its
 * copy at 100 (store-low.bcfks: the same entries, dates and keys). */
static const char *bcfks_name(void)
{
	return getenv("WKS_UNDER_VALGRIND") && !tu_full_mode() ?
	       "store-low.bcfks" : "store.bcfks";
}

/* Every entry of `name` as keytool listed it and exported it (`as`: the
 * listing's and the export's name). */
static void check_store(const char *name, const char *as,
			wks_keystore_type type, int version)
{
	char lname[256], pname[256], day[64], kday[64];
	uint8_t *d, *list, *p12;
	size_t n, ln, pn, j = 0;
	wks_java_store *js = NULL;
	wks_p12_file *pf = NULL;

	snprintf(lname, sizeof(lname), "%s.list", as);
	snprintf(pname, sizeof(pname), "%s.p12", as);
	d = fixture(name, &n);
	list = fixture(lname, &ln);
	list = realloc(list, ln + 1);
	list[ln] = 0;
	p12 = fixture(pname, &pn);
	assert_int_equal(wks_keystore_detect(d, n), type);
	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	TU_OK(wks_p12_parse(&pf, p12, pn, "export-pass", 11, 0));
	assert_int_equal(wks_java_type(js), type);
	assert_int_equal(wks_java_version(js), version);
	assert_int_equal(wks_java_count(js), NWANT);
	for (size_t w = 0; w < NWANT; w++) {
		size_t i = find(js, want[w].alias), k;
		uint8_t *key = NULL;
		char *alg = NULL;
		size_t key_len = 0, nc = wks_java_cert_count(js, i);
		int in_p12 = p12_find(pf, want[w].alias, &j);

		print_message("%s: %s\n", name, want[w].alias);
		assert_int_equal(wks_java_entry_type(js, i), want[w].type);
		assert_true(wks_java_certs_x509(js, i));
		day_of(day, sizeof(day), wks_java_creation_time(js, i));
		listed_day(kday, sizeof(kday), (char *)list, want[w].alias);
		assert_string_equal(day, kday);
		assert_int_equal(nc, want[w].type == WKS_ENTRY_PRIVATE_KEY ? 2 :
				 want[w].type == WKS_ENTRY_CERTIFICATE ? 1 : 0);
		if (want[w].type == WKS_ENTRY_CERTIFICATE)
			continue;
		/* Only its password opens it. */
		TU_EXPECT(WKS_ERR_INTEGRITY,
			  want[w].type == WKS_ENTRY_PRIVATE_KEY ?
			  wks_java_get_key(&key, &key_len, js, i, "wrong-pw", 8) :
			  wks_java_get_secret(&key, &key_len, &alg, js, i,
					      "wrong-pw", 8));
		assert_null(key);
		if (want[w].type == WKS_ENTRY_PRIVATE_KEY) {
			TU_OK(wks_java_get_key(&key, &key_len, js, i, want[w].pw,
					       strlen(want[w].pw)));
			/* keytool's export: the same key bytes, the same
			 * chain. */
			assert_true(in_p12);
			assert_int_equal(wks_p12_entry_type(pf, j),
					 WKS_ENTRY_PRIVATE_KEY);
			assert_int_equal(wks_p12_cert_count(pf, j), nc);
			for (k = 0; k < nc; k++) {
				X509 *x = wks_p12_get_cert(pf, j, k);
				unsigned char *der = NULL;
				int dl = i2d_X509(x, &der);
				size_t cl = 0;
				const uint8_t *c = wks_java_cert_der(js, i, k, &cl);

				assert_int_equal((size_t)dl, cl);
				assert_memory_equal(der, c, cl);
				OPENSSL_free(der);
				X509_free(x);
			}
		} else {
			TU_OK(wks_java_get_secret(&key, &key_len, &alg, js, i,
						  want[w].pw,
						  strlen(want[w].pw)));
			assert_string_equal(alg, want[w].alg);
			assert_int_equal(key_len, want[w].len);
			/* (Bouncy Castle cannot read back its BCFKS HMAC
			 * keys, so keytool could not export that one.) */
			assert_true(in_p12 || (type == WKS_KEYSTORE_BCFKS &&
					       !strcmp(want[w].alias, "hmac")));
			if (in_p12)
				assert_string_equal(wks_p12_secret_algorithm(pf, j),
						    alg);
		}
		if (in_p12) {
			size_t pl = 0;
			const uint8_t *pk = wks_p12_key(pf, j, &pl);

			assert_int_equal(pl, key_len);
			assert_memory_equal(pk, key, pl);
		}
		wks_free(key);
		wks_free(alg);
	}
	wks_p12_free(pf);
	wks_java_free(js);
	free(d);
	free(list);
	free(p12);
}

static void test_bc__detect(void **state)
{
	static const struct {
		const char *name;
		wks_keystore_type t;
	} f[] = {
		{ "bks.bks", WKS_KEYSTORE_BKS }, { "bks1.bks", WKS_KEYSTORE_BKS },
		{ "store.bcfks", WKS_KEYSTORE_BCFKS },
		{ "scrypt.bcfks", WKS_KEYSTORE_BCFKS },
		{ "kwp.bcfks", WKS_KEYSTORE_BCFKS },
		{ "signed.bcfks", WKS_KEYSTORE_BCFKS },
		{ "store.uber", WKS_KEYSTORE_UBER },
		{ "bks.bks.p12", WKS_KEYSTORE_PKCS12 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		size_t n;
		uint8_t *d = fixture(f[i].name, &n);

		print_message("%s\n", f[i].name);
		assert_int_equal(wks_keystore_detect(d, n), f[i].t);
		free(d);
	}
	assert_string_equal(wks_keystore_type_name(WKS_KEYSTORE_BKS), "BKS");
	assert_string_equal(wks_keystore_type_name(WKS_KEYSTORE_BCFKS),
			    "BCFKS");
	assert_string_equal(wks_keystore_type_name(WKS_KEYSTORE_UBER), "UBER");
	/* Too short for a BKS header; a PKCS#12 PFX (INTEGER first). */
	assert_int_equal(wks_keystore_detect((const uint8_t *)"\0\0\0\2", 4),
			 WKS_KEYSTORE_UNKNOWN);
	assert_int_equal(wks_keystore_detect((const uint8_t *)"\x30\x03\x02"
					     "\x01\x03", 5),
			 WKS_KEYSTORE_PKCS12);
	assert_int_equal(wks_keystore_detect((const uint8_t *)"\x30\x06\x30"
					     "\x02\x02\x00\x30\x00", 8),
			 WKS_KEYSTORE_BCFKS);
	/* Other DER of the same first bytes is no BCFKS: an X.509
	 * certificate (three elements), a lone SEQUENCE. */
	{
		size_t n, cl = 0;
		uint8_t *d = fixture("bks.bks", &n);
		wks_java_store *js = NULL;
		const uint8_t *cert;

		TU_OK(wks_java_parse(&js, d, n, NULL, 0));
		cert = wks_java_cert_der(js, find(js, "root ca"), 0, &cl);
		assert_int_equal(wks_keystore_detect(cert, cl),
				 WKS_KEYSTORE_PKCS12);
		wks_java_free(js);
		free(d);
	}
	assert_int_equal(wks_keystore_detect((const uint8_t *)"\x30\x04\x30"
					     "\x02\x02\x00", 6),
			 WKS_KEYSTORE_PKCS12);
}

static void test_bc__bks(void **state)
{
	(void)state;
	check_store("bks.bks", "bks.bks", WKS_KEYSTORE_BKS, 2);
	/* Version 1: the MAC's key is 2 bytes (Bouncy Castle's bug). */
	check_store("bks1.bks", "bks1.bks", WKS_KEYSTORE_BKS, 1);
}

static void test_bc__bcfks(void **state)
{
	(void)state;
	check_store(bcfks_name(), "store.bcfks", WKS_KEYSTORE_BCFKS, 1);
}

/* The AES key of bks.bks, which Variants.java copied. */
static void aes_of_bks(uint8_t out[32])
{
	size_t n, kl = 0;
	uint8_t *d = fixture("bks.bks", &n), *k = NULL;
	wks_java_store *js = NULL;
	char *alg = NULL;

	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	TU_OK(wks_java_get_secret(&k, &kl, &alg, js, find(js, "aes"),
				  "aes-key-pass", 12));
	assert_int_equal(kl, 32);
	memcpy(out, k, 32);
	wks_free(k);
	wks_free(alg);
	wks_java_free(js);
	free(d);
}

static void test_bc__variants(void **state)
{
	uint8_t aes[32], *d, *k = NULL;
	size_t n, kl = 0, i;
	wks_java_store *js = NULL;
	char *alg = NULL;

	(void)state;
	aes_of_bks(aes);
	/* scrypt, AES key wrap, HMAC-SHA3-512. */
	d = fixture("scrypt.bcfks", &n);
	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	assert_int_equal(wks_java_count(js), 3);
	TU_OK(wks_java_get_secret(&k, &kl, &alg, js, find(js, "aes"),
				  "aes-key-pass", 12));
	assert_int_equal(kl, 32);
	assert_memory_equal(k, aes, 32);
	assert_string_equal(alg, "AES");
	wks_free(k);
	wks_free(alg);
	TU_OK(wks_java_get_key(&k, &kl, js, find(js, "ec-ü"), "kéy-€𝄞",
			       strlen("kéy-€𝄞")));
	wks_free(k);
	wks_java_free(js);
	js = NULL;
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_parse(&js, d, n, "nope", 4));
	free(d);
	/* PBKDF2, AES key wrap for the store and the keys. */
	d = fixture("kwp.bcfks", &n);
	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	i = find(js, "aes");
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_get_secret(&k, &kl, &alg, js, i,
							 "aes-key-pas", 11));
	TU_OK(wks_java_get_secret(&k, &kl, &alg, js, i, "aes-key-pass", 12));
	assert_memory_equal(k, aes, 32);
	wks_free(k);
	wks_free(alg);
	wks_java_free(js);
	js = NULL;
	free(d);
	/* Signed (no store password: the empty one), verified with the
	 * certificate it carries; one byte of the signature changed. */
	d = fixture("signed.bcfks", &n);
	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	assert_int_equal(wks_java_count(js), 2);
	i = find(js, "aes");
	TU_OK(wks_java_get_secret(&k, &kl, &alg, js, i, "aes-key-pass", 12));
	assert_memory_equal(k, aes, 32);
	wks_free(k);
	wks_free(alg);
	wks_java_free(js);
	js = NULL;
	d[n - 10] ^= 1;
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_parse(&js, d, n, SP, strlen(SP)));
	assert_null(js);
	free(d);
}

static void test_bc__uber(void **state)
{
	size_t n;
	uint8_t *d = fixture("store.uber", &n);
	wks_java_store *js = NULL;
	wks_store *st = tu_store_fast();
	wks_convert_report *rep = NULL;

	(void)state;
	TU_EXPECT(WKS_ERR_UNSUPPORTED, wks_java_parse(&js, d, n, SP,
						      strlen(SP)));
	assert_null(js);
	assert_non_null(strstr(wks_error_detail(), "Twofish"));
	assert_non_null(strstr(wks_error_detail(), "-srcstoretype UBER"));
	TU_EXPECT(WKS_ERR_UNSUPPORTED, wks_convert_read(st, d, n, SP,
							strlen(SP), 0, NULL,
							NULL, &rep));
	assert_int_equal(wks_convert_report_done(rep), 0);
	wks_convert_report_free(rep);
	wks_store_free(st);
	free(d);
}

/* The key passwords of the fixtures, by alias. */
static int give_pw(void *arg, const char *alias, unsigned attempt, char *buf,
		   size_t size, size_t *len)
{
	int *calls = arg;

	(*calls)++;
	for (size_t w = 0; w < NWANT; w++)
		if (attempt == 1 && want[w].pw && !strcmp(alias, want[w].alias) &&
		    strlen(want[w].pw) <= size) {
			*len = strlen(want[w].pw);
			memcpy(buf, want[w].pw, *len);
			return 0;
		}
	return 1;
}

static void test_bc__convert_read(void **state)
{
	const char *names[] = { "bks.bks", bcfks_name() };

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		size_t n;
		uint8_t *d = fixture(names[f], &n);
		wks_store *st = tu_store_fast();
		wks_java_store *js = NULL;
		wks_convert_report *rep = NULL;
		int calls = 0;

		print_message("%s\n", names[f]);
		/* Without the callback: the keys under the store password
		 * only (hmac, 3des); the others skipped for their password. */
		TU_OK(wks_convert_read(st, d, n, SP, strlen(SP), 0, NULL, NULL,
				       &rep));
		assert_int_equal(wks_convert_report_done(rep), 3);
		assert_int_equal(wks_convert_report_skipped(rep), 3);
		for (size_t i = 0; i < 3; i++)
			assert_int_equal(wks_convert_report_reason(rep, i),
					 WKS_ERR_INTEGRITY);
		wks_convert_report_free(rep);
		wks_store_free(st);
		/* With it: everything, each key under the password that
		 * opened it, with the source's creation time. */
		st = tu_store_fast();
		TU_OK(wks_convert_read(st, d, n, SP, strlen(SP), 0, give_pw,
				       &calls, &rep));
		assert_int_equal(wks_convert_report_done(rep), NWANT);
		assert_int_equal(wks_convert_report_skipped(rep), 0);
		assert_int_equal(calls, 3);
		TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
		for (size_t w = 0; w < NWANT; w++) {
			int64_t ms = 0;
			wks_key *k = NULL;

			TU_OK(wks_store_creation_time(&ms, st, want[w].alias));
			assert_int_equal(ms, wks_java_creation_time(
					     js, find(js, want[w].alias)));
			assert_int_equal(wks_store_entry_type(st, want[w].alias),
					 want[w].type);
			if (!want[w].pw)
				continue;
			TU_OK(wks_store_get_key(&k, st, want[w].alias,
						want[w].pw, strlen(want[w].pw)));
			wks_key_free(k);
		}
		/* An alias the store has: skipped, not replaced. */
		wks_convert_report_free(rep);
		TU_OK(wks_convert_read(st, d, n, SP, strlen(SP), 0, NULL, NULL,
				       &rep));
		assert_int_equal(wks_convert_report_done(rep), 0);
		assert_int_equal(wks_convert_report_skipped(rep), NWANT);
		assert_int_equal(wks_convert_report_reason(rep, 0),
				 WKS_ERR_EXISTS);
		wks_convert_report_free(rep);
		wks_java_free(js);
		wks_store_free(st);
		free(d);
	}
}

static void test_bc__passwords(void **state)
{
	size_t n;
	uint8_t *d;
	wks_java_store *js = NULL;

	(void)state;
	d = fixture("bks.bks", &n);
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_parse(&js, d, n, "wrong", 5));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_parse(&js, d, n, "", 0));
	/* Not UTF-8. */
	TU_EXPECT(WKS_ERR_INVALID, wks_java_parse(&js, d, n, "\xff", 1));
	/* No password: the MAC is not checked (as for JKS). */
	TU_OK(wks_java_parse(&js, d, n, NULL, 0));
	assert_int_equal(wks_java_count(js), NWANT);
	wks_java_free(js);
	js = NULL;
	free(d);
	d = fixture("store.bcfks", &n);
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_parse(&js, d, n, "wrong", 5));
	/* BCFKS is encrypted: no password is the empty one. */
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_java_parse(&js, d, n, NULL, 0));
	assert_null(js);
	free(d);
}

static void set_max_iter(const char *v)
{
	TU_OK(wks_set_property("libwks.wks.maxIterationCount", v));
}

static void test_bc__limits(void **state)
{
	size_t n, i, gets = 0;
	uint8_t *d, *k = NULL;
	wks_java_store *js = NULL;
	unsigned long runs;
	int err;

	(void)state;
	/* keytool's BCFKS: PBKDF2 at 51200. */
	d = fixture("store.bcfks", &n);
	set_max_iter("51199");
	TU_EXPECT(WKS_ERR_LIMIT, wks_java_parse(&js, d, n, SP, strlen(SP)));
	assert_non_null(strstr(wks_error_detail(),
			       "libwks.wks.maxIterationCount"));
	free(d);
	/* The budget of one conversion (libwks.convert.maxKdfIterations,
	 * here 320000) on bks-low.bks (everything at 1000): the parse takes
	 * 1000 (the MAC), each key tried with a new wrong password 2 x 1000
	 * (key, IV): 159 keys, then the limit, at the 160th's IV.  A
	 * password tried already costs nothing: its derivations come from
	 * the meter's memo. */
	d = fixture("bks-low.bks", &n);
	set_max_iter("10000");
	TU_OK(wks_set_property("libwks.convert.maxKdfIterations", "320000"));
	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	i = find(js, "clé-rsa");
	runs = wks__convert_kdf_runs();
	TU_EXPECT(WKS_ERR_INTEGRITY,
		  wks_java_get_key(&k, &n, js, i, "wrong", 5));
	assert_int_equal(wks__convert_kdf_runs() - runs, 2);
	TU_EXPECT(WKS_ERR_INTEGRITY,
		  wks_java_get_key(&k, &n, js, i, "wrong", 5));
	assert_int_equal(wks__convert_kdf_runs() - runs, 2);
	gets = 1;
	do {
		char pw[32];

		snprintf(pw, sizeof(pw), "wrong-%zu", gets);
		err = wks_java_get_key(&k, &n, js, i, pw, strlen(pw));
	} while (err == WKS_ERR_INTEGRITY && ++gets < 1000);
	assert_int_equal(err, WKS_ERR_LIMIT);
	assert_non_null(strstr(wks_error_detail(),
			       "libwks.convert.maxKdfIterations"));
	assert_int_equal(gets, 159);
	/* Spent for good: even the right password. */
	TU_EXPECT(WKS_ERR_LIMIT, wks_java_get_key(&k, &n, js, i, "rsa-key-pass",
						  12));
	wks_java_free(js);
	js = NULL;
	free(d);
	TU_OK(wks_set_property("libwks.convert.maxKdfIterations", NULL));
	/* scrypt N 1024, r 8, run with p = r as Bouncy Castle 1.72 does:
	 * N x r x r = 65536 per derivation. */
	d = fixture("scrypt.bcfks", &n);
	set_max_iter("65535");
	TU_EXPECT(WKS_ERR_LIMIT, wks_java_parse(&js, d, n, SP, strlen(SP)));
	set_max_iter("65536");
	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	wks_java_free(js);
	js = NULL;
	free(d);
	TU_OK(wks_set_property("libwks.wks.maxIterationCount", NULL));
}

/* ---- hostile files --------------------------------------------------------- */

static int clean(int err)
{
	return err == WKS_ERR_FORMAT || err == WKS_ERR_INTEGRITY ||
	       err == WKS_ERR_LIMIT || err == WKS_ERR_UNSUPPORTED ||
	       err == WKS_ERR_INVALID;
}

/* Open every key of a store that parsed with its password (by alias):
 * only clean results. */
static void open_all(const wks_java_store *js)
{
	for (size_t i = 0; i < wks_java_count(js); i++) {
		wks_entry_type t = wks_java_entry_type(js, i);
		uint8_t *k = NULL;
		char *alg = NULL;
		size_t kl = 0;

		for (size_t w = 0; w < NWANT; w++) {
			int err;

			if (!want[w].pw || strcmp(want[w].alias,
						  wks_java_alias(js, i)))
				continue;
			if (t == WKS_ENTRY_PRIVATE_KEY)
				err = wks_java_get_key(&k, &kl, js, i, want[w].pw,
						       strlen(want[w].pw));
			else if (t == WKS_ENTRY_SECRET_KEY)
				err = wks_java_get_secret(&k, &kl, &alg, js, i,
							  want[w].pw,
							  strlen(want[w].pw));
			else
				break;
			assert_true(err == WKS_OK || clean(err));
			wks_free(k);
			wks_free(alg);
			k = NULL;
			alg = NULL;
		}
	}
}

/* What a parsed store says (aliases, kinds, dates, certificates), as a
 * SHA-256: a change that is accepted must change none of it. */
static void snapshot(uint8_t out[32], const wks_java_store *js)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	assert_true(c && EVP_DigestInit_ex(c, EVP_sha256(), NULL));
	for (size_t i = 0; i < wks_java_count(js); i++) {
		int64_t ms = wks_java_creation_time(js, i);
		int t = wks_java_entry_type(js, i);

		EVP_DigestUpdate(c, wks_java_alias(js, i),
				 strlen(wks_java_alias(js, i)) + 1);
		EVP_DigestUpdate(c, &t, sizeof(t));
		EVP_DigestUpdate(c, &ms, sizeof(ms));
		for (size_t j = 0; j < wks_java_cert_count(js, i); j++) {
			size_t n = 0;
			const uint8_t *der = wks_java_cert_der(js, i, j, &n);

			EVP_DigestUpdate(c, &n, sizeof(n));
			EVP_DigestUpdate(c, der, n);
		}
	}
	assert_true(EVP_DigestFinal_ex(c, out, NULL));
	EVP_MD_CTX_free(c);
}

/* BKS: the MAC recomputed over the entries for the store password, with
 * OpenSSL directly (the header as it is). */
static void bks_remac(uint8_t *d, size_t n)
{
	unsigned char *uni = NULL, key[20];
	int ulen = 0;
	uint32_t version = tu_get_be32(d), sl = tu_get_be32(d + 4);
	uint32_t iter = tu_get_be32(d + 8 + sl);
	size_t hdr = 12 + sl;
	unsigned int ml = 0;

	assert_non_null(OPENSSL_utf82uni(SP, (int)strlen(SP), &uni, &ulen));
	assert_true(PKCS12_key_gen_uni(uni, ulen, d + 8, (int)sl, 3,
				       (int)iter, version == 2 ? 20 : 2, key,
				       EVP_sha1()));
	assert_non_null(HMAC(EVP_sha1(), key, version == 2 ? 20 : 2, d + hdr,
			     n - hdr - 20, d + n - 20, &ml));
	OPENSSL_free(uni);
}

/* The sample: the first `head` positions, then every `stride`-th. */
static int sampled(size_t i, size_t head, size_t stride)
{
	return i < head || i % stride == 0;
}

static void hostile(const char *name, int remac)
{
	size_t n, stride = tu_env_count("WKS_BC_STRIDE", 61, 1), head = 64;
	size_t count = 0;
	uint8_t *d = fixture(name, &n), *c = malloc(n), orig[32], now[32];
	wks_java_store *js;
	int err;

	assert_non_null(c);
	if (getenv("WKS_UNDER_VALGRIND") && !tu_full_mode())
		stride = 251, head = 16;
	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	snapshot(orig, js);
	wks_java_free(js);
	/* Every truncation: refused. */
	for (size_t len = 0; len < n; len++) {
		if (!sampled(len, head, stride))
			continue;
		js = NULL;
		err = wks_java_parse(&js, d, len, SP, strlen(SP));
		if (!clean(err))
			fail_msg("%s cut at %zu: %d %s", name, len, err,
				 wks_error_detail());
		assert_null(js);
		count++;
	}
	/* Every byte changed: refused (the MAC, the structure). */
	for (size_t i = 0; i < n; i++) {
		if (!sampled(i, head, stride))
			continue;
		memcpy(c, d, n);
		c[i] ^= (uint8_t)(i % 2 ? 0x01 : 0x80);
		js = NULL;
		err = wks_java_parse(&js, c, n, SP, strlen(SP));
		/* Accepted only when nothing read changed: BKS versions 0
		 * and 1 are one format (the header is outside the MAC); the
		 * signer certificate of a signed BCFKS counts only by its
		 * public key. */
		if (err == WKS_OK) {
			snapshot(now, js);
			wks_java_free(js);
			js = NULL;
			if (memcmp(now, orig, 32))
				fail_msg("%s byte %zu: accepted, and reads "
					 "otherwise", name, i);
			continue;
		}
		if (!clean(err))
			fail_msg("%s byte %zu: %d %s", name, i, err,
				 wks_error_detail());
		count++;
		if (!remac || i < 12 + tu_get_be32(d + 4) || i >= n - 20)
			continue;
		/* The same with the MAC recomputed: the entries parser
		 * decides, cleanly; whatever parses opens cleanly. */
		bks_remac(c, n);
		err = wks_java_parse(&js, c, n, SP, strlen(SP));
		assert_true(err == WKS_OK || clean(err));
		if (err == WKS_OK) {
			open_all(js);
			wks_java_free(js);
		}
	}
	print_message("%s: %zu variants refused or read identically\n", name,
		      count);
	free(c);
	free(d);
}

static void test_bc__hostile(void **state)
{
	(void)state;
	hostile("bks-low.bks", 1);
	hostile("bks1.bks", 1);
	hostile("store-low.bcfks", 0);
	if (tu_full_mode())
		hostile("signed.bcfks", 0);
}

/* The caller's OpenSSL errors stay, the readers' go. */
static void test_bc__errqueue(void **state)
{
	size_t n;
	uint8_t *d = fixture("store-low.bcfks", &n);
	wks_java_store *js = NULL, *bad = NULL;
	uint8_t *k = NULL;

	(void)state;
	ERR_clear_error();
	ERR_raise(ERR_LIB_USER, 42);
	TU_OK(wks_java_parse(&js, d, n, SP, strlen(SP)));
	TU_EXPECT(WKS_ERR_INTEGRITY,
		  wks_java_get_key(&k, &n, js, find(js, "ec-ü"), "x", 1));
	TU_EXPECT(WKS_ERR_FORMAT, wks_java_parse(&bad, d, 100, SP, strlen(SP)));
	assert_null(bad);
	assert_int_equal(ERR_GET_REASON(ERR_get_error()), 42);
	assert_int_equal(ERR_get_error(), 0);
	wks_java_free(js);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bc__detect),
		cmocka_unit_test(test_bc__bks),
		cmocka_unit_test(test_bc__bcfks),
		cmocka_unit_test(test_bc__variants),
		cmocka_unit_test(test_bc__uber),
		cmocka_unit_test(test_bc__convert_read),
		cmocka_unit_test(test_bc__passwords),
		cmocka_unit_test(test_bc__limits),
		cmocka_unit_test(test_bc__hostile),
		cmocka_unit_test(test_bc__errqueue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
