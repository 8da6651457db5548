/* Store lifecycle, properties, load and save (spec sections 5 and 6). */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto/crypto.h"
#include "store/file.h"
#include "store/lock.h"
#include "store/store_int.h"
#include "util/error.h"
#include "util/wipe.h"

int64_t wks__now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void wks__store_settings(wks_settings *out, wks_store *st)
{
	wks__settings_get(out, st ? st->props : NULL);
	out->crypto = st ? st->crypto : NULL;
}

static void settings_cb(wks_settings *out, void *ctx)
{
	wks__store_settings(out, ctx);
}

/* The store's lock is held across fork() (util/fork.h, rank STORE: a
 * reader enters the cache with it held), so a child never inherits it
 * held by a thread it does not have; the child makes it anew. */
static void store_fork_prepare(void *ctx)
{
	wks_store *st = ctx;

	wks__wrlock(st);
}

static void store_fork_parent(void *ctx)
{
	wks_store *st = ctx;

	wks__wrunlock(st);
}

static void store_fork_child(void *ctx)
{
	wks_store *st = ctx;

	/* Cannot fail here: the lock's memory exists, and glibc's
	 * rwlock_init allocates nothing. */
	(void)wks_stripelock_init(&st->lock);
}

#ifdef WKS_CRYPTO_OPENSSL
int wks_store_new(wks_store **out)
{
	return wks_store_new_ex(out, NULL, NULL);
}

int wks_store_new_ex(wks_store **out, OSSL_LIB_CTX *libctx, const char *propq)
#else
/* wolfCrypt: no library contexts, st->crypto stays NULL (crypto.h). */
int wks_store_new(wks_store **out)
#endif
{
	wks_store *st;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = NULL;
	/* aligned: the lock stripes sit on their own cache lines */
	if (!(st = aligned_alloc(alignof(wks_store), sizeof(*st))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	memset(st, 0, sizeof(*st));
	if (wks_stripelock_init(&st->lock) != 0) {
		free(st);
		return wks__err(WKS_ERR_NOMEM, "cannot create a lock");
	}
	if ((err = wks__props_new(&st->props)) < 0 ||
#ifdef WKS_CRYPTO_OPENSSL
	    (err = wks__crypto_ctx_new(&st->crypto, libctx, propq)) < 0 ||
#endif
	    (err = wks__cache_new(&st->cache)) < 0) {
		wks_store_free(st);
		return err;
	}
	wks__cache_register(st->cache, settings_cb, st);
	st->fork.rank = WKS_FORK_RANK_STORE;
	st->fork.prepare = store_fork_prepare;
	st->fork.parent = store_fork_parent;
	st->fork.child = store_fork_child;
	st->fork.ctx = st;
	wks__fork_hook_add(&st->fork);
	*out = st;
	return WKS_OK;
}

void wks_store_free(wks_store *st)
{
	if (!st)
		return;
	wks__fork_hook_remove(&st->fork);
	if (st->cache) {
		wks__cache_unregister(st->cache);
		wks__cache_free(st->cache);
	}
	wks__entries_free(st->v, st->n);
	wks__keypool_free(st);
	wks__props_free(st->props);
	wks__crypto_ctx_free(st->crypto);
	wks_stripelock_destroy(&st->lock);
	free(st);
}

int wks_store_set_property(wks_store *st, const char *name, const char *value)
{
	wks__err_clear();
	if (!st || !name)
		return wks__err(WKS_ERR_INVALID, "store or name is NULL");
	return wks__props_set(st->props, name, value);
}

int wks_probe(const uint8_t *data, size_t len)
{
	return data && len >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 0 &&
	       data[3] == WKS_MAGIC;
}

/* Verify the store MAC of a decoded file (spec 2.1), in constant time. */
static int check_store_mac(const uint8_t *data, const wks_file_info *fi,
                           const char *pw, size_t pw_len,
                           const wks_settings *cfg)
{
	uint8_t key[WKS_STORE_KEY_LEN], mac[WKS_MAC_LEN];
	int err;

	err = wks__pbkdf2_cc(cfg->crypto, key, sizeof(key), (const uint8_t *)pw,
	                     pw_len, fi->salt, WKS_SALT_LEN,
	                     (uint32_t)fi->iterations, cfg->kdf_impl,
	                     cfg->kdf_threads);
	if (err == WKS_OK &&
	    (err = wks__hmac_sha512_cc(cfg->crypto, mac, key, sizeof(key), data,
	                               fi->mac_input_len)) == WKS_OK) {
		if (!wks__mac_equal(mac, fi->mac, WKS_MAC_LEN))
			err = wks__err(WKS_ERR_INTEGRITY,
			               "integrity check failed: wrong password, or the "
			               "keystore was modified");
	}
	wks_wipe(key, sizeof(key));
	wks_wipe(mac, sizeof(mac));
	return err;
}

/* Sort by alias, keeping file order among equal aliases, then keep only
 * the last of each alias (Java's map insert: the last one wins). */
typedef struct {
	wks_entry *e;
	size_t index;
} ordered;

static int ordered_cmp(const void *pa, const void *pb)
{
	const ordered *a = pa, *b = pb;
	size_t an = a->e->alias_len, bn = b->e->alias_len;
	int c = memcmp(a->e->alias, b->e->alias, an < bn ? an : bn);

	if (c)
		return c;
	if (an != bn)
		return an < bn ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

static int sort_dedupe(wks_entry **v, size_t *n)
{
	ordered *o;
	size_t i, k = 0;

	if (*n < 2)
		return WKS_OK;
	if (!(o = malloc(*n * sizeof(*o))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (i = 0; i < *n; i++) {
		o[i].e = v[i];
		o[i].index = i;
	}
	qsort(o, *n, sizeof(*o), ordered_cmp);
	for (i = 0; i < *n; i++) {
		if (i + 1 < *n && o[i].e->alias_len == o[i + 1].e->alias_len &&
		    memcmp(o[i].e->alias, o[i + 1].e->alias, o[i].e->alias_len) == 0) {
			wks__entry_unref(o[i].e); /* a later record wins */
			continue;
		}
		v[k++] = o[i].e;
	}
	free(o);
	*n = k;
	return WKS_OK;
}

int wks_store_load_buffer(wks_store *st, const uint8_t *data, size_t len,
                          const char *pw, size_t pw_len)
{
	wks_entry **v = NULL, **old;
	wks_file_info fi;
	wks_settings cfg;
	size_t n = 0, old_n;
	int err;

	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	/* Like Java, a load clears the cache whatever its outcome. */
	wks__cache_clear(st->cache);
	if (!data && len)
		return wks__err(WKS_ERR_INVALID, "data is NULL");
	if (!pw)
		pw_len = 0;
	wks__store_settings(&cfg, st);
	if ((uint64_t)len > cfg.max_file_size)
		return wks__err(WKS_ERR_LIMIT, "keystore of %zu bytes exceeds "
		                "limit %llu (libwks.wks.maxFileSize)", len,
		                (unsigned long long)cfg.max_file_size);
	if (pw_len == 0 && cfg.require_integrity)
		return wks__err(WKS_ERR_INVALID,
		                "a password is required to load (libwks.wks."
		                "requireIntegrity is true)");
	if ((err = wks__decode(&v, &n, NULL, &fi, data, len, &cfg)) < 0)
		return err;
	if (pw_len && (err = check_store_mac(data, &fi, pw, pw_len, &cfg)) < 0)
		goto done;
	if ((err = sort_dedupe(v, &n)) < 0)
		goto done;
	wks__wrlock(st);
	old = st->v;
	old_n = st->n;
	st->v = v;
	st->n = st->cap = n;
	wks__wrunlock(st);
	v = old;
	n = old_n;
	/* Keys cached for the old entries meanwhile are dead: drop them. */
	wks__cache_clear(st->cache);
done:
	wks__entries_free(v, n);
	return err;
}

int wks_store_load_file(wks_store *st, const char *path, const char *pw,
                        size_t pw_len)
{
	wks_buf file = WKS_BUF_INIT;
	wks_settings cfg;
	size_t max;
	int err;

	wks__err_clear();
	if (!st || !path)
		return wks__err(WKS_ERR_INVALID, "store or path is NULL");
	wks__cache_clear(st->cache);
	wks__store_settings(&cfg, st);
	/* The read is bounded by the file's own size, which must be within
	 * libwks.wks.maxFileSize: the same bound a save keeps (save()), so
	 * that every file a save wrote loads back under the same settings. */
	max = cfg.max_file_size > SIZE_MAX ? SIZE_MAX : (size_t)cfg.max_file_size;
	if ((err = wks__file_read(&file, path, max, "libwks.wks.maxFileSize")) < 0)
		return err;
	err = wks_store_load_buffer(st, file.ptr, file.len, pw, pw_len);
	wks_buf_dispose(&file);
	return err;
}

int wks_store_load_locked(wks_store *st, const wks_lock *lock,
                          const char *pw, size_t pw_len)
{
	wks_buf file = WKS_BUF_INIT;
	wks_settings cfg;
	wks_file_id id;
	const char *path;
	unsigned kind;
	size_t max;
	int fd, err;

	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	if ((err = wks__lock_get(lock, &fd, &id, &path, &kind)) < 0)
		return err;
	wks__cache_clear(st->cache);
	wks__store_settings(&cfg, st);
	max = cfg.max_file_size > SIZE_MAX ? SIZE_MAX : (size_t)cfg.max_file_size;
	/* The bytes of the very file locked (its descriptor), whatever the
	 * path names now. */
	if ((err = wks__file_read_fd(&file, fd, path, max,
	                             "libwks.wks.maxFileSize")) < 0)
		return err;
	err = wks_store_load_buffer(st, file.ptr, file.len, pw, pw_len);
	wks_buf_dispose(&file);
	return err;
}

/* Serialise and MAC the current entries into out.  Refuses (WKS_ERR_LIMIT,
 * before any PBKDF2 and before the caller writes anything) a store that a
 * load under the same settings would refuse: wks__check_saveable() and
 * libwks.wks.maxFileSize. */
static int save(wks_store *st, wks_buf *out, const char *pw, size_t pw_len)
{
	wks_entry **snap = NULL;
	wks_settings cfg;
	uint8_t salt[WKS_SALT_LEN], key[WKS_STORE_KEY_LEN], mac[WKS_MAC_LEN];
	size_t n, i;
	unsigned rs;
	int err;

	if (!st || (!pw && pw_len))
		return wks__err(WKS_ERR_INVALID, "store or password is NULL");
	if (!pw || pw_len == 0)
		return wks__err(WKS_ERR_INVALID, "the store password must not be "
		                "empty");
	wks__store_settings(&cfg, st);
	/* Snapshot references, then work with no lock held. */
	rs = wks__rdlock(st);
	n = st->n;
	if (n && !(snap = malloc(n * sizeof(*snap)))) {
		wks__rdunlock(st, rs);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		snap[i] = wks__entry_ref(st->v[i]);
	wks__rdunlock(st, rs);

	if ((err = wks__check_saveable(snap, n, &cfg)) < 0 ||
	    (err = wks__random_cc(cfg.crypto, salt, sizeof(salt))) < 0 ||
	    (err = wks__encode(out, snap, n, salt, cfg.iteration_count)) < 0)
		goto done;
	/* + the MAC length field and the MAC */
	if ((uint64_t)out->len > cfg.max_file_size ||
	    cfg.max_file_size - (uint64_t)out->len < 4 + WKS_MAC_LEN) {
		err = wks__err(WKS_ERR_LIMIT, "cannot save: the store would be "
		               "%zu bytes, more than libwks.wks.maxFileSize %llu, "
		               "so it could not be loaded with these settings",
		               out->len + 4 + WKS_MAC_LEN,
		               (unsigned long long)cfg.max_file_size);
		goto done;
	}
	if ((err = wks__pbkdf2_cc(cfg.crypto, key, sizeof(key),
	                          (const uint8_t *)pw, pw_len, salt, sizeof(salt),
	                          (uint32_t)cfg.iteration_count, cfg.kdf_impl,
	                          cfg.kdf_threads)) < 0 ||
	    (err = wks__hmac_sha512_cc(cfg.crypto, mac, key, sizeof(key),
	                               out->ptr, out->len)) < 0)
		goto done;
	wks_buf_put_i32be(out, WKS_MAC_LEN);
	err = wks_buf_put(out, mac, sizeof(mac));
done:
	wks_wipe(key, sizeof(key));
	wks__entries_free(snap, n);
	return err;
}

int wks_store_save_buffer(wks_store *st, uint8_t **out, size_t *out_len,
                          const char *pw, size_t pw_len)
{
	wks_buf b = WKS_BUF_INIT;
	int err;

	wks__err_clear();
	if (!out || !out_len)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = NULL;
	*out_len = 0;
	if ((err = save(st, &b, pw, pw_len)) == WKS_OK) {
		if ((*out = wks__out_dup(b.ptr, b.len)) != NULL)
			*out_len = b.len;
		else
			err = wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	wks_buf_dispose(&b);
	return err;
}

int wks_store_save_file(wks_store *st, const char *path, const char *pw,
                        size_t pw_len)
{
	wks_buf b = WKS_BUF_INIT;
	int err;

	wks__err_clear();
	if (!path)
		return wks__err(WKS_ERR_INVALID, "path is NULL");
	if ((err = save(st, &b, pw, pw_len)) == WKS_OK)
		err = wks__file_write_atomic(path, b.ptr, b.len);
	wks_buf_dispose(&b);
	return err;
}

int wks_store_save_locked(wks_store *st, wks_lock *lock, const char *pw,
                          size_t pw_len)
{
	wks_buf b = WKS_BUF_INIT;
	wks_file_id id;
	const char *path;
	unsigned kind;
	int fd, nfd = -1, err;

	wks__err_clear();
	if ((err = wks__lock_get(lock, &fd, &id, &path, &kind)) < 0)
		return err;
	if (kind != WKS_LOCK_EXCLUSIVE)
		return wks__err(WKS_ERR_INVALID, "saving \"%s\": the lock is "
		                "shared; saving needs WKS_LOCK_EXCLUSIVE", path);
	if ((err = save(st, &b, pw, pw_len)) == WKS_OK)
		err = wks__file_write_atomic_ex(path, b.ptr, b.len, &id, &nfd);
	if (err == WKS_OK)
		wks__lock_moved(lock, nfd); /* the lock is on the new file */
	wks_buf_dispose(&b);
	return err;
}

/* ---- KEK cache controls ------------------------------------------------- */

int wks_store_cache_clear(wks_store *st)
{
	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	wks__cache_clear(st->cache);
	return WKS_OK;
}

int wks_store_cache_sweep(wks_store *st)
{
	wks_settings cfg;

	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	wks__store_settings(&cfg, st);
	wks__cache_sweep(st->cache, &cfg);
	return WKS_OK;
}

int wks_store_cache_stats(wks_cache_stats *out, wks_store *st)
{
	wks__err_clear();
	if (out)
		memset(out, 0, sizeof(*out));
	if (!out || !st)
		return wks__err(WKS_ERR_INVALID, "store or out is NULL");
	wks__cache_stats(st->cache, out);
	return WKS_OK;
}

int64_t wks__store_now_ms(const wks_store *st)
{
	return st && st->wallclock ? (int64_t)st->wallclock(st->wallclock_ctx)
				   : wks__now_ms();
}

int wks_store_set_wallclock(wks_store *st, wks_clock_fn now_ms, void *ctx)
{
	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	st->wallclock = now_ms;
	st->wallclock_ctx = ctx;
	return WKS_OK;
}

int wks_store_set_clock(wks_store *st, wks_clock_fn now_ms, void *ctx)
{
	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	wks__cache_set_clock(st->cache, now_ms, ctx);
	return WKS_OK;
}

/* The per-store property lookup lives here, with the store's table;
 * config/ resolves a table it is given and knows nothing of stores. */
int wks_get_property(char *buf, size_t buf_len, wks_store *st,
                     const char *name)
{
	wks__err_clear();
	return wks__property_text(buf, buf_len, st ? st->props : NULL, name);
}
