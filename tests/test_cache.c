/* KEK cache, module level: wks__cache_* with fake derive/verify callbacks
 * and a test clock.  The store-level behaviour is in test_cache_store.c. */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tu_ossl.h"

#include "cache/cache.h"
#include "util/error.h"

/* ---- fakes ------------------------------------------------------------------ */

/* A key entry: verify "succeeds" iff dk is the derivation of good_pw (or,
 * with any_pw, of the caller's own password). */
typedef struct {
	uint64_t id;
	uint8_t salt[WKS_SALT_LEN];
	uint32_t iterations;
	const char *good_pw;
	int any_pw;
	atomic_int modified;   /* 1: every MAC check fails */
} fake_entry;

typedef struct {
	atomic_int derives;
	atomic_int verifies;
	atomic_int derive_sleep_ms;
	atomic_int derive_fail_once; /* 1: the next derive fails (NOMEM) */
} fake_counts;

typedef struct {
	fake_entry *e;
	const char *pw;
	fake_counts *n;
} fake_call;

static void fake_dk(uint8_t dk[WKS_DK_LEN], const fake_entry *e, const char *pw)
{
	uint8_t salt[WKS_SALT_LEN + 8];

	memcpy(salt, e->salt, WKS_SALT_LEN);
	memcpy(salt + WKS_SALT_LEN, &e->id, 8);
	assert_int_equal(PKCS5_PBKDF2_HMAC(pw, (int)strlen(pw), salt, sizeof(salt),
	                                   (int)e->iterations, EVP_sha512(),
	                                   WKS_DK_LEN, dk), 1);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static int fake_derive(uint8_t dk[WKS_DK_LEN], void *ctx)
{
	fake_call *c = ctx;
	int ms = atomic_load(&c->n->derive_sleep_ms);

	atomic_fetch_add(&c->n->derives, 1);
	if (ms)
		sleep_ms(ms);
	if (atomic_exchange(&c->n->derive_fail_once, 0))
		return wks__err(WKS_ERR_NOMEM, "fake derive failure");
	fake_dk(dk, c->e, c->pw);
	return WKS_OK;
}

static int fake_verify(const uint8_t dk[WKS_DK_LEN], void *ctx)
{
	fake_call *c = ctx;
	uint8_t want[WKS_DK_LEN];
	int ok;

	atomic_fetch_add(&c->n->verifies, 1);
	fake_dk(want, c->e, c->e->any_pw ? c->pw : c->e->good_pw);
	ok = !atomic_load(&c->e->modified) && memcmp(want, dk, WKS_DK_LEN) == 0;
	return ok ? WKS_OK : wks__err(WKS_ERR_INTEGRITY, "fake MAC mismatch");
}

/* ---- test clock --------------------------------------------------------------- */

typedef struct {
	_Atomic uint64_t now;
} test_clock;

static uint64_t clock_fn(void *ctx)
{
	return atomic_load(&((test_clock *)ctx)->now);
}

/* ---- fixture --------------------------------------------------------------------- */

typedef struct {
	wks_cache *c;
	wks_settings cfg;
	test_clock clk;
	fake_counts n;
	fake_entry e[4];
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));
	int i;

	assert_non_null(f);
	assert_int_equal(wks__cache_new(&f->c), WKS_OK);
	f->cfg.cache_enabled = 1;
	f->cfg.cache_ttl_ms = 300000;
	f->cfg.cache_idle_ms = 0;
	f->cfg.cache_max_entries = 1024;
	atomic_store(&f->clk.now, 1000000);
	wks__cache_set_clock(f->c, clock_fn, &f->clk);
	for (i = 0; i < 4; i++) {
		f->e[i].id = 100 + (uint64_t)i;
		memset(f->e[i].salt, 0x10 + i, WKS_SALT_LEN);
		f->e[i].iterations = 2;
		f->e[i].good_pw = "correct horse";
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;

	wks__cache_free(f->c);
	free(f);
	return 0;
}

static int get(fx *f, fake_entry *e, const char *pw, uint8_t dk[WKS_DK_LEN])
{
	fake_call call = { e, pw, &f->n };

	return wks__cache_obtain(f->c, &f->cfg, e->id, (const uint8_t *)pw,
	                         strlen(pw), e->salt, e->iterations, fake_derive,
	                         fake_verify, &call, dk);
}

static wks_cache_stats stats(fx *f)
{
	wks_cache_stats s;

	wks__cache_stats(f->c, &s);
	return s;
}

static void expect_ok(fx *f, fake_entry *e, const char *pw)
{
	uint8_t dk[WKS_DK_LEN], want[WKS_DK_LEN];

	TU_OK(get(f, e, pw, dk));
	fake_dk(want, e, pw);
	assert_memory_equal(dk, want, WKS_DK_LEN);
}

static void expect_fail(fx *f, fake_entry *e, const char *pw)
{
	uint8_t dk[WKS_DK_LEN], zero[WKS_DK_LEN] = { 0 };

	memset(dk, 0xAA, sizeof(dk));
	TU_EXPECT(WKS_ERR_INTEGRITY, get(f, e, pw, dk));
	assert_memory_equal(dk, zero, WKS_DK_LEN); /* wiped */
}

static void advance(fx *f, uint64_t ms)
{
	atomic_fetch_add(&f->clk.now, ms);
}

#define DERIVES(f) atomic_load(&(f)->n.derives)

/* ---- tests ----------------------------------------------------------------------- */

static void test_cache__disabled(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	f->cfg.cache_enabled = 0;
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[0], "correct horse");
	expect_fail(f, &f->e[0], "wrong");
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 4);
	assert_int_equal(atomic_load(&f->n.verifies), 4);
	s = stats(f);
	assert_int_equal(s.derivations, 4);
	assert_int_equal(s.hits, 0);
	assert_int_equal(s.misses, 0);
	assert_int_equal(s.inserts, 0);
	assert_int_equal(s.size, 0);
}

static void test_cache__hit_and_miss(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	expect_ok(f, &f->e[0], "correct horse");
	s = stats(f);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.hits, 0);
	assert_int_equal(s.inserts, 1);
	assert_int_equal(s.size, 1);
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 1);
	/* the cached key is still verified at every hit */
	assert_int_equal(atomic_load(&f->n.verifies), 3);
	s = stats(f);
	assert_int_equal(s.hits, 2);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.derivations, 1);
	assert_int_equal(s.size, 1);
}

static void test_cache__identical_cached_uncached(void **state)
{
	fx *f = *state;
	uint8_t off[WKS_DK_LEN], miss[WKS_DK_LEN], hit[WKS_DK_LEN];

	f->cfg.cache_enabled = 0;
	TU_OK(get(f, &f->e[1], "correct horse", off));
	f->cfg.cache_enabled = 1;
	TU_OK(get(f, &f->e[1], "correct horse", miss));
	TU_OK(get(f, &f->e[1], "correct horse", hit));
	assert_memory_equal(off, miss, WKS_DK_LEN);
	assert_memory_equal(off, hit, WKS_DK_LEN);
	assert_int_equal(stats(f).hits, 1);
}

static void test_cache__wrong_password_after_hit(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[0], "correct horse");
	expect_fail(f, &f->e[0], "correct horsE");
	expect_fail(f, &f->e[0], "correct horsE"); /* never cached */
	s = stats(f);
	assert_int_equal(s.size, 1);          /* nothing evicted */
	assert_int_equal(s.invalidations, 0);
	assert_int_equal(s.inserts, 1);
	assert_int_equal(s.derivations, 3);   /* a wrong password misses */
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(stats(f).hits, 2);
	assert_int_equal(DERIVES(f), 3);
}

static void test_cache__ttl(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	f->cfg.cache_ttl_ms = 5000;
	expect_ok(f, &f->e[0], "correct horse");
	advance(f, 3000);
	expect_ok(f, &f->e[1], "correct horse");
	advance(f, 1999); /* e0 at 4999 ms: still there, hits don't extend */
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 2);
	advance(f, 1); /* e0 at exactly the TTL */
	s = stats(f); /* any operation sweeps */
	assert_int_equal(s.size, 1);
	assert_int_equal(s.expirations, 1);
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 3);
	expect_ok(f, &f->e[1], "correct horse"); /* e1 at 2000 ms: hit */
	assert_int_equal(DERIVES(f), 3);
	advance(f, 3000); /* e1 at 5000 */
	expect_ok(f, &f->e[1], "correct horse");
	assert_int_equal(DERIVES(f), 4);
	assert_int_equal(stats(f).expirations, 2);
}

static void test_cache__idle_timeout(void **state)
{
	fx *f = *state;

	f->cfg.cache_idle_ms = 1000;
	expect_ok(f, &f->e[0], "correct horse");
	advance(f, 900);
	expect_ok(f, &f->e[0], "correct horse"); /* hit, last use now */
	advance(f, 900);
	expect_ok(f, &f->e[0], "correct horse"); /* 900 idle: hit */
	assert_int_equal(DERIVES(f), 1);
	advance(f, 1000);                         /* 1000 idle: gone */
	assert_int_equal(stats(f).size, 0);
	assert_int_equal(stats(f).expirations, 1);
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 2);
	/* idle off again: only the TTL counts */
	f->cfg.cache_idle_ms = 0;
	advance(f, 100000);
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 2);
}

static void test_cache__drop_entry_precise(void **state)
{
	fx *f = *state;
	wks_cache_stats s;
	int i;

	for (i = 0; i < 3; i++)
		expect_ok(f, &f->e[i], "correct horse");
	s = stats(f);
	assert_int_equal(s.size, 3);
	wks__cache_drop_entry(f->c, f->e[1].id);
	s = stats(f);
	assert_int_equal(s.size, 2);
	assert_int_equal(s.invalidations, 1);
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[2], "correct horse");
	assert_int_equal(DERIVES(f), 3);
	wks__cache_drop_entry(f->c, 999); /* unknown id: nothing */
	assert_int_equal(stats(f).size, 2);
}

static int get_gen(fx *f, fake_entry *e, const char *pw, uint64_t gen,
                   uint8_t dk[WKS_DK_LEN])
{
	fake_call call = { e, pw, &f->n };

	return wks__cache_obtain_ex(f->c, &f->cfg, e->id, (const uint8_t *)pw,
	                            strlen(pw), e->salt, e->iterations,
	                            fake_derive, fake_verify, &call, 0, gen, dk);
}

/* A caller that read the generation before a drop or clear (before its
 * entry lookup, as get_key does) gets its key but never caches it,
 * however many drops happen meanwhile: the entry it found may be gone.
 * (The old 64-slot ring of dropped ids forgot a drop after 64 others,
 * and a clear recorded none.) */
static void test_cache__stale_generation_not_inserted(void **state)
{
	fx *f = *state;
	uint8_t dk[WKS_DK_LEN], want[WKS_DK_LEN];
	wks_cache_stats s;
	uint64_t gen;
	int i;

	fake_dk(want, &f->e[0], "correct horse");
	/* a drop of that very entry */
	gen = wks__cache_generation(f->c);
	wks__cache_drop_entry(f->c, f->e[0].id);
	TU_OK(get_gen(f, &f->e[0], "correct horse", gen, dk));
	assert_memory_equal(dk, want, WKS_DK_LEN);
	assert_int_equal(stats(f).inserts, 0);
	/* ... followed by 100 drops of other entries */
	gen = wks__cache_generation(f->c);
	wks__cache_drop_entry(f->c, f->e[0].id);
	for (i = 0; i < 100; i++)
		wks__cache_drop_entry(f->c, 5000 + (uint64_t)i);
	TU_OK(get_gen(f, &f->e[0], "correct horse", gen, dk));
	assert_int_equal(stats(f).inserts, 0);
	/* a clear (what a load does) */
	gen = wks__cache_generation(f->c);
	wks__cache_clear(f->c);
	TU_OK(get_gen(f, &f->e[1], "correct horse", gen, dk));
	s = stats(f);
	assert_int_equal(s.inserts, 0);
	assert_int_equal(s.size, 0);
	assert_int_equal(DERIVES(f), 3);
	/* A generation read after them caches as usual. */
	TU_OK(get_gen(f, &f->e[1], "correct horse",
	              wks__cache_generation(f->c), dk));
	assert_int_equal(stats(f).size, 1);
	assert_int_equal(stats(f).inserts, 1);
}

/* The hook runs where a drop would race the insert: after the derivation
 * and verification, before the write lock is taken. */
static fx *g_hook_fx;
static atomic_int g_hook_calls;

static void drop_in_hook(wks_cache *c, uint64_t entry_id)
{
	(void)entry_id;
	if (atomic_fetch_add(&g_hook_calls, 1) == 0)
		wks__cache_drop_entry(c, g_hook_fx->e[0].id);
}

static void test_cache__drop_before_insert(void **state)
{
	fx *f = *state;
	uint8_t dk[WKS_DK_LEN];

	g_hook_fx = f;
	atomic_store(&g_hook_calls, 0);
	wks__cache_test_before_insert = drop_in_hook;
	TU_OK(get(f, &f->e[0], "correct horse", dk));
	wks__cache_test_before_insert = NULL;
	assert_int_equal(atomic_load(&g_hook_calls), 1);
	assert_int_equal(stats(f).inserts, 0);
	assert_int_equal(stats(f).size, 0);
}


static void test_cache__drop_entry_all_passwords(void **state)
{
	fx *f = *state;

	f->e[1].any_pw = 1;
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "one");
	expect_ok(f, &f->e[1], "two");
	assert_int_equal(stats(f).size, 3);
	wks__cache_drop_entry(f->c, f->e[1].id);
	assert_int_equal(stats(f).size, 1);
	assert_int_equal(stats(f).invalidations, 2);
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 3);
}

static void test_cache__clear(void **state)
{
	fx *f = *state;
	wks_cache_stats s;
	int i;

	for (i = 0; i < 4; i++)
		expect_ok(f, &f->e[i], "correct horse");
	wks__cache_clear(f->c);
	s = stats(f);
	assert_int_equal(s.size, 0);
	assert_int_equal(s.invalidations, 4);
	for (i = 0; i < 4; i++)
		expect_ok(f, &f->e[i], "correct horse");
	assert_int_equal(DERIVES(f), 8);
	wks__cache_clear(f->c);
	wks__cache_clear(f->c); /* twice is fine */
	assert_int_equal(stats(f).size, 0);
}

static void test_cache__lru_bound(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	f->cfg.cache_max_entries = 3;
	expect_ok(f, &f->e[0], "correct horse");
	advance(f, 1);
	expect_ok(f, &f->e[1], "correct horse");
	advance(f, 1);
	expect_ok(f, &f->e[2], "correct horse");
	advance(f, 1);
	expect_ok(f, &f->e[0], "correct horse"); /* e0 recently used */
	advance(f, 1);
	expect_ok(f, &f->e[3], "correct horse"); /* evicts e1 */
	s = stats(f);
	assert_int_equal(s.size, 3);
	assert_int_equal(s.evictions, 1);
	assert_int_equal(DERIVES(f), 4);
	advance(f, 1);
	expect_ok(f, &f->e[0], "correct horse");
	advance(f, 1);
	expect_ok(f, &f->e[2], "correct horse");
	advance(f, 1);
	expect_ok(f, &f->e[3], "correct horse");
	assert_int_equal(DERIVES(f), 4);
	advance(f, 1);
	expect_ok(f, &f->e[1], "correct horse"); /* miss: evicts e0 (LRU) */
	assert_int_equal(DERIVES(f), 5);
	assert_int_equal(stats(f).evictions, 2);
	advance(f, 1);
	expect_ok(f, &f->e[2], "correct horse"); /* still cached */
	assert_int_equal(DERIVES(f), 5);

	/* the bound lowered at run time applies at the next operation */
	advance(f, 1);
	expect_ok(f, &f->e[1], "correct horse");
	f->cfg.cache_max_entries = 1;
	advance(f, 1);
	expect_ok(f, &f->e[1], "correct horse"); /* the newest use stays */
	s = stats(f);
	assert_int_equal(s.size, 1);
	assert_int_equal(s.evictions, 4);
	assert_int_equal(DERIVES(f), 5);
}

static void test_cache__lru_ties_evict_oldest_insert(void **state)
{
	fx *f = *state;

	/* the clock does not move: eviction falls back to insertion order */
	f->cfg.cache_max_entries = 2;
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	expect_ok(f, &f->e[2], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	expect_ok(f, &f->e[2], "correct horse");
	assert_int_equal(DERIVES(f), 3);
}

static void test_cache__failed_mac_removes(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	atomic_store(&f->e[0].modified, 1);
	expect_fail(f, &f->e[0], "correct horse"); /* cached dk, MAC fails */
	s = stats(f);
	assert_int_equal(s.size, 1);
	assert_int_equal(s.invalidations, 1);
	assert_int_equal(s.derivations, 2);
	expect_fail(f, &f->e[0], "correct horse"); /* derives, fails, not cached */
	assert_int_equal(DERIVES(f), 3);
	assert_int_equal(stats(f).size, 1);
	atomic_store(&f->e[0].modified, 0);
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	assert_int_equal(DERIVES(f), 4);
	assert_int_equal(stats(f).size, 2);
}

/* A damaged cached value is detected by its check value: dropped and
 * derived again, never used. */
static void test_cache__corrupt_slot_rederived(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	wks__cache_test_corrupt(f->c);
	expect_ok(f, &f->e[0], "correct horse");
	s = stats(f);
	assert_int_equal(s.invalidations, 1);
	assert_int_equal(s.derivations, 3);
	assert_int_equal(s.size, 2);
	expect_ok(f, &f->e[0], "correct horse"); /* the fresh key hits */
	assert_int_equal(DERIVES(f), 3);
	expect_ok(f, &f->e[1], "correct horse");
	assert_int_equal(DERIVES(f), 4);
}

static int get_trusted(fx *f, fake_entry *e, const char *pw,
                       uint8_t dk[WKS_DK_LEN])
{
	fake_call call = { e, pw, &f->n };

	return wks__cache_obtain_ex(f->c, &f->cfg, e->id, (const uint8_t *)pw,
	                            strlen(pw), e->salt, e->iterations,
	                            fake_derive, fake_verify, &call,
	                            WKS_CACHE_TRUST_HITS,
	                            wks__cache_generation(f->c), dk);
}

/* WKS_CACHE_TRUST_HITS: misses verify, hits return the verified key. */
static void test_cache__trust_hits(void **state)
{
	fx *f = *state;
	uint8_t dk[WKS_DK_LEN], want[WKS_DK_LEN], zero[WKS_DK_LEN] = { 0 };

	fake_dk(want, &f->e[0], "correct horse");
	TU_OK(get_trusted(f, &f->e[0], "correct horse", dk));
	assert_memory_equal(dk, want, WKS_DK_LEN);
	assert_int_equal(atomic_load(&f->n.verifies), 1);
	TU_OK(get_trusted(f, &f->e[0], "correct horse", dk));
	TU_OK(get_trusted(f, &f->e[0], "correct horse", dk));
	assert_memory_equal(dk, want, WKS_DK_LEN);
	assert_int_equal(atomic_load(&f->n.verifies), 1);
	assert_int_equal(stats(f).hits, 2);
	/* a wrong password still misses and fails verification */
	memset(dk, 0xAA, sizeof(dk));
	TU_EXPECT(WKS_ERR_INTEGRITY, get_trusted(f, &f->e[0], "wrong", dk));
	assert_memory_equal(dk, zero, WKS_DK_LEN);
	assert_int_equal(atomic_load(&f->n.verifies), 2);
	/* a damaged value is re-derived and verified, not trusted */
	wks__cache_test_corrupt(f->c);
	TU_OK(get_trusted(f, &f->e[0], "correct horse", dk));
	assert_memory_equal(dk, want, WKS_DK_LEN);
	assert_int_equal(atomic_load(&f->n.verifies), 3);
	assert_int_equal(DERIVES(f), 3);
	/* the plain variant still verifies its hits */
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(atomic_load(&f->n.verifies), 4);
	assert_int_equal(DERIVES(f), 3);
}

static int lookup(fx *f, fake_entry *e, const char *pw, uint8_t dk[WKS_DK_LEN])
{
	return wks__cache_lookup(f->c, &f->cfg, e->id, (const uint8_t *)pw,
	                         strlen(pw), e->salt, e->iterations, dk);
}

/* The lookup-only hit path: never derives, never verifies. */
static void test_cache__lookup(void **state)
{
	fx *f = *state;
	uint8_t dk[WKS_DK_LEN], want[WKS_DK_LEN], zero[WKS_DK_LEN] = { 0 };

	memset(dk, 0xAA, sizeof(dk));
	assert_int_equal(lookup(f, &f->e[0], "correct horse", dk), WKS_CACHE_MISS);
	assert_memory_equal(dk, zero, WKS_DK_LEN);
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(lookup(f, &f->e[0], "correct horse", dk), WKS_OK);
	fake_dk(want, &f->e[0], "correct horse");
	assert_memory_equal(dk, want, WKS_DK_LEN);
	assert_int_equal(lookup(f, &f->e[0], "wrong", dk), WKS_CACHE_MISS);
	assert_int_equal(lookup(f, &f->e[1], "correct horse", dk), WKS_CACHE_MISS);
	assert_int_equal(stats(f).hits, 1);
	assert_int_equal(stats(f).misses, 1);
	assert_int_equal(atomic_load(&f->n.verifies), 1);
	assert_int_equal(DERIVES(f), 1);
	f->cfg.cache_enabled = 0;
	assert_int_equal(lookup(f, &f->e[0], "correct horse", dk), WKS_CACHE_MISS);
	f->cfg.cache_enabled = 1;
	advance(f, f->cfg.cache_ttl_ms);
	assert_int_equal(lookup(f, &f->e[0], "correct horse", dk), WKS_CACHE_MISS);
	assert_int_equal(stats(f).expirations, 1);
	assert_int_equal(DERIVES(f), 1);
}

static void test_cache__no_sharing(void **state)
{
	fx *f = *state;

	/* same password, salt and iterations; different entry ids */
	memcpy(f->e[1].salt, f->e[0].salt, WKS_SALT_LEN);
	/* same id and salt, different iterations (a rewritten entry) */
	f->e[2] = f->e[0];
	f->e[2].iterations = 3;
	/* same id and iterations, different salt */
	f->e[3] = f->e[0];
	f->e[3].salt[15] ^= 1;
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	expect_ok(f, &f->e[2], "correct horse");
	expect_ok(f, &f->e[3], "correct horse");
	assert_int_equal(DERIVES(f), 4);
	assert_int_equal(stats(f).size, 4);
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	expect_ok(f, &f->e[2], "correct horse");
	expect_ok(f, &f->e[3], "correct horse");
	assert_int_equal(DERIVES(f), 4);
	/* passwords that differ only in length or by a trailing NUL */
	f->e[0].any_pw = 1;
	expect_ok(f, &f->e[0], "correct hors");
	assert_int_equal(DERIVES(f), 5);
}

static void test_cache__settings_at_run_time(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	expect_ok(f, &f->e[0], "correct horse");
	f->cfg.cache_enabled = 0;            /* disabled: lookups skip it */
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	s = stats(f);
	assert_int_equal(s.derivations, 3);
	assert_int_equal(s.size, 1);          /* kept, not added to */
	assert_int_equal(s.inserts, 1);
	f->cfg.cache_enabled = 1;             /* back on: still there */
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 3);
	f->cfg.cache_ttl_ms = 10;             /* a shorter TTL applies now */
	advance(f, 10);
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 4);
	assert_int_equal(stats(f).expirations, 1);
	/* expiry still runs while the cache is disabled */
	f->cfg.cache_enabled = 0;
	advance(f, 10);
	expect_ok(f, &f->e[1], "correct horse");
	f->cfg.cache_enabled = 1;
	assert_int_equal(stats(f).size, 0);
	assert_int_equal(stats(f).expirations, 2);
}

static void test_cache__sweep(void **state)
{
	fx *f = *state;
	wks_settings cfg;
	wks_cache_stats s;

	expect_ok(f, &f->e[0], "correct horse");
	advance(f, 100);
	expect_ok(f, &f->e[1], "correct horse");
	advance(f, 100);
	expect_ok(f, &f->e[2], "correct horse");
	cfg = f->cfg;
	cfg.cache_ttl_ms = 150; /* e0 (200 ms) and e1 (100 ms)?  only e0 */
	wks__cache_sweep(f->c, &cfg);
	s = stats(f);
	assert_int_equal(s.size, 2);
	assert_int_equal(s.expirations, 1);
	cfg.cache_ttl_ms = 100;
	wks__cache_sweep(f->c, &cfg);
	assert_int_equal(stats(f).size, 1);
	cfg.cache_ttl_ms = 1000;
	cfg.cache_max_entries = 0; /* treated as 1 */
	wks__cache_sweep(f->c, &cfg);
	assert_int_equal(stats(f).size, 1);
	cfg.cache_idle_ms = 1;
	advance(f, 1);
	wks__cache_sweep(f->c, &cfg);
	s = stats(f);
	assert_int_equal(s.size, 0);
	assert_int_equal(s.expirations, 3);
	wks__cache_sweep(f->c, &cfg); /* empty: fine */
}

static void test_cache__stats(void **state)
{
	fx *f = *state;
	wks_cache_stats s;

	f->cfg.cache_max_entries = 2;
	f->cfg.cache_ttl_ms = 1000;
	expect_ok(f, &f->e[0], "correct horse");   /* miss, insert */
	expect_ok(f, &f->e[0], "correct horse");   /* hit */
	expect_fail(f, &f->e[0], "nope");          /* derivation, no insert */
	advance(f, 1);
	expect_ok(f, &f->e[1], "correct horse");   /* miss, insert */
	advance(f, 1);
	expect_ok(f, &f->e[2], "correct horse");   /* miss, insert, evict e0 */
	wks__cache_drop_entry(f->c, f->e[1].id);   /* invalidation */
	advance(f, 1000);                          /* e2 expires */
	f->cfg.cache_enabled = 0;
	expect_ok(f, &f->e[3], "correct horse");   /* derivation only */
	s = stats(f);
	assert_int_equal(s.hits, 1);
	assert_int_equal(s.misses, 4);
	assert_int_equal(s.inserts, 3);
	assert_int_equal(s.evictions, 1);
	assert_int_equal(s.invalidations, 1);
	assert_int_equal(s.expirations, 1);
	assert_int_equal(s.derivations, 5);
	assert_int_equal(s.size, 0);
}

static void test_cache__clock_restore(void **state)
{
	fx *f = *state;

	/* the real clock: nothing expires within the test */
	wks__cache_set_clock(f->c, NULL, NULL);
	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[0], "correct horse");
	assert_int_equal(DERIVES(f), 1);
	wks__cache_set_clock(f->c, clock_fn, &f->clk);
}

/* No plaintext derived key, password or password hash at rest. */
static void test_cache__shielded_at_rest(void **state)
{
	fx *f = *state;
	uint8_t dk[WKS_DK_LEN], pwh[32];
	const char *pw = "correct horse";
	size_t i;

	expect_ok(f, &f->e[0], pw);
	expect_ok(f, &f->e[1], pw);
	fake_dk(dk, &f->e[0], pw);
	for (i = 0; i + 8 <= WKS_DK_LEN; i += 8)
		assert_false(wks__cache_test_find(f->c, dk + i, 8));
	fake_dk(dk, &f->e[1], pw);
	for (i = 0; i + 8 <= WKS_DK_LEN; i += 8)
		assert_false(wks__cache_test_find(f->c, dk + i, 8));
	assert_false(wks__cache_test_find(f->c, (const uint8_t *)pw, strlen(pw)));
	SHA256((const uint8_t *)pw, strlen(pw), pwh);
	assert_false(wks__cache_test_find(f->c, pwh, 8));
	/* the accessor does find what is there */
	{
		uint8_t z[64] = { 0 };

		assert_true(wks__cache_test_find(f->c, z, sizeof(z)));
	}
}

/* ---- single flight ------------------------------------------------------------- */

#define NTHREADS 8

typedef struct {
	fx *f;
	fake_entry *e;
	const char *pw;
	pthread_barrier_t *bar;
	int use_gen;   /* 1: obtain_ex with gen, read before the threads ran */
	uint64_t gen;
	int rc;
	uint8_t dk[WKS_DK_LEN];
	char detail[256];
} worker;

static void *work(void *arg)
{
	worker *w = arg;

	pthread_barrier_wait(w->bar);
	memset(w->dk, 0xAA, sizeof(w->dk));
	w->rc = w->use_gen ? get_gen(w->f, w->e, w->pw, w->gen, w->dk)
	                   : get(w->f, w->e, w->pw, w->dk);
	snprintf(w->detail, sizeof(w->detail), "%s", wks_error_detail());
	return NULL;
}

static void run_workers(fx *f, worker *w, int n)
{
	pthread_t t[NTHREADS];
	pthread_barrier_t bar;
	int i;

	assert_true(n <= NTHREADS);
	pthread_barrier_init(&bar, NULL, (unsigned)n);
	for (i = 0; i < n; i++) {
		w[i].f = f;
		w[i].bar = &bar;
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
}

static void test_cache__single_flight(void **state)
{
	fx *f = *state;
	worker w[NTHREADS];
	uint8_t want[WKS_DK_LEN];
	wks_cache_stats s;
	int i;

	memset(w, 0, sizeof(w));
	atomic_store(&f->n.derive_sleep_ms, 50);
	for (i = 0; i < NTHREADS; i++) {
		w[i].e = &f->e[0];
		w[i].pw = "correct horse";
	}
	run_workers(f, w, NTHREADS);
	fake_dk(want, &f->e[0], "correct horse");
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(w[i].rc, WKS_OK);
		assert_memory_equal(w[i].dk, want, WKS_DK_LEN);
	}
	assert_int_equal(DERIVES(f), 1);
	s = stats(f);
	assert_int_equal(s.misses, 1);
	assert_int_equal(s.hits, NTHREADS - 1);
	assert_int_equal(s.size, 1);
}

static void test_cache__single_flight_different_passwords(void **state)
{
	fx *f = *state;
	static const char *pws[NTHREADS] = { "p0", "p1", "p2", "p3",
	                                     "p4", "p5", "p6", "p7" };
	worker w[NTHREADS];
	uint8_t want[WKS_DK_LEN];
	int i;

	memset(w, 0, sizeof(w));
	f->e[0].any_pw = 1; /* every password valid: each its own key */
	atomic_store(&f->n.derive_sleep_ms, 50);
	for (i = 0; i < NTHREADS; i++) {
		w[i].e = &f->e[0];
		w[i].pw = pws[i];
	}
	run_workers(f, w, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(w[i].rc, WKS_OK);
		fake_dk(want, &f->e[0], pws[i]);
		assert_memory_equal(w[i].dk, want, WKS_DK_LEN);
	}
	assert_int_equal(DERIVES(f), NTHREADS);
	assert_int_equal(stats(f).size, NTHREADS);
}

/* Half the threads with the right password, half with one wrong one: one
 * flight each; the wrong flight's waiters get no key and the same error. */
static void test_cache__single_flight_wrong_password(void **state)
{
	fx *f = *state;
	worker w[NTHREADS];
	uint8_t want[WKS_DK_LEN], zero[WKS_DK_LEN] = { 0 };
	int i;

	memset(w, 0, sizeof(w));
	atomic_store(&f->n.derive_sleep_ms, 50);
	for (i = 0; i < NTHREADS; i++) {
		w[i].e = &f->e[0];
		w[i].pw = i % 2 ? "wrong" : "correct horse";
	}
	run_workers(f, w, NTHREADS);
	fake_dk(want, &f->e[0], "correct horse");
	for (i = 0; i < NTHREADS; i++) {
		if (i % 2) {
			assert_int_equal(w[i].rc, WKS_ERR_INTEGRITY);
			assert_memory_equal(w[i].dk, zero, WKS_DK_LEN);
			assert_string_equal(w[i].detail, "fake MAC mismatch");
		} else {
			assert_int_equal(w[i].rc, WKS_OK);
			assert_memory_equal(w[i].dk, want, WKS_DK_LEN);
		}
	}
	assert_int_equal(DERIVES(f), 2);
	assert_int_equal(stats(f).size, 1);
	assert_int_equal(stats(f).inserts, 1);
}

/* The leader fails for another reason (out of memory): waiters try again
 * themselves (one of them leads the next flight). */
static void test_cache__single_flight_leader_error(void **state)
{
	fx *f = *state;
	worker w[NTHREADS];
	int i, nomem = 0;

	memset(w, 0, sizeof(w));
	atomic_store(&f->n.derive_sleep_ms, 50);
	atomic_store(&f->n.derive_fail_once, 1);
	for (i = 0; i < NTHREADS; i++) {
		w[i].e = &f->e[0];
		w[i].pw = "correct horse";
	}
	run_workers(f, w, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		if (w[i].rc == WKS_ERR_NOMEM)
			nomem++;
		else
			assert_int_equal(w[i].rc, WKS_OK);
	}
	assert_int_equal(nomem, 1);
	assert_int_equal(DERIVES(f), 2);
	assert_int_equal(stats(f).size, 1);
}

typedef struct {
	fx *f;
	atomic_int started;
} dropper;

static void *drop_later(void *arg)
{
	dropper *d = arg;

	while (atomic_load(&d->f->n.derives) == 0)
		sleep_ms(1);
	wks__cache_drop_entry(d->f->c, d->f->e[0].id);
	return NULL;
}

/* A drop while the key is being derived: the result is returned but not
 * cached (it belongs to a deleted entry). */
static void test_cache__drop_during_derive(void **state)
{
	fx *f = *state;
	dropper d = { f, 0 };
	pthread_t t;

	atomic_store(&f->n.derive_sleep_ms, 100);
	assert_int_equal(pthread_create(&t, NULL, drop_later, &d), 0);
	expect_ok(f, &f->e[0], "correct horse");
	pthread_join(t, NULL);
	assert_int_equal(stats(f).size, 0);
	assert_int_equal(stats(f).inserts, 0);
	/* other entries are cached as usual */
	atomic_store(&f->n.derive_sleep_ms, 0);
	expect_ok(f, &f->e[1], "correct horse");
	assert_int_equal(stats(f).size, 1);
}

/* The single flight: threads that looked the entry up before it was
 * dropped (their generation read first) wait on one leader; the drop runs
 * just before the leader's insert.  Neither the leader nor any waiter
 * that then leads a new flight caches the dead entry's key. */
static void test_cache__single_flight_drop_before_insert(void **state)
{
	fx *f = *state;
	worker w[NTHREADS];
	uint8_t want[WKS_DK_LEN];
	uint64_t gen = wks__cache_generation(f->c);
	int i;

	memset(w, 0, sizeof(w));
	g_hook_fx = f;
	atomic_store(&g_hook_calls, 0);
	atomic_store(&f->n.derive_sleep_ms, 50);
	wks__cache_test_before_insert = drop_in_hook;
	for (i = 0; i < NTHREADS; i++) {
		w[i].e = &f->e[0];
		w[i].pw = "correct horse";
		w[i].use_gen = 1;
		w[i].gen = gen;
	}
	run_workers(f, w, NTHREADS);
	wks__cache_test_before_insert = NULL;
	fake_dk(want, &f->e[0], "correct horse");
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(w[i].rc, WKS_OK);
		assert_memory_equal(w[i].dk, want, WKS_DK_LEN);
	}
	assert_true(atomic_load(&g_hook_calls) >= 1);
	assert_int_equal(stats(f).inserts, 0);
	assert_int_equal(stats(f).size, 0);
}

/* A clear while a key is derived: not cached either. */
static void *clear_later(void *arg)
{
	dropper *d = arg;

	while (atomic_load(&d->f->n.derives) == 0)
		sleep_ms(1);
	wks__cache_clear(d->f->c);
	return NULL;
}

static void test_cache__clear_during_derive(void **state)
{
	fx *f = *state;
	dropper d = { f, 0 };
	pthread_t t;

	atomic_store(&f->n.derive_sleep_ms, 100);
	assert_int_equal(pthread_create(&t, NULL, clear_later, &d), 0);
	expect_ok(f, &f->e[0], "correct horse");
	pthread_join(t, NULL);
	assert_int_equal(stats(f).size, 0);
	atomic_store(&f->n.derive_sleep_ms, 0);
	expect_ok(f, &f->e[0], "correct horse"); /* a clear kills no id */
	assert_int_equal(stats(f).size, 1);
}

/* Hits, misses, drops, clears, sweeps and toggles from many threads at
 * once: no crash, no wrong key (run it under TSan). */
typedef struct {
	fx *f;
	int id;
	int errors;
} churner;

/* Entry k's current id: a drop kills an id, so the dropping thread moves
 * the entry to a new one first (as a store's overwrite does). */
static atomic_uint churn_gen[4];

static uint64_t churn_id(int k)
{
	return (uint64_t)(k + 1) * 1000000u + atomic_load(&churn_gen[k]);
}

static void *churn(void *arg)
{
	churner *ch = arg;
	fx *f = ch->f;
	wks_settings cfg = f->cfg;
	uint8_t dk[WKS_DK_LEN], want[WKS_DK_LEN];
	fake_call call;
	int i, k;

	for (i = 0; i < 400; i++) {
		k = (i * 7 + ch->id) % 4;
		call.e = &f->e[k];
		call.pw = "correct horse";
		call.n = &f->n;
		cfg.cache_enabled = (i % 17) != 0;
		if (wks__cache_obtain(f->c, &cfg, churn_id(k),
		                      (const uint8_t *)call.pw, strlen(call.pw),
		                      f->e[k].salt, f->e[k].iterations,
		                      fake_derive, fake_verify, &call, dk) != WKS_OK) {
			ch->errors++;
			continue;
		}
		fake_dk(want, &f->e[k], call.pw);
		if (memcmp(dk, want, WKS_DK_LEN) != 0)
			ch->errors++;
		if (ch->id == 0 && i % 50 == 0)
			wks__cache_clear(f->c);
		if (ch->id == 1 && i % 13 == 0) {
			uint64_t dead = churn_id(i % 4);

			atomic_fetch_add(&churn_gen[i % 4], 1);
			wks__cache_drop_entry(f->c, dead);
		}
		if (ch->id == 2 && i % 11 == 0) {
			wks_cache_stats s;

			wks__cache_stats(f->c, &s);
			wks__cache_sweep(f->c, &cfg);
			advance(f, 1);
		}
	}
	return NULL;
}

static void test_cache__concurrent_churn(void **state)
{
	fx *f = *state;
	pthread_t t[4];
	churner ch[4];
	int i;

	f->cfg.cache_max_entries = 3;
	f->cfg.cache_ttl_ms = 40;
	f->cfg.cache_idle_ms = 15;
	for (i = 0; i < 4; i++) {
		ch[i].f = f;
		ch[i].id = i;
		ch[i].errors = 0;
		assert_int_equal(pthread_create(&t[i], NULL, churn, &ch[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(ch[i].errors, 0);
	}
	assert_true(stats(f).size <= 3);
}

/* ---- reaper ---------------------------------------------------------------------- */

static void reaper_settings(wks_settings *out, void *ctx)
{
	fx *f = ctx;

	*out = f->cfg;
	out->cache_ttl_ms = 1000; /* shorter than the TTL of the inserts */
}

static void test_cache__reaper(void **state)
{
	fx *f = *state;
	wks_cache_stats s;
	int i;

	expect_ok(f, &f->e[0], "correct horse");
	expect_ok(f, &f->e[1], "correct horse");
	wks__cache_register(f->c, reaper_settings, f);
	advance(f, 5000);
	/* by the settings of the inserts (300 s) nothing is due yet */
	assert_int_equal(stats(f).size, 2);
	TU_OK(wks_cache_reaper(20));
	for (i = 0; i < 200; i++) {
		s = stats(f);
		if (s.size == 0)
			break;
		sleep_ms(10);
	}
	assert_int_equal(s.size, 0);
	assert_int_equal(s.expirations, 2);
	TU_OK(wks_cache_reaper(5));  /* re-time */
	TU_OK(wks_cache_reaper(0));  /* stop */
	TU_OK(wks_cache_reaper(0));  /* stopped already */
	/* stopped: no more sweeps */
	expect_ok(f, &f->e[0], "correct horse");
	advance(f, 5000);
	sleep_ms(60);
	assert_int_equal(stats(f).size, 1);
	wks__cache_unregister(f->c);
}

/* Caches created and freed while the reaper sweeps every millisecond. */
static void test_cache__reaper_vs_free(void **state)
{
	fx *f = *state;
	wks_cache *c;
	fake_call call = { &f->e[0], "correct horse", &f->n };
	uint8_t dk[WKS_DK_LEN];
	int i;

	(void)state;
	TU_OK(wks_cache_reaper(1));
	for (i = 0; i < 100; i++) {
		assert_int_equal(wks__cache_new(&c), WKS_OK);
		wks__cache_register(c, reaper_settings, f);
		TU_OK(wks__cache_obtain(c, &f->cfg, f->e[0].id,
		                        (const uint8_t *)call.pw, strlen(call.pw),
		                        f->e[0].salt, f->e[0].iterations,
		                        fake_derive, fake_verify, &call, dk));
		if (i % 3 == 0)
			sleep_ms(1);
		wks__cache_unregister(c);
		wks__cache_free(c);
	}
	/* free without unregistering first is safe too */
	assert_int_equal(wks__cache_new(&c), WKS_OK);
	wks__cache_register(c, reaper_settings, f);
	sleep_ms(3);
	wks__cache_free(c);
	TU_OK(wks_cache_reaper(0));
}

/* ---- locked memory ----------------------------------------------------------- */

static atomic_int warnings;

static void count_warning(const char *msg, void *ctx)
{
	(void)ctx;
	if (strstr(msg, "mlock"))
		atomic_fetch_add(&warnings, 1);
}

/* In a child process without CAP_IPC_LOCK and with RLIMIT_MEMLOCK 0:
 * mlock fails, one warning is given, the cache still works. */
static int memlock_child(fx *f)
{
	struct rlimit rl;
	wks_cache *c1, *c2;
	fake_call call = { &f->e[0], "correct horse", &f->n };
	uint8_t dk[WKS_DK_LEN];
	struct {
		uint32_t version;
		int pid;
	} hdr = { 0x20080522, 0 }; /* _LINUX_CAPABILITY_VERSION_3 */
	struct {
		uint32_t effective, permitted, inheritable;
	} data[2];

	if (syscall(SYS_capget, &hdr, data) == 0) {
		data[0].effective &= ~(1u << 14); /* CAP_IPC_LOCK */
		data[0].permitted &= ~(1u << 14);
		if (syscall(SYS_capset, &hdr, data) != 0)
			return 10;
	}
	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
		return 11;
	rl.rlim_cur = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0)
		return 12;
	{
		/* Sanitizers replace mlock by a no-op that succeeds: then
		 * there is nothing to test here. */
		static char page[8192];
		char *p = (char *)(((uintptr_t)page + 4095) & ~(uintptr_t)4095);

		if (mlock(p, 4096) == 0)
			return 99;
	}
	wks_set_warning_handler(count_warning, NULL);
	if (wks__cache_new(&c1) != WKS_OK || wks__cache_new(&c2) != WKS_OK)
		return 13;
	if (wks__cache_obtain(c1, &f->cfg, 1, (const uint8_t *)"correct horse",
	                      13, f->e[0].salt, f->e[0].iterations, fake_derive,
	                      fake_verify, &call, dk) != WKS_OK)
		return 14;
	if (wks__cache_obtain(c2, &f->cfg, 1, (const uint8_t *)"correct horse",
	                      13, f->e[0].salt, f->e[0].iterations, fake_derive,
	                      fake_verify, &call, dk) != WKS_OK)
		return 15;
	if (wks__cache_obtain(c1, &f->cfg, 1, (const uint8_t *)"correct horse",
	                      13, f->e[0].salt, f->e[0].iterations, fake_derive,
	                      fake_verify, &call, dk) != WKS_OK)
		return 16;
	if (atomic_load(&f->n.derives) != 2)
		return 17; /* the third call was a hit */
	wks__cache_free(c1);
	wks__cache_free(c2);
	return atomic_load(&warnings) == 1 ? 0 : 20 + atomic_load(&warnings);
}

static void test_cache__mlock_failure_warns_once(void **state)
{
	fx *f = *state;
	pid_t pid;
	int st;

	f->e[0].id = 1; /* the id memlock_child uses */
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(memlock_child(f));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 99)
		skip(); /* mlock cannot fail here (sanitizer build) */
	assert_int_equal(WEXITSTATUS(st), 0);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_cache__disabled),
		T(test_cache__hit_and_miss),
		T(test_cache__identical_cached_uncached),
		T(test_cache__wrong_password_after_hit),
		T(test_cache__ttl),
		T(test_cache__idle_timeout),
		T(test_cache__drop_entry_precise),
		T(test_cache__stale_generation_not_inserted),
		T(test_cache__drop_before_insert),
		T(test_cache__drop_entry_all_passwords),
		T(test_cache__clear),
		T(test_cache__lru_bound),
		T(test_cache__lru_ties_evict_oldest_insert),
		T(test_cache__failed_mac_removes),
		T(test_cache__corrupt_slot_rederived),
		T(test_cache__trust_hits),
		T(test_cache__lookup),
		T(test_cache__no_sharing),
		T(test_cache__settings_at_run_time),
		T(test_cache__sweep),
		T(test_cache__stats),
		T(test_cache__clock_restore),
		T(test_cache__shielded_at_rest),
		T(test_cache__single_flight),
		T(test_cache__single_flight_different_passwords),
		T(test_cache__single_flight_wrong_password),
		T(test_cache__single_flight_leader_error),
		T(test_cache__drop_during_derive),
		T(test_cache__clear_during_derive),
		T(test_cache__single_flight_drop_before_insert),
		T(test_cache__concurrent_churn),
		T(test_cache__mlock_failure_warns_once),
		T(test_cache__reaper),
		T(test_cache__reaper_vs_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
