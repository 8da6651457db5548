/*
 * The rules of spec sections 5-7 (and libwks's documented additions)
 * through the public API: passwords, key/certificate checks, chain checks,
 * overwrite rules, delete, aliases, limits, load without a password,
 * requireIntegrity, failed loads, round trips, queries, probe and crafted
 * streams.  Stores use 10000 iterations (tu_store_fast()) except the test
 * of the 210000 default.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tu_ossl.h"

#include "config/config.h"
#include "format/format.h"
#include "store/decode.h"

#define PW "wolfsslpassword"
#define PWL (sizeof(PW) - 1)

/* ------------------------------------------------------------------------
 * Key and certificate material from vectors/wolfjce-live/inputs/
 */

enum {
	K_RSA,       /* server-key.pem: leaf of RSA2, RSA3 */
	K_ECC,       /* ecc-key.pem: leaf of SERVER_ECC, ECC3 */
	K_ECC384,    /* client-ecc384-key.pem: leaf of ECC384_2 */
	K_P521,      /* server-p521-key.pem: leaf of P521_3 */
	K_CLIENT,    /* client-key.pem: CLIENT (self-signed) */
	C_RSA3,      /* leaf, Intermediate2 CA, Intermediate CA (signed by CA) */
	C_ECC3,
	C_RSA2,      /* leaf, CA */
	C_ECC384_2,  /* leaf, CA-ECC384 */
	C_P521_3,
	C_SERVER_ECC, /* signed by CA_ECC */
	C_CA,
	C_CA_ECC,
	C_CA_ECC384, /* same subject name as CA_ECC, another key */
	C_CLIENT,
	C_CLIENT_ECC,
	N_MAT
};

static struct {
	const char *file;
	const char *label;
	tu_der *v;
	size_t n;
} M[N_MAT] = {
	[K_RSA] = { "server-key.pem", "PRIVATE KEY", NULL, 0 },
	[K_ECC] = { "ecc-key.pem", "PRIVATE KEY", NULL, 0 },
	[K_ECC384] = { "client-ecc384-key.pem", "PRIVATE KEY", NULL, 0 },
	[K_P521] = { "server-p521-key.pem", "PRIVATE KEY", NULL, 0 },
	[K_CLIENT] = { "client-key.pem", "PRIVATE KEY", NULL, 0 },
	[C_RSA3] = { "server-int-rsa-chain3.pem", "CERTIFICATE", NULL, 0 },
	[C_ECC3] = { "server-int-ecc-chain3.pem", "CERTIFICATE", NULL, 0 },
	[C_RSA2] = { "server-cert-chain2.pem", "CERTIFICATE", NULL, 0 },
	[C_ECC384_2] = { "client-ecc384-chain2.pem", "CERTIFICATE", NULL, 0 },
	[C_P521_3] = { "server-p521-chain3.pem", "CERTIFICATE", NULL, 0 },
	[C_SERVER_ECC] = { "server-ecc-cert.pem", "CERTIFICATE", NULL, 0 },
	[C_CA] = { "ca-cert.pem", "CERTIFICATE", NULL, 0 },
	[C_CA_ECC] = { "ca-ecc-cert.pem", "CERTIFICATE", NULL, 0 },
	[C_CA_ECC384] = { "ca-ecc384-cert.pem", "CERTIFICATE", NULL, 0 },
	[C_CLIENT] = { "client-cert.pem", "CERTIFICATE", NULL, 0 },
	[C_CLIENT_ECC] = { "client-ecc-cert.pem", "CERTIFICATE", NULL, 0 },
};

/* certificate i of material m */
#define C(m, i) (&M[m].v[i])
#define KEY(m) (&M[m].v[0])

static int setup(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N_MAT; i++)
		M[i].n = tu_pem_ders(&M[i].v, tu_input(M[i].file), M[i].label);
	assert_int_equal(M[C_RSA3].n, 3);
	assert_int_equal(M[C_ECC3].n, 3);
	assert_int_equal(M[C_RSA2].n, 2);
	assert_int_equal(M[C_ECC384_2].n, 2);
	assert_int_equal(M[C_P521_3].n, 3);
	return 0;
}

static int teardown(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N_MAT; i++)
		tu_ders_free(M[i].v, M[i].n);
	return 0;
}

/* set_private_key with a key and n certificates */
static int set_pk(wks_store *st, const char *alias, const tu_der *key,
                  const tu_der *const *certs, size_t n, const char *pw)
{
	const uint8_t *ders[8];
	size_t lens[8], i;

	assert_true(n <= 8);
	for (i = 0; i < n; i++) {
		ders[i] = certs[i]->der;
		lens[i] = certs[i]->len;
	}
	return wks_store_set_private_key(st, alias, key->der, key->len, ders, lens, n,
	                                 pw, pw ? strlen(pw) : 0);
}

#define CHAIN(...) ((const tu_der *const[]){ __VA_ARGS__ })
#define NCHAIN(...) (sizeof(CHAIN(__VA_ARGS__)) / sizeof(const tu_der *))
#define SET_PK(st, alias, key, pw, ...) \
	set_pk(st, alias, key, CHAIN(__VA_ARGS__), NCHAIN(__VA_ARGS__), pw)

static int set_secret(wks_store *st, const char *alias, const char *alg,
                      const char *bytes, const char *pw)
{
	return wks_store_set_secret_key(st, alias, alg, (const uint8_t *)bytes,
	                                strlen(bytes), pw, strlen(pw));
}

static int set_cert(wks_store *st, const char *alias, const tu_der *c)
{
	return wks_store_set_cert_der(st, alias, c->der, c->len);
}

/* get_key must succeed and return exactly these bytes */
static void expect_key(wks_store *st, const char *alias, const char *pw,
                       const uint8_t *want, size_t want_len)
{
	wks_key *k = NULL;
	size_t len = 0;
	const uint8_t *d;

	TU_OK(wks_store_get_key(&k, st, alias, pw, strlen(pw)));
	assert_non_null(k);
	d = wks_key_data(k, &len);
	if (len != want_len || memcmp(d, want, len) != 0)
		fail_msg("key of \"%s\" differs (%zu bytes, want %zu)", alias, len, want_len);
	wks_key_free(k);
}

static void expect_key_der(wks_store *st, const char *alias, const char *pw,
                           const tu_der *want)
{
	expect_key(st, alias, pw, want->der, want->len);
}

static void expect_key_fail(wks_store *st, const char *alias, const char *pw,
                            size_t pw_len, int want)
{
	wks_key *k = (wks_key *)1;

	TU_EXPECT(want, wks_store_get_key(&k, st, alias, pw, pw_len));
	assert_null(k);
}

static void expect_cert(wks_store *st, const char *alias, size_t idx, const tu_der *want)
{
	uint8_t *der = NULL;
	size_t len = 0;

	TU_OK(wks_store_get_cert_der(&der, &len, st, alias, idx));
	if (len != want->len || memcmp(der, want->der, len) != 0)
		fail_msg("certificate %zu of \"%s\" differs", idx, alias);
	wks_free(der);
}

static void save(wks_store *st, uint8_t **out, size_t *len)
{
	*out = NULL;
	TU_OK(wks_store_save_buffer(st, out, len, PW, PWL));
	assert_non_null(*out);
}

/* A copy of a wks_free()-owned buffer that the test may patch and free(). */
static uint8_t *dup_buf(const uint8_t *p, size_t n)
{
	uint8_t *d = malloc(n + 1);

	assert_non_null(d);
	memcpy(d, p, n);
	return d;
}

typedef struct {
	wks_entry **ev;
	size_t n;
	wks_record_pos *pos;
	wks_file_info info;
} decoded;

static void decode_buf(decoded *d, const uint8_t *buf, size_t len)
{
	wks_settings cfg;

	memset(d, 0, sizeof(*d));
	wks__settings_get(&cfg, NULL);
	TU_OK(wks__decode(&d->ev, &d->n, &d->pos, &d->info, buf, len, &cfg));
}

static void decoded_free(decoded *d)
{
	wks__entries_free(d->ev, d->n);
	free(d->pos);
}

static size_t dec_find(const decoded *d, const char *alias)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (strcmp(d->ev[i]->alias, alias) == 0)
			return i;
	fail_msg("no entry \"%s\" in the saved bytes", alias);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void expect_aliases(wks_store *st, const char *const *want, size_t n)
{
	char **a = NULL;
	size_t cnt = 99, i;

	TU_OK(wks_store_aliases(&a, &cnt, st));
	assert_int_equal(cnt, n);
	for (i = 0; i < n; i++)
		if (strcmp(a[i], want[i]) != 0)
			fail_msg("alias %zu: \"%s\", want \"%s\"", i, a[i], want[i]);
	assert_null(a[n]);
	wks_aliases_free(a);
	assert_int_equal(wks_store_size(st), n);
}

/* ------------------------------------------------------------------------
 * Probe
 */

static void test_probe(void **state)
{
	static const uint8_t wks[] = { 0, 0, 0, 7 }, wks_more[] = { 0, 0, 0, 7, 0, 0, 0, 1 },
	                     other[] = { 0, 0, 0, 8 }, jks[] = { 0xFE, 0xED, 0xFE, 0xED },
	                     pk12[] = { 0x30, 0x82, 0x0a, 0x00 };
	wks_store *st = tu_store_fast();
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(wks_probe(wks, 4), 1);
	assert_int_equal(wks_probe(wks_more, sizeof(wks_more)), 1);
	assert_int_equal(wks_probe(wks, 3), 0);
	assert_int_equal(wks_probe(wks, 0), 0);
	assert_int_equal(wks_probe(NULL, 0), 0);
	assert_int_equal(wks_probe(other, 4), 0);
	assert_int_equal(wks_probe(jks, 4), 0);
	assert_int_equal(wks_probe(pk12, 4), 0);
	save(st, &buf, &len);
	assert_int_equal(len, 104);
	assert_int_equal(wks_probe(buf, len), 1);
	wks_free(buf);
	wks_store_free(st);
}

/* ------------------------------------------------------------------------
 * Iteration counts
 */

static void test_default_iterations_210000(void **state)
{
	wks_store *st = NULL;
	uint8_t *buf;
	size_t len;
	decoded d;
	char val[64];

	(void)state;
	TU_OK(wks_store_new(&st));
	TU_OK(wks_get_property(val, sizeof(val), st, "wolfjce.wks.iterationCount"));
	assert_string_equal(val, "210000");
	TU_OK(set_secret(st, "aes", "AES", "0123456789abcdef", PW));
	save(st, &buf, &len);
	decode_buf(&d, buf, len);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.ev[0]->iterations, 210000);
	assert_int_equal(d.info.iterations, 210000);
	decoded_free(&d);
	wks_free(buf);
	wks_store_free(st);
}

static void test_iteration_property(void **state)
{
	wks_store *st = tu_store_fast();
	uint8_t *buf;
	size_t len;
	decoded d;
	char val[64];

	(void)state;
	/* a valid value is used for new entries and for the trailer */
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "12345"));
	TU_OK(set_secret(st, "a", "AES", "0123456789abcdef", PW));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	TU_OK(set_secret(st, "b", "AES", "0123456789abcdef", PW));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "11000"));
	save(st, &buf, &len);
	decode_buf(&d, buf, len);
	assert_int_equal(d.ev[dec_find(&d, "a")]->iterations, 12345);
	assert_int_equal(d.ev[dec_find(&d, "b")]->iterations, 10000);
	assert_int_equal(d.info.iterations, 11000);
	decoded_free(&d);
	wks_free(buf);

	/* below 10000 falls back to 210000, not to 10000 (spec section 8) */
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "9999"));
	TU_OK(wks_get_property(val, sizeof(val), st, "wolfjce.wks.iterationCount"));
	assert_string_equal(val, "210000");
	TU_OK(set_secret(st, "c", "AES", "0123456789abcdef", PW));
	save(st, &buf, &len);
	decode_buf(&d, buf, len);
	assert_int_equal(d.ev[dec_find(&d, "c")]->iterations, 210000);
	assert_int_equal(d.ev[dec_find(&d, "a")]->iterations, 12345); /* copied */
	assert_int_equal(d.info.iterations, 210000);
	decoded_free(&d);
	wks_free(buf);

	/* other bad values fall back the same way (no derivation needed) */
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "abc"));
	TU_OK(wks_get_property(val, sizeof(val), st, "wolfjce.wks.iterationCount"));
	assert_string_equal(val, "210000");
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	TU_OK(wks_get_property(val, sizeof(val), st, "wolfjce.wks.iterationCount"));
	assert_string_equal(val, "10000");

	/* Values are trimmed as wolfJCE sees them (Security.getProperty()
	 * returns String.trim()): " 15000" and "20000 " give 15000 and 20000
	 * iterations there, and here (spec section 8, issue 12 item 9a). */
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", " 15000"));
	TU_OK(wks_get_property(val, sizeof(val), st, "wolfjce.wks.iterationCount"));
	assert_string_equal(val, "15000");
	TU_OK(set_secret(st, "d", "AES", "0123456789abcdef", PW));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "20000 "));
	save(st, &buf, &len);
	decode_buf(&d, buf, len);
	assert_int_equal(d.ev[dec_find(&d, "d")]->iterations, 15000);
	assert_int_equal(d.info.iterations, 20000);
	decoded_free(&d);
	wks_free(buf);
	wks_store_free(st);
}

/* The offset of the kdfIterations field of entry i in a file image. */
static size_t iter_field(const decoded *d, size_t i)
{
	const wks_entry *e = d->ev[i];
	size_t off;

	if (e->type == WKS_ENTRY_PRIVATE_KEY)
		off = 8 + 4 + 16;
	else
		off = 8 + 2 + (size_t)(e->body[8] << 8 | e->body[9]) + 4 + 16;
	assert_int_equal(tu_get_be32(e->body + off), (uint32_t)e->iterations);
	return d->pos[i].body_offset + off;
}

static void test_min_iterations_on_load(void **state)
{
	wks_store *st = tu_store_fast(), *ld = NULL;
	uint8_t *buf, *img;
	size_t len, f;
	decoded d;

	(void)state;
	TU_OK(set_secret(st, "s", "AES", "0123456789abcdef", PW));
	TU_OK(SET_PK(st, "k", KEY(K_ECC), PW, C(C_SERVER_ECC, 0)));
	save(st, &buf, &len);
	decode_buf(&d, buf, len);
	TU_OK(wks_store_new(&ld));
	/* exactly 10000: accepted */
	TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
	assert_int_equal(wks_store_size(ld), 2);

	/* an entry at 9999 */
	for (size_t i = 0; i < d.n; i++) {
		img = dup_buf(buf, len);
		f = iter_field(&d, i);
		tu_put_be32(img + f, 9999);
		TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, img, len, NULL, 0));
		tu_restamp(img, len, PW);
		TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, img, len, PW, PWL));
		/* 0 and negative counts as well */
		tu_put_be32(img + f, 0);
		TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, img, len, NULL, 0));
		tu_put_be32(img + f, 0xFFFFFFFFu);
		{
			int r = wks_store_load_buffer(ld, img, len, NULL, 0);
			if (r != WKS_ERR_LIMIT && r != WKS_ERR_FORMAT)
				fail_msg("iterations -1: got %d", r);
		}
		free(img);
		assert_int_equal(wks_store_size(ld), 2);
	}
	/* the trailer at 9999 (MAC recomputed with 9999) */
	img = dup_buf(buf, len);
	tu_put_be32(img + len - 72, 9999);
	tu_restamp(img, len, PW);
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, img, len, PW, PWL));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, img, len, NULL, 0));
	free(img);
	assert_int_equal(wks_store_size(ld), 2);
	decoded_free(&d);
	wks_free(buf);
	wks_store_free(ld);
	wks_store_free(st);
}

static void test_max_iterations(void **state)
{
	wks_store *st = tu_store_fast(), *ld = NULL;
	uint8_t *hi_entry, *hi_trailer;
	size_t l1, l2;
	char val[64];
	static const char key[] = "0123456789abcdef";

	(void)state;
	/* an entry at 30000 (trailer 10000) */
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "30000"));
	TU_OK(set_secret(st, "s", "AES", key, PW));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	save(st, &hi_entry, &l1);
	/* entries at 10000, trailer at 30000 */
	TU_OK(wks_store_delete(st, "s"));
	TU_OK(set_secret(st, "s", "AES", key, PW));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "30000"));
	save(st, &hi_trailer, &l2);

	TU_OK(wks_store_new(&ld));
	TU_OK(wks_get_property(val, sizeof(val), ld, "libwks.wks.maxIterationCount"));
	assert_string_equal(val, "5000000");
	TU_OK(wks_store_set_property(ld, "libwks.wks.maxIterationCount", "20000"));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, hi_entry, l1, PW, PWL));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, hi_entry, l1, NULL, 0));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, hi_trailer, l2, PW, PWL));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, hi_trailer, l2, NULL, 0));
	assert_int_equal(wks_store_size(ld), 0);
	/* equal to the maximum: accepted */
	TU_OK(wks_store_set_property(ld, "libwks.wks.maxIterationCount", "30000"));
	TU_OK(wks_store_load_buffer(ld, hi_entry, l1, PW, PWL));
	TU_OK(wks_store_load_buffer(ld, hi_trailer, l2, PW, PWL));
	/* loaded under a higher maximum, then lowered: get_key refuses */
	TU_OK(wks_store_set_property(ld, "libwks.wks.maxIterationCount", NULL));
	TU_OK(wks_store_load_buffer(ld, hi_entry, l1, PW, PWL));
	TU_OK(wks_store_set_property(ld, "libwks.wks.maxIterationCount", "20000"));
	expect_key_fail(ld, "s", PW, PWL, WKS_ERR_LIMIT);
	TU_OK(wks_store_set_property(ld, "libwks.wks.maxIterationCount", NULL));
	expect_key(ld, "s", PW, (const uint8_t *)key, 16);
	/* bad values fall back to 5000000 */
	TU_OK(wks_store_set_property(ld, "libwks.wks.maxIterationCount", "9999"));
	TU_OK(wks_get_property(val, sizeof(val), ld, "libwks.wks.maxIterationCount"));
	assert_string_equal(val, "5000000");
	wks_free(hi_entry);
	wks_free(hi_trailer);
	wks_store_free(ld);
	wks_store_free(st);
}

/* ------------------------------------------------------------------------
 * Passwords
 */

static void test_wrong_store_password(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	uint8_t *buf;
	size_t len;
	static const char *const keep[] = { "keep" };

	(void)state;
	TU_OK(set_secret(st, "s", "AES", "0123456789abcdef", PW));
	TU_OK(set_cert(st, "c", C(C_CA, 0)));
	save(st, &buf, &len);
	TU_OK(set_cert(ld, "keep", C(C_CA_ECC, 0)));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(ld, buf, len, "wolfsslpassworD", PWL));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(ld, buf, len, PW, PWL - 1));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(ld, buf, len, PW "x", PWL + 1));
	assert_null(strstr(wks_error_detail(), PW));
	expect_aliases(ld, keep, 1);
	expect_cert(ld, "keep", 0, C(C_CA_ECC, 0));
	TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
	assert_int_equal(wks_store_size(ld), 2);
	assert_int_equal(wks_store_contains(ld, "keep"), 0);
	wks_free(buf);
	/* a store password with a NUL byte inside */
	TU_OK(wks_store_save_buffer(st, &buf, &len, "pw\0with-nul", 11));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(ld, buf, len, "pw", 2));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(ld, buf, len, "pw\0with-nuL", 11));
	TU_OK(wks_store_load_buffer(ld, buf, len, "pw\0with-nul", 11));
	wks_free(buf);
	wks_store_free(ld);
	wks_store_free(st);
}

static void test_wrong_key_password(void **state)
{
	wks_store *st = tu_store_fast();
	static const char kpw[] = "another-key-password";

	(void)state;
	TU_OK(set_secret(st, "s", "AES", "0123456789abcdef", kpw));
	TU_OK(SET_PK(st, "k", KEY(K_RSA), kpw, C(C_RSA2, 0), C(C_RSA2, 1)));
	expect_key_fail(st, "s", PW, PWL, WKS_ERR_INTEGRITY);
	expect_key_fail(st, "k", PW, PWL, WKS_ERR_INTEGRITY);
	expect_key_fail(st, "k", kpw, sizeof(kpw) - 2, WKS_ERR_INTEGRITY);
#ifdef WKS_CRYPTO_OPENSSL
	{
		EVP_PKEY *pk = (EVP_PKEY *)1;

		TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_pkey(&pk, st, "k", PW, PWL));
		assert_null(pk);
	}
#endif
	expect_key(st, "s", kpw, (const uint8_t *)"0123456789abcdef", 16);
	expect_key_der(st, "k", kpw, KEY(K_RSA));
	/* the detail of a failure never shows the password */
	expect_key_fail(st, "s", "my-secret-guess", 15, WKS_ERR_INTEGRITY);
	assert_null(strstr(wks_error_detail(), "my-secret-guess"));
	/* passwords are byte strings: a NUL inside counts, nothing is cut */
	TU_OK(wks_store_set_secret_key(st, "nul-pw", "AES", (const uint8_t *)"0123456789abcdef",
	                               16, "ab\0cd", 5));
	expect_key_fail(st, "nul-pw", "ab", 2, WKS_ERR_INTEGRITY);
	expect_key_fail(st, "nul-pw", "ab\0ce", 5, WKS_ERR_INTEGRITY);
	/* (a trailing NUL would not differ: HMAC pads short keys with zeros) */
	{
		wks_key *k = NULL;

		TU_OK(wks_store_get_key(&k, st, "nul-pw", "ab\0cd", 5));
		wks_key_free(k);
	}
	TU_OK(wks_store_delete(st, "nul-pw"));
	/* and again after a save/load with a store password that differs */
	{
		uint8_t *buf;
		size_t len;
		wks_store *ld = tu_store_fast();

		save(st, &buf, &len);
		TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
		expect_key_fail(ld, "k", PW, PWL, WKS_ERR_INTEGRITY);
		expect_key_der(ld, "k", kpw, KEY(K_RSA));
		wks_free(buf);
		wks_store_free(ld);
	}
	wks_store_free(st);
}

static void test_empty_password(void **state)
{
	wks_store *st = tu_store_fast();
	const uint8_t *ders[1] = { C(C_SERVER_ECC, 0)->der };
	size_t lens[1] = { C(C_SERVER_ECC, 0)->len };
	uint8_t *buf = (uint8_t *)1;
	size_t len = 7;
	char *dir = tu_tmpdir();
	char path[4096];
	struct stat sb;

	(void)state;
	TU_OK(set_secret(st, "s", "AES", "0123456789abcdef", PW));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_private_key(st, "k", KEY(K_ECC)->der,
	          KEY(K_ECC)->len, ders, lens, 1, "", 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_private_key(st, "k", KEY(K_ECC)->der,
	          KEY(K_ECC)->len, ders, lens, 1, PW, 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_private_key(st, "k", KEY(K_ECC)->der,
	          KEY(K_ECC)->len, ders, lens, 1, NULL, 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_secret_key(st, "s2", "AES",
	          (const uint8_t *)"0123456789abcdef", 16, "", 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_secret_key(st, "s", "AES",
	          (const uint8_t *)"fedcba9876543210", 16, NULL, 0));
#ifdef WKS_CRYPTO_OPENSSL
	{
		BIO *b = BIO_new_mem_buf(KEY(K_ECC)->der, (int)KEY(K_ECC)->len);
		EVP_PKEY *pk = d2i_PrivateKey_bio(b, NULL);
		const unsigned char *p = C(C_SERVER_ECC, 0)->der;
		X509 *x = d2i_X509(NULL, &p, (long)C(C_SERVER_ECC, 0)->len);

		assert_non_null(pk);
		assert_non_null(x);
		TU_EXPECT(WKS_ERR_INVALID, wks_store_set_pkey(st, "k", pk, &x, 1, "", 0));
		EVP_PKEY_free(pk);
		X509_free(x);
		BIO_free(b);
	}
#endif
	expect_key_fail(st, "s", "", 0, WKS_ERR_INVALID);
	expect_key_fail(st, "s", NULL, 0, WKS_ERR_INVALID);
	expect_key_fail(st, "s", PW, 0, WKS_ERR_INVALID);
#ifdef WKS_CRYPTO_OPENSSL
	{
		EVP_PKEY *pk = (EVP_PKEY *)1;

		TU_EXPECT(WKS_ERR_INVALID, wks_store_get_pkey(&pk, st, "s", "", 0));
		assert_null(pk);
	}
#endif
	TU_EXPECT(WKS_ERR_INVALID, wks_store_save_buffer(st, &buf, &len, "", 0));
	assert_null(buf);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_save_buffer(st, &buf, &len, NULL, 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_save_buffer(st, &buf, &len, PW, 0));
	snprintf(path, sizeof(path), "%s/k.wks", dir);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_save_file(st, path, "", 0));
	assert_int_equal(stat(path, &sb), -1);
	/* nothing changed */
	assert_int_equal(wks_store_size(st), 1);
	expect_key(st, "s", PW, (const uint8_t *)"0123456789abcdef", 16);
	/* an empty password on load means "no integrity check" */
	save(st, &buf, &len);
	TU_OK(wks_store_load_buffer(st, buf, len, "", 0));
	TU_OK(wks_store_load_buffer(st, buf, len, PW, 0));
	TU_OK(wks_store_load_buffer(st, buf, len, NULL, 0));
	assert_int_equal(wks_store_size(st), 1);
	wks_free(buf);
	tu_rmtree(dir);
	free(dir);
	wks_store_free(st);
}

static void test_load_without_password_then_get_key(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	uint8_t *buf;
	size_t len;

	(void)state;
	TU_OK(set_secret(st, "s", "HmacSHA256", "0123456789abcdef0123456789abcdef", PW));
	TU_OK(SET_PK(st, "k", KEY(K_ECC), "key-pw-0123456", C(C_SERVER_ECC, 0)));
	TU_OK(set_cert(st, "c", C(C_CA, 0)));
	save(st, &buf, &len);
	TU_OK(wks_store_load_buffer(ld, buf, len, NULL, 0));
	assert_int_equal(wks_store_size(ld), 3);
	expect_key(ld, "s", PW, (const uint8_t *)"0123456789abcdef0123456789abcdef", 32);
	expect_key_der(ld, "k", "key-pw-0123456", KEY(K_ECC));
	expect_key_fail(ld, "k", PW, PWL, WKS_ERR_INTEGRITY);
	expect_cert(ld, "c", 0, C(C_CA, 0));
	/* a modified store MAC does not matter without a password */
	buf[len - 1] ^= 1;
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(ld, buf, len, PW, PWL));
	TU_OK(wks_store_load_buffer(ld, buf, len, NULL, 0));
	expect_key(ld, "s", PW, (const uint8_t *)"0123456789abcdef0123456789abcdef", 32);
	wks_free(buf);
	wks_store_free(ld);
	wks_store_free(st);
}

static void test_require_integrity(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	uint8_t *buf;
	size_t len;
	static const char *const keep[] = { "keep" };
	char val[16];

	(void)state;
	TU_OK(set_cert(st, "c", C(C_CA, 0)));
	save(st, &buf, &len);
	TU_OK(wks_get_property(val, sizeof(val), ld, "libwks.wks.requireIntegrity"));
	assert_string_equal(val, "false");
	TU_OK(set_cert(ld, "keep", C(C_CA_ECC, 0)));
	TU_OK(wks_store_set_property(ld, "libwks.wks.requireIntegrity", "true"));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_load_buffer(ld, buf, len, NULL, 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_load_buffer(ld, buf, len, "", 0));
	expect_aliases(ld, keep, 1);
	TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
	assert_int_equal(wks_store_contains(ld, "c"), 1);
	TU_OK(wks_store_set_property(ld, "libwks.wks.requireIntegrity", "false"));
	TU_OK(wks_store_load_buffer(ld, buf, len, NULL, 0));
	wks_free(buf);
	wks_store_free(ld);
	wks_store_free(st);
}

/* ------------------------------------------------------------------------
 * Private key checks: key/certificate match, chains
 */

static void test_mismatched_key_cert(void **state)
{
	wks_store *st = tu_store_fast();
	int64_t t0 = 0, t1 = 0;

	(void)state;
	TU_OK(SET_PK(st, "a", KEY(K_ECC), PW, C(C_SERVER_ECC, 0)));
	TU_OK(wks_store_creation_time(&t0, st, "a"));
	/* RSA key, EC certificate */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "a", KEY(K_RSA), PW, C(C_SERVER_ECC, 0)));
	/* EC key, RSA certificate (and a 2-chain) */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "a", KEY(K_ECC), PW, C(C_RSA2, 0), C(C_RSA2, 1)));
	/* EC P-256 key, another P-256 certificate */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "a", KEY(K_ECC), PW, C(C_CLIENT_ECC, 0)));
	/* P-384 key, P-256 certificate */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "a", KEY(K_ECC384), PW, C(C_SERVER_ECC, 0)));
	/* RSA key, another RSA certificate */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "a", KEY(K_CLIENT), PW, C(C_RSA2, 0), C(C_RSA2, 1)));
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "b", KEY(K_RSA), PW, C(C_CLIENT, 0)));
	/* the key matches a non-leaf certificate only */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "b", KEY(K_RSA), PW, C(C_CA, 0), C(C_RSA2, 0)));
	/* nothing changed */
	assert_int_equal(wks_store_size(st), 1);
	assert_int_equal(wks_store_contains(st, "b"), 0);
	TU_OK(wks_store_creation_time(&t1, st, "a"));
	assert_int_equal(t0, t1);
	expect_cert(st, "a", 0, C(C_SERVER_ECC, 0));
	expect_key_der(st, "a", PW, KEY(K_ECC));
	/* the matching pairs work */
	TU_OK(SET_PK(st, "b", KEY(K_CLIENT), PW, C(C_CLIENT, 0)));
	TU_OK(SET_PK(st, "c", KEY(K_ECC384), PW, C(C_ECC384_2, 0), C(C_ECC384_2, 1)));
	wks_store_free(st);
}

static void test_chain_rules(void **state)
{
	wks_store *st = tu_store_fast();
	const tu_der *L = C(C_RSA3, 0), *I2 = C(C_RSA3, 1), *I1 = C(C_RSA3, 2);
	const tu_der *eL = C(C_ECC3, 0), *eI2 = C(C_ECC3, 1), *eI1 = C(C_ECC3, 2);
	size_t cc = 0;

	(void)state;
	/* valid chains */
	TU_OK(SET_PK(st, "rsa3", KEY(K_RSA), PW, L, I2, I1));
	TU_OK(SET_PK(st, "rsa4", KEY(K_RSA), PW, L, I2, I1, C(C_CA, 0)));
	TU_OK(SET_PK(st, "rsa2-int", KEY(K_RSA), PW, L, I2));
	TU_OK(SET_PK(st, "rsa1", KEY(K_RSA), PW, L));
	TU_OK(SET_PK(st, "ecc3", KEY(K_ECC), PW, eL, eI2, eI1));
	TU_OK(SET_PK(st, "rsa2", KEY(K_RSA), PW, C(C_RSA2, 0), C(C_RSA2, 1)));
	TU_OK(SET_PK(st, "p384", KEY(K_ECC384), PW, C(C_ECC384_2, 0), C(C_ECC384_2, 1)));
	TU_OK(SET_PK(st, "p521", KEY(K_P521), PW, C(C_P521_3, 0), C(C_P521_3, 1),
	             C(C_P521_3, 2)));
	TU_OK(SET_PK(st, "ecc2", KEY(K_ECC), PW, C(C_SERVER_ECC, 0), C(C_CA_ECC, 0)));
	TU_OK(wks_store_cert_count(&cc, st, "rsa4"));
	assert_int_equal(cc, 4);
	assert_int_equal(wks_store_size(st), 9);

	/* broken chains, each link in turn */
	/* order swapped */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_RSA), PW, L, I1, I2));
	/* middle certificate replaced (same role in another chain) */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_RSA), PW, L, eI2, I1));
	/* only the leaf link broken (wolfJCE never checks it) */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_ECC), PW, eL, I2, I1));
	/* only the top link broken */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_RSA), PW, L, I2, C(C_CA, 0)));
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_RSA), PW, L, I2, I1, C(C_CA_ECC, 0)));
	/* 2-chains (wolfJCE checks none) */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_RSA), PW, C(C_RSA2, 0), C(C_CA_ECC, 0)));
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_RSA), PW, L, I1));
	/* issuer name right, signature wrong (CA-ECC and CA-ECC384 share a
	 * subject name) */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_ECC384), PW, C(C_ECC384_2, 0),
	                                  C(C_CA_ECC, 0)));
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_ECC), PW, C(C_SERVER_ECC, 0),
	                                  C(C_CA_ECC384, 0)));
	/* the leaf repeated; a certificate repeated */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_RSA), PW, L, L));
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_RSA), PW, L, I2, I2));
	/* P-521 chain with the middle dropped */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "x", KEY(K_P521), PW, C(C_P521_3, 0),
	                                  C(C_P521_3, 2)));
	/* an existing entry is not replaced by a failing one */
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "rsa3", KEY(K_RSA), PW, L, I1, I2));
	TU_OK(wks_store_cert_count(&cc, st, "rsa3"));
	assert_int_equal(cc, 3);
	expect_cert(st, "rsa3", 1, I2);
	assert_int_equal(wks_store_size(st), 9);
	assert_int_equal(wks_store_contains(st, "x"), 0);

	/* no chain at all; unparsable certificate or key */
	{
		const uint8_t *ders[2] = { L->der, (const uint8_t *)"\x30\x03\x02\x01\x01" };
		size_t lens[2] = { L->len, 5 };
		uint8_t junk[64];

		TU_EXPECT(WKS_ERR_INVALID, wks_store_set_private_key(st, "x", KEY(K_RSA)->der,
		          KEY(K_RSA)->len, ders, lens, 0, PW, PWL));
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_set_private_key(st, "x", KEY(K_RSA)->der,
		          KEY(K_RSA)->len, ders, lens, 2, PW, PWL));
		lens[0] = L->len - 1;
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_set_private_key(st, "x", KEY(K_RSA)->der,
		          KEY(K_RSA)->len, ders, lens, 1, PW, PWL));
		lens[0] = 0;
		{
			int r = wks_store_set_private_key(st, "x", KEY(K_RSA)->der,
			                                  KEY(K_RSA)->len, ders, lens, 1, PW, PWL);
			if (r != WKS_ERR_FORMAT && r != WKS_ERR_INVALID)
				fail_msg("zero-length certificate: %d", r);
		}
		lens[0] = L->len;
		memset(junk, 0x41, sizeof(junk));
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_set_private_key(st, "x", junk, sizeof(junk),
		          ders, lens, 1, PW, PWL));
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_set_private_key(st, "x", KEY(K_RSA)->der,
		          KEY(K_RSA)->len - 1, ders, lens, 1, PW, PWL));
	}
	/* a public key (SubjectPublicKeyInfo) where the PKCS#8 key belongs */
#ifdef WKS_CRYPTO_WOLFCRYPT
	{
		/* (the leaf's SubjectPublicKeyInfo, by hand: Certificate >
		 * tbsCertificate > its 6th or 7th element) */
		const uint8_t *q = L->der, *spki = NULL;
		const uint8_t *ders[1] = { L->der };
		size_t lens[1] = { L->len }, h, l, i;

		for (i = 0; i < 2; i++) {
			h = q[1] < 0x80 ? 2 : 2 + (size_t)(q[1] & 0x7f);
			q += h; /* into Certificate, then tbsCertificate */
		}
		for (i = 0; i < 7 && !spki; i++) {
			size_t k;

			h = q[1] < 0x80 ? 2 : 2 + (size_t)(q[1] & 0x7f);
			l = q[1] < 0x80 ? q[1] : 0;
			for (k = 2; q[1] >= 0x80 && k < h; k++)
				l = l << 8 | q[k];
			if (i == 0 && q[0] != 0xa0)
				i++; /* no version */
			if (i == 6)
				spki = q;
			else
				q += h + l;
			if (spki)
				TU_EXPECT(WKS_ERR_FORMAT, wks_store_set_private_key(st,
				          "x", spki, h + l, ders, lens, 1, PW, PWL));
		}
		assert_non_null(spki);
	}
#else
	{
		const unsigned char *p = L->der;
		X509 *x = d2i_X509(NULL, &p, (long)L->len);
		unsigned char *spki = NULL;
		int sl;
		const uint8_t *ders[1] = { L->der };
		size_t lens[1] = { L->len };
		int r;

		assert_non_null(x);
		sl = i2d_PUBKEY(X509_get0_pubkey(x), &spki);
		assert_true(sl > 0);
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_set_private_key(st, "x", spki, (size_t)sl,
		          ders, lens, 1, PW, PWL));
		/* and as an EVP_PKEY without its private part */
		r = wks_store_set_pkey(st, "x", X509_get0_pubkey(x), &x, 1, PW, PWL);
		if (r != WKS_ERR_INVALID && r != WKS_ERR_FORMAT)
			fail_msg("set_pkey with a public key: %d (%s)", r, wks_error_detail());
		OPENSSL_free(spki);
		X509_free(x);
	}
#endif
	assert_int_equal(wks_store_size(st), 9);
	wks_store_free(st);
}

static void test_chain_limit(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	const tu_der *L = C(C_RSA3, 0), *I2 = C(C_RSA3, 1), *I1 = C(C_RSA3, 2);
	uint8_t *buf;
	size_t len;
	static const char *const keep[] = { "keep" };

	(void)state;
	/* on set */
	TU_OK(wks_store_set_property(st, "wolfjce.wks.maxCertChainLength", "2"));
	TU_EXPECT(WKS_ERR_LIMIT, SET_PK(st, "k", KEY(K_RSA), PW, L, I2, I1));
	TU_OK(SET_PK(st, "k2", KEY(K_RSA), PW, L, I2));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.maxCertChainLength", "3"));
	TU_OK(SET_PK(st, "k", KEY(K_RSA), PW, L, I2, I1));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.maxCertChainLength", "1"));
	TU_EXPECT(WKS_ERR_LIMIT, SET_PK(st, "k3", KEY(K_RSA), PW, L, I2));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.maxCertChainLength", NULL));
	save(st, &buf, &len);

	/* on load */
	TU_OK(set_cert(ld, "keep", C(C_CA, 0)));
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxCertChainLength", "2"));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, buf, len, PW, PWL));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, buf, len, NULL, 0));
	expect_aliases(ld, keep, 1);
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxCertChainLength", "3"));
	TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
	assert_int_equal(wks_store_size(ld), 2);
	/* a bad value falls back to 100 */
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxCertChainLength", "0"));
	TU_OK(wks_store_load_buffer(ld, buf, len, NULL, 0));
	wks_free(buf);
	wks_store_free(ld);
	wks_store_free(st);
}

static void test_entry_size_limit(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	uint8_t *buf;
	size_t len;
	decoded d;
	size_t i, max_body = 0;
	char val[32];

	(void)state;
	TU_OK(SET_PK(st, "k", KEY(K_RSA), PW, C(C_RSA2, 0), C(C_RSA2, 1)));
	TU_OK(set_cert(st, "c", C(C_CA, 0)));
	TU_OK(set_secret(st, "s", "AES", "0123456789abcdef", PW));
	save(st, &buf, &len);
	decode_buf(&d, buf, len);
	for (i = 0; i < d.n; i++)
		if (d.ev[i]->body_len > max_body)
			max_body = d.ev[i]->body_len;
	/* the largest body exactly at the limit: accepted; one below: LIMIT */
	snprintf(val, sizeof(val), "%zu", max_body);
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxEntrySize", val));
	TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
	assert_int_equal(wks_store_size(ld), 3);
	snprintf(val, sizeof(val), "%zu", max_body - 1);
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxEntrySize", val));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, buf, len, PW, PWL));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, buf, len, NULL, 0));
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxEntrySize", "1024"));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, buf, len, NULL, 0));
	assert_int_equal(wks_store_size(ld), 3);
	expect_key_der(ld, "k", PW, KEY(K_RSA));
	/* bad values fall back to the default */
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxEntrySize", "-5"));
	TU_OK(wks_get_property(val, sizeof(val), ld, "wolfjce.wks.maxEntrySize"));
	assert_string_equal(val, "10485760");
	TU_OK(wks_store_load_buffer(ld, buf, len, NULL, 0));
	decoded_free(&d);
	wks_free(buf);
	wks_store_free(ld);
	wks_store_free(st);
}

/* ------------------------------------------------------------------------
 * Overwrite, delete, aliases
 */

static void test_overwrite_rules(void **state)
{
	wks_store *st = tu_store_fast();
#ifdef WKS_CRYPTO_OPENSSL
	X509 *x;
	const unsigned char *p = C(C_CA, 0)->der;
#endif
	int64_t t = 0;

	(void)state;
#ifdef WKS_CRYPTO_OPENSSL
	x = d2i_X509(NULL, &p, (long)C(C_CA, 0)->len);
	assert_non_null(x);
#endif

	/* a private key over a certificate: allowed */
	TU_OK(set_cert(st, "a", C(C_CA, 0)));
	TU_OK(SET_PK(st, "a", KEY(K_ECC), PW, C(C_SERVER_ECC, 0)));
	assert_int_equal(wks_store_entry_type(st, "a"), WKS_ENTRY_PRIVATE_KEY);
	/* a certificate over a private key: refused, entry unchanged */
	TU_EXPECT(WKS_ERR_WRONG_TYPE, set_cert(st, "a", C(C_CA, 0)));
#ifdef WKS_CRYPTO_OPENSSL
	TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_set_cert(st, "a", x));
#endif
	assert_int_equal(wks_store_entry_type(st, "a"), WKS_ENTRY_PRIVATE_KEY);
	expect_cert(st, "a", 0, C(C_SERVER_ECC, 0));
	expect_key_der(st, "a", PW, KEY(K_ECC));
	/* a certificate over a secret key: refused (wolfJCE allows it) */
	TU_OK(set_secret(st, "s", "AES", "0123456789abcdef", PW));
	TU_EXPECT(WKS_ERR_WRONG_TYPE, set_cert(st, "s", C(C_CA, 0)));
#ifdef WKS_CRYPTO_OPENSSL
	TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_set_cert(st, "s", x));
#endif
	assert_int_equal(wks_store_entry_type(st, "s"), WKS_ENTRY_SECRET_KEY);
	expect_key(st, "s", PW, (const uint8_t *)"0123456789abcdef", 16);
	/* a secret key over a private key: allowed */
	TU_OK(set_secret(st, "a", "HmacSHA256", "secret-over-private", PW));
	assert_int_equal(wks_store_entry_type(st, "a"), WKS_ENTRY_SECRET_KEY);
	expect_key(st, "a", PW, (const uint8_t *)"secret-over-private", 19);
	TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_cert_count(&(size_t){ 0 }, st, "a"));
	/* a private key over a secret key: allowed */
	TU_OK(SET_PK(st, "a", KEY(K_RSA), PW, C(C_RSA2, 0), C(C_RSA2, 1)));
	assert_int_equal(wks_store_entry_type(st, "a"), WKS_ENTRY_PRIVATE_KEY);
	expect_key_der(st, "a", PW, KEY(K_RSA));
	/* private over private, secret over secret, certificate over
	 * certificate: replaced */
	TU_OK(SET_PK(st, "a", KEY(K_ECC), "other-password", C(C_SERVER_ECC, 0)));
	expect_key_fail(st, "a", PW, PWL, WKS_ERR_INTEGRITY);
	expect_key_der(st, "a", "other-password", KEY(K_ECC));
	TU_OK(set_secret(st, "s", "DES", "12345678", PW));
	{
		wks_key *k = NULL;

		TU_OK(wks_store_get_key(&k, st, "s", PW, PWL));
		assert_string_equal(wks_key_algorithm(k), "DES");
		assert_int_equal(wks_key_type(k), WKS_ENTRY_SECRET_KEY);
		wks_key_free(k);
	}
	TU_OK(set_cert(st, "c", C(C_CA, 0)));
#ifdef WKS_CRYPTO_OPENSSL
	TU_OK(wks_store_set_cert(st, "c", x));
#endif
	TU_OK(set_cert(st, "c", C(C_CA_ECC, 0)));
	expect_cert(st, "c", 0, C(C_CA_ECC, 0));
	TU_OK(wks_store_creation_time(&t, st, "c"));
	assert_true(t > 0);
	assert_int_equal(wks_store_size(st), 3);
	/* an unparsable certificate is refused */
	TU_EXPECT(WKS_ERR_FORMAT, wks_store_set_cert_der(st, "c2", C(C_CA, 0)->der,
	                                                  C(C_CA, 0)->len - 1));
	TU_EXPECT(WKS_ERR_FORMAT, wks_store_set_cert_der(st, "c2",
	                                                  (const uint8_t *)"\x30\x00", 2));
	assert_int_equal(wks_store_size(st), 3);
#ifdef WKS_CRYPTO_OPENSSL
	X509_free(x);
#endif
	wks_store_free(st);
}

static void test_delete(void **state)
{
	wks_store *st = tu_store_fast();
	static const char *const kinds[] = { "pk", "sk", "cert" };
	size_t i, cc = 0;
	int64_t t = 0;
	uint8_t *der = NULL;
	size_t dl = 0;

	(void)state;
	TU_OK(SET_PK(st, "pk", KEY(K_ECC), PW, C(C_SERVER_ECC, 0)));
	TU_OK(set_secret(st, "sk", "AES", "0123456789abcdef", PW));
	TU_OK(set_cert(st, "cert", C(C_CA, 0)));
	TU_OK(set_cert(st, "other", C(C_CA_ECC, 0)));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_delete(st, "absent"));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_delete(st, "PK"));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_delete(st, ""));
	assert_int_equal(wks_store_size(st), 4);
	for (i = 0; i < 3; i++) {
		const char *a = kinds[i];

		TU_OK(wks_store_delete(st, a));
		assert_int_equal(wks_store_size(st), 3 - i);
		assert_int_equal(wks_store_contains(st, a), 0);
		assert_int_equal(wks_store_entry_type(st, a), WKS_ENTRY_NONE);
		TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_delete(st, a));
		expect_key_fail(st, a, PW, PWL, WKS_ERR_NOTFOUND);
		TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_cert_count(&cc, st, a));
		TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_creation_time(&t, st, a));
		TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_cert_der(&der, &dl, st, a, 0));
		assert_null(der);
	}
	expect_cert(st, "other", 0, C(C_CA_ECC, 0));
	{
		char *al = NULL;

		TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_find_cert_alias(&al, st, C(C_CA, 0)->der,
		                                                       C(C_CA, 0)->len));
		assert_null(al);
	}
	/* deleted entries are gone from the saved bytes as well */
	{
		uint8_t *buf;
		size_t len;
		wks_store *ld = tu_store_fast();
		static const char *const left[] = { "other" };

		save(st, &buf, &len);
		TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
		expect_aliases(ld, left, 1);
		wks_free(buf);
		wks_store_free(ld);
	}
	wks_store_free(st);
}

static void test_aliases_case_and_special(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	/* byte order */
	static const char *const want[] = {
		"",
		"KEY",
		"Key",
		"key",
		"line\r\nbreak",
		"nul\xC0\x80inside",
		"surrogate-\xED\xA0\x80-lone",
		"z\xC3\xA4-\xE6\x97\xA5\xE6\x9C\xAC-\xF0\x9F\x94\x91",
	};
	uint8_t *buf;
	size_t len;
	decoded d;

	(void)state;
	TU_OK(set_secret(st, "Key", "AES", "0123456789abcdeA", PW));
	TU_OK(set_secret(st, "key", "AES", "0123456789abcdeB", PW));
	TU_OK(set_cert(st, "KEY", C(C_CA, 0)));
	TU_OK(set_cert(st, "", C(C_CA_ECC, 0)));
	TU_OK(set_cert(st, "line\r\nbreak", C(C_CA, 0)));
	TU_OK(set_cert(st, "nul\xC0\x80inside", C(C_CA, 0)));
	TU_OK(set_cert(st, "surrogate-\xED\xA0\x80-lone", C(C_CA, 0)));
	TU_OK(set_secret(st, want[7], "AES", "0123456789abcdeC", PW));
	expect_aliases(st, want, 8);
	expect_key(st, "Key", PW, (const uint8_t *)"0123456789abcdeA", 16);
	expect_key(st, "key", PW, (const uint8_t *)"0123456789abcdeB", 16);
	expect_key_fail(st, "KEY", PW, PWL, WKS_ERR_WRONG_TYPE);
	expect_key_fail(st, "kEy", PW, PWL, WKS_ERR_NOTFOUND);
	assert_int_equal(wks_store_contains(st, "kEY"), 0);
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_delete(st, "kEy"));
	expect_cert(st, "", 0, C(C_CA_ECC, 0));

	/* the stored (modified UTF-8) bytes */
	save(st, &buf, &len);
	decode_buf(&d, buf, len);
	{
		static const struct {
			const char *api;
			const char *mutf8;
			size_t n;
		} enc[] = {
			{ "nul\xC0\x80inside", "nul\xC0\x80inside", 11 },
			{ "surrogate-\xED\xA0\x80-lone", "surrogate-\xED\xA0\x80-lone", 18 },
			{ "z\xC3\xA4-\xE6\x97\xA5\xE6\x9C\xAC-\xF0\x9F\x94\x91",
			  "z\xC3\xA4-\xE6\x97\xA5\xE6\x9C\xAC-\xED\xA0\xBD\xED\xB4\x91", 17 },
			{ "", "", 0 },
		};
		size_t i;

		for (i = 0; i < sizeof(enc) / sizeof(enc[0]); i++) {
			size_t k = dec_find(&d, enc[i].api), off = d.pos[k].offset;

			assert_int_equal((buf[off + 4] << 8) | buf[off + 5], enc[i].n);
			if (memcmp(buf + off + 6, enc[i].mutf8, enc[i].n) != 0)
				fail_msg("modified UTF-8 of alias %zu", i);
		}
	}
	decoded_free(&d);
	TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
	expect_aliases(ld, want, 8);
	expect_key(ld, want[7], PW, (const uint8_t *)"0123456789abcdeC", 16);
	expect_cert(ld, "nul\xC0\x80inside", 0, C(C_CA, 0));
	wks_free(buf);

	/* invalid aliases */
	TU_EXPECT(WKS_ERR_INVALID, set_cert(st, "\xFF", C(C_CA, 0)));
	TU_EXPECT(WKS_ERR_INVALID, set_cert(st, "bad\xC3", C(C_CA, 0)));
	TU_EXPECT(WKS_ERR_INVALID, set_cert(st, "over\xC1\x81long", C(C_CA, 0)));
	TU_EXPECT(WKS_ERR_INVALID, set_cert(st, "over\xE0\x80\x80long", C(C_CA, 0)));
	TU_EXPECT(WKS_ERR_INVALID, set_cert(st, "big\xF4\x90\x80\x80", C(C_CA, 0)));
	/* a valid pair written as two 3-byte surrogates is not the API form
	 * (that is F0 9F 94 91): either refused, or taken as that same alias
	 * (never a second entry for the same Java string) */
	{
		wks_store *s2 = tu_store_fast();
		char **a = NULL;
		size_t na = 0;
		int r = set_cert(s2, "\xED\xA0\xBD\xED\xB4\x91", C(C_CA, 0));

		if (r == WKS_OK) {
			TU_OK(set_cert(s2, "\xF0\x9F\x94\x91", C(C_CA_ECC, 0)));
			TU_OK(wks_store_aliases(&a, &na, s2));
			assert_int_equal(na, 1);
			assert_string_equal(a[0], "\xF0\x9F\x94\x91");
			wks_aliases_free(a);
			expect_cert(s2, "\xED\xA0\xBD\xED\xB4\x91", 0, C(C_CA_ECC, 0));
		} else {
			assert_int_equal(r, WKS_ERR_INVALID);
		}
		wks_store_free(s2);
	}
	TU_EXPECT(WKS_ERR_INVALID, set_secret(st, "\xFF", "AES", "0123456789abcdef", PW));
	TU_EXPECT(WKS_ERR_INVALID, SET_PK(st, "\xFF", KEY(K_ECC), PW, C(C_SERVER_ECC, 0)));
	TU_EXPECT(WKS_ERR_INVALID, set_cert(st, NULL, C(C_CA, 0)));
	assert_int_equal(wks_store_contains(st, "\xFF"), 0);
	assert_int_equal(wks_store_size(st), 8);
	wks_store_free(ld);
	wks_store_free(st);
}

static void test_long_alias(void **state)
{
	wks_store *st = tu_store_fast();
	char *a = malloc(70000);
	uint8_t *buf = NULL;
	size_t len = 0, i;
	int r;

	(void)state;
	assert_non_null(a);
	/* 65535 bytes of modified UTF-8: the longest alias */
	memset(a, 'a', 65535);
	a[65535] = 0;
	TU_OK(set_cert(st, a, C(C_CA, 0)));
	save(st, &buf, &len);
	{
		wks_store *ld = tu_store_fast();

		TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
		assert_int_equal(wks_store_contains(ld, a), 1);
		wks_store_free(ld);
	}
	wks_free(buf);
	buf = NULL;
	TU_OK(wks_store_delete(st, a));
	/* 65536 bytes: refused when set (WKS_ERR_LIMIT), so that no save
	 * fails for it later */
	for (i = 0; i < 32768; i++) {
		a[2 * i] = (char)0xC0;
		a[2 * i + 1] = (char)0x80;
	}
	a[65536] = 0;
	r = set_cert(st, a, C(C_CA, 0));
	assert_int_equal(r, WKS_ERR_LIMIT);
	TU_OK(wks_store_save_buffer(st, &buf, &len, PW, PWL));
	wks_free(buf);
	free(a);
	wks_store_free(st);
}

/* ------------------------------------------------------------------------
 * Secret key arguments, wrong types
 */

static void test_secret_key_args(void **state)
{
	wks_store *st = tu_store_fast();
	static const uint8_t one[1] = { 0x5A };
	wks_key *k = NULL;
	size_t n = 0;

	(void)state;
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_secret_key(st, "s", "AES", one, 0, PW, PWL));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_secret_key(st, "s", "", one, 1, PW, PWL));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_secret_key(st, "s", NULL, one, 1, PW, PWL));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_secret_key(st, "s", "AES", NULL, 16, PW, PWL));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_secret_key(st, "s", "\xFF", one, 1, PW, PWL));
	assert_int_equal(wks_store_size(st), 0);
	/* one byte, a non-ASCII algorithm name, a 16-byte multiple */
	TU_OK(wks_store_set_secret_key(st, "s", "Alg-\xC3\xA4\xF0\x9F\x94\x91", one, 1, PW, PWL));
	TU_OK(wks_store_get_key(&k, st, "s", PW, PWL));
	assert_string_equal(wks_key_algorithm(k), "Alg-\xC3\xA4\xF0\x9F\x94\x91");
	assert_memory_equal(wks_key_data(k, &n), one, 1);
	assert_int_equal(n, 1);
	wks_key_free(k);
	TU_OK(set_secret(st, "s32", "AES", "0123456789abcdef0123456789abcdef", PW));
	{
		uint8_t *buf;
		size_t len;
		decoded d;

		save(st, &buf, &len);
		decode_buf(&d, buf, len);
		assert_int_equal(d.ev[dec_find(&d, "s")]->enc.len, 16);
		assert_int_equal(d.ev[dec_find(&d, "s32")]->enc.len, 48);
		decoded_free(&d);
		wks_free(buf);
	}
	/* get_key on a certificate; absent; wrong kinds for get_pkey */
	TU_OK(set_cert(st, "c", C(C_CA, 0)));
	expect_key_fail(st, "c", PW, PWL, WKS_ERR_WRONG_TYPE);
	expect_key_fail(st, "none", PW, PWL, WKS_ERR_NOTFOUND);
#ifdef WKS_CRYPTO_OPENSSL
	{
		EVP_PKEY *pk = (EVP_PKEY *)1;

		TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_get_pkey(&pk, st, "s", PW, PWL));
		assert_null(pk);
		pk = (EVP_PKEY *)1;
		TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_get_pkey(&pk, st, "c", PW, PWL));
		assert_null(pk);
		pk = (EVP_PKEY *)1;
		TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_pkey(&pk, st, "none", PW, PWL));
		assert_null(pk);
	}
#endif
	/* an empty alias holds keys too (wolfJCE's getKey("") returns null) */
	TU_OK(set_secret(st, "", "AES", "0123456789abcdef", PW));
	expect_key(st, "", PW, (const uint8_t *)"0123456789abcdef", 16);
	wks_store_free(st);
}

/* ------------------------------------------------------------------------
 * Failed loads, round trips, queries
 */

static void test_failed_load_leaves_store(void **state)
{
	wks_store *st = tu_store_fast(), *src = tu_store_fast();
	uint8_t *good, *img;
	size_t glen;
	static const char *const want[] = { "c", "k", "s" };
	int64_t t[3];
	size_t i;

	(void)state;
	TU_OK(set_secret(st, "s", "AES", "0123456789abcdef", PW));
	TU_OK(SET_PK(st, "k", KEY(K_RSA), PW, C(C_RSA3, 0), C(C_RSA3, 1), C(C_RSA3, 2)));
	TU_OK(set_cert(st, "c", C(C_CA, 0)));
	for (i = 0; i < 3; i++)
		TU_OK(wks_store_creation_time(&t[i], st, want[i]));
	TU_OK(set_cert(src, "other", C(C_CA_ECC, 0)));
	TU_OK(SET_PK(src, "k", KEY(K_ECC), PW, C(C_SERVER_ECC, 0)));
	save(src, &good, &glen);

	img = dup_buf(good, glen);
	/* wrong password, truncation, bad magic, a limit, trailing bytes */
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(st, img, glen, "nope-nope", 9));
	TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(st, img, glen - 1, PW, PWL));
	TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(st, img, glen / 2, NULL, 0));
	TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(st, img, 0, NULL, 0));
	TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(st, img, 3, NULL, 0));
	img[3] = 8;
	TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(st, img, glen, NULL, 0));
	img[3] = 7;
	TU_OK(wks_store_set_property(st, "wolfjce.wks.maxEntrySize", "100"));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(st, img, glen, PW, PWL));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.maxEntrySize", NULL));
	{
		uint8_t *longer = malloc(glen + 1);

		assert_non_null(longer);
		memcpy(longer, img, glen);
		longer[glen] = 0;
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(st, longer, glen + 1, NULL, 0));
		free(longer);
	}
	/* a file that cannot be read */
	TU_EXPECT(WKS_ERR_IO, wks_store_load_file(st, "/nonexistent/dir/x.wks", PW, PWL));
	free(img);

	expect_aliases(st, want, 3);
	for (i = 0; i < 3; i++) {
		int64_t tt = 0;

		TU_OK(wks_store_creation_time(&tt, st, want[i]));
		assert_int_equal(tt, t[i]);
	}
	expect_key_der(st, "k", PW, KEY(K_RSA));
	expect_cert(st, "k", 2, C(C_RSA3, 2));
	expect_key(st, "s", PW, (const uint8_t *)"0123456789abcdef", 16);
	/* and a good load replaces everything */
	TU_OK(wks_store_load_buffer(st, good, glen, PW, PWL));
	{
		static const char *const now[] = { "k", "other" };

		expect_aliases(st, now, 2);
		expect_key_der(st, "k", PW, KEY(K_ECC));
	}
	wks_free(good);
	wks_store_free(src);
	wks_store_free(st);
}

typedef struct {
	const char *alias;
	int kind; /* 1 private, 2 cert, 3 secret */
	int key;  /* material index (private) */
	int chain;
	size_t chain_n;
	const char *alg;
	const char *secret;
	const char *pw;
} rt_spec;

static void test_round_trip_every_kind(void **state)
{
	static const rt_spec spec[] = {
		{ "rsa-chain3", 1, K_RSA, C_RSA3, 3, NULL, NULL, PW },
		{ "rsa-chain2", 1, K_RSA, C_RSA2, 2, NULL, NULL, "k\xC3\xA9y-pw" },
		{ "ecc", 1, K_ECC, C_SERVER_ECC, 1, NULL, NULL, PW },
		{ "ecc3", 1, K_ECC, C_ECC3, 3, NULL, NULL, PW },
		{ "p384", 1, K_ECC384, C_ECC384_2, 2, NULL, NULL, PW },
		{ "p521", 1, K_P521, C_P521_3, 3, NULL, NULL, PW },
		{ "client", 1, K_CLIENT, C_CLIENT, 1, NULL, NULL, PW },
		{ "ca", 2, 0, C_CA, 1, NULL, NULL, NULL },
		{ "ca-ecc", 2, 0, C_CA_ECC, 1, NULL, NULL, NULL },
		{ "aes128", 3, 0, 0, 0, "AES", "0123456789abcdef", PW },
		{ "aes256", 3, 0, 0, 0, "AES", "0123456789abcdef0123456789abcdef", PW },
		{ "hmac", 3, 0, 0, 0, "HmacSHA256", "any length key, 33 bytes long!!!!", "pw-2" },
		{ "one", 3, 0, 0, 0, "X", "1", PW },
	};
	const size_t n = sizeof(spec) / sizeof(spec[0]);
	wks_store *st = tu_store_fast(), *ld = tu_store_fast(), *ld2 = tu_store_fast();
	uint8_t *b1, *b2;
	size_t l1, l2, i, j;
	decoded d1, d2;
	int64_t times[16];
	char *dir = tu_tmpdir(), path[4096];

	(void)state;
	for (i = 0; i < n; i++) {
		const rt_spec *s = &spec[i];

		if (s->kind == 1) {
			const tu_der *c[3];

			for (j = 0; j < s->chain_n; j++)
				c[j] = C(s->chain, j);
			TU_OK(set_pk(st, s->alias, KEY(s->key), c, s->chain_n, s->pw));
		} else if (s->kind == 2) {
			TU_OK(set_cert(st, s->alias, C(s->chain, 0)));
		} else {
			TU_OK(set_secret(st, s->alias, s->alg, s->secret, s->pw));
		}
		TU_OK(wks_store_creation_time(&times[i], st, s->alias));
	}
	save(st, &b1, &l1);
	TU_OK(wks_store_load_buffer(ld, b1, l1, PW, PWL));
	/* and through a file */
	snprintf(path, sizeof(path), "%s/rt.wks", dir);
	TU_OK(wks_store_save_file(ld, path, PW, PWL));
	TU_OK(wks_store_load_file(ld2, path, PW, PWL));
	assert_int_equal(wks_store_size(ld2), n);

	for (i = 0; i < n; i++) {
		const rt_spec *s = &spec[i];
		int64_t t = 0;
		size_t cc = 0;

		assert_int_equal(wks_store_entry_type(ld2, s->alias), s->kind);
		TU_OK(wks_store_creation_time(&t, ld2, s->alias));
		assert_int_equal(t, times[i]);
		if (s->kind == 3) {
			wks_key *k = NULL;

			expect_key(ld2, s->alias, s->pw, (const uint8_t *)s->secret,
			           strlen(s->secret));
			TU_OK(wks_store_get_key(&k, ld2, s->alias, s->pw, strlen(s->pw)));
			assert_string_equal(wks_key_algorithm(k), s->alg);
			assert_int_equal(wks_key_type(k), WKS_ENTRY_SECRET_KEY);
			wks_key_free(k);
			continue;
		}
		TU_OK(wks_store_cert_count(&cc, ld2, s->alias));
		assert_int_equal(cc, s->chain_n);
		for (j = 0; j < cc; j++)
			expect_cert(ld2, s->alias, j, C(s->chain, j));
		if (s->kind == 1) {
			wks_key *k = NULL;
			const char *alg;

			expect_key_der(ld2, s->alias, s->pw, KEY(s->key));
			TU_OK(wks_store_get_key(&k, ld2, s->alias, s->pw, strlen(s->pw)));
			assert_int_equal(wks_key_type(k), WKS_ENTRY_PRIVATE_KEY);
			alg = wks_key_algorithm(k);
			assert_string_equal(alg, s->key == K_RSA || s->key == K_CLIENT ? "RSA" : "EC");
			wks_key_free(k);
		}
	}
	/* entries are copied as they are when saved again (no re-encryption),
	 * the trailer gets a fresh salt */
	save(ld2, &b2, &l2);
	assert_int_equal(l1, l2);
	decode_buf(&d1, b1, l1);
	decode_buf(&d2, b2, l2);
	for (i = 0; i < n; i++) {
		const wks_entry *e1 = d1.ev[dec_find(&d1, spec[i].alias)];
		const wks_entry *e2 = d2.ev[dec_find(&d2, spec[i].alias)];

		assert_int_equal(e1->body_len, e2->body_len);
		if (memcmp(e1->body, e2->body, e1->body_len) != 0)
			fail_msg("entry \"%s\" changed on re-save", spec[i].alias);
	}
	assert_memory_not_equal(d1.info.salt, d2.info.salt, WKS_SALT_LEN);
	/* fresh salts and IVs per entry */
	for (i = 0; i < d1.n; i++)
		for (j = i + 1; j < d1.n; j++)
			if (d1.ev[i]->type != WKS_ENTRY_CERTIFICATE &&
			    d1.ev[j]->type != WKS_ENTRY_CERTIFICATE) {
				assert_memory_not_equal(d1.ev[i]->salt, d1.ev[j]->salt, WKS_SALT_LEN);
				assert_memory_not_equal(d1.ev[i]->iv, d1.ev[j]->iv, WKS_IV_LEN);
			}
	decoded_free(&d1);
	decoded_free(&d2);
	wks_free(b1);
	wks_free(b2);
	tu_rmtree(dir);
	free(dir);
	wks_store_free(ld2);
	wks_store_free(ld);
	wks_store_free(st);
}

#ifdef WKS_CRYPTO_OPENSSL
static void test_get_pkey_set_pkey(void **state)
{
	wks_store *st = tu_store_fast();
	BIO *b;
	EVP_PKEY *rsa, *ecc, *out = NULL;
	X509 *chain[2];
	size_t i;

	(void)state;
	b = BIO_new_file(tu_input("server-key.pem"), "r");
	rsa = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	b = BIO_new_file(tu_input("ecc-key.pem"), "r");
	ecc = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	b = BIO_new_file(tu_input("server-cert-chain2.pem"), "r");
	chain[0] = PEM_read_bio_X509(b, NULL, NULL, NULL);
	chain[1] = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	assert_true(rsa && ecc && chain[0] && chain[1]);

	/* get_pkey of entries set from DER */
	TU_OK(SET_PK(st, "rsa", KEY(K_RSA), PW, C(C_RSA2, 0), C(C_RSA2, 1)));
	TU_OK(SET_PK(st, "ecc", KEY(K_ECC), PW, C(C_SERVER_ECC, 0)));
	TU_OK(wks_store_get_pkey(&out, st, "rsa", PW, PWL));
	assert_int_equal(EVP_PKEY_eq(out, rsa), 1);
	EVP_PKEY_free(out);
	out = NULL;
	TU_OK(wks_store_get_pkey(&out, st, "ecc", PW, PWL));
	assert_int_equal(EVP_PKEY_eq(out, ecc), 1);
	assert_int_not_equal(EVP_PKEY_eq(out, rsa), 1);
	EVP_PKEY_free(out);
	out = NULL;

	/* set_pkey from OpenSSL objects; nothing is consumed */
	TU_OK(wks_store_set_pkey(st, "rsa-obj", rsa, chain, 2, PW, PWL));
	for (i = 0; i < 2; i++) {
		unsigned char *der = NULL;
		int dl = i2d_X509(chain[i], &der);
		tu_der t = { der, (size_t)dl };

		expect_cert(st, "rsa-obj", i, &t);
		OPENSSL_free(der);
	}
	{
		wks_key *k = NULL;
		size_t len = 0;
		const uint8_t *d;
		const unsigned char *p;
		EVP_PKEY *back;

		TU_OK(wks_store_get_key(&k, st, "rsa-obj", PW, PWL));
		d = wks_key_data(k, &len);
		p = d;
		back = d2i_AutoPrivateKey(NULL, &p, (long)len);
		assert_non_null(back);
		assert_int_equal(p - d, (long)len);
		assert_int_equal(EVP_PKEY_eq(back, rsa), 1);
		assert_string_equal(wks_key_algorithm(k), "RSA");
		EVP_PKEY_free(back);
		wks_key_free(k);
	}
	TU_OK(wks_store_get_pkey(&out, st, "rsa-obj", PW, PWL));
	assert_int_equal(EVP_PKEY_eq(out, rsa), 1);
	EVP_PKEY_free(out);
	/* the same checks as set_private_key */
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_pkey(st, "x", ecc, chain, 2, PW, PWL));
	{
		X509 *swapped[2] = { chain[1], chain[0] };

		TU_EXPECT(WKS_ERR_INVALID, wks_store_set_pkey(st, "x", rsa, swapped, 2, PW, PWL));
	}
	TU_EXPECT(WKS_ERR_INVALID, wks_store_set_pkey(st, "x", rsa, chain, 0, PW, PWL));
	assert_int_equal(wks_store_contains(st, "x"), 0);
	/* set_cert from an X509 */
	TU_OK(wks_store_set_cert(st, "ca", chain[1]));
	expect_cert(st, "ca", 0, C(C_RSA2, 1));
	{
		X509 *x = NULL;

		TU_OK(wks_store_get_cert(&x, st, "ca", 0));
		assert_int_equal(X509_cmp(x, chain[1]), 0);
		X509_free(x);
		x = (X509 *)1;
		TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_cert(&x, st, "ca", 1));
		assert_null(x);
	}
	/* pkey objects are still usable (not consumed) */
	assert_int_equal(EVP_PKEY_eq(rsa, rsa), 1);
	EVP_PKEY_free(rsa);
	EVP_PKEY_free(ecc);
	X509_free(chain[0]);
	X509_free(chain[1]);
	wks_store_free(st);
}
#endif

static void test_queries(void **state)
{
	wks_store *st = tu_store_fast();
	size_t cc = 99;
	char *al = NULL;
	uint8_t *der = (uint8_t *)1;
	size_t dl = 5;
	int64_t before, after, t = 0;

	(void)state;
	before = now_ms();
	TU_OK(SET_PK(st, "m-key", KEY(K_RSA), PW, C(C_RSA3, 0), C(C_RSA3, 1), C(C_RSA3, 2)));
	after = now_ms();
	TU_OK(wks_store_creation_time(&t, st, "m-key"));
	assert_true(t >= before - 1 && t <= after + 1);
	TU_OK(set_cert(st, "z-leaf-copy", C(C_RSA3, 0)));
	TU_OK(set_cert(st, "b-ca", C(C_CA, 0)));
	TU_OK(set_cert(st, "a-ca", C(C_CA, 0)));
	TU_OK(set_secret(st, "0-secret", "AES", "0123456789abcdef", PW));

	/* cert_count */
	TU_OK(wks_store_cert_count(&cc, st, "m-key"));
	assert_int_equal(cc, 3);
	TU_OK(wks_store_cert_count(&cc, st, "a-ca"));
	assert_int_equal(cc, 1);
	TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_cert_count(&cc, st, "0-secret"));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_cert_count(&cc, st, "nope"));
	/* get_cert_der */
	expect_cert(st, "m-key", 0, C(C_RSA3, 0));
	expect_cert(st, "m-key", 2, C(C_RSA3, 2));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_cert_der(&der, &dl, st, "m-key", 3));
	assert_null(der);
	assert_int_equal(dl, 0);
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_cert_der(&der, &dl, st, "a-ca", 1));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_cert_der(&der, &dl, st, "nope", 0));
	TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_get_cert_der(&der, &dl, st, "0-secret", 0));
	/* find_cert_alias: first alias in byte order with that certificate or
	 * leaf */
	TU_OK(wks_store_find_cert_alias(&al, st, C(C_CA, 0)->der, C(C_CA, 0)->len));
	assert_string_equal(al, "a-ca");
	wks_free(al);
	al = NULL;
	TU_OK(wks_store_find_cert_alias(&al, st, C(C_RSA3, 0)->der, C(C_RSA3, 0)->len));
	assert_string_equal(al, "m-key");
	wks_free(al);
	al = NULL;
	TU_OK(wks_store_delete(st, "m-key"));
	TU_OK(wks_store_find_cert_alias(&al, st, C(C_RSA3, 0)->der, C(C_RSA3, 0)->len));
	assert_string_equal(al, "z-leaf-copy");
	wks_free(al);
	al = (char *)1;
	/* a non-leaf chain certificate, an unknown one */
	TU_OK(SET_PK(st, "m-key", KEY(K_RSA), PW, C(C_RSA3, 0), C(C_RSA3, 1), C(C_RSA3, 2)));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_find_cert_alias(&al, st, C(C_RSA3, 1)->der,
	                                                       C(C_RSA3, 1)->len));
	assert_null(al);
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_find_cert_alias(&al, st, C(C_CA_ECC, 0)->der,
	                                                       C(C_CA_ECC, 0)->len));
	/* a prefix of a stored DER is not a match */
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_find_cert_alias(&al, st, C(C_CA, 0)->der,
	                                                       C(C_CA, 0)->len - 1));
	/* creation_time */
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_creation_time(&t, st, "nope"));
	/* entry types, contains */
	assert_int_equal(wks_store_entry_type(st, "m-key"), WKS_ENTRY_PRIVATE_KEY);
	assert_int_equal(wks_store_entry_type(st, "a-ca"), WKS_ENTRY_CERTIFICATE);
	assert_int_equal(wks_store_entry_type(st, "0-secret"), WKS_ENTRY_SECRET_KEY);
	assert_int_equal(wks_store_entry_type(st, "nope"), WKS_ENTRY_NONE);
	assert_int_equal(wks_store_contains(st, "a-ca"), 1);
	assert_int_equal(wks_store_contains(st, "A-CA"), 0);
	assert_int_equal(wks_store_contains(st, NULL), 0);
	assert_int_equal(wks_store_size(st), 5);
	/* errors carry a detail, strerror never NULL */
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_delete(st, "nope"));
	assert_non_null(wks_error_detail());
	assert_non_null(wks_strerror(WKS_ERR_LIMIT));
	assert_non_null(wks_strerror(12345));
	wks_store_free(st);
}

/* ------------------------------------------------------------------------
 * Crafted streams
 */

typedef struct {
	const char *what;
	size_t off;     /* where to write */
	uint32_t value;
	int want;
} patch;

static void test_crafted_streams(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	uint8_t *buf;
	size_t len, i;
	decoded d;
	size_t pk, ck, sk, pb, cb, sb, E, al;
	patch p[40];
	size_t np = 0;
	static const char *const keep[] = { "keep" };

	(void)state;
	TU_OK(SET_PK(st, "pk", KEY(K_RSA), PW, C(C_RSA2, 0), C(C_RSA2, 1)));
	TU_OK(set_cert(st, "ct", C(C_CA, 0)));
	TU_OK(set_secret(st, "sk", "AES", "0123456789abcdef", PW));
	save(st, &buf, &len);
	decode_buf(&d, buf, len);
	pk = dec_find(&d, "pk");
	ck = dec_find(&d, "ct");
	sk = dec_find(&d, "sk");
	pb = d.pos[pk].body_offset;
	cb = d.pos[ck].body_offset;
	sb = d.pos[sk].body_offset;
	E = d.ev[pk]->enc.len;
	al = 3; /* "AES" */
	assert_int_equal(tu_get_be32(buf + pb + 52), E);
	assert_int_equal(tu_get_be32(buf + pb + 56 + E), 2);
	assert_int_equal(tu_get_be32(buf + pb + 67 + E), C(C_RSA2, 0)->len);
	assert_int_equal(tu_get_be32(buf + cb + 15), C(C_CA, 0)->len);
	assert_int_equal(tu_get_be32(buf + sb + 8 + 2 + al + 4 + 16 + 4 + 4 + 16), 32);

#define P(w, o, v, c) p[np++] = (patch){ w, o, v, c }
	P("bodyLen 0x7FFFFFFF", pb - 4, 0x7FFFFFFF, WKS_ERR_LIMIT);
	P("bodyLen 0", pb - 4, 0, WKS_ERR_FORMAT);
	P("bodyLen -1", pb - 4, 0xFFFFFFFF, WKS_ERR_FORMAT);
	P("bodyLen 0x80000000", pb - 4, 0x80000000, WKS_ERR_FORMAT);
	P("bodyLen +1 (past the end)", pb - 4, (uint32_t)d.ev[pk]->body_len + 1, WKS_ERR_FORMAT);
	P("certificate bodyLen 0x7FFFFFFF", cb - 4, 0x7FFFFFFF, WKS_ERR_LIMIT);
	P("secret bodyLen 0", sb - 4, 0, WKS_ERR_FORMAT);
	P("private encKeyLen 0x7FFFFFFF", pb + 52, 0x7FFFFFFF, WKS_ERR_LIMIT);
	P("private encKeyLen -1", pb + 52, 0xFFFFFFFF, WKS_ERR_FORMAT);
	P("private encKeyLen past the body", pb + 52, 100000, WKS_ERR_FORMAT);
	P("secret encKeyLen 0x7FFFFFFF", sb + 8 + 2 + al + 4 + 16 + 4 + 4 + 16, 0x7FFFFFFF,
	  WKS_ERR_LIMIT);
	P("secret encKeyLen -1", sb + 8 + 2 + al + 4 + 16 + 4 + 4 + 16, 0xFFFFFFFF,
	  WKS_ERR_FORMAT);
	P("chain certLen 0x7FFFFFFF", pb + 67 + E, 0x7FFFFFFF, WKS_ERR_LIMIT);
	P("chain certLen -1", pb + 67 + E, 0xFFFFFFFF, WKS_ERR_FORMAT);
	P("chain certLen 0", pb + 67 + E, 0, WKS_ERR_FORMAT);
	P("certificate entry certLen 0x7FFFFFFF", cb + 15, 0x7FFFFFFF, WKS_ERR_LIMIT);
	P("certificate entry certLen -2", cb + 15, 0xFFFFFFFE, WKS_ERR_FORMAT);
	P("chainCount 1000000", pb + 56 + E, 1000000, WKS_ERR_LIMIT);
	P("chainCount 0x7FFFFFFF", pb + 56 + E, 0x7FFFFFFF, WKS_ERR_LIMIT);
	P("chainCount -1", pb + 56 + E, 0xFFFFFFFF, WKS_ERR_FORMAT);
	P("chainCount 3 (one too many)", pb + 56 + E, 3, WKS_ERR_FORMAT);
	P("private kdfSaltLen 15", pb + 8, 15, WKS_ERR_FORMAT);
	P("private ivLen 17", pb + 32, 17, WKS_ERR_FORMAT);
	P("private entry macLen 0x7FFFFFFF", pb + d.ev[pk]->mac.off - 4, 0x7FFFFFFF,
	  WKS_ERR_FORMAT);
	P("secret entry macLen 63", sb + d.ev[sk]->mac.off - 4, 63, WKS_ERR_FORMAT);
	P("trailer macLen 0x7FFFFFFF", len - 68, 0x7FFFFFFF, WKS_ERR_FORMAT);
	P("trailer saltLen 17", len - 92, 17, WKS_ERR_FORMAT);
	P("entryCount 0x7FFFFFFF", 8, 0x7FFFFFFF, WKS_ERR_FORMAT);
	P("entryCount -1", 8, 0xFFFFFFFF, WKS_ERR_FORMAT);
	P("entryCount 2 (one too few)", 8, 2, WKS_ERR_FORMAT);
	P("typeId 4", d.pos[0].offset, 4, WKS_ERR_FORMAT);
	P("typeId 0", d.pos[0].offset, 0, WKS_ERR_FORMAT);
	P("typeId -1", d.pos[0].offset, 0xFFFFFFFF, WKS_ERR_FORMAT);
	P("magic", 0, 0xFEEDFEED, WKS_ERR_FORMAT);
	P("version 2", 4, 2, WKS_ERR_FORMAT);
	P("version 0", 4, 0, WKS_ERR_FORMAT);
#undef P
	assert_true(np <= sizeof(p) / sizeof(p[0]));

	TU_OK(set_cert(ld, "keep", C(C_CA_ECC, 0)));
	for (i = 0; i < np; i++) {
		uint8_t *img = dup_buf(buf, len);
		int r;

		tu_put_be32(img + p[i].off, p[i].value);
		/* without a password, with one (stale MAC: parse errors come
		 * first), and with the store MAC recomputed */
		r = wks_store_load_buffer(ld, img, len, NULL, 0);
		if (r != p[i].want)
			fail_msg("%s (no password): got %d (%s), want %d", p[i].what, r,
			         wks_error_detail(), p[i].want);
		r = wks_store_load_buffer(ld, img, len, PW, PWL);
		if (r != p[i].want)
			fail_msg("%s (stale MAC): got %d (%s), want %d", p[i].what, r,
			         wks_error_detail(), p[i].want);
		if (p[i].off < len - 68 && p[i].off != len - 92) {
			tu_restamp(img, len, PW);
			r = wks_store_load_buffer(ld, img, len, PW, PWL);
			if (r != p[i].want)
				fail_msg("%s (restamped): got %d (%s), want %d", p[i].what, r,
				         wks_error_detail(), p[i].want);
		}
		free(img);
		expect_aliases(ld, keep, 1);
	}
	/* huge lengths under a huge maxEntrySize: checked against the bytes
	 * left, so truncation (FORMAT) and no 2 GiB allocation */
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxEntrySize", "2147483647"));
	for (i = 0; i < np; i++) {
		uint8_t *img;

		if (p[i].value != 0x7FFFFFFF || p[i].want != WKS_ERR_LIMIT ||
		    strncmp(p[i].what, "chainCount", 10) == 0)
			continue;
		img = dup_buf(buf, len);
		tu_put_be32(img + p[i].off, p[i].value);
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(ld, img, len, NULL, 0));
		free(img);
	}
	TU_OK(wks_store_set_property(ld, "wolfjce.wks.maxCertChainLength", "2147483647"));
	{
		uint8_t *img = dup_buf(buf, len);

		tu_put_be32(img + pb + 56 + E, 0x7FFFFFFF);
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(ld, img, len, NULL, 0));
		free(img);
	}
	/* bytes after a body's last field, certificate type "X.510" */
	{
		uint8_t *img = dup_buf(buf, len);
		size_t t = cb + 8 + 2; /* "X.509" of the certificate entry */

		assert_memory_equal(img + t, "X.509", 5);
		img[t + 4] = '0';
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(ld, img, len, NULL, 0));
		img[t + 4] = '9';
		img[d.pos[pk].offset + 6] ^= 0x80; /* alias "pk" -> invalid lead */
		img[d.pos[pk].offset + 6] |= 0xF0;
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(ld, img, len, NULL, 0));
		free(img);
	}
	expect_aliases(ld, keep, 1);
	decoded_free(&d);
	wks_free(buf);
	wks_store_free(ld);
	wks_store_free(st);
}

/* "Invalid argument: NULL where not allowed"; "Out-parameters are set to
 * NULL / 0 on failure".  All violations are collected, then reported. */
static char g_soft[2048];

static void soft(int ok, const char *what)
{
	if (!ok && strlen(g_soft) + strlen(what) + 3 < sizeof(g_soft)) {
		strcat(g_soft, what);
		strcat(g_soft, "; ");
	}
}

#define SOFT_RC(want, call) soft((call) == (want), #call " returns " #want)

static void test_null_arguments(void **state)
{
	wks_store *st = tu_store_fast();
	wks_key *k = (wks_key *)1;
	uint8_t *buf = (uint8_t *)1;
	size_t len = 1, cc = 1;
	char **a = (char **)1;
	char *al = (char *)1;
	int64_t t = 1;
#ifdef WKS_CRYPTO_OPENSSL
	EVP_PKEY *pk = (EVP_PKEY *)1;
	X509 *x = (X509 *)1;
#endif
	static const uint8_t key16[16] = { 1 };

	(void)state;
	g_soft[0] = 0;
	TU_OK(wks_store_set_secret_key(st, "s", "AES", key16, 16, PW, PWL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_get_key(NULL, st, "s", PW, PWL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_get_key(&k, NULL, "s", PW, PWL));
	soft(k == NULL, "get_key(st NULL) clears *out");
	k = (wks_key *)1;
	SOFT_RC(WKS_ERR_INVALID, wks_store_get_key(&k, st, NULL, PW, PWL));
	soft(k == NULL, "get_key(alias NULL) clears *out");
#ifdef WKS_CRYPTO_OPENSSL
	SOFT_RC(WKS_ERR_INVALID, wks_store_get_pkey(&pk, st, NULL, PW, PWL));
	soft(pk == NULL, "get_pkey(alias NULL) clears *out");
#endif
	SOFT_RC(WKS_ERR_INVALID, wks_store_save_buffer(st, NULL, &len, PW, PWL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_save_buffer(NULL, &buf, &len, PW, PWL));
	soft(buf == NULL && len == 0, "save_buffer(st NULL) clears *out, *out_len");
	SOFT_RC(WKS_ERR_INVALID, wks_store_load_buffer(NULL, key16, 16, PW, PWL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_load_buffer(st, NULL, 100, PW, PWL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_load_file(st, NULL, PW, PWL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_save_file(st, NULL, PW, PWL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_aliases(NULL, &len, st));
	len = 1;
	SOFT_RC(WKS_ERR_INVALID, wks_store_aliases(&a, &len, NULL));
	soft(a == NULL && len == 0, "aliases(st NULL) clears *out, *count");
	SOFT_RC(WKS_ERR_INVALID, wks_store_creation_time(NULL, st, "s"));
	SOFT_RC(WKS_ERR_INVALID, wks_store_creation_time(&t, st, NULL));
	soft(t == 0, "creation_time(alias NULL) clears *out_ms");
	SOFT_RC(WKS_ERR_INVALID, wks_store_cert_count(NULL, st, "s"));
	SOFT_RC(WKS_ERR_INVALID, wks_store_cert_count(&cc, st, NULL));
	soft(cc == 0, "cert_count(alias NULL) clears *out");
	cc = 1;
	SOFT_RC(WKS_ERR_NOTFOUND, wks_store_cert_count(&cc, st, "absent"));
	soft(cc == 0, "cert_count(absent) clears *out");
	t = 1;
	SOFT_RC(WKS_ERR_NOTFOUND, wks_store_creation_time(&t, st, "absent"));
	soft(t == 0, "creation_time(absent) clears *out_ms");
	SOFT_RC(WKS_ERR_INVALID, wks_store_get_cert_der(NULL, &len, st, "s", 0));
#ifdef WKS_CRYPTO_OPENSSL
	SOFT_RC(WKS_ERR_INVALID, wks_store_get_cert(NULL, st, "s", 0));
	SOFT_RC(WKS_ERR_INVALID, wks_store_get_cert(&x, st, NULL, 0));
	soft(x == NULL, "get_cert(alias NULL) clears *out");
#endif
	SOFT_RC(WKS_ERR_INVALID, wks_store_find_cert_alias(&al, st, NULL, 10));
	soft(al == NULL, "find_cert_alias(der NULL) clears *out");
	al = (char *)1;
	SOFT_RC(WKS_ERR_INVALID, wks_store_find_cert_alias(&al, NULL, key16, 16));
	soft(al == NULL, "find_cert_alias(st NULL) clears *out");
	SOFT_RC(WKS_ERR_INVALID, wks_store_find_cert_alias(NULL, st, key16, 16));
	SOFT_RC(WKS_ERR_INVALID, wks_store_set_cert_der(st, "c", NULL, 10));
#ifdef WKS_CRYPTO_OPENSSL
	SOFT_RC(WKS_ERR_INVALID, wks_store_set_cert(st, "c", NULL));
#endif
	SOFT_RC(WKS_ERR_INVALID, wks_store_set_cert_der(NULL, "c", C(C_CA, 0)->der,
	                                                 C(C_CA, 0)->len));
	SOFT_RC(WKS_ERR_INVALID, wks_store_set_secret_key(NULL, "s", "AES", key16, 16, PW, PWL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_set_private_key(st, "k", NULL, 10, NULL, NULL, 0,
	                                                    PW, PWL));
#ifdef WKS_CRYPTO_OPENSSL
	SOFT_RC(WKS_ERR_INVALID, wks_store_set_pkey(st, "k", NULL, NULL, 0, PW, PWL));
#endif
	SOFT_RC(WKS_ERR_INVALID, wks_store_delete(st, NULL));
	SOFT_RC(WKS_ERR_INVALID, wks_store_delete(NULL, "s"));
	soft(wks_store_entry_type(st, NULL) == WKS_ENTRY_NONE, "entry_type(NULL) is NONE");
	/* free functions ignore NULL */
	wks_key_free(NULL);
	wks_free(NULL);
	wks_aliases_free(NULL);
	wks_store_free(NULL);
	assert_int_equal(wks_store_size(st), 1);
	wks_store_free(st);
	if (g_soft[0])
		fail_msg("violations: %s", g_soft);
}

static void test_empty_store_round_trip(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	uint8_t *buf;
	size_t len;
	char **a = NULL;
	size_t n = 9;

	(void)state;
	save(st, &buf, &len);
	assert_int_equal(len, 104);
	assert_int_equal(tu_get_be32(buf), 7);
	assert_int_equal(tu_get_be32(buf + 4), 1);
	assert_int_equal(tu_get_be32(buf + 8), 0);
	TU_OK(set_cert(ld, "x", C(C_CA, 0)));
	TU_OK(wks_store_load_buffer(ld, buf, len, PW, PWL));
	assert_int_equal(wks_store_size(ld), 0);
	TU_OK(wks_store_aliases(&a, &n, ld));
	assert_int_equal(n, 0);
	assert_null(a[0]);
	wks_aliases_free(a);
	wks_free(buf);
	wks_store_free(ld);
	wks_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_default_iterations_210000),
		cmocka_unit_test(test_iteration_property),
		cmocka_unit_test(test_min_iterations_on_load),
		cmocka_unit_test(test_max_iterations),
		cmocka_unit_test(test_wrong_store_password),
		cmocka_unit_test(test_wrong_key_password),
		cmocka_unit_test(test_empty_password),
		cmocka_unit_test(test_load_without_password_then_get_key),
		cmocka_unit_test(test_require_integrity),
		cmocka_unit_test(test_mismatched_key_cert),
		cmocka_unit_test(test_chain_rules),
		cmocka_unit_test(test_chain_limit),
		cmocka_unit_test(test_entry_size_limit),
		cmocka_unit_test(test_overwrite_rules),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_aliases_case_and_special),
		cmocka_unit_test(test_long_alias),
		cmocka_unit_test(test_secret_key_args),
		cmocka_unit_test(test_failed_load_leaves_store),
		cmocka_unit_test(test_round_trip_every_kind),
#ifdef WKS_CRYPTO_OPENSSL
		cmocka_unit_test(test_get_pkey_set_pkey),
#endif
		cmocka_unit_test(test_queries),
		cmocka_unit_test(test_crafted_streams),
		cmocka_unit_test(test_empty_store_round_trip),
		cmocka_unit_test(test_null_arguments),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
