/* KEK cache: derived entry keys (96 bytes: AES key + HMAC key) kept after
 * their first verified use, so that repeated get_key skips PBKDF2.
 * See docs/CACHE.md for the design and include/wks/wks.h for the contract.
 *
 * One wks_cache per store.  It is internally synchronised: the store calls
 * it without holding its own lock.  Lookups are by a tag =
 * HMAC-SHA512(per-cache random secret, entry_id || iterations || salt ||
 * password); nothing stored is an unkeyed hash of the password.  Values
 * are shielded (encrypted under a random key in locked, MADV_DONTDUMP
 * memory) and unshielded only into the caller's buffer. */
#ifndef WKS_CACHE_CACHE_H
#define WKS_CACHE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "wks/wks.h"
#include "config/config.h"
#include "crypto/crypto.h"

typedef struct wks_cache wks_cache;

int wks__cache_new(wks_cache **out);
/* Wipes everything; the cache must be idle. */
void wks__cache_free(wks_cache *c);

/* Runs PBKDF2 for the entry into dk (no lock held by the caller). */
typedef int (*wks_derive_fn)(uint8_t dk[WKS_DK_LEN], void *ctx);
/* Verifies the entry MAC with dk[32..96): WKS_OK or WKS_ERR_INTEGRITY. */
typedef int (*wks_verify_fn)(const uint8_t dk[WKS_DK_LEN], void *ctx);

/*
 * Obtain the verified derived key of one key entry for one password.
 *
 *  - cache disabled (cfg->cache_enabled == 0): derive, verify, return;
 *    nothing is looked up or inserted (entries already cached stay).
 *  - enabled, hit (tag found, not expired): unshield into dk, verify; if
 *    the MAC fails, that cache entry is removed (wiped) and
 *    WKS_ERR_INTEGRITY returned.
 *  - enabled, miss: single flight per tag: one thread derives (with no
 *    cache lock held) and verifies; on success the key is inserted (LRU
 *    bound, TTL, idle timeout from cfg); threads missing the same tag
 *    meanwhile wait for that result instead of deriving again.  A failed
 *    verification inserts nothing.
 *
 * entry_id identifies the key entry (unique per entry object for the
 * store's life).  On failure dk is wiped.  Updates the statistics
 * (derivations counts every derive call).  The generation is read at the
 * call (see wks__cache_generation() for callers that look entries up).
 */
int wks__cache_obtain(wks_cache *c, const wks_settings *cfg, uint64_t entry_id,
                      const uint8_t *pw, size_t pw_len,
                      const uint8_t salt[WKS_SALT_LEN], uint32_t iterations,
                      wks_derive_fn derive, wks_verify_fn verify, void *ctx,
                      uint8_t dk[WKS_DK_LEN]);

/*
 * The cache's generation: changed by every drop and clear (and after a
 * fork).  A caller that will insert what it derives for an entry reads it
 * BEFORE it looks the entry up (under the store's lock) and passes it to
 * wks__cache_obtain_ex(), which inserts only if neither a clear nor a drop
 * of that entry ran in between.  The store removes an entry from its map
 * first and drops or clears the cache after, so a get_key that found an
 * entry which is removed meanwhile either inserts before that drop
 * (which then removes the key) or sees the drop and inserts nothing: no
 * key is ever cached for an entry that no longer exists, however many
 * drops happen meanwhile.  The last WKS_CACHE_DROPS drops are remembered
 * with their entries, so drops of other entries cost nothing; only when
 * more drops than that ran during one derivation is its insert refused
 * (the next get_key caches the key).
 */
uint64_t wks__cache_generation(wks_cache *c);

/*
 * As wks__cache_obtain(), with the generation read before the entry
 * lookup (above) and flags:
 *
 *  WKS_CACHE_TRUST_HITS: a hit returns the cached key without calling
 *    verify.  Sound because the key was verified against this very entry
 *    when it was inserted (entry_id names one immutable entry object and
 *    the tag binds it with the password, salt and iterations), and the
 *    cached bytes carry a keyed check value, so a corrupted value is
 *    dropped and re-derived instead of returned.  It saves the entry MAC
 *    (the whole body, ~2 KB for an RSA-2048 entry with its certificate)
 *    on every hit.  Misses always verify.
 */
#define WKS_CACHE_TRUST_HITS 1u
int wks__cache_obtain_ex(wks_cache *c, const wks_settings *cfg,
                         uint64_t entry_id, const uint8_t *pw, size_t pw_len,
                         const uint8_t salt[WKS_SALT_LEN], uint32_t iterations,
                         wks_derive_fn derive, wks_verify_fn verify, void *ctx,
                         unsigned flags, uint64_t gen, uint8_t dk[WKS_DK_LEN]);

/* TEST ONLY: called (when set) by wks__cache_obtain_ex() after a verified
 * derivation, just before the insert, with the cache's locks released:
 * lets a test run a drop or clear exactly there. */
extern void (*wks__cache_test_before_insert)(wks_cache *c, uint64_t entry_id);

/*
 * The hit path alone, for a caller that wants to do no more than a
 * lookup (e.g. while holding its own read lock, to avoid taking a
 * reference on the entry): if the cache is enabled and holds a key for
 * this tag, unshield it into dk and return WKS_OK (a hit, counted, with
 * WKS_CACHE_TRUST_HITS semantics: no verification callback); otherwise
 * return WKS_CACHE_MISS (dk wiped, nothing counted) and the caller goes on
 * with wks__cache_obtain_ex().  Never derives, never blocks on a flight,
 * never calls back.  Takes only the cache's own locks.
 */
#define WKS_CACHE_MISS 1
int wks__cache_lookup(wks_cache *c, const wks_settings *cfg, uint64_t entry_id,
                      const uint8_t *pw, size_t pw_len,
                      const uint8_t salt[WKS_SALT_LEN], uint32_t iterations,
                      uint8_t dk[WKS_DK_LEN]);

/*
 * For a caller that derives and verifies keys itself, many at once (the
 * store's batches): insert dk, verified against entry_id with this
 * password, as wks__cache_obtain_ex() would after its own derivation
 * (same generation rule: `gen` read before the entry was looked up; no
 * insert if the tag is there already).  Nothing if the cache is disabled.
 * Batches take no part in the single flight: a get_key missing the same
 * tag meanwhile derives too, and the second insert is skipped.
 */
void wks__cache_put(wks_cache *c, const wks_settings *cfg, uint64_t gen,
                    uint64_t entry_id, const uint8_t *pw, size_t pw_len,
                    const uint8_t salt[WKS_SALT_LEN], uint32_t iterations,
                    const uint8_t dk[WKS_DK_LEN]);

/* Count `n` derivations made outside wks__cache_obtain() (batches), and
 * as many misses when the cache is enabled. */
void wks__cache_count_derivations(wks_cache *c, const wks_settings *cfg,
                                  uint64_t n);

/* Remove (wipe) every cached key of one entry (delete / overwrite). */
void wks__cache_drop_entry(wks_cache *c, uint64_t entry_id);
/* Remove (wipe) everything (load, explicit clear). */
void wks__cache_clear(wks_cache *c);
/* Remove (wipe) expired keys now (TTL / idle per cfg). */
void wks__cache_sweep(wks_cache *c, const wks_settings *cfg);
void wks__cache_stats(wks_cache *c, wks_cache_stats *out);
/* NULL restores CLOCK_MONOTONIC. */
void wks__cache_set_clock(wks_cache *c, wks_clock_fn fn, void *ctx);

/*
 * fork(): a child process starts with every cache empty, with new random
 * keys (made at its first use, in newly locked pages), statistics at zero
 * and no reaper thread (restarted at the child's first cache miss if the
 * parent ran one).  The pages holding keys are also MADV_WIPEONFORK
 * (secmem.c), so a child never sees the parent's keys or shielded values.
 * Registered caches are reset by the reaper's pthread_atfork() handlers
 * (reaper.c), which hold their locks across the fork; any other cache at
 * its first use in the child.
 */
void wks__cache_atfork_lock(wks_cache *c);   /* prepare: all its locks */
void wks__cache_atfork_unlock(wks_cache *c); /* parent: release them */
void wks__cache_atfork_child(wks_cache *c);  /* child: new locks, reset */
/* Counts the forks this process went through (bumped in the child);
 * installs the handlers at the first call. */
unsigned wks__cache_forks(void);
/* Restart the reaper in a child if its parent ran one (cheap otherwise). */
void wks__cache_reaper_resume(void);

/*
 * The reaper: the store registers its cache (and a function that resolves
 * its current settings) while alive; the reaper thread, when started,
 * sweeps every registered cache each interval.
 */
typedef void (*wks_settings_fn)(wks_settings *out, void *ctx);
void wks__cache_register(wks_cache *c, wks_settings_fn fn, void *ctx);
void wks__cache_unregister(wks_cache *c);

/*
 * TEST ONLY -- not for library code.  1 if `needle` (len > 0 bytes)
 * occurs anywhere in the locked memory of cache `c` (the shielded value
 * pool and the key page), or, for the _all variant, of any cache
 * registered with wks__cache_register() (every live store's).  Used by
 * the tests to show that no plaintext derived key is kept at rest.
 */
int wks__cache_test_find(wks_cache *c, const uint8_t *needle, size_t len);
int wks__cache_test_find_all(const uint8_t *needle, size_t len);
/* TEST ONLY: keys cached now in `c` / in all registered caches, without
 * sweeping (wks__cache_stats() sweeps first), to watch the reaper. */
size_t wks__cache_test_count(wks_cache *c);
size_t wks__cache_test_count_all(void);
/* TEST ONLY: flip one bit in every cached (shielded) value of `c`, as a
 * memory fault would. */
void wks__cache_test_corrupt(wks_cache *c);
/* TEST ONLY: the shielding keystream of `c` for `nonce` (len <=
 * WKS_SHIELD_MAX bytes; 0, or -1 if the cache has no keys yet), the next
 * serial (nonce) it will use, its key page and one value slot (NULL if
 * none), to compare a forked child's with its parent's. */
int wks__cache_test_keystream(wks_cache *c, uint64_t nonce, uint8_t *out,
                              size_t len);
uint64_t wks__cache_test_next_serial(wks_cache *c);
const void *wks__cache_test_key_page(wks_cache *c);
const void *wks__cache_test_slot(wks_cache *c);

#endif
