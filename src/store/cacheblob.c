/* Cached keys handed from one process to another (the PKCS#11 module's
 * shared login, docs/PKCS11.md): wks_store_cache_export() copies the
 * derived keys the KEK cache holds for one password into a caller's
 * buffer, wks_store_cache_import() caches, for the same password, those
 * of a blob that verify against an entry of another store object loaded
 * from the same file.
 *
 * The blob (docs/CACHE.md, "Handing cached keys to another process"):
 *
 *     "WKSKEKC2"            8 bytes
 *     n                     u32, big-endian, 0..WKS_CACHE_BLOB_MAX_KEYS
 *     n times:  salt        16 bytes   the entry's KDF salt
 *               iterations  u32        its KDF iteration count
 *               dk          96 bytes   its derived key (AES + HMAC)
 *               check       64 bytes   HMAC-SHA512(dk[32..96),
 *                                      "wks-cache-export" || dk[0..32)
 *                                      || password)
 *
 * and nothing after.  No alias and no password: a key is matched to an
 * entry by (salt, iterations) and only cached once the entry's own MAC
 * verifies with it, so an import can add nothing the file does not
 * confirm, and runs no PBKDF2.
 *
 * The MAC check proves the key is the entry's, not that the caller's
 * password is the entry's: a cached key stands for "this password opens
 * this entry" (a hit is trusted, with no PBKDF2), so without more a blob
 * imported under any password would make get_key accept that password.
 * The check value binds each key to the password it was exported under:
 * import recomputes it with the caller's password and caches nothing
 * that does not match.  It also covers the AES half of the key, which
 * the entry MAC (keyed with the HMAC half) does not: a damaged AES half
 * would be cached and decrypt the entry into other bytes.  Whoever holds
 * a key can compute its check value for any password, but holding the
 * key is already holding the entry. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "store/store_int.h"
#include "util/error.h"
#include "util/reader.h"
#include "util/wipe.h"

static const uint8_t MAGIC[8] = { 'W', 'K', 'S', 'K', 'E', 'K', 'C', '2' };
static const char CHECK_LABEL[] = "wks-cache-export";
#define LABEL_LEN (sizeof(CHECK_LABEL) - 1) /* without its NUL */
#define DK_OFF (WKS_SALT_LEN + 4)
#define CHECK_OFF (DK_OFF + WKS_DK_LEN)
#define REC_LEN (CHECK_OFF + WKS_MAC_LEN)
#define HDR_LEN 12

/* "wks-cache-export" || (32 bytes for an AES key) || pw, the message of
 * the check values of a call (wiped and freed by the caller with
 * wks_wipe_free(*out, *out_len)). */
static int check_msg(uint8_t **out, size_t *out_len, const char *pw,
                     size_t pw_len)
{
	const size_t head = LABEL_LEN + WKS_AES_KEY_LEN;
	uint8_t *m;

	*out = NULL;
	*out_len = 0;
	if (pw_len > SIZE_MAX - head || !(m = malloc(head + pw_len)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	memcpy(m, CHECK_LABEL, LABEL_LEN);
	memset(m + LABEL_LEN, 0, WKS_AES_KEY_LEN);
	memcpy(m + head, pw, pw_len);
	*out = m;
	*out_len = head + pw_len;
	return WKS_OK;
}

/* The check value of dk: HMAC-SHA512(dk[32..96), "wks-cache-export" ||
 * dk[0..32) || pw), msg being check_msg()'s.  The AES half is in the
 * message because nothing else covers it: the entry MAC is keyed with
 * the HMAC half only, and a hit is decrypted with whatever AES key was
 * cached. */
static int check_value(uint8_t out[WKS_MAC_LEN], const wks_settings *cfg,
                       const uint8_t dk[WKS_DK_LEN], uint8_t *msg,
                       size_t msg_len)
{
	memcpy(msg + LABEL_LEN, dk, WKS_AES_KEY_LEN);
	return wks__hmac_sha512_cc(cfg->crypto, out, dk + WKS_AES_KEY_LEN,
	                           WKS_DK_LEN - WKS_AES_KEY_LEN, msg, msg_len);
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
	uint8_t dk[WKS_DK_LEN], *msg = NULL;
	size_t i, n = 0, m, k = 0, need, msg_len = 0;
	int err;

	wks__err_clear();
	if (out_len)
		*out_len = 0;
	if (!out_len || (!buf && cap))
		return wks__err(WKS_ERR_INVALID, "out_len is NULL, or buf is "
		                "NULL with a capacity");
	if ((err = check_args(st, pw, pw_len, &cfg)) != WKS_OK)
		return err;
	if ((err = wks__store_key_entries(&v, &n, st)) != WKS_OK)
		return err;
	/* Room for every key entry: the cache may fill meanwhile.  (m, not
	 * n, is bounded: all n references are released below.) */
	m = n < WKS_CACHE_BLOB_MAX_KEYS ? n : WKS_CACHE_BLOB_MAX_KEYS;
	need = HDR_LEN + m * REC_LEN;
	if (!buf || cap < need) {
		*out_len = need;
		if (buf)
			err = wks__err(WKS_ERR_LIMIT, "cache export: the buffer "
			               "holds %zu bytes, %zu are needed", cap, need);
		goto done;
	}
	if ((err = check_msg(&msg, &msg_len, pw, pw_len)) != WKS_OK)
		goto done;
	for (i = 0; i < n && k < m; i++) {
		const wks_entry *e = v[i];
		uint8_t *rec = buf + HDR_LEN + k * REC_LEN;

		if (wks__key_check(e, pw, pw_len, &cfg) != WKS_OK ||
		    wks__cache_lookup(st->cache, &cfg, e->id, (const uint8_t *)pw,
		                      pw_len, e->salt, (uint32_t)e->iterations,
		                      dk) != WKS_OK)
			continue;
		if ((err = check_value(rec + CHECK_OFF, &cfg, dk, msg,
		                       msg_len)) != WKS_OK)
			break;
		memcpy(rec, e->salt, WKS_SALT_LEN);
		put_be32(rec + WKS_SALT_LEN, (uint32_t)e->iterations);
		memcpy(rec + DK_OFF, dk, WKS_DK_LEN);
		k++;
	}
	wks_wipe(dk, sizeof(dk));
	if (err != WKS_OK) {
		wks_wipe(buf, cap); /* keys written before the failure */
		goto done;
	}
	memcpy(buf, MAGIC, sizeof(MAGIC));
	put_be32(buf + 8, (uint32_t)k);
	*out_len = HDR_LEN + k * REC_LEN;
	/* what the buffer held beyond the blob */
	wks_wipe(buf + *out_len, cap - *out_len);
done:
	wks__store_entries_release(v, n);
	wks_wipe_free(msg, msg_len);
	wks__wipe_registers();
	return err;
}

static int cmp_rec(const void *a, const void *b)
{
	return memcmp(a, b, DK_OFF);
}

int wks_store_cache_import(wks_store *st, const char *pw, size_t pw_len,
                           const uint8_t *blob, size_t len,
                           size_t *n_imported)
{
	wks_settings cfg;
	wks_entry **v = NULL;
	wks_reader r;
	const uint8_t *magic, *recs;
	uint8_t *sorted = NULL, *msg = NULL, key[DK_OFF], check[WKS_MAC_LEN];
	uint64_t gen;
	uint32_t count;
	size_t i, n = 0, msg_len = 0;
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
	if ((err = check_msg(&msg, &msg_len, pw, pw_len)) != WKS_OK)
		return err;
	/* Sorted by (salt, iterations) in memory that is wiped, so that
	 * each entry finds its key by a binary search. */
	if (!(sorted = malloc((size_t)count * REC_LEN))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	memcpy(sorted, recs, (size_t)count * REC_LEN);
	qsort(sorted, count, REC_LEN, cmp_rec);
	/* Read before the entries are looked up (wks__cache_generation()). */
	gen = wks__cache_generation(st->cache);
	if ((err = wks__store_key_entries(&v, &n, st)) != WKS_OK)
		goto done;
	for (i = 0; i < n; i++) {
		const wks_entry *e = v[i];
		const uint8_t *rec;

		if (wks__key_check(e, pw, pw_len, &cfg) != WKS_OK)
			continue;
		memcpy(key, e->salt, WKS_SALT_LEN);
		put_be32(key + WKS_SALT_LEN, (uint32_t)e->iterations);
		rec = bsearch(key, sorted, count, REC_LEN, cmp_rec);
		if (!rec)
			continue;
		/* Bound to pw first (a key of the entry exported under another
		 * password must not be cached under this one), then the
		 * entry's own MAC. */
		if (check_value(check, &cfg, rec + DK_OFF, msg, msg_len) !=
		    WKS_OK || !wks__mac_equal(check, rec + CHECK_OFF,
		                              WKS_MAC_LEN) ||
		    wks__key_verify(e, rec + DK_OFF, &cfg) != WKS_OK)
			continue;
		wks__cache_put(st->cache, &cfg, gen, e->id, (const uint8_t *)pw,
		               pw_len, e->salt, (uint32_t)e->iterations,
		               rec + DK_OFF);
		if (n_imported)
			(*n_imported)++;
	}
done:
	/* skipped keys leave no error detail behind */
	if (err == WKS_OK)
		wks__err_clear();
	wks__store_entries_release(v, n);
	wks_wipe_free(sorted, (size_t)count * REC_LEN);
	wks_wipe(check, sizeof(check));
	wks_wipe_free(msg, msg_len);
	wks__wipe_registers();
	return err;
}
