/* Store operations beyond wolfJCE's API: rename, change of a key
 * password, per-store properties, the error model. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "store/decode.h"

#define PW "store-password"
#define KP "key-password-1"
#define KP2 "key-password-2"

static const uint8_t secret[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
	14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };

static void add_private(wks_store *st, const char *alias)
{
	tu_der *key = NULL, *chain = NULL;
	size_t nk = tu_pem_ders(&key, tu_input("server-key.pem"), "PRIVATE KEY");
	size_t nc = tu_pem_ders(&chain, tu_input("server-cert-chain2.pem"),
	                        "CERTIFICATE");
	const uint8_t *ptrs[4];
	size_t lens[4], i;

	assert_int_equal(nk, 1);
	assert_true(nc >= 1 && nc <= 4);
	for (i = 0; i < nc; i++) {
		ptrs[i] = chain[i].der;
		lens[i] = chain[i].len;
	}
	TU_OK(wks_store_set_private_key(st, alias, key[0].der, key[0].len, ptrs,
	                                lens, nc, KP, strlen(KP)));
	tu_ders_free(key, nk);
	tu_ders_free(chain, nc);
}

static void test_store_ops__rename_keeps_entry(void **state)
{
	wks_store *st = tu_store_fast();
	wks_key *k = NULL;
	int64_t t0, t1;
	const uint8_t *d;
	size_t len;

	(void)state;
	TU_OK(wks_store_set_secret_key(st, "old", "AES", secret, sizeof(secret),
	                               KP, strlen(KP)));
	add_private(st, "other");
	TU_OK(wks_store_creation_time(&t0, st, "old"));
	TU_OK(wks_store_rename(st, "old", "new-é"));
	assert_false(wks_store_contains(st, "old"));
	assert_int_equal(wks_store_entry_type(st, "new-é"), WKS_ENTRY_SECRET_KEY);
	TU_OK(wks_store_creation_time(&t1, st, "new-é"));
	assert_true(t0 == t1);
	TU_OK(wks_store_get_key(&k, st, "new-é", KP, strlen(KP)));
	d = wks_key_data(k, &len);
	assert_int_equal(len, sizeof(secret));
	assert_memory_equal(d, secret, len);
	wks_key_free(k);
	TU_EXPECT(WKS_ERR_EXISTS, wks_store_rename(st, "new-é", "other"));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_rename(st, "absent", "x"));
	TU_OK(wks_store_rename(st, "other", "other"));
	assert_int_equal(wks_store_size(st), 2);
	wks_store_free(st);
}

static void test_store_ops__change_key_password(void **state)
{
	wks_store *st = tu_store_fast();
	wks_key *k = NULL;
	uint8_t *buf = NULL;
	size_t len, n, i;
	wks_entry **v = NULL;
	int64_t t0, t1;
	char *dir = tu_tmpdir(), path[512];
	uint8_t old_salt[16];

	(void)state;
	add_private(st, "srv");
	TU_OK(wks_store_set_secret_key(st, "sec", "HmacSHA256", secret,
	                               sizeof(secret), KP, strlen(KP)));
	TU_OK(wks_store_save_buffer(st, &buf, &len, PW, strlen(PW)));
	{
		wks_settings cfg;

		wks__settings_get(&cfg, NULL);
		TU_OK(wks__decode(&v, &n, NULL, NULL, buf, len, &cfg));
		for (i = 0; i < n; i++)
			if (strcmp(v[i]->alias, "srv") == 0)
				memcpy(old_salt, v[i]->salt, 16);
		wks__entries_free(v, n);
		wks_free(buf);
	}
	TU_OK(wks_store_creation_time(&t0, st, "srv"));
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_change_key_password(
	              st, "srv", "wrong-password", 14, KP2, strlen(KP2)));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_change_key_password(
	              st, "srv", KP, strlen(KP), "", 0));
	TU_OK(wks_store_change_key_password(st, "srv", KP, strlen(KP), KP2,
	                                    strlen(KP2)));
	TU_OK(wks_store_change_key_password(st, "sec", KP, strlen(KP), KP2,
	                                    strlen(KP2)));
	TU_OK(wks_store_creation_time(&t1, st, "srv"));
	assert_true(t0 == t1);
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&k, st, "srv", KP,
	                                               strlen(KP)));
	TU_OK(wks_store_get_key(&k, st, "srv", KP2, strlen(KP2)));
	assert_string_equal(wks_key_algorithm(k), "RSA");
	wks_key_free(k);
	TU_OK(wks_store_get_key(&k, st, "sec", KP2, strlen(KP2)));
	assert_string_equal(wks_key_algorithm(k), "HmacSHA256");
	wks_key_free(k);

	/* Fresh salt, and the independent reader agrees. */
	TU_OK(wks_store_save_buffer(st, &buf, &len, PW, strlen(PW)));
	{
		wks_settings cfg;

		wks__settings_get(&cfg, NULL);
		TU_OK(wks__decode(&v, &n, NULL, NULL, buf, len, &cfg));
		for (i = 0; i < n; i++)
			if (strcmp(v[i]->alias, "srv") == 0)
				assert_memory_not_equal(old_salt, v[i]->salt, 16);
		wks__entries_free(v, n);
	}
	snprintf(path, sizeof(path), "%s/k.wks", dir);
	tu_write_file(path, buf, len);
	wks_free(buf);
	assert_int_equal(0, tu_system("python3 %s/tools/wksdump.py dump "
	                              "--password %s --key-password %s %s "
	                              ">/dev/null", WKS_SHARED_DIR, PW, KP2, path));
	tu_rmtree(dir);
	free(dir);
	wks_store_free(st);
}

static void test_store_ops__per_store_properties(void **state)
{
	wks_store *a = NULL, *b = NULL;
	char buf[64];

	(void)state;
	TU_OK(wks_store_new(&a));
	TU_OK(wks_store_new(&b));
	TU_OK(wks_store_set_property(a, "wolfjce.wks.iterationCount", "20000"));
	TU_OK(wks_get_property(buf, sizeof(buf), a, "wolfjce.wks.iterationCount"));
	assert_string_equal(buf, "20000");
	TU_OK(wks_get_property(buf, sizeof(buf), b, "wolfjce.wks.iterationCount"));
	assert_string_equal(buf, "210000");
	wks_store_free(a);
	wks_store_free(b);
}

static void test_store_ops__errors(void **state)
{
	wks_store *st = tu_store_fast();
	wks_key *k = (wks_key *)1;
	int codes[] = { WKS_OK, WKS_ERR_NOMEM, WKS_ERR_IO, WKS_ERR_FORMAT,
		WKS_ERR_INTEGRITY, WKS_ERR_NOTFOUND, WKS_ERR_WRONG_TYPE,
		WKS_ERR_UNSUPPORTED, WKS_ERR_LIMIT, WKS_ERR_INVALID, WKS_ERR_CRYPTO,
		WKS_ERR_EXISTS, WKS_ERR_BUSY };
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		assert_non_null(wks_strerror(codes[i]));
		for (j = 0; j < i; j++)
			assert_string_not_equal(wks_strerror(codes[i]),
			                        wks_strerror(codes[j]));
	}
	assert_string_equal(wks_strerror(12345), "unknown error");
	/* Details are per failure, never empty on failure, cleared on success. */
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_key(&k, st, "nope", "p", 1));
	assert_null(k);
	assert_true(strlen(wks_error_detail()) > 0);
	TU_OK(wks_store_set_secret_key(st, "s", "AES", secret, 16, KP, strlen(KP)));
	assert_string_equal(wks_error_detail(), "");
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&k, st, "s",
	                                               "secret-guess", 12));
	assert_null(strstr(wks_error_detail(), "secret-guess"));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_get_key(&k, st, "s", "", 0));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_get_key(&k, st, "bad-\xff", KP, 2));
	assert_string_equal(wks_version(), WKS_VERSION_STRING);
	wks_store_free(st);
}

/*
 * Out-parameters are written, never read or freed (include/wks/wks.h,
 * "Out-parameters"): each *out starts as a pointer the library did not
 * make (a static object; a free() of it would crash, under valgrind or
 * ASan be reported) and a failing call must leave NULL / 0 there, a
 * succeeding one its new result.  A caller who reuses a variable that
 * still holds a result leaks it; the library cannot tell an old result
 * from an uninitialised pointer, so it never touches one.
 */
static char not_ours[64];
#define NOT_OURS ((void *)not_ours)

static void test_store_ops__out_params_overwritten(void **state)
{
	wks_store *st = tu_store_fast();
	wks_key *k = NOT_OURS;
#ifdef WKS_CRYPTO_OPENSSL
	EVP_PKEY *pk = NOT_OURS;
	X509 *x = NOT_OURS;
#endif
	wks_lock *lk = NOT_OURS;
	uint8_t *b = NOT_OURS;
	char *s = NOT_OURS, **al = NOT_OURS;
	size_t n = 12345, blen = 12345;
	int64_t ms = 12345;
	wks_cache_stats cs;
	char buf[16];

	(void)state;
	TU_OK(wks_store_set_secret_key(st, "sec", "AES", secret, sizeof(secret),
	                               KP, strlen(KP)));
	add_private(st, "priv");

	/* Failures: NULL / 0 left behind, nothing freed. */
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_key(&k, st, "absent", KP,
	                                              strlen(KP)));
	assert_null(k);
	k = NOT_OURS;
	TU_EXPECT(WKS_ERR_INTEGRITY, wks_store_get_key(&k, st, "sec", "wrong", 5));
	assert_null(k);
	k = NOT_OURS;
	TU_EXPECT(WKS_ERR_INVALID, wks_store_get_key(&k, NULL, "sec", KP,
	                                             strlen(KP)));
	assert_null(k);
#ifdef WKS_CRYPTO_OPENSSL
	TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_get_pkey(&pk, st, "sec", KP,
	                                                 strlen(KP)));
	assert_null(pk);
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_cert(&x, st, "absent", 0));
	assert_null(x);
#endif
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_get_cert_der(&b, &blen, st, "priv",
	                                                   99));
	assert_null(b);
	assert_int_equal(blen, 0);
	TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_secret_algorithm(&s, st, "priv"));
	assert_null(s);
	s = NOT_OURS;
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_find_cert_alias(&s, st, secret,
	                                                      sizeof(secret)));
	assert_null(s);
	TU_EXPECT(WKS_ERR_WRONG_TYPE, wks_store_cert_count(&n, st, "sec"));
	assert_int_equal(n, 0);
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_store_creation_time(&ms, st, "absent"));
	assert_true(ms == 0);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_save_buffer(st, &b, &blen, "", 0));
	assert_null(b);
	assert_int_equal(blen, 0);
	TU_EXPECT(WKS_ERR_INVALID, wks_store_aliases(&al, &n, NULL));
	assert_null(al);
	assert_int_equal(n, 0);
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_lock_acquire(&lk, "/nonexistent/x.wks",
	                                             WKS_LOCK_SHARED));
	assert_null(lk);
	memset(&cs, 0x5a, sizeof(cs));
	TU_EXPECT(WKS_ERR_INVALID, wks_store_cache_stats(&cs, NULL));
	assert_true(cs.hits == 0 && cs.misses == 0 && cs.size == 0 &&
	            cs.derivations == 0);
	memset(buf, 'x', sizeof(buf));
	TU_EXPECT(WKS_ERR_INVALID, wks_get_property(buf, sizeof(buf), st, NULL));
	assert_string_equal(buf, "");

	/* Success: the new result replaces what was there. */
	k = NOT_OURS;
	TU_OK(wks_store_get_key(&k, st, "sec", KP, strlen(KP)));
	assert_true(k != NOT_OURS);
	assert_int_equal(wks_key_type(k), WKS_ENTRY_SECRET_KEY);
	wks_key_free(k);
	s = NOT_OURS;
	TU_OK(wks_store_secret_algorithm(&s, st, "sec"));
	assert_string_equal(s, "AES");
	wks_free(s);
	al = NOT_OURS;
	TU_OK(wks_store_aliases(&al, NULL, st));
	assert_string_equal(al[0], "priv");
	wks_aliases_free(al);
	wks_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_ops__rename_keeps_entry),
		cmocka_unit_test(test_store_ops__change_key_password),
		cmocka_unit_test(test_store_ops__per_store_properties),
		cmocka_unit_test(test_store_ops__errors),
		cmocka_unit_test(test_store_ops__out_params_overwritten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
