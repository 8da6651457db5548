/* Key entries: retrieval (spec 7.2, with the KEK cache) and creation
 * (spec 7.1, with libwks's complete checks). */
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "crypto/pki.h"
#include "format/mutf8.h"
#include "store/store_int.h"
#include "util/error.h"
#include "util/wipe.h"

struct wks_key {
	wks_entry_type type;
	size_t len;
	uint8_t *data;   /* points into this allocation */
	char *algorithm; /* points into this allocation */
	size_t alloc;    /* total size, for the wipe */
};

wks_entry_type wks_key_type(const wks_key *key)
{
	return key ? key->type : WKS_ENTRY_NONE;
}

const uint8_t *wks_key_data(const wks_key *key, size_t *len)
{
	if (len)
		*len = key ? key->len : 0;
	return key ? key->data : NULL;
}

const char *wks_key_algorithm(const wks_key *key)
{
	return key ? key->algorithm : NULL;
}

void wks_key_free(wks_key *key)
{
	if (key)
		wks_wipe_free(key, key->alloc);
}

static int key_new(wks_key **out, wks_entry_type type, const uint8_t *data,
                   size_t len, const char *alg)
{
	size_t alg_len = strlen(alg), total;
	wks_key *k;

	if (len > SIZE_MAX / 2 || alg_len > SIZE_MAX / 4)
		return wks__err(WKS_ERR_NOMEM, "key too large");
	total = sizeof(*k) + len + alg_len + 1;
	if (!(k = malloc(total)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	k->type = type;
	k->len = len;
	k->alloc = total;
	k->data = (uint8_t *)(k + 1);
	k->algorithm = (char *)k->data + len;
	memcpy(k->data, data, len);
	memcpy(k->algorithm, alg, alg_len + 1);
	*out = k;
	return WKS_OK;
}

/* ---- retrieval ---------------------------------------------------------- */

void (*wks__store_test_after_lookup)(wks_store *st, const char *alias);

typedef struct {
	const wks_entry *e;
	const uint8_t *pw;
	size_t pw_len;
	const wks_settings *cfg;
} key_ctx;

int wks__key_check(const wks_entry *e, const char *pw, size_t pw_len,
                   const wks_settings *cfg)
{
	if (e->type == WKS_ENTRY_CERTIFICATE)
		return wks__err(WKS_ERR_WRONG_TYPE,
		                "entry is a certificate, not a key");
	if (!pw || pw_len == 0)
		return wks__err(WKS_ERR_INVALID,
		                "the key password must not be empty");
	if (e->iterations > cfg->max_iterations)
		return wks__err(WKS_ERR_LIMIT, "entry iteration count %d exceeds "
		                "limit %d (libwks.wks.maxIterationCount)",
		                e->iterations, cfg->max_iterations);
	return WKS_OK;
}

/* The checks before a key entry is opened (wks__key_check()), and the
 * context for derive_cb/verify_cb. */
static int key_ctx_init(key_ctx *kc, const wks_entry *e, const char *pw,
                        size_t pw_len, const wks_settings *cfg)
{
	int err;

	if ((err = wks__key_check(e, pw, pw_len, cfg)) < 0)
		return err;
	kc->e = e;
	kc->pw = (const uint8_t *)pw;
	kc->pw_len = pw_len;
	kc->cfg = cfg;
	return WKS_OK;
}

static int derive_cb(uint8_t dk[WKS_DK_LEN], void *ctx)
{
	const key_ctx *k = ctx;

	return wks__pbkdf2_cc(k->cfg->crypto, dk, WKS_DK_LEN, k->pw, k->pw_len,
	                      k->e->salt, WKS_SALT_LEN,
	                      (uint32_t)k->e->iterations, k->cfg->kdf_impl,
	                      k->cfg->kdf_threads);
}

int wks__key_verify(const wks_entry *e, const uint8_t dk[WKS_DK_LEN],
                    const wks_settings *cfg)
{
	uint8_t mac[WKS_MAC_LEN];
	int ok, err;

	if ((err = wks__hmac_sha512_cc(cfg->crypto, mac, dk + WKS_AES_KEY_LEN,
	                               WKS_DK_LEN - WKS_AES_KEY_LEN, e->body,
	                               e->mac_input_len)) < 0)
		return err;
	ok = wks__mac_equal(mac, e->body + e->mac.off, WKS_MAC_LEN);
	wks_wipe(mac, sizeof(mac));
	return ok ? WKS_OK
	          : wks__err(WKS_ERR_INTEGRITY,
	                     "entry MAC check failed: wrong key password, or the "
	                     "entry was modified");
}

/* Encrypt-then-MAC: the entry MAC is checked before any decryption. */
static int verify_cb(const uint8_t dk[WKS_DK_LEN], void *ctx)
{
	const key_ctx *k = ctx;

	return wks__key_verify(k->e, dk, k->cfg);
}

int wks__key_open(wks_key **out, const wks_entry *e,
                  const uint8_t dk[WKS_DK_LEN], const wks_settings *cfg)
{
	wks_buf plain = WKS_BUF_INIT;
	char alg[128];
	int err;

	if ((err = wks__aes256cbc_decrypt_cc(cfg->crypto, &plain, dk, e->iv,
	                                     e->body + e->enc.off,
	                                     e->enc.len)) < 0)
		goto done;
	if (e->type == WKS_ENTRY_PRIVATE_KEY) {
		if ((err = wks__pkcs8_algorithm(alg, sizeof(alg), plain.ptr,
		                                plain.len)) < 0)
			goto done;
		err = key_new(out, e->type, plain.ptr, plain.len, alg);
	} else {
		err = key_new(out, e->type, plain.ptr, plain.len, e->algorithm);
	}
done:
	wks_buf_dispose(&plain);
	return err;
}

/*
 * The cache-hit path: everything under one read lock, with no reference
 * taken on the entry and no allocation but the result.  Returns
 * WKS_CACHE_MISS when the slow path must run (which also reports every
 * error: absent alias, wrong type, limits).
 */
static int get_key_hit(wks_key **out, wks_store *st, const char *alias,
                       const char *pw, size_t pw_len, const wks_settings *cfg)
{
	wks_buf tmp = WKS_BUF_INIT;
	const wks_entry *e;
	const char *k = NULL;
	uint8_t dk[WKS_DK_LEN];
	size_t i, n = 0;
	unsigned rs;
	int err = WKS_CACHE_MISS;

	if (wks__alias_lookup(&k, &n, &tmp, alias) < 0)
		return WKS_CACHE_MISS;
	rs = wks__rdlock(st);
	if (wks__map_find(st, k, n, &i)) {
		e = st->v[i];
		if (e->type != WKS_ENTRY_CERTIFICATE &&
		    e->iterations <= cfg->max_iterations &&
		    wks__cache_lookup(st->cache, cfg, e->id, (const uint8_t *)pw,
		                      pw_len, e->salt, (uint32_t)e->iterations,
		                      dk) == WKS_OK) {
			err = wks__key_open(out, e, dk, cfg);
			wks_wipe(dk, sizeof(dk));
		}
	}
	wks__rdunlock(st, rs);
	wks_buf_dispose(&tmp);
	return err;
}

int wks_store_get_key(wks_key **out, wks_store *st, const char *alias,
                      const char *pw, size_t pw_len)
{
	wks_entry *e = NULL;
	wks_settings cfg;
	uint8_t dk[WKS_DK_LEN];
	key_ctx kc = {0};
	uint64_t gen;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = NULL;
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	wks__store_settings(&cfg, st);
	if (cfg.cache_enabled && pw && pw_len &&
	    (err = get_key_hit(out, st, alias, pw, pw_len, &cfg)) !=
	    WKS_CACHE_MISS) {
		wks__wipe_registers();
		return err;
	}
	/* Read before the lookup: if the entry is removed after it, the
	 * cache refuses to insert its key (see wks__cache_generation()). */
	gen = wks__cache_generation(st->cache);
	if ((err = wks__store_get_entry(&e, st, alias)) < 0)
		return err;
	if (wks__store_test_after_lookup)
		wks__store_test_after_lookup(st, alias);
	if ((err = key_ctx_init(&kc, e, pw, pw_len, &cfg)) < 0)
		goto done;
	/* Hits are trusted (see cache.h): the key was verified against this
	 * same immutable entry when it was cached.  Misses always verify. */
	if ((err = wks__cache_obtain_ex(st->cache, &cfg, e->id, kc.pw, pw_len,
	                                e->salt, (uint32_t)e->iterations,
	                                derive_cb, verify_cb, &kc,
	                                WKS_CACHE_TRUST_HITS, gen, dk)) < 0)
		goto done;
	err = wks__key_open(out, e, dk, &cfg);
done:
	wks_wipe(dk, sizeof(dk));
	wks__entry_unref(e);
	wks__wipe_registers();
	return err;
}

#ifdef WKS_CRYPTO_OPENSSL
int wks_store_get_pkey(EVP_PKEY **out, wks_store *st, const char *alias,
                       const char *pw, size_t pw_len)
{
	wks_key *k = NULL;
	int err;

	if (!out)
		return wks__err(WKS_ERR_INVALID, "out is NULL");
	*out = NULL;
	if ((err = wks_store_get_key(&k, st, alias, pw, pw_len)) < 0)
		return err;
	if (k->type != WKS_ENTRY_PRIVATE_KEY)
		err = wks__err(WKS_ERR_WRONG_TYPE, "entry is a secret key");
	else
		err = wks__pkey_from_pkcs8_cc(st->crypto, out, k->data, k->len);
	wks_key_free(k);
	return err;
}
#endif

/* ---- creation ----------------------------------------------------------- */

/*
 * Encrypt `plain` for a new key entry and finish its body: fresh salt and
 * IV, PBKDF2 at the configured count, AES-256-CBC, then the entry MAC.
 * `build` writes the body up to the MAC from the encrypted key.
 */
typedef int (*body_fn)(wks_buf *body, const uint8_t salt[WKS_SALT_LEN],
                       int32_t iterations, const uint8_t iv[WKS_IV_LEN],
                       const uint8_t *enc, size_t enc_len, const void *ctx);

/* An entry the same settings could not load (its parse in install()
 * would refuse it, but only after the PBKDF2): refuse it first. */
int wks__key_seal_check(const wks_settings *cfg)
{
	if (cfg->iteration_count > cfg->max_iterations)
		return wks__err(WKS_ERR_LIMIT, "wolfjce.wks.iterationCount %d "
		                "exceeds libwks.wks.maxIterationCount %d: the entry "
		                "could not be loaded with these settings",
		                cfg->iteration_count, cfg->max_iterations);
	return WKS_OK;
}

/* The sealing itself, with the salt and the key derived from it (at
 * cfg->iteration_count) given: fresh IV, AES-256-CBC, body, MAC. */
static int seal_with(wks_buf *body, const uint8_t *plain, size_t plain_len,
                     const uint8_t salt[WKS_SALT_LEN],
                     const uint8_t dk[WKS_DK_LEN], const wks_settings *cfg,
                     body_fn build, const void *ctx)
{
	uint8_t iv[WKS_IV_LEN], mac[WKS_MAC_LEN];
	wks_buf enc = WKS_BUF_INIT;
	int err;

	if ((err = wks__random_cc(cfg->crypto, iv, sizeof(iv))) < 0)
		return err;
	if ((err = wks__aes256cbc_encrypt_cc(cfg->crypto, &enc, dk, iv, plain,
	                                     plain_len)) < 0)
		goto done;
	if ((err = build(body, salt, cfg->iteration_count, iv, enc.ptr, enc.len,
	                 ctx)) < 0)
		goto done;
	if ((err = wks__hmac_sha512_cc(cfg->crypto, mac, dk + WKS_AES_KEY_LEN,
	                               WKS_DK_LEN - WKS_AES_KEY_LEN, body->ptr,
	                               body->len)) < 0)
		goto done;
	wks_buf_put_i32be(body, WKS_MAC_LEN);
	err = wks_buf_put(body, mac, sizeof(mac));
done:
	wks_wipe(mac, sizeof(mac));
	wks_buf_dispose(&enc);
	wks__wipe_registers(); /* the plaintext went through them */
	return err;
}

/* Seal with a key made ahead for this password (wks__keypool_take()),
 * else with a fresh salt and a derivation of its own. */
static int seal(wks_store *st, wks_buf *body, const uint8_t *plain,
                size_t plain_len, const char *pw, size_t pw_len,
                const wks_settings *cfg, body_fn build, const void *ctx)
{
	uint8_t salt[WKS_SALT_LEN], dk[WKS_DK_LEN];
	int err;

	if ((err = wks__key_seal_check(cfg)) < 0)
		return err;
	if ((err = wks__keypool_take(st, cfg, pw, pw_len, salt, dk)) < 0)
		return err;
	if (err != WKS_OK &&
	    ((err = wks__random_cc(cfg->crypto, salt, sizeof(salt))) < 0 ||
	     (err = wks__pbkdf2_cc(cfg->crypto, dk, sizeof(dk),
	                           (const uint8_t *)pw, pw_len, salt,
	                           sizeof(salt), (uint32_t)cfg->iteration_count,
	                           cfg->kdf_impl, cfg->kdf_threads)) < 0))
		goto done;
	err = seal_with(body, plain, plain_len, salt, dk, cfg, build, ctx);
done:
	wks_wipe(dk, sizeof(dk));
	return err;
}

/* Parse the new body like a loaded one, check its size, and put it in
 * the map; the replaced entry's cached keys are dropped. */
static int install(wks_store *st, int type, const char *alias_key,
                   size_t alias_len, const wks_buf *body,
                   const wks_settings *cfg, const wks_entry *expect)
{
	wks_entry *e = NULL, *old = NULL;
	size_t i;
	int err;

	if (body->len > (size_t)cfg->max_entry_size)
		return wks__err(WKS_ERR_LIMIT, "entry of %zu bytes exceeds limit %d "
		                "(wolfjce.wks.maxEntrySize)", body->len,
		                cfg->max_entry_size);
	if ((err = wks__entry_from_body(&e, type, alias_key, alias_len, body->ptr,
	                                body->len, cfg, "new entry")) < 0)
		return err;
	wks__wrlock(st);
	int found = wks__map_find(st, alias_key, alias_len, &i);
	if (type == WKS_ENTRY_CERTIFICATE && found &&
	    st->v[i]->type != WKS_ENTRY_CERTIFICATE)
		err = wks__err(WKS_ERR_WRONG_TYPE, "a certificate cannot replace a "
		               "key entry; delete it first");
	else if (expect && (!found || st->v[i] != expect))
		err = wks__err(WKS_ERR_INVALID, "the entry was changed by another "
		               "thread meanwhile");
	else
		err = wks__map_put(st, e, &old);
	wks__wrunlock(st);
	if (err < 0) {
		wks__entry_unref(e);
		return err;
	}
	if (old && old->type != WKS_ENTRY_CERTIFICATE)
		wks__cache_drop_entry(st->cache, old->id);
	wks__entry_unref(old);
	return WKS_OK;
}

typedef struct {
	int64_t created;
	const uint8_t *const *certs;
	const size_t *lens;
	size_t n;
	const char *algorithm;
} body_args;

static int private_body(wks_buf *body, const uint8_t salt[WKS_SALT_LEN],
                        int32_t iterations, const uint8_t iv[WKS_IV_LEN],
                        const uint8_t *enc, size_t enc_len, const void *ctx)
{
	const body_args *a = ctx;

	return wks__body_private(body, a->created, salt, iterations, iv, enc,
	                         enc_len, a->certs, a->lens, a->n);
}

static int secret_body(wks_buf *body, const uint8_t salt[WKS_SALT_LEN],
                       int32_t iterations, const uint8_t iv[WKS_IV_LEN],
                       const uint8_t *enc, size_t enc_len, const void *ctx)
{
	const body_args *a = ctx;

	return wks__body_secret(body, a->created, a->algorithm, salt, iterations,
	                        iv, enc, enc_len);
}

static int check_common(wks_store *st, wks_buf *key, const char *alias,
                        const char *pw, size_t pw_len)
{
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	if (!pw || pw_len == 0)
		return wks__err(WKS_ERR_INVALID, "the key password must not be empty");
	return wks__alias_key_new(key, alias);
}

int wks_store_set_private_key(wks_store *st, const char *alias,
                              const uint8_t *pkcs8, size_t pkcs8_len,
                              const uint8_t *const *chain_der,
                              const size_t *chain_len, size_t chain_count,
                              const char *pw, size_t pw_len)
{
	wks_buf key = WKS_BUF_INIT, body = WKS_BUF_INIT;
	wks_settings cfg;
	body_args a;
	size_t i;
	int err;

	wks__err_clear();
	if ((err = check_common(st, &key, alias, pw, pw_len)) < 0)
		goto done;
	wks__store_settings(&cfg, st);
	err = WKS_ERR_INVALID;
	if (!pkcs8 || pkcs8_len == 0) {
		wks__err(err, "the private key is empty");
		goto done;
	}
	if (chain_count == 0 || !chain_der || !chain_len) {
		wks__err(err, "a private key needs a certificate chain");
		goto done;
	}
	for (i = 0; i < chain_count; i++)
		if (!chain_der[i] || chain_len[i] == 0) {
			wks__err(WKS_ERR_FORMAT, "chain certificate %zu is empty", i);
			err = WKS_ERR_FORMAT;
			goto done;
		}
	if (chain_count > (size_t)cfg.max_chain) {
		err = wks__err(WKS_ERR_LIMIT, "chain length %zu exceeds limit %d "
		               "(wolfjce.wks.maxCertChainLength)", chain_count,
		               cfg.max_chain);
		goto done;
	}
	if ((err = wks__check_key_and_chain_cc(cfg.crypto, pkcs8, pkcs8_len,
	                                       chain_der, chain_len,
	                                       chain_count)) < 0)
		goto done;
	a.created = wks__store_now_ms(st);
	a.certs = chain_der;
	a.lens = chain_len;
	a.n = chain_count;
	a.algorithm = NULL;
	if ((err = seal(st, &body, pkcs8, pkcs8_len, pw, pw_len, &cfg,
	                private_body, &a)) < 0)
		goto done;
	err = install(st, WKS_ENTRY_PRIVATE_KEY, (const char *)key.ptr, key.len,
	              &body, &cfg, NULL);
done:
	wks_buf_dispose(&key);
	wks_buf_dispose(&body);
	return err;
}

#ifdef WKS_CRYPTO_OPENSSL
int wks_store_set_pkey(wks_store *st, const char *alias, EVP_PKEY *pkey,
                       X509 *const *chain, size_t chain_count,
                       const char *pw, size_t pw_len)
{
	wks_buf p8 = WKS_BUF_INIT, *ders = NULL;
	const uint8_t **ptrs = NULL;
	size_t *lens = NULL, i;
	int err;

	wks__err_clear();
	if (!pkey || (chain_count && !chain))
		return wks__err(WKS_ERR_INVALID, "key or chain is NULL");
	if (chain_count > 1000000)
		return wks__err(WKS_ERR_LIMIT, "chain too long");
	if ((err = wks__pkcs8_from_pkey(&p8, pkey)) < 0)
		return err;
	if (chain_count) {
		ders = calloc(chain_count, sizeof(*ders));
		ptrs = calloc(chain_count, sizeof(*ptrs));
		lens = calloc(chain_count, sizeof(*lens));
		if (!ders || !ptrs || !lens) {
			err = wks__err(WKS_ERR_NOMEM, "out of memory");
			goto done;
		}
		for (i = 0; i < chain_count; i++) {
			if ((err = wks__x509_der(&ders[i], chain[i])) < 0)
				goto done;
			ptrs[i] = ders[i].ptr;
			lens[i] = ders[i].len;
		}
	}
	err = wks_store_set_private_key(st, alias, p8.ptr, p8.len, ptrs, lens,
	                                chain_count, pw, pw_len);
done:
	if (ders)
		for (i = 0; i < chain_count; i++)
			wks_buf_dispose(&ders[i]);
	free(ders);
	free(ptrs);
	free(lens);
	wks_buf_dispose(&p8);
	return err;
}
#endif

int wks_store_set_secret_key(wks_store *st, const char *alias,
                             const char *algorithm, const uint8_t *key_bytes,
                             size_t key_len, const char *pw, size_t pw_len)
{
	wks_buf key = WKS_BUF_INIT, body = WKS_BUF_INIT;
	wks_settings cfg;
	body_args a;
	int err;

	wks__err_clear();
	if ((err = check_common(st, &key, alias, pw, pw_len)) < 0)
		goto done;
	if (!algorithm || !*algorithm) {
		err = wks__err(WKS_ERR_INVALID, "the algorithm name must not be empty");
		goto done;
	}
	if ((err = wks__api_validate(algorithm, strlen(algorithm))) < 0)
		goto done;
	if (!key_bytes || key_len == 0) {
		err = wks__err(WKS_ERR_INVALID, "the secret key is empty");
		goto done;
	}
	wks__store_settings(&cfg, st);
	memset(&a, 0, sizeof(a));
	a.created = wks__store_now_ms(st);
	a.algorithm = algorithm;
	if ((err = seal(st, &body, key_bytes, key_len, pw, pw_len, &cfg,
	                secret_body, &a)) < 0)
		goto done;
	err = install(st, WKS_ENTRY_SECRET_KEY, (const char *)key.ptr, key.len,
	              &body, &cfg, NULL);
done:
	wks_buf_dispose(&key);
	wks_buf_dispose(&body);
	return err;
}

int wks_store_set_cert_der(wks_store *st, const char *alias,
                           const uint8_t *der, size_t der_len)
{
	wks_buf key = WKS_BUF_INIT, body = WKS_BUF_INIT;
	wks_settings cfg;
	int err;

	wks__err_clear();
	if (!st)
		return wks__err(WKS_ERR_INVALID, "store is NULL");
	if (!der || der_len == 0)
		return wks__err(WKS_ERR_INVALID, "the certificate is empty");
	wks__store_settings(&cfg, st);
	if ((err = wks__alias_key_new(&key, alias)) < 0 ||
	    (err = wks__x509_check_cc(cfg.crypto, der, der_len)) < 0)
		goto done;
	if ((err = wks__body_cert(&body, wks__store_now_ms(st), der, der_len)) < 0)
		goto done;
	err = install(st, WKS_ENTRY_CERTIFICATE, (const char *)key.ptr, key.len,
	              &body, &cfg, NULL);
done:
	wks_buf_dispose(&key);
	wks_buf_dispose(&body);
	return err;
}

#ifdef WKS_CRYPTO_OPENSSL
int wks_store_set_cert(wks_store *st, const char *alias, X509 *cert)
{
	wks_buf der = WKS_BUF_INIT;
	int err;

	wks__err_clear();
	if ((err = wks__x509_der(&der, cert)) == WKS_OK)
		err = wks_store_set_cert_der(st, alias, der.ptr, der.len);
	wks_buf_dispose(&der);
	return err;
}
#endif

/*
 * The body of entry e re-encrypted: `plain` (its decrypted key) sealed
 * with salt and dk (derived from the new password at
 * cfg->iteration_count); creation time, algorithm and chain kept.
 */
int wks__key_rebody(wks_buf *body, const wks_entry *e, const uint8_t *plain,
                    size_t plain_len, const uint8_t salt[WKS_SALT_LEN],
                    const uint8_t dk[WKS_DK_LEN], const wks_settings *cfg)
{
	const uint8_t **certs = NULL;
	size_t *lens = NULL, i;
	body_args a;
	int err;

	memset(&a, 0, sizeof(a));
	a.created = e->created_ms;
	a.algorithm = e->algorithm;
	if (e->cert_count) {
		certs = calloc(e->cert_count, sizeof(*certs));
		lens = calloc(e->cert_count, sizeof(*lens));
		if (!certs || !lens) {
			err = wks__err(WKS_ERR_NOMEM, "out of memory");
			goto done;
		}
		for (i = 0; i < e->cert_count; i++)
			certs[i] = wks__entry_cert(e, i, &lens[i]);
	}
	a.certs = certs;
	a.lens = lens;
	a.n = e->cert_count;
	err = seal_with(body, plain, plain_len, salt, dk, cfg,
	                e->type == WKS_ENTRY_PRIVATE_KEY ? private_body
	                                                 : secret_body, &a);
done:
	free(certs);
	free(lens);
	return err;
}

int wks_store_change_key_password(wks_store *st, const char *alias,
                                  const char *old_pw, size_t old_len,
                                  const char *new_pw, size_t new_len)
{
	wks_entry *e = NULL;
	wks_settings cfg;
	wks_buf plain = WKS_BUF_INIT, body = WKS_BUF_INIT;
	uint8_t dk[WKS_DK_LEN], salt[WKS_SALT_LEN];
	key_ctx kc = {0};
	int err;

	wks__err_clear();
	if (!new_pw || new_len == 0 || !old_pw || old_len == 0)
		return wks__err(WKS_ERR_INVALID, "passwords must not be empty");
	if ((err = wks__store_get_entry(&e, st, alias)) < 0)
		return err;
	wks__store_settings(&cfg, st);
	if ((err = key_ctx_init(&kc, e, old_pw, old_len, &cfg)) < 0)
		goto done;
	if ((err = derive_cb(dk, &kc)) < 0 || (err = verify_cb(dk, &kc)) < 0 ||
	    (err = wks__aes256cbc_decrypt_cc(cfg.crypto, &plain, dk, e->iv,
	                                     e->body + e->enc.off,
	                                     e->enc.len)) < 0)
		goto done;
	wks_wipe(dk, sizeof(dk));
	if ((err = wks__key_seal_check(&cfg)) < 0 ||
	    (err = wks__random_cc(cfg.crypto, salt, sizeof(salt))) < 0 ||
	    (err = wks__pbkdf2_cc(cfg.crypto, dk, sizeof(dk),
	                          (const uint8_t *)new_pw, new_len, salt,
	                          sizeof(salt), (uint32_t)cfg.iteration_count,
	                          cfg.kdf_impl, cfg.kdf_threads)) < 0 ||
	    (err = wks__key_rebody(&body, e, plain.ptr, plain.len, salt, dk,
	                           &cfg)) < 0)
		goto done;
	err = install(st, e->type, e->alias, e->alias_len, &body, &cfg, e);
done:
	wks_wipe(dk, sizeof(dk));
	wks_buf_dispose(&plain);
	wks_buf_dispose(&body);
	wks__entry_unref(e);
	return err;
}
