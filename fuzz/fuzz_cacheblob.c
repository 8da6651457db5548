/*
 * fuzz_cacheblob: any bytes as a blob of wks_store_cache_import()
 * (src/store/cacheblob.c; docs/CACHE.md, "Handing cached keys to another
 * process").
 *
 * A small store is built once, deterministically (fixed salts, IVs and
 * keys; an Ed25519 private key with its certificate, three secret keys,
 * one of them under another password, and a certificate entry; PBKDF2 at
 * FUZZ_ITER iterations), so that the committed seeds -- that store's own
 * exports -- stay valid.  Two stores are loaded from it: `src` exports
 * the true records (the seeds are written by running this target
 * with FUZZ_CACHEBLOB_SEEDS=DIR, e.g. `FUZZ_CACHEBLOB_SEEDS=fuzz/corpus/
 * cacheblob build-fuzz/fuzz/fuzz_cacheblob -runs=0`), `dst` takes every
 * input.  Per input, with dst's cache cleared:
 *
 *   1. import under a wrong password, then under the store password, then
 *      under the other entry's password;
 *   2. get_key on every entry with each of the three passwords.
 *
 * Oracles:
 *  - each import returns exactly what the header says (a parse of its
 *    own: FORMAT for a short blob, another magic or lengths that do not
 *    add up, LIMIT for more than WKS_CACHE_BLOB_MAX_KEYS keys, else OK);
 *  - under the wrong password nothing is imported or cached;
 *  - under a right password exactly the entries whose true record (all
 *    180 bytes) the blob holds are imported (at most, when two records
 *    share a salt and iteration count), and the cache holds them;
 *  - get_key returns the true bytes of every entry with its password,
 *    whatever was imported, and fails with INTEGRITY with any other
 *    password: an import can never make get_key return another key nor
 *    accept a wrong password;
 *  - every imported key is a hit, every other get_key a derivation
 *    (wks_store_cache_stats()).
 */
#include "fuzz_common.h"

#include "config/config.h"
#include "format/format.h"
#include "store/decode.h"
#include "util/buf.h"

#include <openssl/hmac.h>
#include <openssl/x509.h>

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

#define CB_OTHER "another-key-password"
#define CB_WRONG "not-the-password"
#define CB_HDR 12
#define CB_REC (16 + 4 + 96 + 64)
#define CB_NKEYS 4

typedef struct {
	const char *alias;
	int type;             /* WKS_ENTRY_* */
	const char *pw;
	const char *algorithm; /* secret keys */
	uint8_t salt_byte;
	uint8_t *plain;        /* the true key bytes */
	size_t plain_len;
	uint8_t rec[CB_REC];   /* its true record, exported under pw */
} cb_key;

static cb_key cb_keys[CB_NKEYS] = {
	{ "k1", WKS_ENTRY_PRIVATE_KEY, FUZZ_PW, NULL, 0x11, NULL, 0, { 0 } },
	{ "s1", WKS_ENTRY_SECRET_KEY, FUZZ_PW, "AES", 0x12, NULL, 0, { 0 } },
	{ "s2", WKS_ENTRY_SECRET_KEY, FUZZ_PW, "HmacSHA256", 0x13, NULL, 0,
	  { 0 } },
	{ "own", WKS_ENTRY_SECRET_KEY, CB_OTHER, "AES", 0x14, NULL, 0, { 0 } },
};
static wks_store *cb_dst;
/* The file and the blobs exported under each password (the seeds). */
static wks_buf cb_file = WKS_BUF_INIT;
static uint8_t *cb_blob_pw, *cb_blob_other;
static size_t cb_blob_pw_len, cb_blob_other_len;

/* ---- the store ------------------------------------------------------------ */

static uint8_t *cb_dup(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n);

	FUZZ_CHECK(q != NULL, "malloc");
	memcpy(q, p, n);
	return q;
}

/* An Ed25519 key from a fixed seed (PKCS#8 DER) and a self-signed
 * certificate with fixed fields: Ed25519 signs deterministically. */
static void cb_ed25519(uint8_t **pkcs8, size_t *pkcs8_len, uint8_t **cert,
                       size_t *cert_len)
{
	uint8_t seed[32];
	EVP_PKEY *k;
	X509 *x = X509_new();
	X509_NAME *n;
	PKCS8_PRIV_KEY_INFO *p8;
	unsigned char *der = NULL;
	int len;

	memset(seed, 0x42, sizeof(seed));
	k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	FUZZ_CHECK(k && x, "Ed25519 key");
	p8 = EVP_PKEY2PKCS8(k);
	FUZZ_CHECK(p8 && (len = i2d_PKCS8_PRIV_KEY_INFO(p8, &der)) > 0, "PKCS#8");
	*pkcs8 = cb_dup(der, (size_t)len);
	*pkcs8_len = (size_t)len;
	OPENSSL_free(der);
	der = NULL;
	PKCS8_PRIV_KEY_INFO_free(p8);
	n = X509_get_subject_name(x);
	FUZZ_CHECK(X509_set_version(x, 2) == 1 &&
	           ASN1_INTEGER_set(X509_get_serialNumber(x), 1) == 1 &&
	           ASN1_TIME_set(X509_getm_notBefore(x), 1700000000) &&
	           ASN1_TIME_set(X509_getm_notAfter(x), 2000000000) &&
	           X509_set_pubkey(x, k) == 1 &&
	           X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	                                      (const unsigned char *)"cacheblob",
	                                      -1, -1, 0) == 1 &&
	           X509_set_issuer_name(x, n) == 1 &&
	           X509_sign(x, k, NULL) > 0 && (len = i2d_X509(x, &der)) > 0,
	           "certificate");
	*cert = cb_dup(der, (size_t)len);
	*cert_len = (size_t)len;
	OPENSSL_free(der);
	X509_free(x);
	EVP_PKEY_free(k);
}

/* One key entry sealed under its password with OpenSSL's AES and HMAC. */
static wks_entry *cb_seal(const cb_key *ck, const uint8_t *cert,
                          size_t cert_len, const wks_settings *cfg)
{
	uint8_t salt[16], iv[16], dk[96], mac[64], *ct;
	wks_buf body = WKS_BUF_INIT;
	wks_entry *e = NULL;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	const uint8_t *certs[1] = { cert };
	size_t cert_lens[1] = { cert_len };
	unsigned mac_len = 0;
	int a = 0, b = 0, rc;

	memset(salt, ck->salt_byte, sizeof(salt));
	memset(iv, ck->salt_byte ^ 0xff, sizeof(iv));
	FUZZ_CHECK(wks__pbkdf2(dk, sizeof(dk), (const uint8_t *)ck->pw,
	                       strlen(ck->pw), salt, 16, FUZZ_ITER,
	                       WKS_KDF_NATIVE, 1) == WKS_OK, "PBKDF2");
	FUZZ_CHECK((ct = malloc(ck->plain_len + 16)) != NULL, "malloc");
	FUZZ_CHECK(c && EVP_EncryptInit_ex(c, EVP_aes_256_cbc(), NULL, dk, iv)
	           == 1 && EVP_EncryptUpdate(c, ct, &a, ck->plain,
	                                     (int)ck->plain_len) == 1 &&
	           EVP_EncryptFinal_ex(c, ct + a, &b) == 1, "AES");
	EVP_CIPHER_CTX_free(c);
	if (ck->type == WKS_ENTRY_PRIVATE_KEY)
		rc = wks__body_private(&body, 1700000000000, salt, FUZZ_ITER, iv,
		                       ct, (size_t)(a + b), certs, cert_lens, 1);
	else
		rc = wks__body_secret(&body, 1700000000000, ck->algorithm, salt,
		                      FUZZ_ITER, iv, ct, (size_t)(a + b));
	FUZZ_CHECK(rc == WKS_OK, "body: %d", rc);
	FUZZ_CHECK(HMAC(EVP_sha512(), dk + 32, 64, body.ptr, body.len, mac,
	                &mac_len) != NULL, "HMAC");
	wks_buf_put_i32be(&body, 64);
	wks_buf_put(&body, mac, 64);
	FUZZ_CHECK(body.err == 0, "buffer");
	rc = wks__entry_from_body(&e, ck->type, ck->alias, strlen(ck->alias),
	                          body.ptr, body.len, cfg, "cacheblob");
	FUZZ_CHECK(rc == WKS_OK, "entry %s: %d", ck->alias, rc);
	wks_buf_dispose(&body);
	free(ct);
	return e;
}

static wks_store *cb_load(void)
{
	wks_store *st = NULL;

	FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "store_new");
	FUZZ_CHECK(wks_store_set_property(st, "wolfjce.keystore.kekCacheEnabled",
	                                  "true") == WKS_OK, "cache on");
	/* no store password: the file's MAC is a dummy */
	FUZZ_CHECK(wks_store_load_buffer(st, cb_file.ptr, cb_file.len, NULL, 0)
	           == WKS_OK, "load");
	return st;
}

static uint8_t *cb_export(wks_store *st, const char *pw, size_t *len)
{
	uint8_t *b;
	size_t need = 0, n = 0;

	FUZZ_CHECK(wks_store_cache_warm(st, pw, strlen(pw), &n) == WKS_OK,
	           "warm");
	FUZZ_CHECK(wks_store_cache_export(st, pw, strlen(pw), NULL, 0, &need)
	           == WKS_OK, "export size");
	FUZZ_CHECK((b = malloc(need)) != NULL, "malloc");
	FUZZ_CHECK(wks_store_cache_export(st, pw, strlen(pw), b, need, len)
	           == WKS_OK, "export");
	FUZZ_CHECK(*len == CB_HDR + n * CB_REC, "export of %zu keys: %zu bytes",
	           n, *len);
	return b;
}

static void cb_write(const char *dir, const char *name, const uint8_t *p,
                     size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FUZZ_CHECK((f = fopen(path, "wb")) != NULL, "%s", path);
	FUZZ_CHECK(fwrite(p, 1, n, f) == n && fclose(f) == 0, "%s", path);
}

/* FUZZ_CACHEBLOB_SEEDS=DIR: the seed corpus (fuzz/corpus/cacheblob). */
static void cb_seeds(const char *dir)
{
	wks_buf b = WKS_BUF_INIT;
	uint8_t *m;
	size_t n = cb_blob_pw_len;

	cb_write(dir, "export-store-password", cb_blob_pw, n);
	cb_write(dir, "export-other-password", cb_blob_other, cb_blob_other_len);
	/* both in one blob: 4 records */
	wks_buf_put(&b, cb_blob_pw, n);
	wks_buf_put(&b, cb_blob_other + CB_HDR, CB_REC);
	FUZZ_CHECK(b.err == 0, "buffer");
	b.ptr[11] = 4;
	cb_write(dir, "export-both", b.ptr, b.len);
	wks_buf_dispose(&b);
	m = cb_dup(cb_blob_pw, n);
	m[CB_HDR + CB_REC + 20 + 3] ^= 0x01; /* a bit of the second AES key */
	cb_write(dir, "flipped-aes-key", m, n);
	m[CB_HDR + CB_REC + 20 + 3] ^= 0x01;
	m[CB_HDR + 20 + 50] ^= 0x80; /* a bit of the first HMAC key */
	cb_write(dir, "flipped-hmac-key", m, n);
	m[CB_HDR + 20 + 50] ^= 0x80;
	m[n - 1] ^= 0x02; /* the last check value */
	cb_write(dir, "flipped-check", m, n);
	m[n - 1] ^= 0x02;
	cb_write(dir, "truncated", m, n - 1);
	m[7] = '1';
	cb_write(dir, "first-version", m, n);
	m[7] = '2';
	m[8] = 0x7f;
	cb_write(dir, "count-too-large", m, CB_HDR);
	m[8] = 0;
	m[11] = 0;
	cb_write(dir, "empty", m, CB_HDR);
	free(m);
	/* the first record twice, the second copy damaged */
	wks_buf_put(&b, cb_blob_pw, CB_HDR + CB_REC);
	wks_buf_put(&b, cb_blob_pw + CB_HDR, CB_REC);
	FUZZ_CHECK(b.err == 0, "buffer");
	b.ptr[11] = 2;
	b.ptr[CB_HDR + CB_REC + 30] ^= 0x04;
	cb_write(dir, "duplicate-damaged", b.ptr, b.len);
	wks_buf_dispose(&b);
}

int FUZZ_INIT(int *argc, char ***argv)
{
	static const char *const pws[] = { FUZZ_PW, CB_OTHER };
	wks_entry *v[CB_NKEYS + 1];
	wks_settings cfg;
	wks_store *src;
	wks_buf body = WKS_BUF_INIT;
	uint8_t salt[16] = { 0 }, mac[64] = { 0 }, *cert = NULL;
	size_t cert_len = 0, i, j, len;
	const char *seeds;
	int rc;

	(void)argc;
	(void)argv;
	if (cb_dst)
		return 0;
	fuzz_settings();
	wks__settings_get(&cfg, NULL);
	cb_ed25519(&cb_keys[0].plain, &cb_keys[0].plain_len, &cert, &cert_len);
	for (i = 1; i < CB_NKEYS; i++) {
		cb_keys[i].plain_len = i == 2 ? 20 : 32;
		FUZZ_CHECK((cb_keys[i].plain = malloc(32)) != NULL, "malloc");
		memset(cb_keys[i].plain, (int)(0x50 + i), 32);
	}
	for (i = 0; i < CB_NKEYS; i++)
		v[i] = cb_seal(&cb_keys[i], cert, cert_len, &cfg);
	FUZZ_CHECK(wks__body_cert(&body, 1700000000000, cert, cert_len) ==
	           WKS_OK, "certificate body");
	rc = wks__entry_from_body(&v[CB_NKEYS], WKS_ENTRY_CERTIFICATE, "ca", 2,
	                          body.ptr, body.len, &cfg, "cacheblob");
	FUZZ_CHECK(rc == WKS_OK, "certificate entry: %d", rc);
	wks_buf_dispose(&body);
	FUZZ_CHECK(wks__encode(&cb_file, v, CB_NKEYS + 1, salt, FUZZ_ITER) ==
	           WKS_OK, "encode");
	wks_buf_put_i32be(&cb_file, 64);
	wks_buf_put(&cb_file, mac, 64);
	FUZZ_CHECK(cb_file.err == 0, "buffer");
	for (i = 0; i <= CB_NKEYS; i++)
		wks__entry_unref(v[i]);
	free(cert);

	src = cb_load();
	cb_blob_pw = cb_export(src, pws[0], &cb_blob_pw_len);
	cb_blob_other = cb_export(src, pws[1], &cb_blob_other_len);
	FUZZ_CHECK(cb_blob_pw_len == CB_HDR + 3 * CB_REC &&
	           cb_blob_other_len == CB_HDR + CB_REC, "export sizes");
	/* each key's true record, found by its salt */
	for (i = 0; i < CB_NKEYS; i++) {
		const uint8_t *b = cb_keys[i].pw == pws[0] ? cb_blob_pw
		                                           : cb_blob_other;
		size_t n = fuzz_be32(b + 8);

		for (j = 0; j < n; j++)
			if (b[CB_HDR + j * CB_REC] == cb_keys[i].salt_byte)
				memcpy(cb_keys[i].rec, b + CB_HDR + j * CB_REC, CB_REC);
		FUZZ_CHECK(cb_keys[i].rec[0] == cb_keys[i].salt_byte,
		           "no record for %s", cb_keys[i].alias);
	}
	/* the source store's keys are the ones sealed */
	for (i = 0; i < CB_NKEYS; i++) {
		wks_key *k = NULL;
		const uint8_t *d;

		rc = wks_store_get_key(&k, src, cb_keys[i].alias, cb_keys[i].pw,
		                       strlen(cb_keys[i].pw));
		FUZZ_CHECK(rc == WKS_OK, "get_key %s: %d", cb_keys[i].alias, rc);
		d = wks_key_data(k, &len);
		FUZZ_CHECK(len == cb_keys[i].plain_len &&
		           memcmp(d, cb_keys[i].plain, len) == 0, "key %s",
		           cb_keys[i].alias);
		wks_key_free(k);
	}
	if ((seeds = getenv("FUZZ_CACHEBLOB_SEEDS")) != NULL && *seeds)
		cb_seeds(seeds);
	wks_store_free(src);
	cb_dst = cb_load();
	return 0;
}

/* ---- one input ------------------------------------------------------------ */

/* What import must return, by a parse of the header of our own. */
static int cb_expected(const uint8_t *data, size_t size, uint32_t *count)
{
	*count = 0;
	if (size < CB_HDR || memcmp(data, "WKSKEKC2", 8) != 0)
		return WKS_ERR_FORMAT;
	*count = fuzz_be32(data + 8);
	if (*count > WKS_CACHE_BLOB_MAX_KEYS)
		return WKS_ERR_LIMIT;
	if (size - CB_HDR != (size_t)*count * CB_REC)
		return WKS_ERR_FORMAT;
	return WKS_OK;
}

/* How many of pw's entries have their true record in the blob; *dups set
 * when two records share a salt and iteration count (then an import may
 * take the wrong one and skip the entry). */
static size_t cb_present(const uint8_t *data, uint32_t count, const char *pw,
                         int *dups)
{
	size_t i, j, n = 0;

	*dups = 0;
	for (i = 0; i < count; i++)
		for (j = i + 1; j < count; j++)
			if (memcmp(data + CB_HDR + i * CB_REC,
			           data + CB_HDR + j * CB_REC, 20) == 0)
				*dups = 1;
	for (i = 0; i < CB_NKEYS; i++) {
		if (strcmp(cb_keys[i].pw, pw) != 0)
			continue;
		for (j = 0; j < count; j++)
			if (memcmp(data + CB_HDR + j * CB_REC, cb_keys[i].rec,
			           CB_REC) == 0) {
				n++;
				break;
			}
	}
	return n;
}

static void cb_stats(wks_cache_stats *cs)
{
	FUZZ_CHECK(wks_store_cache_stats(cs, cb_dst) == WKS_OK, "stats");
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	static const char *const pws[] = { FUZZ_PW, CB_OTHER, CB_WRONG };
	wks_cache_stats before, after;
	size_t n[3], want, i, j, len;
	uint32_t count = 0;
	int expect, rc, dups;

	FUZZ_INIT(NULL, NULL);
	expect = cb_expected(data, size, &count);
	FUZZ_CHECK(wks_store_cache_clear(cb_dst) == WKS_OK, "clear");
	/* the wrong password first: nothing may come of it */
	rc = wks_store_cache_import(cb_dst, CB_WRONG, strlen(CB_WRONG), data,
	                            size, &n[2]);
	FUZZ_CHECK(rc == expect, "import, wrong password: %d, want %d", rc,
	           expect);
	cb_stats(&before);
	FUZZ_CHECK(n[2] == 0 && before.size == 0,
	           "a wrong password imported %zu keys (%zu cached)", n[2],
	           before.size);
	for (i = 0; i < 2; i++) {
		rc = wks_store_cache_import(cb_dst, pws[i], strlen(pws[i]), data,
		                            size, &n[i]);
		FUZZ_CHECK(rc == expect, "import: %d, want %d", rc, expect);
		want = rc == WKS_OK ? cb_present(data, count, pws[i], &dups) : 0;
		if (rc != WKS_OK)
			dups = 0;
		FUZZ_CHECK(dups ? n[i] <= want : n[i] == want,
		           "password %zu: %zu keys imported, %zu true records",
		           i, n[i], want);
	}
	cb_stats(&before);
	FUZZ_CHECK(before.size == n[0] + n[1], "%zu keys cached, %zu imported",
	           before.size, n[0] + n[1]);
	/* every entry with every password */
	for (i = 0; i < CB_NKEYS; i++)
		for (j = 0; j < 3; j++) {
			wks_key *k = NULL;
			const uint8_t *d;

			rc = wks_store_get_key(&k, cb_dst, cb_keys[i].alias, pws[j],
			                       strlen(pws[j]));
			if (strcmp(cb_keys[i].pw, pws[j]) != 0) {
				FUZZ_CHECK(rc == WKS_ERR_INTEGRITY,
				           "get_key %s with another password: %d",
				           cb_keys[i].alias, rc);
				continue;
			}
			FUZZ_CHECK(rc == WKS_OK, "get_key %s: %d", cb_keys[i].alias,
			           rc);
			d = wks_key_data(k, &len);
			FUZZ_CHECK(len == cb_keys[i].plain_len &&
			           memcmp(d, cb_keys[i].plain, len) == 0,
			           "get_key %s returned other bytes after an import",
			           cb_keys[i].alias);
			wks_key_free(k);
		}
	cb_stats(&after);
	/* imported keys are hits; the rest derive (8 with a wrong password) */
	FUZZ_CHECK(after.hits - before.hits == n[0] + n[1] &&
	           after.derivations - before.derivations ==
	           CB_NKEYS - n[0] - n[1] + 2 * CB_NKEYS,
	           "hits %lu, derivations %lu, %zu keys imported",
	           (unsigned long)(after.hits - before.hits),
	           (unsigned long)(after.derivations - before.derivations),
	           n[0] + n[1]);
	return 0;
}
