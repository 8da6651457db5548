/* Internals of the KEK cache shared by its files:
 *
 *   cache.c   lifecycle, wks__cache_obtain(), clock, statistics, locking
 *   table.c   the entries: hash table, insert, remove, expiry, LRU bound
 *   flight.c  single flight of concurrent misses on one tag
 *   shield.c  keyed tags and value shielding; secmem.c locked memory
 *   reaper.c  the process-wide background sweeper
 *
 * Locking.  The entry table is guarded by a reader-writer lock split in
 * WKS_CACHE_STRIPES stripes, each on its own cache line: a reader takes
 * the read lock of its thread's stripe only, a writer takes the write
 * lock of every stripe in index order.  Concurrent cache hits therefore
 * touch no shared cache line for locking (a single rwlock would make the
 * lock word itself bounce between cores on every hit).  Fields marked
 * [W] are written only with all stripes write-locked and read with any
 * stripe held.  flight_mu guards the flights; it is taken after the
 * stripes, never before.  No lock is held while a callback runs. */
#ifndef WKS_CACHE_CACHE_INT_H
#define WKS_CACHE_CACHE_INT_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "cache/secmem.h"
#include "cache/shield.h"
#include "util/stripelock.h"

#define WKS_CACHE_STRIPES WKS_STRIPES
/* Drops remembered for inserts that race them (see insert()). */
#define WKS_CACHE_DROPS 256
/* A pool slot: the derived key and its 8-byte check value, shielded. */
#define WKS_CACHE_SLOT (WKS_DK_LEN + 8)

typedef struct wks_cache_ent {
	uint8_t tag[WKS_CACHE_TAG_LEN];
	uint64_t entry_id;
	uint64_t serial;      /* unique per insertion; also the shield nonce */
	uint64_t inserted_ms;
	_Atomic uint64_t used_ms; /* last hit; written by readers (relaxed) */
	uint8_t *ct;          /* WKS_CACHE_SLOT shielded bytes, in the pool */
	struct wks_cache_ent *hnext;      /* hash chain */
	struct wks_cache_ent *prev, *next; /* all entries, oldest first */
} wks_cache_ent;

typedef struct wks_flight {
	uint8_t tag[WKS_CACHE_TAG_LEN];
	int done;
	int result;     /* the leader's outcome, once done */
	unsigned refs;  /* leader + waiters */
	char detail[256]; /* the leader's error detail, for waiters */
	pthread_cond_t cv;
	struct wks_flight *next;
} wks_flight;

/* Statistics are striped like the lock, so that counting a hit does not
 * bounce a shared counter between cores either. */
typedef struct {
	alignas(WKS_CACHE_LINE) _Atomic uint64_t hits;
	_Atomic uint64_t misses;
	_Atomic uint64_t inserts;
	_Atomic uint64_t evictions;
	_Atomic uint64_t expirations;
	_Atomic uint64_t invalidations;
	_Atomic uint64_t derivations;
} wks_cache_counters;

struct wks_cache {
	wks_stripelock lock;
	wks_cache_counters ctr[WKS_CACHE_STRIPES];

	/* Keys: created at the first enabled use, then immutable until
	 * free; published with release/acquire so hits read them unlocked. */
	_Atomic(wks_cache_keys *) keys;

	/* The table [W] */
	wks_cache_ent **buckets;
	size_t nbuckets;       /* power of two, or 0 */
	size_t count;
	wks_cache_ent *head, *tail;
	uint64_t next_serial;
	wks_secpool pool;
	/* The generation: bumped by every drop and clear (and after a
	 * fork).  Written [W]; read without a lock by
	 * wks__cache_generation().  An insert whose caller read another
	 * value before looking its entry up is refused (see cache.h). */
	_Atomic uint64_t gen;
	/* [W] The generation the last clear (or fork reset) moved to, and
	 * the entries the last WKS_CACHE_DROPS drops removed, each with the
	 * generation it moved to: an insert whose generation is older is
	 * refused only if its own entry was dropped since, or a clear ran,
	 * or more drops ran than this ring remembers (see insert()). */
	uint64_t clear_gen;
	uint64_t drop_id[WKS_CACHE_DROPS];
	uint64_t drop_gen[WKS_CACHE_DROPS];
	/* The fork generation this cache's state belongs to (see
	 * wks__cache_after_fork()); read without a lock on every use. */
	_Atomic unsigned forkgen;
	/* Lower bounds of the entries' insertion and last-use times
	 * (UINT64_MAX when empty): the cheap "is anything due?" test run on
	 * every operation.  Exact after each sweep. */
	uint64_t oldest_insert;
	uint64_t oldest_use;

	/* Clock [W] */
	wks_clock_fn clock;
	void *clock_ctx;

	/* The last settings seen, for operations that get none (drop,
	 * stats); all zero until the first one. */
	_Atomic uint64_t last_ttl_ms;
	_Atomic uint64_t last_idle_ms;
	_Atomic size_t last_max;
	_Atomic int last_valid;

	pthread_mutex_t flight_mu;
	wks_flight *flights;
};

/* cache.c */
unsigned wks__cache_my_stripe(void);
void wks__cache_rdlock(wks_cache *c, unsigned s);
void wks__cache_rdunlock(wks_cache *c, unsigned s);
void wks__cache_wrlock(wks_cache *c);
void wks__cache_wrunlock(wks_cache *c);
uint64_t wks__cache_now(wks_cache *c); /* any stripe held */
#define WKS_CACHE_COUNT(c, field, n) \
	atomic_fetch_add_explicit(&(c)->ctr[wks__cache_my_stripe()].field, \
	                          (uint64_t)(n), memory_order_relaxed)

/* The check value stored (shielded) after a cached key: detects a
 * corrupted slot before the key is used. */
void wks__cache_check(uint8_t out[8], const uint8_t dk[WKS_DK_LEN]);

/* table.c: everything with the write lock held unless noted */
int wks__table_init(wks_cache *c);
void wks__table_destroy(wks_cache *c);
/* Any stripe held. */
wks_cache_ent *wks__table_find(wks_cache *c, const uint8_t tag[WKS_CACHE_TAG_LEN]);
/* Any stripe held: 1 if some entry may be expired or over the bound. */
int wks__table_due(const wks_cache *c, uint64_t ttl_ms, uint64_t idle_ms,
                   size_t max, uint64_t now);
int wks__table_expired(const wks_cache_ent *e, uint64_t ttl_ms,
                       uint64_t idle_ms, uint64_t now);
/* Remove expired entries, then evict least recently used ones down to
 * max; recomputes the lower bounds. */
void wks__table_sweep(wks_cache *c, uint64_t ttl_ms, uint64_t idle_ms,
                      size_t max, uint64_t now);
/* Insert dk shielded under tag; evicts down to max - 1 first.  `e` is a
 * preallocated entry (consumed in every case).  WKS_OK / WKS_ERR_NOMEM. */
int wks__table_insert(wks_cache *c, wks_cache_ent *e,
                      const uint8_t tag[WKS_CACHE_TAG_LEN], uint64_t entry_id,
                      const uint8_t dk[WKS_DK_LEN], size_t max, uint64_t now);
/* Unlink, wipe and free one entry (no statistics). */
void wks__table_remove(wks_cache *c, wks_cache_ent *e);

/* flight.c */
/* Join the flight on `tag` (returns it, *leader = 0) or start one
 * (*leader = 1).  NULL on allocation failure. */
wks_flight *wks__flight_enter(wks_cache *c, const uint8_t tag[WKS_CACHE_TAG_LEN],
                              int *leader);
/* Waiter: block until the leader finishes; returns its result and copies
 * its error detail to detail[detail_len].  f is released. */
int wks__flight_wait(wks_cache *c, wks_flight *f, char *detail,
                     size_t detail_len);
/* Leader: publish the result (with this thread's error detail when it
 * failed) and wake the waiters. */
void wks__flight_finish(wks_cache *c, wks_flight *f, int result);
/* In a child after fork(): forget the flights of the parent's threads
 * (they do not exist here; their memory is abandoned). */
void wks__flight_forget_all(wks_cache *c);

#endif
