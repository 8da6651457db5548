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
	struct wks_keypool *keypool; /* keys made ahead (keypool.c); under
	                              * the write lock */
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
/* The same for an alias to be created (the setters, rename's target):
 * WKS_ERR_LIMIT if its modified UTF-8 (the file's form) is longer than
 * 65535 bytes, which no save could write. */
int wks__alias_key_new(wks_buf *b, const char *alias);

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

/* ---- key entries (keys.c), for the batches (batch.c) ---------------- */

/* The key entries (private and secret keys) of `st`, each referenced,
 * taken under its read lock (batch.c; cache warming and export/import):
 * *out (NULL when none) and *n_out; release with
 * wks__store_entries_release(). */
int wks__store_key_entries(wks_entry ***out, size_t *n_out, wks_store *st);
void wks__store_entries_release(wks_entry **v, size_t n);

/* The checks before a key entry is opened, in spec 7.2's order (a
 * certificate entry is refused without looking at the password, then an
 * empty password, then an iteration count above the limit). */
int wks__key_check(const wks_entry *e, const char *pw, size_t pw_len,
                   const wks_settings *cfg);
/* The entry MAC with a derived key: WKS_OK or WKS_ERR_INTEGRITY. */
int wks__key_verify(const wks_entry *e, const uint8_t dk[WKS_DK_LEN],
                    const wks_settings *cfg);
/* Decrypt an entry's key with a verified derived key into a new wks_key. */
int wks__key_open(wks_key **out, const wks_entry *e,
                  const uint8_t dk[WKS_DK_LEN], const wks_settings *cfg);
/* WKS_ERR_LIMIT when a new entry could not be loaded with cfg
 * (iterationCount above maxIterationCount); checked before deriving. */
int wks__key_seal_check(const wks_settings *cfg);
/* Entry e's body re-encrypted: its decrypted key `plain` sealed with salt
 * and dk (derived at cfg->iteration_count), fresh IV, new MAC; creation
 * time, algorithm and chain kept. */
int wks__key_rebody(wks_buf *body, const wks_entry *e, const uint8_t *plain,
                    size_t plain_len, const uint8_t salt[WKS_SALT_LEN],
                    const uint8_t dk[WKS_DK_LEN], const wks_settings *cfg);

/* ---- keys made ahead for new entries (keypool.c) ---------------------- */

/*
 * For a setter about to seal a new entry with pw at cfg->iteration_count:
 * take a salt and the key derived from it, made ahead by
 * wks_store_prepare_keys() or for an announced run of entries
 * (wks__store_expect_keys()).  WKS_OK with salt and dk set (each made-ahead
 * key is handed out once), WKS__KEYPOOL_NONE when none is ready (the
 * caller derives its own), or an error of the derivation run here for an
 * announced run.
 */
#define WKS__KEYPOOL_NONE 1
int wks__keypool_take(wks_store *st, const wks_settings *cfg, const char *pw,
                      size_t pw_len, uint8_t salt[WKS_SALT_LEN],
                      uint8_t dk[WKS_DK_LEN]);

/*
 * Announce that about n new key entries are about to be set (a
 * conversion): when the first of them finds no key made ahead, the keys
 * of the next min(n, one pass of the batch) entries with its password are
 * derived together, and so on.  At most one pass is derived for entries
 * that never come.  n == 0 ends the run and wipes the keys made for it
 * and not taken.
 */
void wks__store_expect_keys(wks_store *st, size_t n);

/* Wipe and free the keys made ahead (wks_store_free()). */
void wks__keypool_free(wks_store *st);

/* Resolve the store's settings. */
void wks__store_settings(wks_settings *out, wks_store *st);

/* Milliseconds since the epoch (CLOCK_REALTIME), for creation times. */
int64_t wks__now_ms(void);
/* The creation time of a new entry of st: its wallclock, else
 * wks__now_ms(). */
int64_t wks__store_now_ms(const wks_store *st);

#endif
