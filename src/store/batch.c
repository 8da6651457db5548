/* Many key entries at once: their PBKDF2 derivations run as one batch
 * over every SIMD lane and thread (crypto/kdf.h), with no store lock
 * held, and each entry is checked exactly as wks_store_get_key() checks
 * it.  Batched get_key, KEK cache warming, and password changes of many
 * entries (prepared apart from their application, so that a caller can
 * derive before it takes a file lock and apply under it). */
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "store/store_int.h"
#include "util/error.h"
#include "util/wipe.h"

/* One key entry of a batch. */
typedef struct {
	wks_entry *e; /* referenced; NULL when its lookup failed */
	int result;   /* WKS_OK while it is still in the running */
	uint8_t dk[WKS_DK_LEN];
} item;

static void items_free(item *v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		wks__entry_unref(v[i].e);
	wks_wipe_free(v, n * sizeof(*v));
}

/* Look each alias up and check its entry as get_key does. */
static void lookup(item *v, wks_store *st, const char *const *aliases,
                   size_t n, const char *pw, size_t pw_len,
                   const wks_settings *cfg)
{
	size_t i;

	for (i = 0; i < n; i++) {
		v[i].result = aliases[i] ?
		              wks__store_get_entry(&v[i].e, st, aliases[i]) :
		              wks__err(WKS_ERR_INVALID, "alias is NULL");
		if (v[i].result == WKS_OK)
			v[i].result = wks__key_check(v[i].e, pw, pw_len, cfg);
	}
}

/*
 * The verified derived keys of the items still in the running: from the
 * KEK cache when it holds them, else derived all together, then each
 * checked against its entry MAC (a failure sets the item's result).  When
 * `cache_them`, verified keys go into the cache (if it is on), with the
 * generation read before the entries were looked up.  Returns an error
 * only when the batch itself failed (no memory, a crypto failure): then
 * nothing is verified.
 */
static int open_all(item *v, size_t n, wks_store *st, const wks_settings *cfg,
                    const char *pw, size_t pw_len, int cache_them,
                    uint64_t gen)
{
	wks_kdf_job *jobs = NULL;
	size_t *which = NULL, i, k = 0;
	int err = WKS_OK;

	if (n && (!(jobs = calloc(n, sizeof(*jobs))) ||
	          !(which = calloc(n, sizeof(*which))))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < n; i++) {
		const wks_entry *e = v[i].e;

		if (v[i].result != WKS_OK)
			continue;
		/* A hit was verified against this very entry when it was
		 * cached (cache.h, WKS_CACHE_TRUST_HITS). */
		if (wks__cache_lookup(st->cache, cfg, e->id, (const uint8_t *)pw,
		                      pw_len, e->salt, (uint32_t)e->iterations,
		                      v[i].dk) == WKS_OK)
			continue;
		jobs[k].out = v[i].dk;
		jobs[k].out_len = WKS_DK_LEN;
		jobs[k].pw = (const uint8_t *)pw;
		jobs[k].pw_len = pw_len;
		jobs[k].salt = e->salt;
		jobs[k].salt_len = WKS_SALT_LEN;
		jobs[k].iter = (uint32_t)e->iterations;
		which[k++] = i;
	}
	if (k == 0)
		goto done;
	wks__cache_count_derivations(st->cache, cfg, k);
	if ((err = wks__pbkdf2_batch_cc(cfg->crypto, jobs, k, cfg->kdf_impl,
	                                cfg->kdf_threads)) < 0)
		goto done;
	for (i = 0; i < k; i++) {
		item *it = &v[which[i]];

		if ((it->result = wks__key_verify(it->e, it->dk, cfg)) == WKS_OK &&
		    cache_them)
			wks__cache_put(st->cache, cfg, gen, it->e->id,
			               (const uint8_t *)pw, pw_len, it->e->salt,
			               (uint32_t)it->e->iterations, it->dk);
		if (it->result < 0)
			wks_wipe(it->dk, WKS_DK_LEN);
	}
done:
	free(jobs);
	free(which);
	return err;
}

/* ---- get_key for many ---------------------------------------------------- */

int wks_store_get_keys(wks_key **out, int *results, wks_store *st,
                       const char *const *aliases, size_t n, const char *pw,
                       size_t pw_len)
{
	wks_settings cfg;
	item *v = NULL;
	uint64_t gen;
	size_t i;
	int err;

	wks__err_clear();
	if (out && n)
		memset(out, 0, n * sizeof(*out));
	if (results && n)
		memset(results, 0, n * sizeof(*results));
	if (!results || !st || (!aliases && n))
		return wks__err(WKS_ERR_INVALID, "results, store or aliases is "
		                "NULL");
	if (!pw || pw_len == 0)
		return wks__err(WKS_ERR_INVALID, "the key password must not be "
		                "empty");
	if (n == 0)
		return WKS_OK;
	wks__store_settings(&cfg, st);
	/* Read before the lookups (see wks__cache_generation()). */
	gen = wks__cache_generation(st->cache);
	if (!(v = calloc(n, sizeof(*v))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	lookup(v, st, aliases, n, pw, pw_len, &cfg);
	if ((err = open_all(v, n, st, &cfg, pw, pw_len, 1, gen)) < 0)
		goto done;
	for (i = 0; i < n; i++) {
		if (v[i].result == WKS_OK && out)
			v[i].result = wks__key_open(&out[i], v[i].e, v[i].dk, &cfg);
		results[i] = v[i].result;
	}
done:
	if (err < 0 && out)
		for (i = 0; i < n; i++) {
			wks_key_free(out[i]);
			out[i] = NULL;
		}
	if (err < 0)
		memset(results, 0, n * sizeof(*results));
	items_free(v, n);
	wks__wipe_registers();
	return err;
}

/* ---- KEK cache warming -------------------------------------------------- */

int wks_store_cache_warm(wks_store *st, const char *pw, size_t pw_len,
                         size_t *n_warmed)
{
	wks_settings cfg;
	item *v = NULL;
	uint64_t gen;
	size_t i, n = 0, k = 0;
	unsigned rs;
	int err = WKS_OK;

	wks__err_clear();
	if (n_warmed)
		*n_warmed = 0;
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	if (!pw || pw_len == 0)
		return wks__err(WKS_ERR_INVALID, "the key password must not be "
		                "empty");
	wks__store_settings(&cfg, st);
	if (!cfg.cache_enabled)
		return wks__err(WKS_ERR_INVALID, "the KEK cache is disabled "
		                "(wolfjce.keystore.kekCacheEnabled): warming it "
		                "would keep nothing");
	gen = wks__cache_generation(st->cache);
	/* The key entries, referenced under the read lock. */
	rs = wks__rdlock(st);
	for (i = 0; i < st->n; i++)
		n += st->v[i]->type != WKS_ENTRY_CERTIFICATE;
	if (n && (v = calloc(n, sizeof(*v))) != NULL)
		for (i = 0; i < st->n; i++)
			if (st->v[i]->type != WKS_ENTRY_CERTIFICATE)
				v[k++].e = wks__entry_ref(st->v[i]);
	wks__rdunlock(st, rs);
	if (n && !v)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++)
		v[i].result = wks__key_check(v[i].e, pw, pw_len, &cfg);
	if ((err = open_all(v, n, st, &cfg, pw, pw_len, 1, gen)) == WKS_OK &&
	    n_warmed)
		for (i = 0; i < n; i++)
			*n_warmed += v[i].result == WKS_OK;
	items_free(v, n);
	wks__wipe_registers();
	return err;
}

/* ---- new passwords for many --------------------------------------------- */

typedef struct {
	char *alias;     /* API form, as the entry holds it */
	size_t alias_len;
	int type;
	uint64_t entry_id;              /* the entry it was made from... */
	uint8_t old_sum[32];            /* ...and its body's SHA-256 */
	size_t old_len;
	wks_buf body;                   /* the new body */
} rekey_item;

struct wks_rekey {
	size_t n;
	rekey_item *v;
};

void wks_rekey_free(wks_rekey *rk)
{
	size_t i;

	if (!rk)
		return;
	for (i = 0; i < rk->n; i++) {
		free(rk->v[i].alias);
		wks_buf_dispose(&rk->v[i].body);
	}
	free(rk->v);
	free(rk);
}

size_t wks_rekey_count(const wks_rekey *rk)
{
	return rk ? rk->n : 0;
}

static int cmp_entry_ptr(const void *a, const void *b)
{
	const item *x = *(item *const *)a, *y = *(item *const *)b;
	uintptr_t p = (uintptr_t)x->e, q = (uintptr_t)y->e;

	return p < q ? -1 : p > q ? 1 : x < y ? -1 : x > y;
}

/* An entry listed twice is re-encrypted once: the later ones are
 * refused. */
static int refuse_repeats(item *v, size_t n)
{
	item **o;
	size_t i;

	if (n < 2)
		return WKS_OK;
	if (!(o = malloc(n * sizeof(*o))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++)
		o[i] = &v[i];
	qsort(o, n, sizeof(*o), cmp_entry_ptr);
	for (i = 1; i < n; i++)
		if (o[i]->e && o[i]->e == o[i - 1]->e && o[i]->result == WKS_OK)
			o[i]->result = WKS_ERR_INVALID;
	free(o);
	return WKS_OK;
}

/* Decrypt the keys of the opened items, derive their new keys (fresh
 * salts, one batch) and seal them into rk. */
static int reseal(wks_rekey *rk, item *v, size_t n, const wks_settings *cfg,
                  const char *new_pw, size_t new_len)
{
	uint8_t (*salts)[WKS_SALT_LEN] = NULL, (*dks)[WKS_DK_LEN] = NULL;
	wks_buf *plain = NULL;
	wks_kdf_job *jobs = NULL;
	size_t i, cap = 0, m, k;
	int err = WKS_OK;

	for (i = 0; i < n; i++)
		cap += v[i].result == WKS_OK;
	if (cap == 0)
		return WKS_OK;
	salts = malloc(cap * sizeof(*salts));
	dks = malloc(cap * sizeof(*dks));
	plain = calloc(cap, sizeof(*plain));
	jobs = calloc(cap, sizeof(*jobs));
	rk->v = calloc(cap, sizeof(*rk->v));
	if (!salts || !dks || !plain || !jobs || !rk->v) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (i = 0, k = 0; i < n; i++) {
		const wks_entry *e = v[i].e;
		int r;

		if (v[i].result != WKS_OK)
			continue;
		r = wks__aes256cbc_decrypt_cc(cfg->crypto, &plain[k], v[i].dk,
		                              e->iv, e->body + e->enc.off,
		                              e->enc.len);
		wks_wipe(v[i].dk, WKS_DK_LEN);
		if (r == WKS_ERR_NOMEM || r == WKS_ERR_CRYPTO) {
			err = r;
			goto done;
		}
		if ((v[i].result = r) < 0) {
			wks_buf_dispose(&plain[k]);
			continue;
		}
		k++;
	}
	if ((m = k) == 0)
		goto done;
	if ((err = wks__random_cc(cfg->crypto, salts[0], m * WKS_SALT_LEN)) < 0)
		goto done;
	for (k = 0; k < m; k++) {
		jobs[k].out = dks[k];
		jobs[k].out_len = WKS_DK_LEN;
		jobs[k].pw = (const uint8_t *)new_pw;
		jobs[k].pw_len = new_len;
		jobs[k].salt = salts[k];
		jobs[k].salt_len = WKS_SALT_LEN;
		jobs[k].iter = (uint32_t)cfg->iteration_count;
	}
	if ((err = wks__pbkdf2_batch_cc(cfg->crypto, jobs, m, cfg->kdf_impl,
	                                cfg->kdf_threads)) < 0)
		goto done;
	for (i = 0, k = 0; i < n && k < m; i++) {
		const wks_entry *e = v[i].e;
		rekey_item *r = &rk->v[rk->n];

		if (v[i].result != WKS_OK)
			continue;
		memset(&r->body, 0, sizeof(r->body));
		if ((err = wks__key_rebody(&r->body, e, plain[k].ptr,
		                           plain[k].len, salts[k], dks[k],
		                           cfg)) < 0 ||
		    (err = wks__sha256(r->old_sum, e->body, e->body_len)) < 0)
			goto done;
		k++;
		if (!(r->alias = malloc(e->alias_len + 1))) {
			err = wks__err(WKS_ERR_NOMEM, "out of memory");
			goto done;
		}
		memcpy(r->alias, e->alias, e->alias_len + 1);
		r->alias_len = e->alias_len;
		r->type = e->type;
		r->entry_id = e->id;
		r->old_len = e->body_len;
		rk->n++;
	}
done:
	if (err < 0 && rk->v && rk->n < cap)
		wks_buf_dispose(&rk->v[rk->n].body);
	for (k = 0; plain && k < cap; k++)
		wks_buf_dispose(&plain[k]);
	free(plain);
	free(jobs);
	if (salts)
		wks_wipe_free(salts, cap * sizeof(*salts));
	if (dks)
		wks_wipe_free(dks, cap * sizeof(*dks));
	return err;
}

int wks_rekey_prepare(wks_rekey **out, int *results, wks_store *st,
                      const char *const *aliases, size_t n,
                      const char *old_pw, size_t old_len,
                      const char *new_pw, size_t new_len)
{
	wks_settings cfg;
	wks_rekey *rk = NULL;
	item *v = NULL;
	size_t i;
	int err;

	wks__err_clear();
	if (out)
		*out = NULL;
	if (results && n)
		memset(results, 0, n * sizeof(*results));
	if (!out || !results || !st || (!aliases && n))
		return wks__err(WKS_ERR_INVALID, "out, results, store or aliases "
		                "is NULL");
	if (!old_pw || old_len == 0 || !new_pw || new_len == 0)
		return wks__err(WKS_ERR_INVALID, "passwords must not be empty");
	wks__store_settings(&cfg, st);
	if ((err = wks__key_seal_check(&cfg)) < 0)
		return err;
	if (!(rk = calloc(1, sizeof(*rk))) ||
	    (n && !(v = calloc(n, sizeof(*v))))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	lookup(v, st, aliases, n, old_pw, old_len, &cfg);
	if ((err = refuse_repeats(v, n)) < 0 ||
	    (err = open_all(v, n, st, &cfg, old_pw, old_len, 0, 0)) < 0 ||
	    (err = reseal(rk, v, n, &cfg, new_pw, new_len)) < 0)
		goto done;
	for (i = 0; i < n; i++)
		results[i] = v[i].result;
	*out = rk;
	rk = NULL;
done:
	if (err < 0 && n)
		memset(results, 0, n * sizeof(*results));
	wks_rekey_free(rk);
	items_free(v, n);
	wks__wipe_registers();
	return err;
}

int wks_rekey_apply(wks_store *st, const wks_rekey *rk, size_t *applied)
{
	wks_settings cfg;
	wks_entry **ne = NULL, **cur = NULL;
	size_t *at = NULL, i, n;
	uint8_t sum[32];
	unsigned rs;
	int err = WKS_OK;

	wks__err_clear();
	if (applied)
		*applied = 0;
	if (!st || !rk)
		return wks__err(WKS_ERR_INVALID, "store or rekey is NULL");
	if ((n = rk->n) == 0)
		return WKS_OK;
	wks__store_settings(&cfg, st);
	ne = calloc(n, sizeof(*ne));
	cur = calloc(n, sizeof(*cur));
	at = calloc(n, sizeof(*at));
	if (!ne || !cur || !at) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	/* The new entries, parsed like loaded ones. */
	for (i = 0; i < n && err == WKS_OK; i++) {
		const rekey_item *r = &rk->v[i];

		if (r->body.len > (size_t)cfg.max_entry_size)
			err = wks__err(WKS_ERR_LIMIT, "entry of %zu bytes exceeds "
			               "limit %d (wolfjce.wks.maxEntrySize)",
			               r->body.len, cfg.max_entry_size);
		else
			err = wks__entry_from_body(&ne[i], r->type, r->alias,
			                           r->alias_len, r->body.ptr,
			                           r->body.len, &cfg, "new entry");
	}
	if (err < 0)
		goto done;
	/* The entries there now must be the ones prepared from: the same
	 * object, or (another store, e.g. the file loaded again under its
	 * lock) the same bytes.  Compared with no lock held... */
	rs = wks__rdlock(st);
	for (i = 0; i < n; i++)
		if (wks__map_find(st, rk->v[i].alias, rk->v[i].alias_len, &at[i]))
			cur[i] = wks__entry_ref(st->v[at[i]]);
	wks__rdunlock(st, rs);
	for (i = 0; i < n && err == WKS_OK; i++) {
		const rekey_item *r = &rk->v[i];
		int same = cur[i] && cur[i]->type == (wks_entry_type)r->type;

		if (same && cur[i]->id != r->entry_id)
			same = cur[i]->body_len == r->old_len &&
			       wks__sha256(sum, cur[i]->body, cur[i]->body_len) ==
			       WKS_OK && memcmp(sum, r->old_sum, sizeof(sum)) == 0;
		if (!same)
			err = wks__err(WKS_ERR_INVALID, "entry \"%s\" changed since "
			               "its new password was prepared: nothing "
			               "applied", r->alias);
	}
	if (err < 0)
		goto done;
	/* ...and, all at once under the write lock, still there. */
	wks__wrlock(st);
	for (i = 0; i < n && err == WKS_OK; i++)
		if (!wks__map_find(st, rk->v[i].alias, rk->v[i].alias_len,
		                   &at[i]) || st->v[at[i]] != cur[i])
			err = wks__err(WKS_ERR_INVALID, "entry \"%s\" was changed by "
			               "another thread meanwhile: nothing applied",
			               rk->v[i].alias);
	for (i = 0; i < n && err == WKS_OK; i++) {
		st->v[at[i]] = ne[i]; /* the map's reference to cur[i] is ours */
		ne[i] = NULL;
	}
	wks__wrunlock(st);
	if (err < 0)
		goto done;
	for (i = 0; i < n; i++) {
		wks__cache_drop_entry(st->cache, cur[i]->id);
		wks__entry_unref(cur[i]); /* the map's */
	}
	if (applied)
		*applied = n;
done:
	for (i = 0; cur && i < n; i++)
		wks__entry_unref(cur[i]);
	for (i = 0; ne && i < n; i++)
		wks__entry_unref(ne[i]);
	free(ne);
	free(cur);
	free(at);
	return err;
}

int wks_store_change_key_passwords(int *results, wks_store *st,
                                   const char *const *aliases, size_t n,
                                   const char *old_pw, size_t old_len,
                                   const char *new_pw, size_t new_len)
{
	wks_rekey *rk = NULL;
	int err;

	if ((err = wks_rekey_prepare(&rk, results, st, aliases, n, old_pw,
	                             old_len, new_pw, new_len)) == WKS_OK &&
	    (err = wks_rekey_apply(st, rk, NULL)) < 0 && n)
		memset(results, 0, n * sizeof(*results));
	wks_rekey_free(rk);
	return err;
}
