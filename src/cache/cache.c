/* KEK cache: lifecycle, the get_key path (wks__cache_obtain), locking,
 * clock and statistics.  See cache_int.h for the layout and locks and
 * docs/CACHE.md for the design. */
#include "cache/cache_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto/crypto.h"
#include "util/error.h"
#include "util/wipe.h"

#define R_MISS WKS_CACHE_MISS /* try_hit(): not cached (or expired) */

/* ---- locking ------------------------------------------------------------- */

unsigned wks__cache_my_stripe(void)
{
	return wks_stripe_mine();
}

void wks__cache_rdlock(wks_cache *c, unsigned s)
{
	wks_stripelock_rdlock(&c->lock, s);
}

void wks__cache_rdunlock(wks_cache *c, unsigned s)
{
	wks_stripelock_rdunlock(&c->lock, s);
}

void wks__cache_wrlock(wks_cache *c)
{
	wks_stripelock_wrlock(&c->lock);
}

void wks__cache_wrunlock(wks_cache *c)
{
	wks_stripelock_wrunlock(&c->lock);
}

/* ---- clock ----------------------------------------------------------------- */

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t wks__cache_now(wks_cache *c)
{
	return c->clock ? c->clock(c->clock_ctx) : monotonic_ms();
}

void wks__cache_set_clock(wks_cache *c, wks_clock_fn fn, void *ctx)
{
	wks__cache_wrlock(c);
	c->clock = fn;
	c->clock_ctx = fn ? ctx : NULL;
	wks__cache_wrunlock(c);
}

/* ---- lifecycle ------------------------------------------------------------- */

int wks__cache_new(wks_cache **out)
{
	wks_cache *c;

	*out = NULL;
	c = aligned_alloc(alignof(wks_cache), sizeof(wks_cache));
	if (!c)
		return wks__err(WKS_ERR_NOMEM, "out of memory for the KEK cache");
	memset(c, 0, sizeof(*c));
	if (wks_stripelock_init(&c->lock) != 0) {
		free(c);
		return wks__err(WKS_ERR_NOMEM, "cannot create the KEK cache lock");
	}
	pthread_mutex_init(&c->flight_mu, NULL);
	atomic_init(&c->keys, NULL);
	atomic_init(&c->gen, 0);
	atomic_init(&c->forkgen, wks__cache_forks());
	wks__table_init(c);
	*out = c;
	return WKS_OK;
}

void wks__cache_free(wks_cache *c)
{
	wks_cache_keys *k;

	if (!c)
		return;
	wks__cache_unregister(c); /* the reaper lets go of it first */
	wks__cache_wrlock(c);
	wks__table_destroy(c);
	wks__cache_wrunlock(c);
	k = atomic_load_explicit(&c->keys, memory_order_acquire);
	wks__cache_keys_free(k);
	wks_stripelock_destroy(&c->lock);
	pthread_mutex_destroy(&c->flight_mu);
	wks_wipe_free(c, sizeof(*c));
}

/* The random keys are made at the first enabled use: a store that never
 * enables the cache never maps locked memory. */
static wks_cache_keys *get_keys(wks_cache *c)
{
	wks_cache_keys *k = atomic_load_explicit(&c->keys, memory_order_acquire);
	wks_cache_keys *none = NULL;

	if (k)
		return k;
	if (wks__cache_keys_new(&k) < 0)
		return NULL;
	if (!atomic_compare_exchange_strong_explicit(&c->keys, &none, k,
	                                             memory_order_acq_rel,
	                                             memory_order_acquire)) {
		wks__cache_keys_free(k); /* another thread won */
		k = none;
	}
	return k;
}

/* ---- fork ------------------------------------------------------------------- */

/* Write lock held, or the only thread of a new child.  Everything the
 * parent had goes: cached keys (their pages, already zero in the child
 * where MADV_WIPEONFORK is supported, are unmapped), the random keys (new
 * ones are made at the next use, so no keystream is shared with the
 * parent), the flights of the parent's threads and the statistics. */
static void reset_after_fork(wks_cache *c, unsigned forks)
{
	wks_cache_keys *k;
	unsigned i;

	wks__table_destroy(c);
	k = atomic_exchange_explicit(&c->keys, NULL, memory_order_acq_rel);
	wks__cache_keys_free(k);
	wks__flight_forget_all(c);
	for (i = 0; i < WKS_CACHE_STRIPES; i++) {
		wks_cache_counters *n = &c->ctr[i];

		atomic_store(&n->hits, 0);
		atomic_store(&n->misses, 0);
		atomic_store(&n->inserts, 0);
		atomic_store(&n->evictions, 0);
		atomic_store(&n->expirations, 0);
		atomic_store(&n->invalidations, 0);
		atomic_store(&n->derivations, 0);
	}
	c->clear_gen = atomic_fetch_add_explicit(&c->gen, 1,
	                                         memory_order_release) + 1;
	atomic_store_explicit(&c->forkgen, forks, memory_order_release);
}

void wks__cache_atfork_lock(wks_cache *c)
{
	wks__cache_wrlock(c);
	pthread_mutex_lock(&c->flight_mu);
}

void wks__cache_atfork_unlock(wks_cache *c)
{
	pthread_mutex_unlock(&c->flight_mu);
	wks__cache_wrunlock(c);
}

void wks__cache_atfork_child(wks_cache *c)
{
	/* The locks were taken by a thread of the parent: new ones. */
	wks_stripelock_init(&c->lock);
	pthread_mutex_init(&c->flight_mu, NULL);
	reset_after_fork(c, wks__cache_forks());
}

/* On every use, one load of a process-wide counter (after a
 * pthread_once() check): a cache not reset by the fork handlers (not
 * registered) is reset here, at its first use after a fork. */
static void check_fork(wks_cache *c)
{
	unsigned forks = wks__cache_forks();

	if (atomic_load_explicit(&c->forkgen, memory_order_acquire) == forks)
		return;
	wks__cache_wrlock(c);
	if (atomic_load_explicit(&c->forkgen, memory_order_relaxed) != forks)
		reset_after_fork(c, forks);
	wks__cache_wrunlock(c);
}

/* ---- settings and sweeping ------------------------------------------------- */

typedef struct {
	uint64_t ttl_ms, idle_ms;
	size_t max;
} limits;

static limits limits_of(const wks_settings *cfg)
{
	limits l = { cfg->cache_ttl_ms, cfg->cache_idle_ms,
	             cfg->cache_max_entries ? cfg->cache_max_entries : 1 };
	return l;
}

/* Remember the settings for the operations that are not given any. Only
 * written when they change, so hits keep the line shared. */
static void remember(wks_cache *c, limits l)
{
	if (atomic_load_explicit(&c->last_ttl_ms, memory_order_relaxed) != l.ttl_ms)
		atomic_store_explicit(&c->last_ttl_ms, l.ttl_ms, memory_order_relaxed);
	if (atomic_load_explicit(&c->last_idle_ms, memory_order_relaxed) != l.idle_ms)
		atomic_store_explicit(&c->last_idle_ms, l.idle_ms, memory_order_relaxed);
	if (atomic_load_explicit(&c->last_max, memory_order_relaxed) != l.max)
		atomic_store_explicit(&c->last_max, l.max, memory_order_relaxed);
	if (!atomic_load_explicit(&c->last_valid, memory_order_relaxed))
		atomic_store_explicit(&c->last_valid, 1, memory_order_relaxed);
}

static int remembered(wks_cache *c, limits *l)
{
	if (!atomic_load_explicit(&c->last_valid, memory_order_relaxed))
		return 0;
	l->ttl_ms = atomic_load_explicit(&c->last_ttl_ms, memory_order_relaxed);
	l->idle_ms = atomic_load_explicit(&c->last_idle_ms, memory_order_relaxed);
	l->max = atomic_load_explicit(&c->last_max, memory_order_relaxed);
	return 1;
}

/* Write lock held. */
static void sweep_locked(wks_cache *c, limits l)
{
	uint64_t now = wks__cache_now(c);

	if (wks__table_due(c, l.ttl_ms, l.idle_ms, l.max, now))
		wks__table_sweep(c, l.ttl_ms, l.idle_ms, l.max, now);
}

/* The cheap test under a read lock; the sweep only if something is due. */
static void maybe_sweep(wks_cache *c, limits l)
{
	unsigned s = wks__cache_my_stripe();
	int due;

	wks__cache_rdlock(c, s);
	due = wks__table_due(c, l.ttl_ms, l.idle_ms, l.max, wks__cache_now(c));
	wks__cache_rdunlock(c, s);
	if (due) {
		wks__cache_wrlock(c);
		sweep_locked(c, l);
		wks__cache_wrunlock(c);
	}
}

void wks__cache_sweep(wks_cache *c, const wks_settings *cfg)
{
	limits l = limits_of(cfg);

	check_fork(c);
	remember(c, l);
	wks__cache_wrlock(c);
	wks__table_sweep(c, l.ttl_ms, l.idle_ms, l.max, wks__cache_now(c));
	wks__cache_wrunlock(c);
}

/* ---- removal ---------------------------------------------------------------- */

void wks__cache_drop_entry(wks_cache *c, uint64_t entry_id)
{
	wks_cache_ent *e, *next;
	uint64_t g;
	limits l;

	check_fork(c);
	wks__cache_wrlock(c);
	/* No get_key that looked this entry up before this point inserts
	 * its key from now on (see wks__cache_generation() and insert()). */
	g = atomic_fetch_add_explicit(&c->gen, 1, memory_order_release) + 1;
	c->drop_id[g % WKS_CACHE_DROPS] = entry_id;
	c->drop_gen[g % WKS_CACHE_DROPS] = g;
	for (e = c->head; e; e = next) {
		next = e->next;
		if (e->entry_id == entry_id) {
			wks__table_remove(c, e);
			WKS_CACHE_COUNT(c, invalidations, 1);
		}
	}
	if (remembered(c, &l))
		sweep_locked(c, l);
	wks__cache_wrunlock(c);
}

void wks__cache_clear(wks_cache *c)
{
	uint64_t n;

	check_fork(c);
	wks__cache_wrlock(c);
	c->clear_gen = atomic_fetch_add_explicit(&c->gen, 1,
	                                         memory_order_release) + 1;
	n = c->count;
	wks__table_destroy(c);
	WKS_CACHE_COUNT(c, invalidations, n);
	wks__cache_wrunlock(c);
}

/* Remove the entry we read if it is still the same object (its serial). */
static void remove_serial(wks_cache *c, const uint8_t *tag, uint64_t serial)
{
	wks_cache_ent *e;

	wks__cache_wrlock(c);
	e = wks__table_find(c, tag);
	if (e && e->serial == serial) {
		wks__table_remove(c, e);
		WKS_CACHE_COUNT(c, invalidations, 1);
	}
	wks__cache_wrunlock(c);
}

/* ---- statistics ---------------------------------------------------------- */

void wks__cache_stats(wks_cache *c, wks_cache_stats *out)
{
	unsigned s = wks__cache_my_stripe(), i;
	limits l;

	memset(out, 0, sizeof(*out));
	check_fork(c);
	if (remembered(c, &l))
		maybe_sweep(c, l);
	wks__cache_rdlock(c, s);
	out->size = c->count;
	wks__cache_rdunlock(c, s);
	for (i = 0; i < WKS_CACHE_STRIPES; i++) {
		const wks_cache_counters *k = &c->ctr[i];

		out->hits += atomic_load_explicit(&k->hits, memory_order_relaxed);
		out->misses += atomic_load_explicit(&k->misses, memory_order_relaxed);
		out->inserts += atomic_load_explicit(&k->inserts, memory_order_relaxed);
		out->evictions += atomic_load_explicit(&k->evictions, memory_order_relaxed);
		out->expirations += atomic_load_explicit(&k->expirations, memory_order_relaxed);
		out->invalidations += atomic_load_explicit(&k->invalidations, memory_order_relaxed);
		out->derivations += atomic_load_explicit(&k->derivations, memory_order_relaxed);
	}
}

/* ---- the get_key path -------------------------------------------------------- */

static int derive_verify(wks_cache *c, wks_derive_fn derive,
                         wks_verify_fn verify, void *ctx, uint8_t *dk)
{
	int err;

	WKS_CACHE_COUNT(c, derivations, 1);
	if ((err = derive(dk, ctx)) == WKS_OK)
		err = verify(dk, ctx);
	if (err < 0)
		wks_wipe(dk, WKS_DK_LEN);
	return err;
}

/*
 * The hit path: one read lock on this thread's stripe, a lookup, the
 * unshield straight into dk and a relaxed last-use update; no allocation.
 * The MAC check runs after the lock is released.  Returns WKS_OK (hit,
 * verified), R_MISS, or the verification's error (a failed MAC removes
 * the entry).
 */
static int try_hit(wks_cache *c, limits l, const wks_cache_keys *k,
                   const uint8_t tag[WKS_CACHE_TAG_LEN], wks_verify_fn verify,
                   void *ctx, unsigned flags, uint8_t dk[WKS_DK_LEN])
{
	unsigned s = wks__cache_my_stripe();
	uint8_t v[WKS_CACHE_SLOT], chk[8];
	wks_cache_ent *e;
	uint64_t now, used, serial;
	int err, intact;

	wks__cache_rdlock(c, s);
	now = wks__cache_now(c);
	if (wks__table_due(c, l.ttl_ms, l.idle_ms, l.max, now)) {
		wks__cache_rdunlock(c, s);
		wks__cache_wrlock(c);
		sweep_locked(c, l);
		wks__cache_wrunlock(c);
		wks__cache_rdlock(c, s);
		now = wks__cache_now(c);
	}
	e = wks__table_find(c, tag);
	if (!e || wks__table_expired(e, l.ttl_ms, l.idle_ms, now)) {
		/* (An expired e here is left to the next operation's sweep.) */
		wks__cache_rdunlock(c, s);
		return R_MISS;
	}
	wks__cache_shield(v, e->ct, WKS_CACHE_SLOT, k, e->serial);
	used = atomic_load_explicit(&e->used_ms, memory_order_relaxed);
	while (used < now &&
	       !atomic_compare_exchange_weak_explicit(&e->used_ms, &used, now,
	                                              memory_order_relaxed,
	                                              memory_order_relaxed))
		;
	serial = e->serial;
	wks__cache_rdunlock(c, s);

	memcpy(dk, v, WKS_DK_LEN);
	wks__cache_check(chk, dk);
	intact = wks__mac_equal(chk, v + WKS_DK_LEN, sizeof(chk));
	wks_wipe(v, sizeof(v));
	wks_wipe(chk, sizeof(chk)); /* a hash of the key */
	if (!intact) {
		/* A damaged slot: never use it, derive afresh instead. */
		wks_wipe(dk, WKS_DK_LEN);
		remove_serial(c, tag, serial);
		return R_MISS;
	}
	if ((flags & WKS_CACHE_TRUST_HITS) || (err = verify(dk, ctx)) == WKS_OK) {
		WKS_CACHE_COUNT(c, hits, 1);
		return WKS_OK;
	}
	wks_wipe(dk, WKS_DK_LEN);
	if (err == WKS_ERR_INTEGRITY)
		remove_serial(c, tag, serial);
	return err;
}

uint64_t wks__cache_generation(wks_cache *c)
{
	check_fork(c);
	return atomic_load_explicit(&c->gen, memory_order_acquire);
}

void (*wks__cache_test_before_insert)(wks_cache *c, uint64_t entry_id);

/* Whether entry_id may be inserted by a caller that read the generation
 * `gen` before it looked its entry up: not if a clear ran since, nor a
 * drop of this entry, nor more drops than the ring remembers (then it
 * cannot tell, and refuses).  Write lock held: every drop and clear
 * changes the generation and the ring under it. */
static int still_live(const wks_cache *c, uint64_t gen, uint64_t entry_id)
{
	uint64_t cur = atomic_load_explicit(&c->gen, memory_order_relaxed), g;

	if (cur == gen)
		return 1;
	if (c->clear_gen > gen || cur - gen > WKS_CACHE_DROPS)
		return 0;
	for (g = gen + 1; g <= cur; g++)
		if (c->drop_gen[g % WKS_CACHE_DROPS] == g &&
		    c->drop_id[g % WKS_CACHE_DROPS] == entry_id)
			return 0;
	return 1;
}

/* Insert after a verified derivation, unless its entry may be gone since
 * the caller read the generation `gen` before looking it up (see
 * still_live() and wks__cache_generation()), or the tag is already
 * there. */
static void insert(wks_cache *c, limits l, uint64_t gen,
                   const uint8_t tag[WKS_CACHE_TAG_LEN], uint64_t entry_id,
                   const uint8_t dk[WKS_DK_LEN])
{
	wks_cache_ent *e;
	uint64_t now;

	if (wks__cache_test_before_insert)
		wks__cache_test_before_insert(c, entry_id);
	if (!(e = calloc(1, sizeof(*e))))
		return; /* the key is returned anyway, just not cached */
	wks__cache_wrlock(c);
	if (!still_live(c, gen, entry_id) || wks__table_find(c, tag)) {
		wks_wipe_free(e, sizeof(*e));
	} else {
		now = wks__cache_now(c);
		if (wks__table_due(c, l.ttl_ms, l.idle_ms, l.max, now))
			wks__table_sweep(c, l.ttl_ms, l.idle_ms, l.max, now);
		wks__table_insert(c, e, tag, entry_id, dk, l.max, now);
	}
	wks__cache_wrunlock(c);
}

int wks__cache_obtain(wks_cache *c, const wks_settings *cfg, uint64_t entry_id,
                      const uint8_t *pw, size_t pw_len,
                      const uint8_t salt[WKS_SALT_LEN], uint32_t iterations,
                      wks_derive_fn derive, wks_verify_fn verify, void *ctx,
                      uint8_t dk[WKS_DK_LEN])
{
	return wks__cache_obtain_ex(c, cfg, entry_id, pw, pw_len, salt,
	                            iterations, derive, verify, ctx, 0,
	                            wks__cache_generation(c), dk);
}

int wks__cache_obtain_ex(wks_cache *c, const wks_settings *cfg,
                         uint64_t entry_id, const uint8_t *pw, size_t pw_len,
                         const uint8_t salt[WKS_SALT_LEN], uint32_t iterations,
                         wks_derive_fn derive, wks_verify_fn verify, void *ctx,
                         unsigned flags, uint64_t gen, uint8_t dk[WKS_DK_LEN])
{
	uint8_t tag[WKS_CACHE_TAG_LEN];
	char detail[sizeof(((wks_flight *)0)->detail)];
	limits l = limits_of(cfg);
	const wks_cache_keys *k;
	wks_flight *f;
	int err, leader;

	check_fork(c);
	if (!cfg->cache_enabled) {
		/* Off: nothing looked up or added, but what is cached from
		 * before still expires on time. */
		maybe_sweep(c, l);
		return derive_verify(c, derive, verify, ctx, dk);
	}
	remember(c, l);
	if (!(k = get_keys(c))) {
		/* No memory for the keys: work uncached. */
		maybe_sweep(c, l);
		WKS_CACHE_COUNT(c, misses, 1);
		return derive_verify(c, derive, verify, ctx, dk);
	}
	wks__cache_tag(tag, k, entry_id, iterations, salt, pw, pw_len);
	for (;;) {
		if ((err = try_hit(c, l, k, tag, verify, ctx, flags, dk)) != R_MISS)
			break;
		f = wks__flight_enter(c, tag, &leader);
		if (!f) {
			WKS_CACHE_COUNT(c, misses, 1);
			err = derive_verify(c, derive, verify, ctx, dk);
			break;
		}
		if (!leader) {
			err = wks__flight_wait(c, f, detail, sizeof(detail));
			if (err == WKS_ERR_INTEGRITY) {
				/* Same tag, same entry and password: our
				 * own attempt would fail the same way. */
				wks__err(err, "%s", detail);
				break;
			}
			continue; /* success: it is cached; else try again */
		}
		/* A leader that finished between our miss and our flight
		 * inserted before unlinking its flight: look once more. */
		if ((err = try_hit(c, l, k, tag, verify, ctx, flags, dk)) == R_MISS) {
			WKS_CACHE_COUNT(c, misses, 1);
			wks__cache_reaper_resume();
			err = derive_verify(c, derive, verify, ctx, dk);
			if (err == WKS_OK)
				insert(c, l, gen, tag, entry_id, dk);
		}
		wks__flight_finish(c, f, err);
		break;
	}
	wks_wipe(tag, sizeof(tag));
	if (err < 0)
		wks_wipe(dk, WKS_DK_LEN);
	return err;
}

void wks__cache_put(wks_cache *c, const wks_settings *cfg, uint64_t gen,
                    uint64_t entry_id, const uint8_t *pw, size_t pw_len,
                    const uint8_t salt[WKS_SALT_LEN], uint32_t iterations,
                    const uint8_t dk[WKS_DK_LEN])
{
	uint8_t tag[WKS_CACHE_TAG_LEN];
	const wks_cache_keys *k;
	limits l = limits_of(cfg);

	check_fork(c);
	if (!cfg->cache_enabled)
		return;
	remember(c, l);
	if (!(k = get_keys(c)))
		return; /* no memory for the keys: the caller works uncached */
	wks__cache_reaper_resume();
	wks__cache_tag(tag, k, entry_id, iterations, salt, pw, pw_len);
	insert(c, l, gen, tag, entry_id, dk);
	wks_wipe(tag, sizeof(tag));
}

void wks__cache_count_derivations(wks_cache *c, const wks_settings *cfg,
                                  uint64_t n)
{
	check_fork(c);
	WKS_CACHE_COUNT(c, derivations, n);
	if (cfg->cache_enabled)
		WKS_CACHE_COUNT(c, misses, n);
}

int wks__cache_lookup(wks_cache *c, const wks_settings *cfg, uint64_t entry_id,
                      const uint8_t *pw, size_t pw_len,
                      const uint8_t salt[WKS_SALT_LEN], uint32_t iterations,
                      uint8_t dk[WKS_DK_LEN])
{
	uint8_t tag[WKS_CACHE_TAG_LEN];
	const wks_cache_keys *k;
	limits l = limits_of(cfg);
	int err;

	check_fork(c);
	if (!cfg->cache_enabled ||
	    !(k = atomic_load_explicit(&c->keys, memory_order_acquire))) {
		/* (Off, or nothing ever cached: no keys yet.) */
		wks_wipe(dk, WKS_DK_LEN);
		return R_MISS;
	}
	remember(c, l);
	wks__cache_tag(tag, k, entry_id, iterations, salt, pw, pw_len);
	err = try_hit(c, l, k, tag, NULL, NULL, WKS_CACHE_TRUST_HITS, dk);
	wks_wipe(tag, sizeof(tag));
	if (err != WKS_OK) {
		wks_wipe(dk, WKS_DK_LEN);
		err = R_MISS;
	}
	return err;
}

/* ---- test only ------------------------------------------------------------- */

int wks__cache_test_find(wks_cache *c, const uint8_t *needle, size_t len)
{
	wks_cache_keys *k;
	int found;

	wks__cache_wrlock(c);
	k = atomic_load_explicit(&c->keys, memory_order_acquire);
	found = wks__secpool_test_find(&c->pool, needle, len) ||
	        (k && wks__cache_keys_test_find(k, needle, len));
	wks__cache_wrunlock(c);
	return found;
}

size_t wks__cache_test_count(wks_cache *c)
{
	unsigned s = wks__cache_my_stripe();
	size_t n;

	wks__cache_rdlock(c, s);
	n = c->count;
	wks__cache_rdunlock(c, s);
	return n;
}

void wks__cache_test_corrupt(wks_cache *c)
{
	wks_cache_ent *e;

	wks__cache_wrlock(c);
	for (e = c->head; e; e = e->next)
		e->ct[e->serial % WKS_CACHE_SLOT] ^= 0x10;
	wks__cache_wrunlock(c);
}

int wks__cache_test_keystream(wks_cache *c, uint64_t nonce, uint8_t *out,
                              size_t len)
{
	wks_cache_keys *k;
	uint8_t zero[WKS_SHIELD_MAX];

	check_fork(c);
	k = atomic_load_explicit(&c->keys, memory_order_acquire);
	if (!k || len > sizeof(zero))
		return -1;
	memset(zero, 0, sizeof(zero));
	wks__cache_shield(out, zero, len, k, nonce);
	return 0;
}

uint64_t wks__cache_test_next_serial(wks_cache *c)
{
	uint64_t n;

	check_fork(c);
	wks__cache_wrlock(c);
	n = c->next_serial;
	wks__cache_wrunlock(c);
	return n;
}

const void *wks__cache_test_key_page(wks_cache *c)
{
	check_fork(c);
	return atomic_load_explicit(&c->keys, memory_order_acquire);
}

const void *wks__cache_test_slot(wks_cache *c)
{
	const void *p;

	check_fork(c);
	wks__cache_wrlock(c);
	p = c->head ? c->head->ct : NULL;
	wks__cache_wrunlock(c);
	return p;
}
