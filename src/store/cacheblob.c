/* Cached keys handed from one process to another (the PKCS#11 module's
 * shared login, docs/PKCS11.md): wks_store_cache_export() copies the
 * derived keys the KEK cache holds for one password into a caller's
 * buffer, wks_store_cache_import() caches, for the same password, those
 * of a blob that verify against an entry of another store object loaded
 * from the same file.
 *
 * The blob (docs/CACHE.md, "Handing cached keys to another process"):
 *
 *     "WKSKEKC1"            8 bytes
 *     n                     u32, big-endian, 0..WKS_CACHE_BLOB_MAX_KEYS
 *     n times:  salt        16 bytes   the entry's KDF salt
 *               iterations  u32        its KDF iteration count
 *               dk          96 bytes   its derived key (AES + HMAC)
 *
 * and nothing after.  No alias and no password: a key is matched to an
 * entry by (salt, iterations) and only cached once the entry's own MAC
 * verifies with it, so an import can add nothing the file does not
 * confirm, and runs no PBKDF2. */
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "store/store_int.h"
#include "util/error.h"
#include "util/reader.h"
#include "util/wipe.h"

static const uint8_t MAGIC[8] = { 'W', 'K', 'S', 'K', 'E', 'K', 'C', '1' };
#define REC_LEN (WKS_SALT_LEN + 4 + WKS_DK_LEN)
#define HDR_LEN 12

/* The key entries of `st`, referenced under its read lock. */
static int key_entries(wks_entry ***out, size_t *n_out, wks_store *st)
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

static void entries_free(wks_entry **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		wks__entry_unref(v[i]);
	free(v);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static int check_args(wks_store *st, const char *pw, size_t pw_len,
                      wks_settings *cfg)
{
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	if (!pw || pw_len == 0)
		return wks__err(WKS_ERR_INVALID, "the key password must not be "
		                "empty");
	wks__store_settings(cfg, st);
	if (!cfg->cache_enabled)
		return wks__err(WKS_ERR_INVALID, "the KEK cache is disabled "
		                "(wolfjce.keystore.kekCacheEnabled)");
	return WKS_OK;
}

int wks_store_cache_export(wks_store *st, const char *pw, size_t pw_len,
                           uint8_t *buf, size_t cap, size_t *out_len)
{
	wks_settings cfg;
	wks_entry **v = NULL;
	uint8_t dk[WKS_DK_LEN];
	size_t i, n = 0, k = 0, need;
	int err;

	wks__err_clear();
	if (out_len)
		*out_len = 0;
	if (!out_len || (!buf && cap))
		return wks__err(WKS_ERR_INVALID, "out_len is NULL, or buf is "
		                "NULL with a capacity");
	if ((err = check_args(st, pw, pw_len, &cfg)) != WKS_OK)
		return err;
	if ((err = key_entries(&v, &n, st)) != WKS_OK)
		return err;
	/* Room for every key entry: the cache may fill meanwhile. */
	if (n > WKS_CACHE_BLOB_MAX_KEYS)
		n = WKS_CACHE_BLOB_MAX_KEYS;
	need = HDR_LEN + n * REC_LEN;
	if (!buf || cap < need) {
		*out_len = need;
		entries_free(v, n);
		if (!buf)
			return WKS_OK;
		return wks__err(WKS_ERR_LIMIT, "cache export: the buffer holds "
		                "%zu bytes, %zu are needed", cap, need);
	}
	for (i = 0; i < n; i++) {
		const wks_entry *e = v[i];
		uint8_t *rec = buf + HDR_LEN + k * REC_LEN;

		if (wks__key_check(e, pw, pw_len, &cfg) != WKS_OK ||
		    wks__cache_lookup(st->cache, &cfg, e->id, (const uint8_t *)pw,
		                      pw_len, e->salt, (uint32_t)e->iterations,
		                      dk) != WKS_OK)
			continue;
		memcpy(rec, e->salt, WKS_SALT_LEN);
		put_be32(rec + WKS_SALT_LEN, (uint32_t)e->iterations);
		memcpy(rec + WKS_SALT_LEN + 4, dk, WKS_DK_LEN);
		k++;
	}
	wks_wipe(dk, sizeof(dk));
	memcpy(buf, MAGIC, sizeof(MAGIC));
	put_be32(buf + 8, (uint32_t)k);
	*out_len = HDR_LEN + k * REC_LEN;
	/* what the buffer held beyond the blob */
	wks_wipe(buf + *out_len, cap - *out_len);
	entries_free(v, n);
	wks__wipe_registers();
	return WKS_OK;
}

static int cmp_rec(const void *a, const void *b)
{
	return memcmp(a, b, WKS_SALT_LEN + 4);
}

int wks_store_cache_import(wks_store *st, const char *pw, size_t pw_len,
                           const uint8_t *blob, size_t len,
                           size_t *n_imported)
{
	wks_settings cfg;
	wks_entry **v = NULL;
	wks_reader r;
	const uint8_t *magic, *recs;
	uint8_t *sorted = NULL, key[WKS_SALT_LEN + 4];
	uint64_t gen;
	uint32_t count;
	size_t i, n = 0;
	int err;

	wks__err_clear();
	if (n_imported)
		*n_imported = 0;
	if ((err = check_args(st, pw, pw_len, &cfg)) != WKS_OK)
		return err;
	if (!blob && len)
		return wks__err(WKS_ERR_INVALID, "blob is NULL");
	wks_reader_init(&r, blob, len);
	magic = wks_rd_take(&r, sizeof(MAGIC));
	count = (uint32_t)wks_rd_i32(&r);
	if (r.err || memcmp(magic, MAGIC, sizeof(MAGIC)) != 0)
		return wks__err(WKS_ERR_FORMAT, "cache import: not a cache "
		                "export of this version");
	if (count > WKS_CACHE_BLOB_MAX_KEYS)
		return wks__err(WKS_ERR_LIMIT, "cache import: %lu keys, at most "
		                "%u", (unsigned long)count,
		                (unsigned)WKS_CACHE_BLOB_MAX_KEYS);
	if (r.left != (size_t)count * REC_LEN)
		return wks__err(WKS_ERR_FORMAT, "cache import: %zu bytes of "
		                "keys for %lu keys of %u bytes", r.left,
		                (unsigned long)count, (unsigned)REC_LEN);
	recs = wks_rd_take(&r, r.left);
	if (count == 0)
		return WKS_OK;
	/* Sorted by (salt, iterations) in memory that is wiped, so that
	 * each entry finds its key by a binary search. */
	if (!(sorted = malloc((size_t)count * REC_LEN)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	memcpy(sorted, recs, (size_t)count * REC_LEN);
	qsort(sorted, count, REC_LEN, cmp_rec);
	/* Read before the entries are looked up (wks__cache_generation()). */
	gen = wks__cache_generation(st->cache);
	if ((err = key_entries(&v, &n, st)) != WKS_OK)
		goto done;
	for (i = 0; i < n; i++) {
		const wks_entry *e = v[i];
		const uint8_t *rec;

		if (wks__key_check(e, pw, pw_len, &cfg) != WKS_OK)
			continue;
		memcpy(key, e->salt, WKS_SALT_LEN);
		put_be32(key + WKS_SALT_LEN, (uint32_t)e->iterations);
		rec = bsearch(key, sorted, count, REC_LEN, cmp_rec);
		if (!rec ||
		    wks__key_verify(e, rec + WKS_SALT_LEN + 4, &cfg) != WKS_OK)
			continue;
		wks__cache_put(st->cache, &cfg, gen, e->id, (const uint8_t *)pw,
		               pw_len, e->salt, (uint32_t)e->iterations,
		               rec + WKS_SALT_LEN + 4);
		if (n_imported)
			(*n_imported)++;
	}
done:
	entries_free(v, n);
	wks_wipe_free(sorted, (size_t)count * REC_LEN);
	wks__wipe_registers();
	return err;
}
