/* Keys made ahead for new key entries.
 *
 * A new key entry needs a fresh salt and the key PBKDF2 derives from it
 * and its password; nothing of the entry itself goes in.  So the keys of
 * many entries about to be set can be derived before they are, in one
 * batch over every SIMD lane and thread (crypto/kdf.h), and handed to
 * the setters one by one: wks_store_prepare_keys() makes a given number
 * for one password, and a conversion announces its run of entries
 * (wks__store_expect_keys()), whose first setter then derives the keys of
 * the next pass's worth of entries at once.
 *
 * The pool lives in memory from the KEK cache's allocator (locked, never
 * dumped, zeroed in a fork()ed child), is guarded by the store's write
 * lock (held briefly: never while deriving), and finds a password's keys
 * by an HMAC of it under a random secret of its own.  Each key is handed
 * out once and wiped from the pool when it is.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/secmem.h"
#include "store/store_int.h"
#include "util/error.h"
#include "util/wipe.h"

/* At most this many keys wait in one store's pool. */
#define POOL_MAX 1024
#define SECRET_LEN 32
#define TAG_LEN 32

typedef struct {
	uint8_t valid; /* 1; reads 0 in a fork()ed child (wiped pages) */
	uint8_t ahead; /* made for an announced run, not asked for */
	uint8_t tag[TAG_LEN];
	int32_t iterations;
	uint8_t salt[WKS_SALT_LEN];
	uint8_t dk[WKS_DK_LEN];
} slot;

struct wks_keypool {
	uint8_t *mem;   /* the secret, then `cap` slots (secmem) */
	size_t mem_len;
	size_t cap, n;  /* slots, slots in use (the first n) */
	size_t expect;  /* entries of the announced run still to come */
	pid_t pid;      /* the process the keys belong to */
};

static slot *slots(const struct wks_keypool *p)
{
	return (slot *)(void *)(p->mem + SECRET_LEN);
}

/* Write lock held.  Drops everything (memory included). */
static void pool_reset(struct wks_keypool *p)
{
	wks__secmem_unmap(p->mem, p->mem_len);
	p->mem = NULL;
	p->mem_len = 0;
	p->cap = p->n = 0;
	p->expect = 0;
	p->pid = getpid();
}

/* Write lock held.  The store's pool (NULL when out of memory); after a
 * fork() the parent's keys are gone (the pages read zero): start over. */
static struct wks_keypool *pool_of(wks_store *st)
{
	struct wks_keypool *p = st->keypool;

	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return NULL;
		p->pid = getpid();
		st->keypool = p;
	} else if (p->pid != getpid()) {
		pool_reset(p);
	}
	return p;
}

static void pw_tag(uint8_t tag[TAG_LEN], const struct wks_keypool *p,
                   const char *pw, size_t pw_len)
{
	uint8_t mac[WKS_MAC_LEN];

	wks__hmac_sha512(mac, p->mem, SECRET_LEN, (const uint8_t *)pw, pw_len);
	memcpy(tag, mac, TAG_LEN);
	wks_wipe(mac, sizeof(mac));
}

/* Write lock held.  Room for `more` slots (a new mapping, the old one
 * copied and wiped), and the secret made with the first mapping. */
static int pool_reserve(struct wks_keypool *p, size_t more)
{
	size_t cap = p->n + more, len;
	uint8_t *m;
	int err;

	if (cap <= p->cap)
		return WKS_OK;
	if (cap < 16)
		cap = 16;
	len = SECRET_LEN + cap * sizeof(slot);
	if (!(m = wks__secmem_map(len)))
		return wks__err(WKS_ERR_NOMEM, "out of memory for keys made "
		                "ahead");
	if (p->mem) {
		memcpy(m, p->mem, SECRET_LEN + p->n * sizeof(slot));
	} else if ((err = wks__random(m, SECRET_LEN)) < 0) {
		wks__secmem_unmap(m, len);
		return err;
	}
	wks__secmem_unmap(p->mem, p->mem_len);
	p->mem = m;
	p->mem_len = len;
	p->cap = cap;
	return WKS_OK;
}

/* Write lock held.  Remove slot i (wiped; the last one moves in). */
static void pool_remove(struct wks_keypool *p, size_t i)
{
	slot *v = slots(p);

	if (i != p->n - 1)
		memcpy(&v[i], &v[p->n - 1], sizeof(slot));
	p->n--;
	wks_wipe(&v[p->n], sizeof(slot));
}

/* Derive k keys for pw at cfg->iteration_count, each with a fresh salt,
 * in one batch (no lock held). */
static int derive(uint8_t (*salts)[WKS_SALT_LEN], uint8_t (*dks)[WKS_DK_LEN],
                  size_t k, const wks_settings *cfg, const char *pw,
                  size_t pw_len)
{
	wks_kdf_job *jobs;
	size_t i;
	int err;

	if (!(jobs = calloc(k, sizeof(*jobs))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if ((err = wks__random_cc(cfg->crypto, salts[0], k * WKS_SALT_LEN)) == 0) {
		for (i = 0; i < k; i++) {
			jobs[i].out = dks[i];
			jobs[i].out_len = WKS_DK_LEN;
			jobs[i].pw = (const uint8_t *)pw;
			jobs[i].pw_len = pw_len;
			jobs[i].salt = salts[i];
			jobs[i].salt_len = WKS_SALT_LEN;
			jobs[i].iter = (uint32_t)cfg->iteration_count;
		}
		err = wks__pbkdf2_batch_cc(cfg->crypto, jobs, k, cfg->kdf_impl,
		                           cfg->kdf_threads);
	}
	free(jobs);
	return err;
}

/* Write lock held.  Put keys first..k-1 of salts/dks in the pool (as many
 * as fit; the others are dropped). */
static void pool_add(struct wks_keypool *p, const wks_settings *cfg,
                     const char *pw, size_t pw_len,
                     uint8_t (*salts)[WKS_SALT_LEN],
                     uint8_t (*dks)[WKS_DK_LEN], size_t first, size_t k,
                     int ahead)
{
	uint8_t tag[TAG_LEN];
	slot *s;
	size_t i;

	if (k <= first || pool_reserve(p, k - first) < 0)
		return;
	pw_tag(tag, p, pw, pw_len);
	for (i = first; i < k; i++) {
		s = &slots(p)[p->n++];
		s->valid = 1;
		s->ahead = (uint8_t)ahead;
		memcpy(s->tag, tag, TAG_LEN);
		s->iterations = cfg->iteration_count;
		memcpy(s->salt, salts[i], WKS_SALT_LEN);
		memcpy(s->dk, dks[i], WKS_DK_LEN);
	}
	wks_wipe(tag, sizeof(tag));
}

/* How many entries' keys one pass of the batch derives (two blocks
 * each); 1 where the batch runs one derivation after another. */
static size_t pass_keys(const wks_settings *cfg)
{
	size_t w;

	if (cfg->kdf_impl != WKS_KDF_NATIVE || (cfg->crypto && cfg->crypto->fips))
		return 1;
	w = wks__pbkdf2_batch_width(cfg->kdf_threads) / 2;
	return w ? w : 1;
}

int wks__keypool_take(wks_store *st, const wks_settings *cfg, const char *pw,
                      size_t pw_len, uint8_t salt[WKS_SALT_LEN],
                      uint8_t dk[WKS_DK_LEN])
{
	struct wks_keypool *p;
	uint8_t tag[TAG_LEN], (*salts)[WKS_SALT_LEN] = NULL;
	uint8_t (*dks)[WKS_DK_LEN] = NULL;
	size_t i, k = 0;
	int err = WKS__KEYPOOL_NONE;

	wks__wrlock(st);
	if (!st->keypool) {
		wks__wrunlock(st);
		return WKS__KEYPOOL_NONE;
	}
	if ((p = pool_of(st)) != NULL) {
		if (p->n) {
			pw_tag(tag, p, pw, pw_len);
			for (i = p->n; i-- > 0;) {
				slot *s = &slots(p)[i];

				if (s->valid && s->iterations == cfg->iteration_count &&
				    wks__mac_equal(s->tag, tag, TAG_LEN)) {
					memcpy(salt, s->salt, WKS_SALT_LEN);
					memcpy(dk, s->dk, WKS_DK_LEN);
					pool_remove(p, i);
					err = WKS_OK;
					break;
				}
			}
			wks_wipe(tag, sizeof(tag));
		}
		if (err != WKS_OK && p->expect > 1) {
			k = pass_keys(cfg);
			if (k > p->expect)
				k = p->expect;
		}
		if (p->expect)
			p->expect--;
	}
	wks__wrunlock(st);
	if (k < 2)
		return err;

	/* The first entry of an announced run with nothing ready: derive
	 * this one's key with those of the next ones, keep theirs. */
	salts = malloc(k * sizeof(*salts));
	dks = malloc(k * sizeof(*dks));
	if (!salts || !dks) {
		free(salts);
		free(dks);
		return WKS__KEYPOOL_NONE; /* the caller derives its own */
	}
	if ((err = derive(salts, dks, k, cfg, pw, pw_len)) == WKS_OK) {
		memcpy(salt, salts[0], WKS_SALT_LEN);
		memcpy(dk, dks[0], WKS_DK_LEN);
		wks__wrlock(st);
		if ((p = pool_of(st)) != NULL && p->expect)
			pool_add(p, cfg, pw, pw_len, salts, dks, 1, k, 1);
		wks__wrunlock(st);
	}
	wks_wipe_free(salts, k * sizeof(*salts));
	wks_wipe_free(dks, k * sizeof(*dks));
	return err;
}

void wks__store_expect_keys(wks_store *st, size_t n)
{
	struct wks_keypool *p;
	size_t i;

	wks__wrlock(st);
	if ((p = (n || st->keypool) ? pool_of(st) : NULL) != NULL) {
		p->expect = n;
		if (n == 0)
			for (i = p->n; i-- > 0;)
				if (slots(p)[i].ahead)
					pool_remove(p, i);
	}
	wks__wrunlock(st);
}

void wks__keypool_free(wks_store *st)
{
	if (!st->keypool)
		return;
	wks__secmem_unmap(st->keypool->mem, st->keypool->mem_len);
	free(st->keypool);
	st->keypool = NULL;
}

int wks_store_prepare_keys(wks_store *st, const char *pw, size_t pw_len,
                           size_t n)
{
	struct wks_keypool *p;
	uint8_t (*salts)[WKS_SALT_LEN] = NULL, (*dks)[WKS_DK_LEN] = NULL;
	wks_settings cfg;
	size_t have = 0;
	int err;

	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	if (n == 0) {
		wks__wrlock(st);
		if (st->keypool && (p = pool_of(st)) != NULL)
			pool_reset(p);
		wks__wrunlock(st);
		return WKS_OK;
	}
	if (!pw || pw_len == 0)
		return wks__err(WKS_ERR_INVALID, "the key password must not be "
		                "empty");
	wks__store_settings(&cfg, st);
	if ((err = wks__key_seal_check(&cfg)) < 0)
		return err;
	wks__wrlock(st);
	if (st->keypool && (p = pool_of(st)) != NULL)
		have = p->n;
	wks__wrunlock(st);
	if (n > POOL_MAX || have > POOL_MAX - n)
		return wks__err(WKS_ERR_LIMIT, "%zu keys asked for, %zu made "
		                "already: at most %d can be made ahead", n, have,
		                POOL_MAX);
	salts = malloc(n * sizeof(*salts));
	dks = malloc(n * sizeof(*dks));
	if (!salts || !dks) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	if ((err = derive(salts, dks, n, &cfg, pw, pw_len)) < 0)
		goto done;
	wks__wrlock(st);
	if (!(p = pool_of(st)))
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
	else if ((err = pool_reserve(p, n)) == WKS_OK)
		pool_add(p, &cfg, pw, pw_len, salts, dks, 0, n, 0);
	wks__wrunlock(st);
done:
	if (salts)
		wks_wipe_free(salts, n * sizeof(*salts));
	if (dks)
		wks_wipe_free(dks, n * sizeof(*dks));
	wks__wipe_registers();
	return err;
}
