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
 * Opening the items still in the running: their keys from the KEK cache
 * when it holds them (plan_open()), else derived all together, then each
 * checked against its entry MAC (run_open(); a failure sets the item's
 * result).  Between the two a caller may append jobs of its own to the
 * same batch (the free lanes of its last pass: see reseal()).
 */
typedef struct {
	wks_kdf_job *jobs; /* the misses', then room for `room` more */
	size_t *which;     /* the item of each miss */
	size_t k;          /* misses */
	size_t extra;      /* jobs appended after them */
} open_plan;

static void plan_free(open_plan *p)
{
	free(p->jobs);
	free(p->which);
	memset(p, 0, sizeof(*p));
}

static int plan_open(open_plan *p, item *v, size_t n, wks_store *st,
                     const wks_settings *cfg, const char *pw, size_t pw_len,
                     size_t room)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	if (n + room == 0)
		return WKS_OK;
	if (!(p->jobs = calloc(n + room, sizeof(*p->jobs))) ||
	    !(p->which = calloc(n ? n : 1, sizeof(*p->which)))) {
		plan_free(p);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		const wks_entry *e = v[i].e;
		wks_kdf_job *j = &p->jobs[p->k];

		if (v[i].result != WKS_OK)
			continue;
		/* A hit was verified against this very entry when it was
		 * cached (cache.h, WKS_CACHE_TRUST_HITS). */
		if (wks__cache_lookup(st->cache, cfg, e->id, (const uint8_t *)pw,
		                      pw_len, e->salt, (uint32_t)e->iterations,
		                      v[i].dk) == WKS_OK)
			continue;
		j->out = v[i].dk;
		j->out_len = WKS_DK_LEN;
		j->pw = (const uint8_t *)pw;
		j->pw_len = pw_len;
		j->salt = e->salt;
		j->salt_len = WKS_SALT_LEN;
		j->iter = (uint32_t)e->iterations;
		p->which[p->k++] = i;
	}
	return WKS_OK;
}

/* When `cache_them`, verified keys go into the cache (if it is on), with
 * the generation read before the entries were looked up.  Returns an
 * error only when the batch itself failed (no memory, a crypto failure):
 * then nothing is verified. */
static int run_open(open_plan *p, item *v, wks_store *st,
                    const wks_settings *cfg, const char *pw, size_t pw_len,
                    int cache_them, uint64_t gen)
{
	size_t i;
	int err;

	if (p->k + p->extra == 0)
		return WKS_OK;
	wks__cache_count_derivations(st->cache, cfg, p->k);
	if ((err = wks__pbkdf2_batch_cc(cfg->crypto, p->jobs, p->k + p->extra,
	                                cfg->kdf_impl, cfg->kdf_threads)) < 0)
		return err;
	for (i = 0; i < p->k; i++) {
		item *it = &v[p->which[i]];

		if ((it->result = wks__key_verify(it->e, it->dk, cfg)) == WKS_OK &&
		    cache_them)
			wks__cache_put(st->cache, cfg, gen, it->e->id,
			               (const uint8_t *)pw, pw_len, it->e->salt,
			               (uint32_t)it->e->iterations, it->dk);
		if (it->result < 0)
			wks_wipe(it->dk, WKS_DK_LEN);
	}
	return WKS_OK;
}

static int open_all(item *v, size_t n, wks_store *st, const wks_settings *cfg,
                    const char *pw, size_t pw_len, uint64_t gen)
{
	open_plan p;
	int err;

	if ((err = plan_open(&p, v, n, st, cfg, pw, pw_len, 0)) == WKS_OK)
		err = run_open(&p, v, st, cfg, pw, pw_len, 1, gen);
	plan_free(&p);
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
	if ((err = open_all(v, n, st, &cfg, pw, pw_len, gen)) < 0)
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

/* The key entries of `st`, referenced under its read lock. */
int wks__store_key_entries(wks_entry ***out, size_t *n_out, wks_store *st)
{
	wks_entry **v = NULL;
	size_t i, n = 0, k = 0;
	unsigned rs;

	*out = NULL;
	*n_out = 0;
	rs = wks__rdlock(st);
	for (i = 0; i < st->n; i++)
		n += st->v[i]->type != WKS_ENTRY_CERTIFICATE;
	if (n && (v = calloc(n, sizeof(*v))) != NULL)
		for (i = 0; i < st->n; i++)
			if (st->v[i]->type != WKS_ENTRY_CERTIFICATE)
				v[k++] = wks__entry_ref(st->v[i]);
	wks__rdunlock(st, rs);
	if (n && !v)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	*out = v;
	*n_out = n;
	return WKS_OK;
}

void wks__store_entries_release(wks_entry **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		wks__entry_unref(v[i]);
	free(v);
}


int wks_store_cache_warm(wks_store *st, const char *pw, size_t pw_len,
                         size_t *n_warmed)
{
	wks_settings cfg;
	wks_entry **ev = NULL;
	item *v = NULL;
	uint64_t gen;
	size_t i, n = 0;
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
	if ((err = wks__store_key_entries(&ev, &n, st)) != WKS_OK)
		return err;
	if (n && !(v = calloc(n, sizeof(*v)))) {
		wks__store_entries_release(ev, n);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	/* the references move into the items */
	for (i = 0; i < n; i++)
		v[i].e = ev[i];
	free(ev);
	for (i = 0; i < n; i++)
		v[i].result = wks__key_check(v[i].e, pw, pw_len, &cfg);
	if ((err = open_all(v, n, st, &cfg, pw, pw_len, gen)) == WKS_OK &&
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

/*
 * The old keys and the new ones.  Every item in the running gets a fresh
 * salt; the old keys are derived in one batch (plan_open/run_open), whose
 * last pass's free lanes take the new keys of the first items (if an item
 * then does not open, its new key is simply not used: those lanes would
 * have idled); the new keys still missing for the items that opened go in
 * a second batch.  Then each opened key is decrypted and sealed anew into
 * rk.  At most one derivation per entry per password.
 */
typedef struct {
	uint8_t (*salts)[WKS_SALT_LEN];
	uint8_t (*dks)[WKS_DK_LEN];
	uint8_t *have; /* dks[i] derived */
	size_t n;
} new_keys;

static void new_keys_free(new_keys *nk)
{
	if (nk->salts)
		wks_wipe_free(nk->salts, nk->n * sizeof(*nk->salts));
	if (nk->dks)
		wks_wipe_free(nk->dks, nk->n * sizeof(*nk->dks));
	free(nk->have);
}

static void new_job(wks_kdf_job *j, new_keys *nk, size_t i,
                    const wks_settings *cfg, const char *pw, size_t pw_len)
{
	j->out = nk->dks[i];
	j->out_len = WKS_DK_LEN;
	j->pw = (const uint8_t *)pw;
	j->pw_len = pw_len;
	j->salt = nk->salts[i];
	j->salt_len = WKS_SALT_LEN;
	j->iter = (uint32_t)cfg->iteration_count;
	nk->have[i] = 1;
}

static int rekey_derive(item *v, size_t n, new_keys *nk, wks_store *st,
                        const wks_settings *cfg, const char *old_pw,
                        size_t old_len, const char *new_pw, size_t new_len)
{
	open_plan p;
	wks_kdf_job *jobs = NULL;
	size_t i, spare, k = 0;
	int err;

	nk->n = n;
	nk->salts = malloc((n ? n : 1) * sizeof(*nk->salts));
	nk->dks = malloc((n ? n : 1) * sizeof(*nk->dks));
	nk->have = calloc(n ? n : 1, 1);
	if (!nk->salts || !nk->dks || !nk->have)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if (n && (err = wks__random_cc(cfg->crypto, nk->salts[0],
	                               n * WKS_SALT_LEN)) < 0)
		return err;
	if ((err = plan_open(&p, v, n, st, cfg, old_pw, old_len, n)) < 0)
		return err;
	spare = wks__pbkdf2_batch_spare(cfg->crypto, 2 * p.k, cfg->kdf_impl,
	                                cfg->kdf_threads) / 2;
	for (i = 0; i < n && p.extra < spare; i++)
		if (v[i].result == WKS_OK)
			new_job(&p.jobs[p.k + p.extra++], nk, i, cfg, new_pw,
			        new_len);
	err = run_open(&p, v, st, cfg, old_pw, old_len, 0, 0);
	plan_free(&p);
	if (err < 0)
		return err;
	if (!(jobs = calloc(n ? n : 1, sizeof(*jobs))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++)
		if (v[i].result == WKS_OK && !nk->have[i])
			new_job(&jobs[k++], nk, i, cfg, new_pw, new_len);
	err = wks__pbkdf2_batch_cc(cfg->crypto, jobs, k, cfg->kdf_impl,
	                           cfg->kdf_threads);
	free(jobs);
	return err;
}

static int reseal(wks_rekey *rk, item *v, size_t n, const new_keys *nk,
                  const wks_settings *cfg)
{
	wks_buf plain = WKS_BUF_INIT;
	size_t i, m = 0;
	int err = WKS_OK;

	for (i = 0; i < n; i++)
		m += v[i].result == WKS_OK;
	if (m == 0)
		return WKS_OK;
	if (!(rk->v = calloc(m, sizeof(*rk->v))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (i = 0; i < n && err == WKS_OK; i++) {
		const wks_entry *e = v[i].e;
		rekey_item *r = &rk->v[rk->n];

		if (v[i].result != WKS_OK)
			continue;
		err = wks__aes256cbc_decrypt_cc(cfg->crypto, &plain, v[i].dk,
		                                e->iv, e->body + e->enc.off,
		                                e->enc.len);
		wks_wipe(v[i].dk, WKS_DK_LEN);
		if (err == WKS_ERR_INTEGRITY) {
			/* (authentic, yet badly padded: as get_key says) */
			v[i].result = err;
			err = WKS_OK;
			continue;
		}
		if (err < 0 ||
		    (err = wks__key_rebody(&r->body, e, plain.ptr, plain.len,
		                           nk->salts[i], nk->dks[i], cfg)) < 0 ||
		    (err = wks__sha256(r->old_sum, e->body, e->body_len)) < 0)
			break;
		wks_buf_dispose(&plain);
		if (!(r->alias = malloc(e->alias_len + 1))) {
			err = wks__err(WKS_ERR_NOMEM, "out of memory");
			break;
		}
		memcpy(r->alias, e->alias, e->alias_len + 1);
		r->alias_len = e->alias_len;
		r->type = e->type;
		r->entry_id = e->id;
		r->old_len = e->body_len;
		rk->n++;
	}
	if (err < 0 && rk->n < m)
		wks_buf_dispose(&rk->v[rk->n].body);
	wks_buf_dispose(&plain);
	return err;
}

int wks_rekey_prepare(wks_rekey **out, int *results, wks_store *st,
                      const char *const *aliases, size_t n,
                      const char *old_pw, size_t old_len,
                      const char *new_pw, size_t new_len)
{
	wks_settings cfg;
	wks_rekey *rk = NULL;
	new_keys nk;
	item *v = NULL;
	size_t i;
	int err;

	wks__err_clear();
	memset(&nk, 0, sizeof(nk));
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
	    (err = rekey_derive(v, n, &nk, st, &cfg, old_pw, old_len, new_pw,
	                        new_len)) < 0 ||
	    (err = reseal(rk, v, n, &nk, &cfg)) < 0)
		goto done;
	for (i = 0; i < n; i++)
		results[i] = v[i].result;
	*out = rk;
	rk = NULL;
done:
	if (err < 0 && n)
		memset(results, 0, n * sizeof(*results));
	wks_rekey_free(rk);
	new_keys_free(&nk);
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
