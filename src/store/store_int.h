/* The keystore object, shared by the files of src/store/. */
#ifndef WKS_STORE_STORE_INT_H
#define WKS_STORE_STORE_INT_H

#include <pthread.h>

#include "cache/cache.h"
#include "config/config.h"
#include "crypto/crypto.h"
#include "format/format.h"
#include "store/decode.h"
#include "util/buf.h"
#include "util/fork.h"
#include "util/stripelock.h"

/*
 * Entries are kept sorted by alias (API-form bytes), so lookups are binary
 * searches and listings come out sorted.  `lock` guards `v`/`n`/`cap`
 * only: entries themselves are immutable and reference counted, so a
 * reader takes a reference under the read lock and works (PBKDF2,
 * decryption) with no lock held.
 */
struct wks_store {
	wks_stripelock lock;
	wks_entry **v;
	size_t n;
	size_t cap;
	wks_props *props;
	wks_cache *cache;
	wks_crypto_ctx *crypto; /* wks_store_new_ex(); NULL: default context */
	wks_fork_hook fork;     /* `lock` held across fork() (store.c) */
	wks_clock_fn wallclock; /* dates new entries; NULL: CLOCK_REALTIME */
	void *wallclock_ctx;
};

static inline unsigned wks__rdlock(wks_store *st)
{
	unsigned s = wks_stripe_mine();

	wks_stripelock_rdlock(&st->lock, s);
	return s;
}

static inline void wks__rdunlock(wks_store *st, unsigned s)
{
	wks_stripelock_rdunlock(&st->lock, s);
}

static inline void wks__wrlock(wks_store *st)
{
	wks_stripelock_wrlock(&st->lock);
}

static inline void wks__wrunlock(wks_store *st)
{
	wks_stripelock_wrunlock(&st->lock);
}

/* Canonical API form of a caller's alias into b (NUL-terminated). */
int wks__alias_key(wks_buf *b, const char *alias);

/* The lookup key of a caller's alias: the alias itself if it is plain
 * ASCII (no copy), else its canonical form built in tmp (dispose it). */
int wks__alias_lookup(const char **k, size_t *n, wks_buf *tmp,
                      const char *alias);

/* Binary search under the caller's lock: 1 and the index if found, 0 and
 * the insertion point if not. */
int wks__map_find(const wks_store *st, const char *alias, size_t len,
                  size_t *idx);

/* Insert or replace under the write lock; *old receives the replaced
 * entry (or NULL).  Takes over the caller's reference to e. */
int wks__map_put(wks_store *st, wks_entry *e, wks_entry **old);

/* Remove index i under the write lock, returning its entry. */
wks_entry *wks__map_take(wks_store *st, size_t i);

/* A referenced entry for an alias (NULL and WKS_ERR_NOTFOUND if absent). */
int wks__store_get_entry(wks_entry **out, wks_store *st, const char *alias);

/* TEST ONLY: called (when set) by wks_store_get_key() after it has
 * looked its entry up and before it derives and caches the key, with no
 * lock held: lets a test run a load, delete or overwrite exactly there. */
extern void (*wks__store_test_after_lookup)(wks_store *st, const char *alias);

/* Resolve the store's settings. */
void wks__store_settings(wks_settings *out, wks_store *st);

/* Milliseconds since the epoch (CLOCK_REALTIME), for creation times. */
int64_t wks__now_ms(void);
/* The creation time of a new entry of st: its wallclock, else
 * wks__now_ms(). */
int64_t wks__store_now_ms(const wks_store *st);

#endif
