/* KEK cache through the public API: the eight cache behaviours of wolfJCE's
 * JUnit suite (spec 9.1, with libwks's precise invalidation where wolfJCE
 * clears everything), the lifecycle (load, delete, overwrite, rename,
 * password change, clear), expiry by the properties, identical results
 * cached and uncached, concurrency, and no plaintext key at rest. */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tu_ossl.h"

#include "cache/cache.h"
#include "config/config.h"
#include "format/format.h"
#include "store/store_int.h"

#define PW "key password"
#define PW_LEN (sizeof(PW) - 1)
#define STORE_PW "store password"

/* ---- keys ------------------------------------------------------------------ */

#ifdef WKS_CRYPTO_OPENSSL
static EVP_PKEY *g_key;
static X509 *g_cert;

static X509 *self_signed(EVP_PKEY *key)
{
	X509 *x = X509_new();
	X509_NAME *name;

	assert_non_null(x);
	assert_true(X509_set_version(x, 2));
	assert_true(ASN1_INTEGER_set(X509_get_serialNumber(x), 7));
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), 0));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(x), 86400));
	assert_true(X509_set_pubkey(x, key));
	name = X509_get_subject_name(x);
	assert_true(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                                       (const unsigned char *)"cache test",
	                                       -1, -1, 0));
	assert_true(X509_set_issuer_name(x, name));
	assert_true(X509_sign(x, key, EVP_sha256()));
	return x;
}

static int group_setup(void **state)
{
	(void)state;
	g_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!g_key)
		return -1;
	g_cert = self_signed(g_key);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	X509_free(g_cert);
	EVP_PKEY_free(g_key);
	wks_cache_reaper(0);
	return 0;
}

static void add_private(wks_store *st, const char *alias, const char *pw)
{
	TU_OK(wks_store_set_pkey(st, alias, g_key, &g_cert, 1, pw, strlen(pw)));
}

static int cert_der(uint8_t *der)
{
	uint8_t *p = der;

	return i2d_X509(g_cert, &p);
}
#else
/* wolfCrypt build: a P-256 key and its certificate from the shared
 * inputs (wolfSSL's ecc-key.pem and server-ecc-cert.pem). */
static tu_der *g_p8, *g_crt;

static int group_setup(void **state)
{
	(void)state;
	assert_int_equal(tu_pem_ders(&g_p8, tu_input("ecc-key.pem"),
	                             "PRIVATE KEY"), 1);
	assert_int_equal(tu_pem_ders(&g_crt, tu_input("server-ecc-cert.pem"),
	                             "CERTIFICATE"), 1);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	tu_ders_free(g_p8, 1);
	tu_ders_free(g_crt, 1);
	wks_cache_reaper(0);
	return 0;
}

static void add_private(wks_store *st, const char *alias, const char *pw)
{
	const uint8_t *c[1] = { g_crt[0].der };
	size_t l[1] = { g_crt[0].len };

	TU_OK(wks_store_set_private_key(st, alias, g_p8[0].der, g_p8[0].len, c,
	                                l, 1, pw, strlen(pw)));
}

static int cert_der(uint8_t *der)
{
	memcpy(der, g_crt[0].der, g_crt[0].len);
	return (int)g_crt[0].len;
}
#endif

static void add_secret(wks_store *st, const char *alias, const char *pw)
{
	uint8_t k[32];

	assert_int_equal(RAND_bytes(k, sizeof(k)), 1);
	TU_OK(wks_store_set_secret_key(st, alias, "AES", k, sizeof(k), pw,
	                               strlen(pw)));
}

/* A fast store (10000 iterations) with the cache on. */
static wks_store *cached_store(void)
{
	wks_store *st = tu_store_fast();

	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
	                             "true"));
	return st;
}

static wks_cache_stats stats(wks_store *st)
{
	wks_cache_stats s;

	TU_OK(wks_store_cache_stats(&s, st));
	return s;
}

/* get_key, returning a malloc'ed copy of the key bytes. */
static uint8_t *get(wks_store *st, const char *alias, const char *pw,
                    size_t *len)
{
	wks_key *k = NULL;
	const uint8_t *d;
	uint8_t *copy;

	TU_OK(wks_store_get_key(&k, st, alias, pw, strlen(pw)));
	d = wks_key_data(k, len);
	copy = malloc(*len);
	assert_non_null(copy);
	memcpy(copy, d, *len);
	wks_key_free(k);
	return copy;
}

static void get_ok(wks_store *st, const char *alias)
{
	size_t n;

	free(get(st, alias, PW, &n));
}

static void get_fails(wks_store *st, const char *alias, const char *pw)
{
	wks_key *k = (wks_key *)1;

	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&k, st, alias, pw,
	                                               strlen(pw)));
	assert_null(k);
}

/* ---- spec 9.1: what wolfJCE's JUnit suite checks ---------------------------- */

/* 1. Disabled by default. */
static void test_cache_store__disabled_by_default(void **state)
{
	wks_store *st = tu_store_fast();
	char v[16];

	(void)state;
	TU_OK(wks_get_property(v, sizeof(v), st,
	                       "wolfjce.keystore.kekCacheEnabled"));
	assert_string_equal(v, "false");
	add_private(st, "k", PW);
	get_ok(st, "k");
	get_ok(st, "k");
	assert_int_equal(stats(st).size, 0);
	assert_int_equal(stats(st).hits, 0);
	assert_int_equal(stats(st).derivations, 2);
	wks_store_free(st);
}

static void one_entry_then_hit(void (*add)(wks_store *, const char *,
                                           const char *))
{
	wks_store *st = cached_store();
	uint8_t *a, *b;
	size_t al, bl;

	add(st, "k", PW);
	assert_int_equal(stats(st).size, 0); /* setting never caches */
	a = get(st, "k", PW, &al);
	assert_int_equal(stats(st).size, 1);
	assert_int_equal(stats(st).misses, 1);
	b = get(st, "k", PW, &bl);
	assert_int_equal(stats(st).size, 1);
	assert_int_equal(stats(st).hits, 1);
	assert_int_equal(stats(st).derivations, 1);
	assert_int_equal(al, bl);
	assert_memory_equal(a, b, al);
	free(a);
	free(b);
	wks_store_free(st);
}

/* 2. Private key: one entry, then a hit returning an equal key. */
static void test_cache_store__private_key_hit(void **state)
{
	(void)state;
	one_entry_then_hit(add_private);
}

/* 3. Same for an AES-256 secret key. */
static void test_cache_store__secret_key_hit(void **state)
{
	(void)state;
	one_entry_then_hit(add_secret);
}

/* 4. Delete of one of two cached key entries.  wolfJCE empties the whole
 * cache; libwks drops only the deleted entry's key, and the other key is
 * still served from the cache. */
static void test_cache_store__delete_one_of_two(void **state)
{
	wks_store *st = cached_store();

	(void)state;
	add_private(st, "a", PW);
	add_secret(st, "b", PW);
	get_ok(st, "a");
	get_ok(st, "b");
	assert_int_equal(stats(st).size, 2);
	TU_OK(wks_store_delete(st, "a"));
	assert_int_equal(stats(st).size, 1);
	assert_int_equal(stats(st).invalidations, 1);
	get_ok(st, "b");
	assert_int_equal(stats(st).size, 1);
	assert_int_equal(stats(st).derivations, 2); /* b was a hit */
	wks_store_free(st);
}

/* 5. Overwrite of one of two cached key entries: its keys go, the other
 * stays; the new entry caches under its own password. */
static void test_cache_store__overwrite_one_of_two(void **state)
{
	wks_store *st = cached_store();

	(void)state;
	add_private(st, "a", PW);
	add_secret(st, "b", PW);
	get_ok(st, "a");
	get_ok(st, "b");
	add_secret(st, "a", "new password");
	assert_int_equal(stats(st).size, 1);
	get_ok(st, "b");
	assert_int_equal(stats(st).derivations, 2);
	get_fails(st, "a", PW); /* the old password's key is gone */
	{
		size_t n;

		free(get(st, "a", "new password", &n));
	}
	assert_int_equal(stats(st).size, 2);
	wks_store_free(st);
}

/* 6. Load (of a stored copy, into the same instance) empties the cache. */
static void test_cache_store__load_clears(void **state)
{
	wks_store *st = cached_store();
	uint8_t *file = NULL;
	size_t len = 0;

	(void)state;
	add_private(st, "a", PW);
	add_secret(st, "b", PW);
	get_ok(st, "a");
	get_ok(st, "b");
	TU_OK(wks_store_save_buffer(st, &file, &len, STORE_PW, strlen(STORE_PW)));
	assert_int_equal(stats(st).size, 2); /* saving changes nothing */
	TU_OK(wks_store_load_buffer(st, file, len, STORE_PW, strlen(STORE_PW)));
	assert_int_equal(stats(st).size, 0);
	get_ok(st, "a");
	assert_int_equal(stats(st).size, 1);
	/* a failing load clears it too */
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_load_buffer(st, file, len, "bad", 3));
	assert_int_equal(stats(st).size, 0);
	get_ok(st, "a");
	assert_int_equal(stats(st).size, 1);
	/* and a load from a file */
	{
		char *dir = tu_tmpdir(), path[4096];

		snprintf(path, sizeof(path), "%s/s.wks", dir);
		tu_write_file(path, file, len);
		TU_OK(wks_store_load_file(st, path, STORE_PW, strlen(STORE_PW)));
		assert_int_equal(stats(st).size, 0);
		tu_rmtree(dir);
		free(dir);
	}
	wks_free(file);
	wks_store_free(st);
}

/* 7. A wrong password after a cached success fails; the right one still
 * works and gives an equal key. */
static void test_cache_store__wrong_password_after_hit(void **state)
{
	wks_store *st = cached_store();
	uint8_t *a, *b;
	size_t al, bl;

	(void)state;
	add_private(st, "k", PW);
	a = get(st, "k", PW, &al);
	get_fails(st, "k", "key passworD");
	assert_int_equal(stats(st).size, 1);
	assert_int_equal(stats(st).invalidations, 0);
	b = get(st, "k", PW, &bl);
	assert_int_equal(al, bl);
	assert_memory_equal(a, b, al);
	assert_int_equal(stats(st).hits, 1);
	free(a);
	free(b);
	wks_store_free(st);
}

/* 8. Two key entries with the same password: two cache entries. */
static void test_cache_store__same_password_two_entries(void **state)
{
	wks_store *st = cached_store();
	int i;

	(void)state;
	add_private(st, "a", PW);
	add_private(st, "b", PW);
	get_ok(st, "a");
	get_ok(st, "b");
	assert_int_equal(stats(st).size, 2);
	for (i = 0; i < 5; i++) {
		get_ok(st, "a");
		get_ok(st, "b");
	}
	assert_int_equal(stats(st).size, 2);
	assert_int_equal(stats(st).inserts, 2);
	assert_int_equal(stats(st).hits, 10);
	wks_store_free(st);
}

/* ---- lifecycle beyond the JUnit suite ------------------------------------------ */

static void test_cache_store__explicit_clear(void **state)
{
	wks_store *st = cached_store();

	(void)state;
	add_private(st, "a", PW);
	add_secret(st, "b", PW);
	get_ok(st, "a");
	get_ok(st, "b");
	TU_OK(wks_store_cache_clear(st));
	assert_int_equal(stats(st).size, 0);
	get_ok(st, "a");
	assert_int_equal(stats(st).derivations, 3);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_clear(NULL));
	wks_store_free(st);
}

/* Precise invalidation: only the keys of the entry that changed go. */
static void test_cache_store__precise_invalidation(void **state)
{
	wks_store *st = cached_store();
	uint8_t der[4096];
	int der_len;

	(void)state;
	add_private(st, "a", PW);
	add_secret(st, "b", PW);
	add_secret(st, "c", PW);
	get_ok(st, "a");
	get_ok(st, "b");
	get_ok(st, "c");
	/* deleting or adding certificates, or unknown aliases: nothing */
	der_len = cert_der(der);
	assert_true(der_len > 0);
	TU_OK(wks_store_set_cert_der(st, "t", der, (size_t)der_len));
	TU_OK(wks_store_delete(st, "t"));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_delete(st, "absent"));
	TU_EXPECT(WKS_ERR_WRONG_TYPE,
	          wks_store_set_cert_der(st, "b", der, (size_t)der_len));
	assert_int_equal(stats(st).size, 3);
	/* a rename drops the renamed entry's key only */
	TU_OK(wks_store_rename(st, "b", "b2"));
	assert_int_equal(stats(st).size, 2);
	get_ok(st, "b2");
	/* so does a password change, and the old password no longer works */
	TU_OK(wks_store_change_key_password(st, "c", PW, PW_LEN, "other", 5));
	get_fails(st, "c", PW);
	{
		size_t n;

		free(get(st, "c", "other", &n));
	}
	get_ok(st, "a");
	get_ok(st, "b2");
	assert_int_equal(stats(st).size, 3);
	TU_OK(wks_store_delete(st, "c"));
	assert_int_equal(stats(st).size, 2);
	wks_store_free(st);
}

/* Cached, uncached and first-call results are the same bytes. */
static void test_cache_store__identical_results(void **state)
{
	wks_store *st = tu_store_fast();
	const char *aliases[2] = { "priv", "sec" };
	uint8_t *off, *miss, *hit;
	size_t ol, ml, hl;
	int i;

	(void)state;
	add_private(st, "priv", PW);
	add_secret(st, "sec", PW);
	for (i = 0; i < 2; i++) {
		TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
		                             "false"));
		off = get(st, aliases[i], PW, &ol);
		TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
		                             "true"));
		miss = get(st, aliases[i], PW, &ml);
		hit = get(st, aliases[i], PW, &hl);
		assert_int_equal(ol, ml);
		assert_int_equal(ol, hl);
		assert_memory_equal(off, miss, ol);
		assert_memory_equal(off, hit, ol);
		free(off);
		free(miss);
		free(hit);
	}
	assert_int_equal(stats(st).hits, 2);
	wks_store_free(st);
}

/* ---- properties and the clock ------------------------------------------------ */

static uint64_t test_now(void *ctx)
{
	return atomic_load((_Atomic uint64_t *)ctx);
}

/* A cached key that no longer checks out is removed, and get_key derives
 * and verifies again: the store-level form of spec 9's "cached DK fails
 * the entry MAC" (hits are trusted, so damage is caught by the shielded
 * value's check instead, before the key is used). */
static void test_cache_store__damaged_cached_key_removed(void **state)
{
	wks_store *st = cached_store();
	wks_cache_stats s;
	uint8_t *a, *b;
	size_t na, nb;

	(void)state;
	add_secret(st, "k", PW);
	a = get(st, "k", PW, &na);
	assert_int_equal(stats(st).size, 1);
	wks__cache_test_corrupt(st->cache);
	b = get(st, "k", PW, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na);
	s = stats(st);
	assert_int_equal(s.invalidations, 1);
	assert_int_equal(s.derivations, 2);
	assert_int_equal(s.size, 1);
	free(a);
	free(b);
	wks_store_free(st);
}

static void test_cache_store__ttl_property(void **state)
{
	wks_store *st = cached_store();
	_Atomic uint64_t now = 50000;

	(void)state;
	TU_OK(wks_store_set_clock(st, test_now, &now));
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheTtlSec", "2"));
	add_secret(st, "k", PW);
	get_ok(st, "k");
	atomic_store(&now, 51999);
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 1);
	atomic_store(&now, 52000);
	assert_int_equal(stats(st).size, 0); /* swept by any operation */
	assert_int_equal(stats(st).expirations, 1);
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 2);
	/* a bad TTL falls back to 300 s, with leading/trailing blanks ok */
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheTtlSec", "0"));
	atomic_store(&now, 52000 + 299999);
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 2);
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheTtlSec", " 1 "));
	atomic_store(&now, 52000 + 300000);
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 3);
	/* back to the real clock (from empty: test times mean nothing) */
	TU_OK(wks_store_cache_clear(st));
	TU_OK(wks_store_set_clock(st, NULL, NULL));
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheTtlSec", NULL));
	get_ok(st, "k");
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 4);
	wks_store_free(st);
}

static void test_cache_store__idle_property(void **state)
{
	wks_store *st = cached_store();
	_Atomic uint64_t now = 0;

	(void)state;
	TU_OK(wks_store_set_clock(st, test_now, &now));
	TU_OK(wks_store_set_property(st, "libwks.keystore.kekCacheIdleSec", "1"));
	add_secret(st, "k", PW);
	get_ok(st, "k");
	atomic_store(&now, 900);
	get_ok(st, "k");
	atomic_store(&now, 1800);
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 1);
	atomic_store(&now, 2800);
	TU_OK(wks_store_cache_sweep(st));
	assert_int_equal(stats(st).size, 0);
	assert_int_equal(stats(st).expirations, 1);
	wks_store_free(st);
}

static void test_cache_store__max_entries_property(void **state)
{
	wks_store *st = cached_store();
	_Atomic uint64_t now = 0;
	int i;

	(void)state;
	TU_OK(wks_store_set_clock(st, test_now, &now));
	TU_OK(wks_store_set_property(st, "libwks.keystore.kekCacheMaxEntries",
	                             "2"));
	add_secret(st, "a", PW);
	add_secret(st, "b", PW);
	add_secret(st, "c", PW);
	for (i = 0; i < 3; i++) {
		atomic_fetch_add(&now, 1);
		get_ok(st, i == 0 ? "a" : i == 1 ? "b" : "c");
	}
	assert_int_equal(stats(st).size, 2);
	assert_int_equal(stats(st).evictions, 1);
	atomic_fetch_add(&now, 1);
	get_ok(st, "c");
	atomic_fetch_add(&now, 1);
	get_ok(st, "b");
	assert_int_equal(stats(st).derivations, 3);
	atomic_fetch_add(&now, 1);
	get_ok(st, "a"); /* evicts c, the least recently used */
	atomic_fetch_add(&now, 1);
	get_ok(st, "b");
	assert_int_equal(stats(st).derivations, 4);
	wks_store_free(st);
}

static void test_cache_store__disabled_mid_life(void **state)
{
	wks_store *st = cached_store();

	(void)state;
	add_secret(st, "k", PW);
	get_ok(st, "k");
	TU_OK(wks_set_property("wolfjce.keystore.kekCacheEnabled", "true"));
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
	                             "false"));
	get_ok(st, "k");
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 3);
	assert_int_equal(stats(st).size, 1); /* kept until a clear */
	/* unset on the store: the process-wide "true" applies */
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled", NULL));
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 3);
	TU_OK(wks_set_property("wolfjce.keystore.kekCacheEnabled", NULL));
	get_ok(st, "k");
	assert_int_equal(stats(st).derivations, 4);
	wks_store_free(st);
}

/* ---- memory ------------------------------------------------------------------ */

/* Find the derived key of every key entry (recomputed from the saved file
 * with PBKDF2), check it is the real one (it verifies the entry MAC), and
 * check that no 16-byte piece of it is anywhere in the cache's memory. */
static void test_cache_store__no_plaintext_dk_at_rest(void **state)
{
	wks_store *st = cached_store();
	wks_entry **v = NULL;
	wks_file_info fi;
	wks_settings cfg;
	uint8_t *file = NULL, dk[WKS_DK_LEN], mac[64];
	unsigned int mac_len = 0;
	size_t len = 0, n = 0, i, j;

	(void)state;
	add_private(st, "a", PW);
	add_secret(st, "b", PW);
	get_ok(st, "a");
	get_ok(st, "b");
	get_ok(st, "a");
	assert_int_equal(stats(st).size, 2);
	TU_OK(wks_store_save_buffer(st, &file, &len, STORE_PW, strlen(STORE_PW)));
	wks__settings_get(&cfg, NULL);
	TU_OK(wks__decode(&v, &n, NULL, &fi, file, len, &cfg));
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		TU_OK(wks__pbkdf2(dk, sizeof(dk), (const uint8_t *)PW, PW_LEN,
		                  v[i]->salt, WKS_SALT_LEN,
		                  (uint32_t)v[i]->iterations, WKS_KDF_OPENSSL, 1));
		assert_non_null(HMAC(EVP_sha512(), dk + 32, 64, v[i]->body,
		                     v[i]->mac_input_len, mac, &mac_len));
		assert_memory_equal(mac, v[i]->body + v[i]->mac.off, 64);
		for (j = 0; j + 16 <= WKS_DK_LEN; j += 16)
			assert_false(wks__cache_test_find_all(dk + j, 16));
		/* nor the password */
		assert_false(wks__cache_test_find_all((const uint8_t *)PW, PW_LEN));
	}
	/* the search does see the cache (zeros, at least, are there) */
	{
		uint8_t z[32] = { 0 };

		assert_true(wks__cache_test_find_all(z, sizeof(z)));
	}
	wks__entries_free(v, n);
	wks_free(file);
	wks_store_free(st);
}

/* ---- concurrency ---------------------------------------------------------------- */

#define NT 8

typedef struct {
	wks_store *st;
	const char *alias;
	const char *pw;
	pthread_barrier_t *bar;
	int rc;
	int got_key;
} getter;

static void *get_thread(void *arg)
{
	getter *g = arg;
	wks_key *k = NULL;

	pthread_barrier_wait(g->bar);
	g->rc = wks_store_get_key(&k, g->st, g->alias, g->pw, strlen(g->pw));
	g->got_key = k != NULL;
	wks_key_free(k);
	return NULL;
}

static void run_getters(getter *g, int n)
{
	pthread_t t[NT];
	pthread_barrier_t bar;
	int i;

	pthread_barrier_init(&bar, NULL, (unsigned)n);
	for (i = 0; i < n; i++) {
		g[i].bar = &bar;
		assert_int_equal(pthread_create(&t[i], NULL, get_thread, &g[i]), 0);
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
}

/* N threads missing the same entry at once: one PBKDF2 run. */
static void test_cache_store__single_flight(void **state)
{
	wks_store *st = cached_store();
	getter g[NT];
	int i;

	(void)state;
	/* enough iterations for the threads to overlap (under valgrind, which
	 * runs one thread at a time and each iteration 50 times slower, a
	 * tenth: CI's valgrind stage, WKS_UNDER_VALGRIND) */
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount",
				     getenv("WKS_UNDER_VALGRIND") ? "20000" :
								   "200000"));
	add_secret(st, "k", PW);
	memset(g, 0, sizeof(g));
	for (i = 0; i < NT; i++) {
		g[i].st = st;
		g[i].alias = "k";
		g[i].pw = PW;
	}
	run_getters(g, NT);
	for (i = 0; i < NT; i++) {
		assert_int_equal(g[i].rc, WKS_OK);
		assert_true(g[i].got_key);
	}
	assert_int_equal(stats(st).derivations, 1);
	assert_int_equal(stats(st).hits, NT - 1);
	assert_int_equal(stats(st).size, 1);
	wks_store_free(st);
}

/* Right and wrong passwords at once: the wrong ones get no key. */
static void test_cache_store__concurrent_wrong_passwords(void **state)
{
	wks_store *st = cached_store();
	getter g[NT];
	int i;

	(void)state;
	add_private(st, "k", PW);
	memset(g, 0, sizeof(g));
	for (i = 0; i < NT; i++) {
		g[i].st = st;
		g[i].alias = "k";
		g[i].pw = i % 2 ? "wrong" : PW;
	}
	run_getters(g, NT);
	for (i = 0; i < NT; i++) {
		assert_int_equal(g[i].rc, i % 2 ? WKS_ERR_INTEGRITY : WKS_OK);
		assert_int_equal(g[i].got_key, !(i % 2));
	}
	assert_int_equal(stats(st).size, 1);
	wks_store_free(st);
}

typedef struct {
	wks_store *st;
	atomic_int stop;
	atomic_int bad;
} churn_ctx;

static void *churn_get(void *arg)
{
	churn_ctx *c = arg;
	wks_key *k;
	int rc;

	while (!atomic_load(&c->stop)) {
		k = NULL;
		rc = wks_store_get_key(&k, c->st, "a", PW, PW_LEN);
		/* absent for a moment, or present: never another error */
		if (rc != WKS_OK && rc != WKS_ERR_NOTFOUND)
			atomic_fetch_add(&c->bad, 1);
		wks_key_free(k);
		k = NULL;
		rc = wks_store_get_key(&k, c->st, "b", PW, PW_LEN);
		if (rc != WKS_OK)
			atomic_fetch_add(&c->bad, 1);
		wks_key_free(k);
	}
	return NULL;
}

/* get_key racing delete / re-add / clear / sweep, with the reaper on. */
static void test_cache_store__churn_with_reaper(void **state)
{
	churn_ctx c = { NULL, 0, 0 };
	pthread_t t[2];
	int i;

	(void)state;
	c.st = cached_store();
	TU_OK(wks_store_set_property(c.st, "libwks.keystore.kekCacheIdleSec", "1"));
	add_secret(c.st, "a", PW);
	add_secret(c.st, "b", PW);
	TU_OK(wks_cache_reaper(1));
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, churn_get, &c), 0);
	for (i = 0; i < 20; i++) {
		TU_OK(wks_store_delete(c.st, "a"));
		add_secret(c.st, "a", PW);
		if (i % 5 == 0)
			TU_OK(wks_store_cache_clear(c.st));
		TU_OK(wks_store_cache_sweep(c.st));
	}
	atomic_store(&c.stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(atomic_load(&c.bad), 0);
	assert_true(stats(c.st).size <= 2);
	wks_store_free(c.st);
	TU_OK(wks_cache_reaper(0));
}

/* Stores created and freed while the reaper sweeps them every ms. */
static void test_cache_store__free_while_reaping(void **state)
{
	_Atomic uint64_t now = 0;
	wks_store *st;
	int i;

	(void)state;
	TU_OK(wks_cache_reaper(1));
	for (i = 0; i < 20; i++) {
		st = cached_store();
		TU_OK(wks_store_set_clock(st, test_now, &now));
		TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheTtlSec",
		                             "1"));
		add_secret(st, "k", PW);
		get_ok(st, "k");
		atomic_fetch_add(&now, 1000); /* expired: the reaper may wipe it */
		wks_store_free(st);
		atomic_store(&now, 0);
	}
	TU_OK(wks_cache_reaper(0));
}

/* The reaper wipes an expired key of an idle store on time.  Stats would
 * sweep by itself, so the test watches the non-sweeping test counter. */
static void test_cache_store__reaper_on_time(void **state)
{
	wks_store *st = cached_store();
	_Atomic uint64_t now = 0;
	int i;

	(void)state;
	TU_OK(wks_store_set_clock(st, test_now, &now));
	TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheTtlSec", "1"));
	add_secret(st, "k", PW);
	get_ok(st, "k");
	atomic_store(&now, 5000);
	{
		struct timespec ts = { 0, 50 * 1000000L };

		nanosleep(&ts, NULL); /* nobody sweeps without the reaper */
	}
	assert_int_equal(wks__cache_test_count_all(), 1);
	TU_OK(wks_cache_reaper(20));
	for (i = 0; i < 200 && wks__cache_test_count_all() != 0; i++) {
		struct timespec ts = { 0, 10 * 1000000L };

		nanosleep(&ts, NULL);
	}
	TU_OK(wks_cache_reaper(0));
	assert_int_equal(wks__cache_test_count_all(), 0);
	assert_int_equal(stats(st).expirations, 1);
	wks_store_free(st);
}

/* ---- a get_key racing a removal of its entry (issue 12, item 5) -------------
 *
 * wks__store_test_after_lookup runs inside wks_store_get_key() right after
 * it has looked its entry up and before it derives and caches the key:
 * exactly where a load, delete or overwrite from another thread may land.
 * The get_key still returns the key (it started before the removal), but
 * the key of an entry that no longer exists must never be cached. */

typedef enum { RACE_LOAD, RACE_DELETE, RACE_DELETE_100_DROPS } race_kind;

static struct {
	race_kind kind;
	const uint8_t *saved;
	size_t saved_len;
	int calls;
} g_race;

static void race_hook(wks_store *st, const char *alias)
{
	int i;

	if (g_race.calls++)
		return; /* once */
	switch (g_race.kind) {
	case RACE_LOAD:
		TU_OK(wks_store_load_buffer(st, g_race.saved, g_race.saved_len,
		                            STORE_PW, strlen(STORE_PW)));
		break;
	case RACE_DELETE:
		TU_OK(wks_store_delete(st, alias));
		break;
	case RACE_DELETE_100_DROPS:
		TU_OK(wks_store_delete(st, alias));
		/* 100 more drops (each overwrite drops the replaced key) */
		for (i = 0; i < 100; i++)
			add_secret(st, "other", PW);
		break;
	}
}

static void race(race_kind kind)
{
	wks_store *st = cached_store();
	uint8_t *saved = NULL, *k1;
	size_t saved_len = 0, n;
	wks_cache_stats s;

	add_secret(st, "k", PW);
	add_secret(st, "other", PW);
	TU_OK(wks_store_save_buffer(st, &saved, &saved_len, STORE_PW,
	                            strlen(STORE_PW)));
	memset(&g_race, 0, sizeof(g_race));
	g_race.kind = kind;
	g_race.saved = saved;
	g_race.saved_len = saved_len;
	wks__store_test_after_lookup = race_hook;
	k1 = get(st, "k", PW, &n);
	wks__store_test_after_lookup = NULL;
	assert_int_equal(g_race.calls, 1);
	assert_int_equal(n, 32);
	free(k1);
	s = stats(st);
	assert_int_equal(s.derivations, 1);
	assert_int_equal(s.inserts, 0);
	assert_int_equal(s.size, 0);
	if (kind == RACE_LOAD) {
		/* The loaded entry is a new one: derived, then cached. */
		get_ok(st, "k");
		get_ok(st, "k");
		s = stats(st);
		assert_int_equal(s.derivations, 2);
		assert_int_equal(s.inserts, 1);
		assert_int_equal(s.size, 1);
	} else {
		TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_key(&(wks_key *){ NULL },
		                                              st, "k", PW, PW_LEN));
		assert_int_equal(stats(st).size, 0);
	}
	wks_free(saved);
	wks_store_free(st);
}

static void test_cache_store__load_after_lookup_not_cached(void **state)
{
	(void)state;
	race(RACE_LOAD);
}

static void test_cache_store__delete_after_lookup_not_cached(void **state)
{
	(void)state;
	race(RACE_DELETE);
}

static void test_cache_store__delete_and_100_drops_after_lookup(void **state)
{
	(void)state;
	race(RACE_DELETE_100_DROPS);
}

/* Drops of OTHER entries while a get_key derives do not cost it its
 * insert: the cache refuses only for its own entry's drop (or a clear, or
 * more drops than it remembers). */
static void other_drops_hook(wks_store *st, const char *alias)
{
	int i;

	(void)alias;
	if (g_race.calls++)
		return;
	for (i = 0; i < 100; i++) /* each overwrite drops "other"'s key */
		add_secret(st, "other", PW);
	TU_OK(wks_store_delete(st, "other"));
}

static void test_cache_store__other_drops_after_lookup_still_cached(
	void **state)
{
	wks_store *st = cached_store();
	uint8_t *k1;
	size_t n;
	wks_cache_stats s;

	(void)state;
	add_secret(st, "k", PW);
	add_secret(st, "other", PW);
	memset(&g_race, 0, sizeof(g_race));
	wks__store_test_after_lookup = other_drops_hook;
	k1 = get(st, "k", PW, &n);
	wks__store_test_after_lookup = NULL;
	assert_int_equal(g_race.calls, 1);
	free(k1);
	s = stats(st);
	assert_int_equal(s.inserts, 1);
	assert_int_equal(s.size, 1);
	get_ok(st, "k");
	assert_int_equal(stats(st).hits, s.hits + 1);
	wks_store_free(st);
}

#define T(name) cmocka_unit_test(name)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_cache_store__disabled_by_default),
		T(test_cache_store__private_key_hit),
		T(test_cache_store__secret_key_hit),
		T(test_cache_store__delete_one_of_two),
		T(test_cache_store__overwrite_one_of_two),
		T(test_cache_store__load_clears),
		T(test_cache_store__wrong_password_after_hit),
		T(test_cache_store__same_password_two_entries),
		T(test_cache_store__explicit_clear),
		T(test_cache_store__precise_invalidation),
		T(test_cache_store__identical_results),
		T(test_cache_store__damaged_cached_key_removed),
		T(test_cache_store__ttl_property),
		T(test_cache_store__idle_property),
		T(test_cache_store__max_entries_property),
		T(test_cache_store__disabled_mid_life),
		T(test_cache_store__no_plaintext_dk_at_rest),
		T(test_cache_store__single_flight),
		T(test_cache_store__concurrent_wrong_passwords),
		T(test_cache_store__churn_with_reaper),
		T(test_cache_store__free_while_reaping),
		T(test_cache_store__reaper_on_time),
		T(test_cache_store__load_after_lookup_not_cached),
		T(test_cache_store__delete_after_lookup_not_cached),
		T(test_cache_store__other_drops_after_lookup_still_cached),
		T(test_cache_store__delete_and_100_drops_after_lookup),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
