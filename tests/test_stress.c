/*
 * Concurrency stress, meant for ThreadSanitizer (and fine in any build):
 * for a fixed time, threads race on one store with the KEK cache on:
 *
 *   getters     get_key on random aliases, mostly with the right password
 *               (the key must be a valid key of that alias: keys are
 *               self-describing, see key_for()), sometimes with a wrong
 *               one (must be WKS_ERR_INTEGRITY, never a key);
 *   setter      overwrites aliases with new generations of their key;
 *   deleter     deletes aliases (WKS_OK or WKS_ERR_NOTFOUND);
 *   loader      reloads a snapshot (wks_store_load_buffer, with the
 *               password) and saves (the saved bytes must load);
 *   clearer     wks_store_cache_clear and wks_store_cache_sweep;
 *   clock       advances the store's test clock (wks_store_set_clock) past
 *               the TTL and idle timeouts, so entries expire under load;
 *   churner     creates, uses and frees other stores with the cache on,
 *               while the process-wide reaper (wks_cache_reaper) sweeps
 *               every registered store every 2 ms;
 *   reader      lists aliases, sizes, types, statistics.
 *
 * Every result is checked; at the end the statistics must be consistent
 * and every alias left must open to a valid key.
 *
 * Environment: WKS_STRESS_SECONDS (default 2; 5 in full mode,
 * WKS_TEST_FULL=1: tests/run.sh --help).
 */
#include "testutil.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tu_ossl.h"

#define NALIAS 8
#define KEYLEN 32

static wks_store *g_st;
static uint8_t *g_snapshot;
static size_t g_snapshot_len;
static atomic_int g_stop;
static _Atomic uint64_t g_clock_ms = 1000000;
static atomic_ulong g_gets, g_gets_ok, g_wrong_pw, g_sets, g_deletes,
	g_loads, g_saves, g_clears, g_churn;
static atomic_int g_failed;
static char g_fail_msg[512];

/* The first failure is kept and reported by the main thread (cmocka's
 * fail_msg must not be called from other threads). */
static void stress_fail(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

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

static void alias_of(char *out, size_t len, unsigned i)
{
	snprintf(out, len, "alias-%u", i);
}

static void pw_of(char *out, size_t len, unsigned i)
{
	snprintf(out, len, "password-%u", i);
}

/* Key of alias i, generation g: i, g (4 bytes), then SHA-256(i, g)
 * truncated: any key can be checked to belong to alias i. */
static void key_for(uint8_t out[KEYLEN], unsigned i, uint32_t g)
{
	uint8_t in[5], h[32];

	in[0] = (uint8_t)i;
	in[1] = (uint8_t)(g >> 24);
	in[2] = (uint8_t)(g >> 16);
	in[3] = (uint8_t)(g >> 8);
	in[4] = (uint8_t)g;
	SHA256(in, sizeof(in), h);
	memcpy(out, in, 5);
	memcpy(out + 5, h, KEYLEN - 5);
}

static int valid_key(const uint8_t *k, size_t len, unsigned i)
{
	uint8_t want[KEYLEN];
	uint32_t g;

	if (len != KEYLEN || k[0] != i)
		return 0;
	g = (uint32_t)k[1] << 24 | (uint32_t)k[2] << 16 | (uint32_t)k[3] << 8 |
	    k[4];
	key_for(want, i, g);
	return memcmp(want, k, KEYLEN) == 0;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static uint64_t test_clock(void *ctx)
{
	(void)ctx;
	return atomic_load(&g_clock_ms);
}

/* ---- threads -------------------------------------------------------------------- */

static void *getter(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg, i;
	char alias[32], pw[32];
	wks_key *k = NULL;
	const uint8_t *d;
	size_t len;
	int rc, wrong;

	while (!atomic_load(&g_stop)) {
		i = rnd(&seed) % NALIAS;
		wrong = rnd(&seed) % 16 == 0;
		alias_of(alias, sizeof(alias), i);
		pw_of(pw, sizeof(pw), wrong ? (i + 1) % NALIAS : i);
		rc = wks_store_get_key(&k, g_st, alias, pw, strlen(pw));
		atomic_fetch_add(&g_gets, 1);
		if (wrong) {
			atomic_fetch_add(&g_wrong_pw, 1);
			if (rc != WKS_ERR_INTEGRITY && rc != WKS_ERR_NOTFOUND)
				stress_fail("get_key(%s) with a wrong password: %d (%s)",
				            alias, rc, wks_error_detail());
		} else if (rc == WKS_OK) {
			d = wks_key_data(k, &len);
			if (!valid_key(d, len, i))
				stress_fail("get_key(%s) returned a key of another "
				            "alias or a corrupted key", alias);
			if (strcmp(wks_key_algorithm(k), "AES") != 0)
				stress_fail("get_key(%s): algorithm %s", alias,
				            wks_key_algorithm(k));
			atomic_fetch_add(&g_gets_ok, 1);
		} else if (rc != WKS_ERR_NOTFOUND) {
			stress_fail("get_key(%s): %d (%s)", alias, rc,
			            wks_error_detail());
		}
		if (rc == WKS_OK && k)
			wks_key_free(k);
		k = NULL;
	}
	return NULL;
}

static void *setter(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg, i;
	uint32_t gen = 1;
	char alias[32], pw[32];
	uint8_t key[KEYLEN];
	int rc;

	while (!atomic_load(&g_stop)) {
		i = rnd(&seed) % NALIAS;
		alias_of(alias, sizeof(alias), i);
		pw_of(pw, sizeof(pw), i);
		key_for(key, i, gen++);
		rc = wks_store_set_secret_key(g_st, alias, "AES", key, KEYLEN, pw,
		                              strlen(pw));
		if (rc != WKS_OK)
			stress_fail("set_secret_key(%s): %d (%s)", alias, rc,
			            wks_error_detail());
		atomic_fetch_add(&g_sets, 1);
		usleep(10000);
	}
	return NULL;
}

static void *deleter(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char alias[32];
	int rc;

	while (!atomic_load(&g_stop)) {
		/* Only the upper half of the aliases is ever deleted. */
		alias_of(alias, sizeof(alias), NALIAS / 2 + rnd(&seed) % (NALIAS / 2));
		rc = wks_store_delete(g_st, alias);
		if (rc != WKS_OK && rc != WKS_ERR_NOTFOUND)
			stress_fail("delete(%s): %d", alias, rc);
		atomic_fetch_add(&g_deletes, 1);
		usleep(20000);
	}
	return NULL;
}

static void *loader(void *arg)
{
	uint8_t *out = NULL;
	size_t out_len = 0;
	wks_store *other = NULL;
	int rc, n = 0;

	(void)arg;
	while (!atomic_load(&g_stop)) {
		rc = wks_store_load_buffer(g_st, g_snapshot, g_snapshot_len,
		                           "store-password", 14);
		if (rc != WKS_OK)
			stress_fail("load_buffer: %d (%s)", rc, wks_error_detail());
		atomic_fetch_add(&g_loads, 1);
		if (n++ % 4 == 0) {
			rc = wks_store_save_buffer(g_st, &out, &out_len,
			                           "store-password", 14);
			if (rc != WKS_OK)
				stress_fail("save_buffer: %d", rc);
			else if (wks_store_new(&other) != WKS_OK ||
			         wks_store_set_property(other, "libwks.kdf.threads",
			                                "1") != WKS_OK ||
			         (rc = wks_store_load_buffer(other, out, out_len,
			                                     "store-password", 14)))
				stress_fail("a concurrent save does not load: %d", rc);
			wks_store_free(other);
			other = NULL;
			wks_free(out);
			out = NULL;
			atomic_fetch_add(&g_saves, 1);
		}
		usleep(60000);
	}
	return NULL;
}

static void *clearer(void *arg)
{
	(void)arg;
	while (!atomic_load(&g_stop)) {
		if (wks_store_cache_clear(g_st) != WKS_OK ||
		    wks_store_cache_sweep(g_st) != WKS_OK)
			stress_fail("cache clear/sweep failed");
		atomic_fetch_add(&g_clears, 1);
		usleep(40000);
	}
	return NULL;
}

static void *clock_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (!atomic_load(&g_stop)) {
		/* Mostly small steps, sometimes past the TTL (2 s) at once. */
		atomic_fetch_add(&g_clock_ms, rnd(&seed) % 64 == 0 ? 2500 : 20);
		usleep(1000);
	}
	return NULL;
}

static void *churner(void *arg)
{
	unsigned n = 0;
	uint8_t key[KEYLEN];
	wks_store *st;
	wks_key *k;

	(void)arg;
	key_for(key, 200, 0);
	while (!atomic_load(&g_stop)) {
		st = tu_store_fast();
		if (wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
		                           "true") ||
		    wks_store_set_property(st, "wolfjce.keystore.kekCacheTtlSec",
		                           "1") ||
		    wks_store_set_secret_key(st, "k", "AES", key, KEYLEN, "pw", 2))
			stress_fail("churn: setup failed");
		for (int j = 0; j < 3; j++) {
			k = NULL;
			if (wks_store_get_key(&k, st, "k", "pw", 2) != WKS_OK ||
			    !valid_key(wks_key_data(k, NULL), KEYLEN, 200))
				stress_fail("churn: get_key failed");
			wks_key_free(k);
		}
		wks_store_free(st);
		atomic_fetch_add(&g_churn, 1);
		n++;
	}
	return NULL;
}

static void *reader(void *arg)
{
	char **aliases = NULL;
	size_t count = 0, i;
	wks_cache_stats cs;

	(void)arg;
	while (!atomic_load(&g_stop)) {
		if (wks_store_aliases(&aliases, &count, g_st) != WKS_OK)
			stress_fail("aliases failed");
		for (i = 0; i < count; i++) {
			wks_entry_type t = wks_store_entry_type(g_st, aliases[i]);

			if (t != WKS_ENTRY_SECRET_KEY && t != WKS_ENTRY_NONE)
				stress_fail("entry type %d", (int)t);
		}
		wks_aliases_free(aliases);
		if (wks_store_size(g_st) > NALIAS)
			stress_fail("more entries than aliases");
		if (wks_store_cache_stats(&cs, g_st) != WKS_OK)
			stress_fail("stats failed");
		if (cs.size > 4)
			stress_fail("cache holds %zu keys, limit 4", cs.size);
		usleep(500);
	}
	return NULL;
}

/* ---- the test ----------------------------------------------------------------- */

static void test_stress__everything_at_once(void **state)
{
	const char *e = getenv("WKS_STRESS_SECONDS");
	double secs = e && *e ? atof(e) : tu_full_mode() ? 5.0 : 2.0;
	struct {
		void *(*fn)(void *);
		const char *name;
	} roles[] = {
		{ getter, "getter" }, { getter, "getter" }, { getter, "getter" },
		{ setter, "setter" }, { deleter, "deleter" }, { loader, "loader" },
		{ clearer, "clearer" }, { clock_thread, "clock" },
		{ churner, "churner" }, { reader, "reader" },
	};
	pthread_t th[sizeof(roles) / sizeof(roles[0])];
	char alias[32], pw[32];
	uint8_t key[KEYLEN];
	wks_cache_stats cs;
	wks_key *k = NULL;
	size_t i, len;
	unsigned a;
	struct timespec ts;

	(void)state;
	/* The snapshot that the loader reloads: generation 0 of every key. */
	g_st = tu_store_fast();
	for (a = 0; a < NALIAS; a++) {
		alias_of(alias, sizeof(alias), a);
		pw_of(pw, sizeof(pw), a);
		key_for(key, a, 0);
		TU_OK(wks_store_set_secret_key(g_st, alias, "AES", key, KEYLEN, pw,
		                               strlen(pw)));
	}
	TU_OK(wks_store_save_buffer(g_st, &g_snapshot, &g_snapshot_len,
	                            "store-password", 14));
	TU_OK(wks_store_set_property(g_st, "wolfjce.keystore.kekCacheEnabled",
	                             "true"));
	TU_OK(wks_store_set_property(g_st, "wolfjce.keystore.kekCacheTtlSec",
	                             "2"));
	TU_OK(wks_store_set_property(g_st, "libwks.keystore.kekCacheIdleSec",
	                             "1"));
	TU_OK(wks_store_set_property(g_st, "libwks.keystore.kekCacheMaxEntries",
	                             "4"));
	TU_OK(wks_store_set_clock(g_st, test_clock, NULL));
	TU_OK(wks_cache_reaper(2));

	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		assert_int_equal(pthread_create(&th[i], NULL, roles[i].fn,
		                                (void *)(uintptr_t)(i * 7919 + 1)),
		                 0);
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && !atomic_load(&g_stop))
		;
	atomic_store(&g_stop, 1);
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		pthread_join(th[i], NULL);
	TU_OK(wks_cache_reaper(0));
	if (atomic_load(&g_failed))
		fail_msg("%s", g_fail_msg);

	/* Quiet again: statistics add up, and every alias opens. */
	TU_OK(wks_store_cache_stats(&cs, g_st));
	assert_true(cs.size <= 4);
	assert_true(cs.inserts >= cs.size);
	/* Every lookup was a get_key that found its entry; every insert
	 * follows a miss that derived and verified. */
	assert_true(cs.hits + cs.misses <= atomic_load(&g_gets));
	assert_true(cs.inserts <= cs.misses);
	for (a = 0; a < NALIAS; a++) {
		int rc;

		alias_of(alias, sizeof(alias), a);
		pw_of(pw, sizeof(pw), a);
		rc = wks_store_get_key(&k, g_st, alias, pw, strlen(pw));
		if (rc == WKS_OK) {
			assert_true(valid_key(wks_key_data(k, &len), KEYLEN, a));
			wks_key_free(k);
			k = NULL;
		} else {
			assert_int_equal(rc, WKS_ERR_NOTFOUND);
			assert_true(a >= NALIAS / 2); /* only those are deleted */
		}
	}
	print_message("stress: %.1f s: %lu get_key (%lu ok, %lu wrong "
	              "password), %lu set, %lu delete, %lu load, %lu save, %lu "
	              "cache clear, %lu stores churned; cache: %llu hits, %llu "
	              "misses, %llu inserts, %llu evictions, %llu expirations, "
	              "%llu invalidations\n", secs, atomic_load(&g_gets),
	              atomic_load(&g_gets_ok), atomic_load(&g_wrong_pw),
	              atomic_load(&g_sets), atomic_load(&g_deletes),
	              atomic_load(&g_loads), atomic_load(&g_saves),
	              atomic_load(&g_clears), atomic_load(&g_churn),
	              (unsigned long long)cs.hits, (unsigned long long)cs.misses,
	              (unsigned long long)cs.inserts,
	              (unsigned long long)cs.evictions,
	              (unsigned long long)cs.expirations,
	              (unsigned long long)cs.invalidations);
	assert_true(atomic_load(&g_gets_ok) > 0);
	/* The cache still works after all that: alias 0 (never deleted)
	 * opened once more is cached (its entry may have been evicted by
	 * the others above: kekCacheMaxEntries is 4), and opening it again
	 * is a hit.  (How many
	 * hits the racing phase had depends on how fast a derivation is
	 * against the loads and clears that empty the cache: printed above,
	 * not asserted.) */
	{
		wks_cache_stats before, after;

		alias_of(alias, sizeof(alias), 0);
		pw_of(pw, sizeof(pw), 0);
		TU_OK(wks_store_get_key(&k, g_st, alias, pw, strlen(pw)));
		wks_key_free(k);
		k = NULL;
		TU_OK(wks_store_cache_stats(&before, g_st));
		TU_OK(wks_store_get_key(&k, g_st, alias, pw, strlen(pw)));
		assert_true(valid_key(wks_key_data(k, &len), KEYLEN, 0));
		wks_key_free(k);
		k = NULL;
		TU_OK(wks_store_cache_stats(&after, g_st));
		assert_true(after.hits == before.hits + 1);
	}
	wks_store_free(g_st);
	wks_free(g_snapshot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress__everything_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
