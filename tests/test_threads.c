/*
 * Concurrency: several threads get keys and query one store while another
 * sets, replaces and deletes entries and another saves it and loads it back
 * (into itself and into a second store).  Every result must be correct:
 * a key is either absent (WKS_ERR_NOTFOUND, for the entries that come and
 * go) or exactly the right bytes; the entries that always exist are always
 * found.  Run under ThreadSanitizer as well (-DWKS_TSAN=ON).
 *
 * Threads never call cmocka's assertions (they longjmp); they record the
 * first problem and the main thread fails after joining.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tu_ossl.h"

#define PW "wolfsslpassword"
#define PWL (sizeof(PW) - 1)

#define N_READERS 4
#define N_STABLE 3
#define N_VOL 6

static atomic_int g_errors;
static atomic_int g_writers_done;
static pthread_mutex_t g_msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_msg[1024];

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void report(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&g_errors, 1) == 0) {
		pthread_mutex_lock(&g_msg_lock);
		va_start(ap, fmt);
		vsnprintf(g_msg, sizeof(g_msg), fmt, ap);
		va_end(ap);
		pthread_mutex_unlock(&g_msg_lock);
	}
}

/* The key bytes of an alias: SHA-256 of its name. */
static void key_of(uint8_t out[32], const char *alias)
{
	SHA256((const unsigned char *)alias, strlen(alias), out);
}

static tu_der *g_ecc_key, *g_ecc_cert, *g_ca;
static size_t g_n1, g_n2, g_n3;

typedef struct {
	wks_store *st;
	unsigned seed;
	int min_gets;
	/* counters */
	int gets_ok, gets_absent, queries;
} reader_arg;

static int is_known_alias(const char *a)
{
	int i;
	char name[32];

	if (strcmp(a, "stable-pk") == 0)
		return 1;
	for (i = 0; i < N_STABLE; i++) {
		snprintf(name, sizeof(name), "stable-%d", i);
		if (strcmp(a, name) == 0)
			return 1;
	}
	for (i = 0; i < N_VOL; i++) {
		snprintf(name, sizeof(name), "vol-%d", i);
		if (strcmp(a, name) == 0)
			return 1;
		snprintf(name, sizeof(name), "cert-%d", i);
		if (strcmp(a, name) == 0)
			return 1;
	}
	return 0;
}

static void check_get(wks_store *st, const char *alias, int must_exist, reader_arg *ra)
{
	wks_key *k = NULL;
	int r = wks_store_get_key(&k, st, alias, PW, PWL);

	if (r == WKS_OK) {
		size_t len = 0;
		const uint8_t *d = wks_key_data(k, &len);

		if (strcmp(alias, "stable-pk") == 0) {
			if (len != g_ecc_key[0].len || memcmp(d, g_ecc_key[0].der, len) != 0)
				report("get_key(%s): wrong private key", alias);
		} else {
			uint8_t want[32];

			key_of(want, alias);
			if (len != 32 || memcmp(d, want, 32) != 0 ||
			    strcmp(wks_key_algorithm(k), "AES") != 0)
				report("get_key(%s): wrong secret key", alias);
		}
		if (ra)
			ra->gets_ok++;
	} else if (r == WKS_ERR_NOTFOUND && !must_exist) {
		if (k)
			report("get_key(%s): NOTFOUND with a key", alias);
		if (ra)
			ra->gets_absent++;
	} else {
		report("get_key(%s): %d (%s)", alias, r, wks_error_detail());
	}
	wks_key_free(k);
}

static void queries(wks_store *st, reader_arg *ra)
{
	char **a = NULL;
	size_t n = 0, i, cc = 0;
	size_t sz = wks_store_size(st);
	uint8_t *der = NULL;
	size_t dl = 0;
	char *al = NULL;
	int r;

	if (sz < N_STABLE + 1 || sz > N_STABLE + 1 + 2 * N_VOL)
		report("size %zu out of range", sz);
	if (wks_store_aliases(&a, &n, st) != WKS_OK) {
		report("aliases: %s", wks_error_detail());
		return;
	}
	for (i = 0; i < n; i++) {
		if (!is_known_alias(a[i]))
			report("unknown alias \"%s\"", a[i]);
		if (i > 0 && strcmp(a[i - 1], a[i]) >= 0)
			report("aliases not sorted");
	}
	wks_aliases_free(a);
	if (!wks_store_contains(st, "stable-0"))
		report("stable-0 missing");
	if (wks_store_entry_type(st, "stable-pk") != WKS_ENTRY_PRIVATE_KEY)
		report("stable-pk type");
	if (wks_store_cert_count(&cc, st, "stable-pk") != WKS_OK || cc != 1)
		report("cert_count(stable-pk)");
	if (wks_store_get_cert_der(&der, &dl, st, "stable-pk", 0) != WKS_OK ||
	    dl != g_ecc_cert[0].len || memcmp(der, g_ecc_cert[0].der, dl) != 0)
		report("get_cert_der(stable-pk)");
	wks_free(der);
	r = wks_store_find_cert_alias(&al, st, g_ecc_cert[0].der, g_ecc_cert[0].len);
	if (r != WKS_OK || strcmp(al, "stable-pk") != 0)
		report("find_cert_alias(leaf): %d", r);
	wks_free(al);
	al = NULL;
	r = wks_store_find_cert_alias(&al, st, g_ca[0].der, g_ca[0].len);
	if (!(r == WKS_ERR_NOTFOUND || (r == WKS_OK && strncmp(al, "cert-", 5) == 0)))
		report("find_cert_alias(ca): %d", r);
	wks_free(al);
	/* a volatile certificate: absent or the CA */
	der = NULL;
	r = wks_store_get_cert_der(&der, &dl, st, "cert-1", 0);
	if (r == WKS_OK) {
		if (dl != g_ca[0].len || memcmp(der, g_ca[0].der, dl) != 0)
			report("get_cert_der(cert-1): wrong certificate");
	} else if (r != WKS_ERR_NOTFOUND) {
		report("get_cert_der(cert-1): %d", r);
	}
	wks_free(der);
	if (ra)
		ra->queries++;
}

static void *reader(void *p)
{
	reader_arg *ra = p;
	int n = 0;

	while (n < ra->min_gets || !atomic_load(&g_writers_done)) {
		int pick = rand_r(&ra->seed) % (N_STABLE + 1 + N_VOL);
		char alias[32];

		if (pick < N_STABLE) {
			snprintf(alias, sizeof(alias), "stable-%d", pick);
			check_get(ra->st, alias, 1, ra);
		} else if (pick == N_STABLE) {
			check_get(ra->st, "stable-pk", 1, ra);
		} else {
			snprintf(alias, sizeof(alias), "vol-%d", pick - N_STABLE - 1);
			check_get(ra->st, alias, 0, ra);
		}
		queries(ra->st, ra);
		n++;
		if (atomic_load(&g_errors) || n > 100000)
			break;
	}
	return NULL;
}

typedef struct {
	wks_store *st;
	int ops;
	unsigned seed;
} writer_arg;

static void *writer(void *p)
{
	writer_arg *wa = p;
	int i;

	for (i = 0; i < wa->ops && !atomic_load(&g_errors); i++) {
		int j = rand_r(&wa->seed) % N_VOL;
		char alias[32];
		uint8_t key[32];
		int r;

		switch (i % 5) {
		case 0: /* add or replace a volatile secret key */
		case 1:
			snprintf(alias, sizeof(alias), "vol-%d", j);
			key_of(key, alias);
			r = wks_store_set_secret_key(wa->st, alias, "AES", key, 32, PW, PWL);
			if (r != WKS_OK)
				report("set vol: %d (%s)", r, wks_error_detail());
			break;
		case 2: /* delete one */
			snprintf(alias, sizeof(alias), "vol-%d", j);
			r = wks_store_delete(wa->st, alias);
			if (r != WKS_OK && r != WKS_ERR_NOTFOUND)
				report("delete vol: %d", r);
			break;
		case 3: /* certificates come and go */
			snprintf(alias, sizeof(alias), "cert-%d", j);
			if (j % 2)
				r = wks_store_set_cert_der(wa->st, alias, g_ca[0].der, g_ca[0].len);
			else if ((r = wks_store_delete(wa->st, alias)) == WKS_ERR_NOTFOUND)
				r = WKS_OK;
			if (r != WKS_OK)
				report("cert %s: %d", alias, r);
			break;
		default: /* replace a stable entry by an equal one (new salt/IV) */
			snprintf(alias, sizeof(alias), "stable-%d", j % N_STABLE);
			key_of(key, alias);
			r = wks_store_set_secret_key(wa->st, alias, "AES", key, 32, PW, PWL);
			if (r != WKS_OK)
				report("replace stable: %d", r);
			break;
		}
	}
	return NULL;
}

typedef struct {
	wks_store *st;
	int cycles;
} saver_arg;

static void *saver(void *p)
{
	saver_arg *sa = p;
	wks_store *other = tu_store_fast();
	int i;

	for (i = 0; i < sa->cycles && !atomic_load(&g_errors); i++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		int r = wks_store_save_buffer(sa->st, &buf, &len, PW, PWL);

		if (r != WKS_OK) {
			report("save: %d (%s)", r, wks_error_detail());
			break;
		}
		/* into another store: a consistent snapshot */
		r = wks_store_load_buffer(other, buf, len, PW, PWL);
		if (r != WKS_OK) {
			report("load (other): %d (%s)", r, wks_error_detail());
		} else {
			queries(other, NULL);
			check_get(other, "stable-1", 1, NULL);
		}
		/* back into the shared store (every other cycle without the
		 * password) */
		r = wks_store_load_buffer(sa->st, buf, len, i % 2 ? PW : NULL, i % 2 ? PWL : 0);
		if (r != WKS_OK)
			report("load (shared): %d (%s)", r, wks_error_detail());
		wks_free(buf);
	}
	wks_store_free(other);
	return NULL;
}

static void run(int cache)
{
	wks_store *st = tu_store_fast();
	pthread_t rt[N_READERS], wt, svt;
	reader_arg ra[N_READERS];
	writer_arg wa;
	saver_arg sa;
	int i, total_ok = 0, total_absent = 0;
	char alias[32];
	uint8_t key[32];

	atomic_store(&g_errors, 0);
	atomic_store(&g_writers_done, 0);
	g_msg[0] = 0;
	if (cache)
		TU_OK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled", "true"));
	for (i = 0; i < N_STABLE; i++) {
		snprintf(alias, sizeof(alias), "stable-%d", i);
		key_of(key, alias);
		TU_OK(wks_store_set_secret_key(st, alias, "AES", key, 32, PW, PWL));
	}
	{
		const uint8_t *d = g_ecc_cert[0].der;
		size_t l = g_ecc_cert[0].len;

		TU_OK(wks_store_set_private_key(st, "stable-pk", g_ecc_key[0].der, g_ecc_key[0].len,
		                                &d, &l, 1, PW, PWL));
	}

	for (i = 0; i < N_READERS; i++) {
		memset(&ra[i], 0, sizeof(ra[i]));
		ra[i].st = st;
		ra[i].seed = 1234u + (unsigned)i;
		ra[i].min_gets = 8;
		assert_int_equal(pthread_create(&rt[i], NULL, reader, &ra[i]), 0);
	}
	wa.st = st;
	wa.ops = 60;
	wa.seed = 99;
	sa.st = st;
	sa.cycles = 12;
	assert_int_equal(pthread_create(&wt, NULL, writer, &wa), 0);
	assert_int_equal(pthread_create(&svt, NULL, saver, &sa), 0);
	assert_int_equal(pthread_join(wt, NULL), 0);
	assert_int_equal(pthread_join(svt, NULL), 0);
	atomic_store(&g_writers_done, 1);
	for (i = 0; i < N_READERS; i++) {
		assert_int_equal(pthread_join(rt[i], NULL), 0);
		total_ok += ra[i].gets_ok;
		total_absent += ra[i].gets_absent;
	}
	if (atomic_load(&g_errors))
		fail_msg("%d problem(s); first: %s", atomic_load(&g_errors), g_msg);
	print_message("threads%s: %d keys read correctly, %d absent\n",
	              cache ? " (KEK cache on)" : "", total_ok, total_absent);
	assert_true(total_ok > 0);
	/* everything still consistent afterwards */
	queries(st, NULL);
	for (i = 0; i < N_STABLE; i++) {
		snprintf(alias, sizeof(alias), "stable-%d", i);
		check_get(st, alias, 1, NULL);
	}
	if (atomic_load(&g_errors))
		fail_msg("after the run: %s", g_msg);
	wks_store_free(st);
}

static void test_concurrent(void **state)
{
	(void)state;
	run(0);
}

static void test_concurrent_with_cache(void **state)
{
	(void)state;
	run(1);
}

/* Several threads, each with its own store, load the same buffer. */
static void *own_store(void *p)
{
	const tu_der *buf = p;
	wks_store *st = tu_store_fast();
	int i;

	for (i = 0; i < 5 && !atomic_load(&g_errors); i++) {
		int r = wks_store_load_buffer(st, buf->der, buf->len, PW, PWL);

		if (r != WKS_OK)
			report("own store load: %d", r);
		check_get(st, "stable-0", 1, NULL);
	}
	wks_store_free(st);
	return NULL;
}

static void test_independent_stores(void **state)
{
	wks_store *st = tu_store_fast();
	uint8_t key[32];
	tu_der buf;
	pthread_t t[4];
	int i;

	(void)state;
	atomic_store(&g_errors, 0);
	key_of(key, "stable-0");
	TU_OK(wks_store_set_secret_key(st, "stable-0", "AES", key, 32, PW, PWL));
	TU_OK(wks_store_save_buffer(st, &buf.der, &buf.len, PW, PWL));
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, own_store, &buf), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	if (atomic_load(&g_errors))
		fail_msg("%s", g_msg);
	wks_free(buf.der);
	wks_store_free(st);
}

static int setup(void **state)
{
	(void)state;
	g_n1 = tu_pem_ders(&g_ecc_key, tu_input("ecc-key.pem"), "PRIVATE KEY");
	g_n2 = tu_pem_ders(&g_ecc_cert, tu_input("server-ecc-cert.pem"), "CERTIFICATE");
	g_n3 = tu_pem_ders(&g_ca, tu_input("ca-cert.pem"), "CERTIFICATE");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_ders_free(g_ecc_key, g_n1);
	tu_ders_free(g_ecc_cert, g_n2);
	tu_ders_free(g_ca, g_n3);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_concurrent_with_cache),
		cmocka_unit_test(test_independent_stores),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
