/* The KEK cache's entries: a chained hash table on the tag, a list in
 * insertion order, expiry (TTL from insertion, idle timeout from the last
 * hit) and the LRU bound.  Callers hold the locks (see cache_int.h). */
#include "cache/cache_int.h"

#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "util/wipe.h"

#define MIN_BUCKETS 16

int wks__table_init(wks_cache *c)
{
	c->buckets = NULL;
	c->nbuckets = 0;
	c->count = 0;
	c->head = c->tail = NULL;
	c->next_serial = 1;
	c->oldest_insert = UINT64_MAX;
	c->oldest_use = UINT64_MAX;
	wks__secpool_init(&c->pool, WKS_CACHE_SLOT);
	return WKS_OK;
}

void wks__table_destroy(wks_cache *c)
{
	while (c->head)
		wks__table_remove(c, c->head);
	free(c->buckets);
	c->buckets = NULL;
	c->nbuckets = 0;
	wks__secpool_release(&c->pool);
}

/* Tags are HMAC outputs: any 8 of their bytes are a uniform hash. */
static size_t bucket_of(const wks_cache *c, const uint8_t *tag)
{
	uint64_t h;

	memcpy(&h, tag, sizeof(h));
	return (size_t)(h & (c->nbuckets - 1));
}

wks_cache_ent *wks__table_find(wks_cache *c, const uint8_t tag[WKS_CACHE_TAG_LEN])
{
	wks_cache_ent *e;

	if (c->nbuckets == 0)
		return NULL;
	for (e = c->buckets[bucket_of(c, tag)]; e; e = e->hnext)
		if (wks__mac_equal(e->tag, tag, WKS_CACHE_TAG_LEN))
			return e;
	return NULL;
}

static int age_at_least(uint64_t now, uint64_t since, uint64_t limit)
{
	/* A clock that went backwards (a test clock) counts as age 0. */
	return now >= since && now - since >= limit;
}

int wks__table_expired(const wks_cache_ent *e, uint64_t ttl_ms,
                       uint64_t idle_ms, uint64_t now)
{
	if (age_at_least(now, e->inserted_ms, ttl_ms))
		return 1;
	return idle_ms != 0 &&
	       age_at_least(now, atomic_load_explicit(&e->used_ms,
	                                              memory_order_relaxed),
	                    idle_ms);
}

int wks__table_due(const wks_cache *c, uint64_t ttl_ms, uint64_t idle_ms,
                   size_t max, uint64_t now)
{
	if (c->count == 0)
		return 0;
	return c->count > max || age_at_least(now, c->oldest_insert, ttl_ms) ||
	       (idle_ms != 0 && age_at_least(now, c->oldest_use, idle_ms));
}

/* A 64-bit multiply-xorshift hash of the key's words: it is stored
 * shielded (XORed with keystream), so it reveals nothing, and any
 * corruption of the slot changes it with overwhelming probability. */
void wks__cache_check(uint8_t out[8], const uint8_t dk[WKS_DK_LEN])
{
	uint64_t h = 0x9E3779B97F4A7C15u, w;
	size_t i;

	for (i = 0; i < WKS_DK_LEN; i += 8) {
		memcpy(&w, dk + i, 8);
		h = (h ^ w) * 0xFF51AFD7ED558CCDu;
		h ^= h >> 33;
	}
	memcpy(out, &h, 8);
}

void wks__table_remove(wks_cache *c, wks_cache_ent *e)
{
	wks_cache_ent **link = &c->buckets[bucket_of(c, e->tag)];

	while (*link != e)
		link = &(*link)->hnext;
	*link = e->hnext;
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	c->count--;
	wks__secpool_put(&c->pool, e->ct); /* wipes the shielded value */
	wks_wipe_free(e, sizeof(*e));      /* and the tag */
	if (c->count == 0) {
		c->oldest_insert = UINT64_MAX;
		c->oldest_use = UINT64_MAX;
		/* Nothing cached: give back the last locked page too. */
		wks__secpool_release(&c->pool);
	}
}

/* The least recently used entry; ties (same millisecond) go to the oldest
 * insertion. */
static wks_cache_ent *lru_victim(wks_cache *c)
{
	wks_cache_ent *e, *v = NULL;
	uint64_t best = UINT64_MAX, u;

	for (e = c->head; e; e = e->next) {
		u = atomic_load_explicit(&e->used_ms, memory_order_relaxed);
		if (!v || u < best) {
			v = e;
			best = u;
		}
	}
	return v;
}

static void evict_to(wks_cache *c, size_t keep)
{
	while (c->count > keep) {
		wks__table_remove(c, lru_victim(c));
		WKS_CACHE_COUNT(c, evictions, 1);
	}
}

void wks__table_sweep(wks_cache *c, uint64_t ttl_ms, uint64_t idle_ms,
                      size_t max, uint64_t now)
{
	wks_cache_ent *e, *next;
	uint64_t oi = UINT64_MAX, ou = UINT64_MAX, u;

	for (e = c->head; e; e = next) {
		next = e->next;
		if (wks__table_expired(e, ttl_ms, idle_ms, now)) {
			wks__table_remove(c, e);
			WKS_CACHE_COUNT(c, expirations, 1);
			continue;
		}
		u = atomic_load_explicit(&e->used_ms, memory_order_relaxed);
		if (e->inserted_ms < oi)
			oi = e->inserted_ms;
		if (u < ou)
			ou = u;
	}
	c->oldest_insert = oi;
	c->oldest_use = ou;
	evict_to(c, max);
}

static int grow(wks_cache *c)
{
	size_t n = c->nbuckets ? c->nbuckets * 2 : MIN_BUCKETS;
	wks_cache_ent **b, *e;

	if (n > SIZE_MAX / sizeof(*b))
		return WKS_ERR_NOMEM;
	if (!(b = calloc(n, sizeof(*b))))
		return WKS_ERR_NOMEM;
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
	for (e = c->head; e; e = e->next) {
		size_t k = bucket_of(c, e->tag);

		e->hnext = b[k];
		b[k] = e;
	}
	return WKS_OK;
}

int wks__table_insert(wks_cache *c, wks_cache_ent *e,
                      const uint8_t tag[WKS_CACHE_TAG_LEN], uint64_t entry_id,
                      const uint8_t dk[WKS_DK_LEN], size_t max, uint64_t now)
{
	wks_cache_keys *k = atomic_load_explicit(&c->keys, memory_order_acquire);
	uint8_t v[WKS_CACHE_SLOT];
	size_t b;

	if (max == 0)
		max = 1;
	evict_to(c, max - 1);
	if (c->count + 1 > c->nbuckets && grow(c) < 0)
		goto nomem;
	if (!(e->ct = wks__secpool_get(&c->pool)))
		goto nomem;
	memcpy(e->tag, tag, WKS_CACHE_TAG_LEN);
	e->entry_id = entry_id;
	e->serial = c->next_serial++;
	e->inserted_ms = now;
	atomic_store_explicit(&e->used_ms, now, memory_order_relaxed);
	memcpy(v, dk, WKS_DK_LEN);
	wks__cache_check(v + WKS_DK_LEN, dk);
	wks__cache_shield(e->ct, v, WKS_CACHE_SLOT, k, e->serial);
	wks_wipe(v, sizeof(v));

	b = bucket_of(c, tag);
	e->hnext = c->buckets[b];
	c->buckets[b] = e;
	e->next = NULL;
	e->prev = c->tail;
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	c->count++;
	if (now < c->oldest_insert)
		c->oldest_insert = now;
	if (now < c->oldest_use)
		c->oldest_use = now;
	WKS_CACHE_COUNT(c, inserts, 1);
	return WKS_OK;
nomem:
	if (c->count == 0)
		wks__secpool_release(&c->pool);
	wks_wipe_free(e, sizeof(*e));
	return WKS_ERR_NOMEM;
}
