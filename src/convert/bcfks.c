/*
 * BCFKS in (bc.h has the format): the ObjectStore read with a strict DER
 * cursor (definite minimal lengths, one-byte tags, every element where
 * its SEQUENCE expects it, nothing after it; the nesting is that of the
 * fixed structure, no recursion), the integrity check (HMAC, or a
 * signature over contents that AES-CCM authenticates under the store
 * password) before anything is decrypted, then the store data, and the
 * keys on request.  Key derivation: PBKDF2 (HMAC-SHA-512 or HMAC-SHA3-512)
 * or scrypt, all through bcfks_derive(); ciphers: AES-256-CCM and AES-256
 * key wrap with padding (RFC 5649), all OpenSSL's.
 */
#include "convert/bc.h"
#include "convert/convert_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include "convert/der.h"
#include "format/mutf8.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/wipe.h"

#define BCFKS_SALT_MAX 1024
#define BCFKS_KEY_MAX 1024
/* scrypt's memory (128 x r x (N + p + 2) bytes) at most this. */
#define BCFKS_SCRYPT_MAXMEM (256u << 20)

/* ---- algorithms ---------------------------------------------------------- */

/* OIDs, as DER contents. */
#define OID(name, ...) static const uint8_t name[] = { __VA_ARGS__ }
OID(OID_PBES2, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0D);
OID(OID_PBKDF2, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C);
OID(OID_SCRYPT, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x04, 0x0B);
OID(OID_HMAC_SHA512, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x0B);
OID(OID_HMAC_SHA3_512, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x10);
OID(OID_AES256_CCM, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x2F);
OID(OID_AES256_KWP, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x30);

#define OID_IS(it, o) ((it)->len == sizeof(o) && !memcmp((it)->v, o, sizeof(o)))

/* The digest of an HMAC algorithm (NULL or absent parameters). */
static const EVP_MD *hmac_md(const der_item *oid, const der_item *par)
{
	if (par->tag != -1 && (par->tag != T_NULL || par->len))
		return NULL;
	if (OID_IS(oid, OID_HMAC_SHA512))
		return EVP_sha512();
	if (OID_IS(oid, OID_HMAC_SHA3_512))
		return EVP_sha3_512();
	return NULL;
}

/* ---- key derivation ------------------------------------------------------ */

typedef struct {
	int scrypt;
	const uint8_t *salt;
	size_t salt_len;
	uint64_t iter;       /* PBKDF2 */
	uint64_t n, r, p;    /* scrypt */
	uint64_t key_len;    /* 0: absent */
	const EVP_MD *md;    /* PBKDF2's PRF */
} bc_kdf;

/* KeyDerivationFunc: PBKDF2 (salt specified, the PRF HMAC-SHA-512 or
 * SHA3-512 as Bouncy Castle requires) or scrypt (RFC 7914). */
static int parse_kdf(bc_kdf *k, const der_item *alg, const char *what)
{
	der_item oid, par, it;
	der c;
	int err;

	memset(k, 0, sizeof(*k));
	if ((err = der_alg(alg, &oid, &par, what)) < 0)
		return err;
	if (par.tag != T_SEQ)
		return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: no key derivation "
				"parameters", what);
	der_in(&c, &par);
	if ((err = der_get(&c, T_OCT, &it, what)) < 0)
		return err;
	if (it.len == 0 || it.len > BCFKS_SALT_MAX)
		return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: salt of %zu bytes",
				what, it.len);
	k->salt = it.v;
	k->salt_len = it.len;
	if (OID_IS(&oid, OID_PBKDF2)) {
		if ((err = der_get_uint(&c, &k->iter, what)) < 0)
			return err;
		if (der_peek(&c) == T_INT &&
		    (err = der_get_uint(&c, &k->key_len, what)) < 0)
			return err;
		if (der_peek(&c) != T_SEQ)
			return wks__err(WKS_ERR_UNSUPPORTED, "BCFKS: %s: PBKDF2 "
					"with HMAC-SHA1 (Bouncy Castle takes only "
					"SHA-512 and SHA3-512)", what);
		{
			der_item prf, poid, ppar;

			if ((err = der_next(&c, &prf)) < 0 ||
			    (err = der_alg(&prf, &poid, &ppar, what)) < 0)
				return err;
			if (!(k->md = hmac_md(&poid, &ppar)))
				return wks__err(WKS_ERR_UNSUPPORTED, "BCFKS: %s: "
						"a PBKDF2 PRF other than "
						"HMAC-SHA-512 or SHA3-512", what);
		}
		if (k->iter < 1)
			return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: iteration "
					"count 0", what);
	} else if (OID_IS(&oid, OID_SCRYPT)) {
		k->scrypt = 1;
		if ((err = der_get_uint(&c, &k->n, what)) < 0 ||
		    (err = der_get_uint(&c, &k->r, what)) < 0 ||
		    (err = der_get_uint(&c, &k->p, what)) < 0)
			return err;
		if (der_peek(&c) == T_INT &&
		    (err = der_get_uint(&c, &k->key_len, what)) < 0)
			return err;
		if (k->n < 2 || (k->n & (k->n - 1)) || k->r < 1 || k->p < 1 ||
		    k->r > UINT32_MAX || k->n > UINT32_MAX)
			return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: bad scrypt "
					"parameters", what);
	} else {
		return wks__err(WKS_ERR_UNSUPPORTED, "BCFKS: %s: a key "
				"derivation other than PBKDF2 and scrypt", what);
	}
	if (k->key_len > BCFKS_KEY_MAX)
		return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: key length %llu",
				what, (unsigned long long)k->key_len);
	return der_done(&c, what);
}

/* PKCS12PasswordToBytes: UTF-16BE and 00 00, nothing for "". */
static int pw_bytes(wks_buf *b, const char *pw, size_t n)
{
	int err = wks__pw_utf16be(b, pw, n);

	if (err == 0 && n)
		err = wks_buf_put(b, "\0\0", 2);
	return err;
}

/*
 * The one place a BCFKS key is derived: from the password and the purpose
 * (both as PKCS12PasswordToBytes), checked against the limits and charged
 * to the budget.  scrypt as Bouncy Castle 1.72 runs it: its
 * parallelisation parameter is the block size (BcFKSKeyStoreSpi passes
 * getBlockSize() twice), whatever the file says.
 */
struct bcfks_kdf {
	const bc_kdf *k;
	const wks_buf *in; /* password and purpose, PKCS12PasswordToBytes */
};

static int bcfks_kdf_run(void *arg, uint8_t *out, size_t n)
{
	const struct bcfks_kdf *a = arg;
	const bc_kdf *k = a->k;

	if (k->scrypt)
		return EVP_PBE_scrypt((const char *)a->in->ptr, a->in->len,
				      k->salt, k->salt_len, k->n, k->r, k->r,
				      2 * (uint64_t)BCFKS_SCRYPT_MAXMEM, out, n);
	return PKCS5_PBKDF2_HMAC((const char *)a->in->ptr, (int)a->in->len,
				 k->salt, (int)k->salt_len, (int)k->iter,
				 k->md, (int)n, out);
}

static int bcfks_derive(bc_store *s, uint8_t *out, size_t n, const bc_kdf *k,
			const wks_buf *pw, const char *purpose,
			const char *what)
{
	wks_buf in = WKS_BUF_INIT;
	uint64_t cost;
	int err;

	if (k->scrypt) {
		uint64_t p = k->r, mem;

		/* r, N < 2^32, p = r: no overflow before the checks. */
		cost = k->n * k->r > UINT64_MAX / p ? UINT64_MAX :
		       k->n * k->r * p;
		if ((err = bc_check_iter(s, cost, what)) < 0)
			return err;
		mem = 128 * k->r * (k->n + p + 2);
		if (mem > BCFKS_SCRYPT_MAXMEM)
			return wks__err(WKS_ERR_LIMIT, "%s: scrypt needs %llu "
					"bytes of memory (at most %u)", what,
					(unsigned long long)mem,
					BCFKS_SCRYPT_MAXMEM);
	} else {
		cost = k->iter;
		if ((err = bc_check_iter(s, cost, what)) < 0)
			return err;
	}
	if (wks_buf_put(&in, pw->ptr ? pw->ptr : (const uint8_t *)"",
			pw->len) < 0 ||
	    pw_bytes(&in, purpose, strlen(purpose)) < 0) {
		wks_buf_dispose(&in);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	{
		const struct bcfks_kdf a = { k, &in };
		/* What fixes the bytes: the function and its parameters
		 * (scrypt: N, r; PBKDF2: the count, the PRF), the salt, the
		 * password with the purpose, and the length. */
		const wks__kdf_desc d = {
			k->scrypt ? "BCFKS scrypt" : "BCFKS PBKDF2",
			k->scrypt ? k->n : k->iter,
			((k->scrypt ? (uint64_t)k->r :
			  (uint64_t)(unsigned)EVP_MD_get_type(k->md)) << 32) |
			n,
			k->salt, k->salt_len,
			in.len ? (const char *)in.ptr : "", in.len
		};

		err = wks__kdf_run(s->lim.kdf, &d, cost, bcfks_kdf_run,
				   (void *)&a, out, n);
	}
	wks_buf_dispose(&in);
	return err;
}

/* ---- decryption ---------------------------------------------------------- */

/*
 * PBES2 as BCFKS uses it: the key (32 bytes) derived for `purpose`, then
 * AES-256-CCM (CCMParameters: nonce, ICV length) or AES-256 key wrap with
 * padding.  Everything is parsed and checked before the derivation.  A
 * failed authentication is WKS_ERR_INTEGRITY with `bad` as its detail.
 */
static int pbes2_decrypt(bc_store *s, uint8_t **out, size_t *out_len,
			 const der_item *alg, const uint8_t *ct, size_t ct_len,
			 const wks_buf *pw, const char *purpose,
			 const char *what, const char *bad)
{
	der_item oid, par, kdf_alg, enc_alg, eoid, epar, nonce, it;
	bc_kdf k;
	der c;
	uint64_t icv = 12;
	uint8_t key[32], *plain = NULL;
	EVP_CIPHER_CTX *cc = NULL;
	int ccm, n = 0, err;

	*out = NULL;
	*out_len = 0;
	if ((err = der_alg(alg, &oid, &par, what)) < 0)
		return err;
	if (!OID_IS(&oid, OID_PBES2))
		return wks__err(WKS_ERR_UNSUPPORTED, "BCFKS: %s: a protection "
				"other than PBES2", what);
	if (par.tag != T_SEQ)
		return der_bad("PBES2 without parameters");
	der_in(&c, &par);
	if ((err = der_get(&c, T_SEQ, &kdf_alg, what)) < 0 ||
	    (err = der_get(&c, T_SEQ, &enc_alg, what)) < 0 ||
	    (err = der_done(&c, what)) < 0 ||
	    (err = parse_kdf(&k, &kdf_alg, what)) < 0 ||
	    (err = der_alg(&enc_alg, &eoid, &epar, what)) < 0)
		return err;
	if (k.key_len && k.key_len != sizeof(key))
		return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: a key of %llu bytes "
				"for AES-256", what,
				(unsigned long long)k.key_len);
	if (OID_IS(&eoid, OID_AES256_CCM)) {
		ccm = 1;
		if (epar.tag != T_SEQ)
			return der_bad("CCM without parameters");
		der_in(&c, &epar);
		if ((err = der_get(&c, T_OCT, &nonce, what)) < 0)
			return err;
		if (der_peek(&c) == T_INT &&
		    ((err = der_next(&c, &it)) < 0 ||
		     (err = der_uint(&it, &icv)) < 0))
			return err;
		if ((err = der_done(&c, what)) < 0)
			return err;
		if (nonce.len < 7 || nonce.len > 13 || icv < 4 || icv > 16 ||
		    icv % 2 || ct_len < icv)
			return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: bad CCM "
					"parameters", what);
	} else if (OID_IS(&eoid, OID_AES256_KWP)) {
		ccm = 0;
		if ((epar.tag != -1 && (epar.tag != T_NULL || epar.len)) ||
		    ct_len < 16 || ct_len % 8)
			return wks__err(WKS_ERR_FORMAT, "BCFKS: %s: bad key wrap "
					"parameters or length", what);
	} else {
		return wks__err(WKS_ERR_UNSUPPORTED, "BCFKS: %s: a cipher other "
				"than AES-256-CCM and AES-256 key wrap", what);
	}
	if (ct_len > INT_MAX)
		return wks__err(WKS_ERR_LIMIT, "BCFKS: %s: too large", what);
	if ((err = bcfks_derive(s, key, sizeof(key), &k, pw, purpose,
				what)) < 0)
		goto done;
	if (!(cc = EVP_CIPHER_CTX_new()) ||
	    !(plain = malloc(ct_len ? ct_len : 1))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	if (ccm) {
		size_t body = ct_len - (size_t)icv;

		if (!EVP_DecryptInit_ex(cc, EVP_aes_256_ccm(), NULL, NULL,
					NULL) ||
		    !EVP_CIPHER_CTX_ctrl(cc, EVP_CTRL_AEAD_SET_IVLEN,
					 (int)nonce.len, NULL) ||
		    !EVP_CIPHER_CTX_ctrl(cc, EVP_CTRL_AEAD_SET_TAG, (int)icv,
					 (void *)(ct + body)) ||
		    !EVP_DecryptInit_ex(cc, NULL, NULL, key, nonce.v)) {
			err = wks__err(WKS_ERR_CRYPTO, "AES-CCM failed");
			goto done;
		}
		if (EVP_DecryptUpdate(cc, plain, &n, ct, (int)body) <= 0) {
			err = wks__err(WKS_ERR_INTEGRITY, "%s", bad);
			goto done;
		}
	} else {
		EVP_CIPHER_CTX_set_flags(cc, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
		if (!EVP_DecryptInit_ex(cc, EVP_aes_256_wrap_pad(), NULL, key,
					NULL)) {
			err = wks__err(WKS_ERR_CRYPTO, "AES key wrap failed");
			goto done;
		}
		if (EVP_DecryptUpdate(cc, plain, &n, ct, (int)ct_len) <= 0) {
			err = wks__err(WKS_ERR_INTEGRITY, "%s", bad);
			goto done;
		}
	}
	*out = plain;
	*out_len = (size_t)n;
	plain = NULL;
done:
	if (plain)
		wks_wipe_free(plain, ct_len ? ct_len : 1);
	wks_wipe(key, sizeof(key));
	EVP_CIPHER_CTX_free(cc);
	return err;
}

/* ---- store data -------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* GeneralizedTime YYYYMMDDHHMMSS[.fff...]Z to ms since 1970. */
static int gtime_ms(const der_item *it, int64_t *ms)
{
	unsigned v[6] = { 0 };
	static const unsigned w[6] = { 4, 2, 2, 2, 2, 2 };
	static const unsigned lo[6] = { 0, 1, 1, 0, 0, 0 };
	static const unsigned hi[6] = { 9999, 12, 31, 23, 59, 60 };
	size_t i = 0, frac = 0;
	int64_t t;

	if (it->tag != T_GTIME || it->len < 15)
		return der_bad("bad GeneralizedTime");
	for (int f = 0; f < 6; f++) {
		for (unsigned k = 0; k < w[f]; k++, i++) {
			if (it->v[i] < '0' || it->v[i] > '9')
				return der_bad("bad GeneralizedTime");
			v[f] = v[f] * 10 + (unsigned)(it->v[i] - '0');
		}
		if (v[f] < lo[f] || v[f] > hi[f])
			return der_bad("bad GeneralizedTime");
	}
	if (it->v[i] == '.') {
		unsigned scale = 100;

		for (i++; i < it->len && it->v[i] >= '0' && it->v[i] <= '9';
		     i++) {
			frac += (size_t)(it->v[i] - '0') * scale;
			scale /= 10;
		}
	}
	if (i != it->len - 1 || it->v[i] != 'Z')
		return der_bad("bad GeneralizedTime");
	t = days_from_civil(v[0], v[1], v[2]) * 86400 + v[3] * 3600 +
	    v[4] * 60 + v[5];
	*ms = t * 1000 + (int64_t)frac;
	return 0;
}

/* A UTF8String identifier in the API form (U+0000 as C0 80). */
static int take_alias(char **out, const der_item *it)
{
	wks_buf raw = WKS_BUF_INIT, api = WKS_BUF_INIT;
	int err = 0;

	*out = NULL;
	for (size_t i = 0; i < it->len && !err; i++)
		err = it->v[i] ? wks_buf_put(&raw, &it->v[i], 1) :
				 wks_buf_put(&raw, "\xC0\x80", 2);
	if (!err && (err = wks__api_canon(&api, raw.ptr ? (char *)raw.ptr : "",
					  raw.len)) < 0 &&
	    err != WKS_ERR_NOMEM)
		err = der_bad("an identifier that is not UTF-8");
	if (!err)
		err = wks_buf_put(&api, "", 1);
	wks_buf_dispose(&raw);
	if (err < 0) {
		wks_buf_dispose(&api);
		return err;
	}
	*out = (char *)api.ptr;
	return 0;
}

static int check_size(size_t n, const bc_store *s, const char *what)
{
	return n > s->lim.max_blob ?
	       wks__err(WKS_ERR_LIMIT, "%s of %zu bytes exceeds the limit %zu",
			what, n, s->lim.max_blob) : 0;
}

/* EncryptedPrivateKeyData: the EncryptedPrivateKeyInfo and the chain. */
static int take_private(jks_entry *e, const der_item *data, bc_store *s)
{
	der_item seq, epki, chain, cert;
	der c, cc;
	size_t n = 0;
	int err;

	c.p = data->v;
	c.left = data->len;
	if ((err = der_get(&c, T_SEQ, &seq, "private key")) < 0 ||
	    (err = der_done(&c, "private key")) < 0)
		return err;
	der_in(&c, &seq);
	if ((err = der_get(&c, T_SEQ, &epki, "private key")) < 0 ||
	    (err = der_get(&c, T_SEQ, &chain, "private key")) < 0 ||
	    (err = der_done(&c, "private key")) < 0)
		return err;
	der_in(&cc, &chain);
	while (cc.left) {
		if ((err = der_get(&cc, T_SEQ, &cert, "certificate")) < 0)
			return err;
		if (++n > s->lim.max_chain)
			return wks__err(WKS_ERR_LIMIT, "chain longer than the "
					"limit %zu", s->lim.max_chain);
	}
	e->blob = epki.tlv;
	e->blob_len = epki.tlv_len;
	if (jks_entry_alloc_certs(e, n) < 0)
		return WKS_ERR_NOMEM;
	der_in(&cc, &chain);
	for (size_t j = 0; j < n; j++) {
		der_next(&cc, &cert);
		if ((err = check_size(cert.tlv_len, s, "certificate")) < 0)
			return err;
		e->cert[j] = cert.tlv;
		e->cert_len[j] = cert.tlv_len;
	}
	return 0;
}

/* One ObjectData. */
static int take_object(bc_store *s, jks_file *f, const der_item *obj)
{
	der_item type, id, created, modified, data, comment, cert;
	uint64_t t = 0;
	int64_t ms = 0, ignored;
	jks_entry *e;
	der c;
	int err;

	der_in(&c, obj);
	if ((err = der_get(&c, T_INT, &type, "object")) < 0 ||
	    (err = der_uint(&type, &t)) < 0 ||
	    (err = der_get(&c, T_UTF8, &id, "object")) < 0 ||
	    (err = der_next(&c, &created)) < 0 ||
	    (err = gtime_ms(&created, &ignored)) < 0 ||
	    (err = der_next(&c, &modified)) < 0 ||
	    (err = gtime_ms(&modified, &ms)) < 0 ||
	    (err = der_get(&c, T_OCT, &data, "object")) < 0)
		return err;
	if (der_peek(&c) == T_UTF8 && (err = der_next(&c, &comment)) < 0)
		return err;
	if ((err = der_done(&c, "object")) < 0)
		return err;
	if (t > 4)
		return wks__err(WKS_ERR_FORMAT, "BCFKS: object type %llu",
				(unsigned long long)t);
	if ((err = check_size(data.len, s, "entry")) < 0)
		return err;
	if (!(e = bc_add_entry(s, f, t >= 3 ? BC_SUB_PROTECTED : BC_SUB_PBE)))
		return WKS_ERR_NOMEM;
	/* Bouncy Castle's creation date is the last modification. */
	e->date_ms = ms;
	if ((err = take_alias(&e->alias, &id)) < 0)
		return err;
	switch (t) {
	case 0: /* a certificate */
		c.p = data.v;
		c.left = data.len;
		if ((err = der_get(&c, T_SEQ, &cert, "certificate")) < 0 ||
		    (err = der_done(&c, "certificate")) < 0)
			return err;
		e->tag = JKS_TAG_CERT;
		if (jks_entry_alloc_certs(e, 1) < 0)
			return WKS_ERR_NOMEM;
		e->cert[0] = data.v;
		e->cert_len[0] = data.len;
		return 0;
	case 1:
	case 3: /* private keys */
		e->tag = JKS_TAG_KEY;
		return take_private(e, &data, s);
	default: /* secret keys */
		e->tag = JKS_TAG_SECRET;
		e->blob = data.v;
		e->blob_len = data.len;
		return 0;
	}
}

int bcfks_store_data(bc_store *s, jks_file *f, const uint8_t *d, size_t len,
		     const uint8_t **ialg, size_t *ialg_len)
{
	der_item top, ver, alg, t1, t2, objs, obj;
	uint64_t v = 0;
	int64_t ms;
	size_t count = 0;
	der c, oc;
	int err;

	c.p = d;
	c.left = len;
	if ((err = der_get(&c, T_SEQ, &top, "store data")) < 0 ||
	    (err = der_done(&c, "store data")) < 0)
		return err;
	der_in(&c, &top);
	if ((err = der_get(&c, T_INT, &ver, "store data")) < 0 ||
	    (err = der_uint(&ver, &v)) < 0)
		return err;
	if (v != 1)
		return wks__err(WKS_ERR_UNSUPPORTED, "BCFKS store data version "
				"%llu", (unsigned long long)v);
	if ((err = der_get(&c, T_SEQ, &alg, "store data")) < 0 ||
	    (err = der_next(&c, &t1)) < 0 || (err = gtime_ms(&t1, &ms)) < 0 ||
	    (err = der_next(&c, &t2)) < 0 || (err = gtime_ms(&t2, &ms)) < 0 ||
	    (err = der_get(&c, T_SEQ, &objs, "store data")) < 0)
		return err;
	if (der_peek(&c) == T_UTF8 && (err = der_next(&c, &t1)) < 0)
		return err; /* the comment */
	if ((err = der_done(&c, "store data")) < 0)
		return err;
	s->version = (int)v;
	if (ialg) {
		*ialg = alg.tlv;
		*ialg_len = alg.tlv_len;
	}
	der_in(&oc, &objs);
	while (oc.left) {
		size_t pos = (size_t)(oc.p - d);

		if (++count > JKS_MAX_ENTRIES)
			return wks__err(WKS_ERR_LIMIT, "more than %d entries",
					JKS_MAX_ENTRIES);
		wks__err_clear();
		if ((err = der_get(&oc, T_SEQ, &obj, "object")) == 0)
			err = take_object(s, f, &obj);
		if (err < 0) {
			char m[256];

			if (err == WKS_ERR_NOMEM)
				return err;
			snprintf(m, sizeof(m), "%s", wks_error_detail());
			return wks__err(err, "entry %zu (offset %zu): %s",
					count - 1, pos, *m ? m : "malformed");
		}
	}
	return bc_check_unique(f);
}

/* ---- the file ---------------------------------------------------------- */

/* The signature of a signed store over its store data, with the first
 * certificate it carries: libwks has no trust anchor, so this shows only
 * that the file is as that certificate's key signed it. */
static int check_signature(const der_item *sig, const der_item *sd)
{
	der_item seq, alg, certs, bits, cert;
	const unsigned char *p;
	X509_ALGOR *xa = NULL;
	X509 *x = NULL;
	EVP_PKEY *pk = NULL;
	EVP_MD_CTX *mc = NULL;
	int md_nid = NID_undef, pk_nid = NID_undef, err;
	der c;

	der_in(&c, sig);
	if ((err = der_get(&c, T_SEQ, &seq, "signature")) < 0 ||
	    (err = der_done(&c, "signature")) < 0)
		return err;
	der_in(&c, &seq);
	if ((err = der_get(&c, T_SEQ, &alg, "signature")) < 0)
		return err;
	certs.tag = -1;
	if (der_peek(&c) == T_CTX0 && (err = der_next(&c, &certs)) < 0)
		return err;
	if ((err = der_get(&c, T_BITS, &bits, "signature")) < 0 ||
	    (err = der_done(&c, "signature")) < 0)
		return err;
	if (bits.len < 2 || bits.v[0] != 0)
		return der_bad("bad signature");
	if (certs.tag == -1)
		return wks__err(WKS_ERR_UNSUPPORTED, "a BCFKS keystore signed "
				"without its certificates: libwks has no key to "
				"check the signature with");
	der_in(&c, &certs);
	if ((err = der_get(&c, T_SEQ, &seq, "signature")) < 0 ||
	    (err = der_done(&c, "signature")) < 0)
		return err;
	der_in(&c, &seq);
	if ((err = der_get(&c, T_SEQ, &cert, "signature")) < 0)
		return err;
	p = alg.tlv;
	if (!(xa = d2i_X509_ALGOR(NULL, &p, (long)alg.tlv_len)) ||
	    !OBJ_find_sigid_algs(OBJ_obj2nid(xa->algorithm), &md_nid,
				 &pk_nid) || md_nid == NID_undef) {
		err = wks__err(WKS_ERR_UNSUPPORTED, "BCFKS: an unknown "
			       "signature algorithm");
		goto done;
	}
	p = cert.tlv;
	if (!(x = d2i_X509(NULL, &p, (long)cert.tlv_len)) ||
	    !(pk = X509_get_pubkey(x))) {
		err = der_bad("bad signer certificate");
		goto done;
	}
	if (!(mc = EVP_MD_CTX_new()) ||
	    EVP_DigestVerifyInit(mc, NULL, EVP_get_digestbynid(md_nid), NULL,
				 pk) != 1 ||
	    EVP_DigestVerify(mc, bits.v + 1, bits.len - 1, sd->tlv,
			     sd->tlv_len) != 1)
		err = wks__err(WKS_ERR_INTEGRITY, "BCFKS: the store's signature "
			       "does not verify with its certificate: the file "
			       "was modified");
done:
	EVP_MD_CTX_free(mc);
	EVP_PKEY_free(pk);
	X509_free(x);
	X509_ALGOR_free(xa);
	return err;
}

int bcfks_parse(bc_store *s, jks_file *f, const uint8_t *data, size_t len,
		const char *pw, size_t pw_len)
{
	der_item top, sd, ic, first, enc_alg, ct;
	const uint8_t *ialg = NULL, *store;
	size_t ialg_len = 0, store_len;
	wks_buf u = WKS_BUF_INIT;
	const uint8_t *check_alg = NULL;
	size_t check_alg_len = 0;
	int encrypted, err;
	der c;

	c.p = data;
	c.left = len;
	if ((err = der_get(&c, T_SEQ, &top, "keystore")) < 0)
		return err;
	if (c.left)
		return wks__err(WKS_ERR_FORMAT, "%zu bytes after the BCFKS "
				"keystore", c.left);
	der_in(&c, &top);
	if ((err = der_get(&c, T_SEQ, &sd, "keystore")) < 0 ||
	    (err = der_next(&c, &ic)) < 0 ||
	    (err = der_done(&c, "keystore")) < 0)
		return err;
	/* The store data: an EncryptedObjectStoreData starts with its
	 * AlgorithmIdentifier, an ObjectStoreData with its version. */
	der_in(&c, &sd);
	if ((err = der_next(&c, &first)) < 0)
		return err;
	encrypted = first.tag == T_SEQ;
	if ((err = pw_bytes(&u, pw ? pw : "", pw ? pw_len : 0)) < 0)
		goto done;
	/* Integrity first, with nothing decrypted. */
	if (ic.tag == T_SEQ) {
		der_item macalg, kdfalg, mac, oid, par;
		uint8_t key[BCFKS_KEY_MAX], out[EVP_MAX_MD_SIZE];
		unsigned int out_len = 0;
		const EVP_MD *md;
		bc_kdf k;

		der_in(&c, &ic);
		if ((err = der_get(&c, T_SEQ, &macalg, "MAC")) < 0 ||
		    (err = der_get(&c, T_SEQ, &kdfalg, "MAC")) < 0 ||
		    (err = der_get(&c, T_OCT, &mac, "MAC")) < 0 ||
		    (err = der_done(&c, "MAC")) < 0 ||
		    (err = der_alg(&macalg, &oid, &par, "MAC")) < 0 ||
		    (err = parse_kdf(&k, &kdfalg, "MAC")) < 0)
			goto done;
		if (!(md = hmac_md(&oid, &par))) {
			err = wks__err(WKS_ERR_UNSUPPORTED, "BCFKS: a MAC other "
				       "than HMAC-SHA-512 or HMAC-SHA3-512");
			goto done;
		}
		if (k.key_len == 0) {
			err = der_bad("MAC: no key length");
			goto done;
		}
		check_alg = macalg.tlv;
		check_alg_len = macalg.tlv_len;
		if ((err = bcfks_derive(s, key, (size_t)k.key_len, &k, &u,
					"INTEGRITY_CHECK", "BCFKS MAC")) == 0 &&
		    !HMAC(md, key, (int)k.key_len, sd.tlv, sd.tlv_len, out,
			  &out_len))
			err = wks__err(WKS_ERR_CRYPTO, "HMAC failed");
		if (err == 0 && (out_len != mac.len ||
				 CRYPTO_memcmp(out, mac.v, out_len) != 0))
			err = wks__err(WKS_ERR_INTEGRITY, "keystore password "
				       "incorrect, or the file was modified");
		wks_wipe(key, sizeof(key));
		wks_wipe(out, sizeof(out));
		if (err < 0)
			goto done;
	} else if (ic.tag == T_CTX0) {
		der_item seq, alg;
		der sc;

		/* Only AES under the store password authenticates what the
		 * signature of an untrusted certificate does not. */
		if (!encrypted) {
			err = wks__err(WKS_ERR_UNSUPPORTED, "a signed BCFKS "
				       "keystore in the clear: nothing "
				       "authenticates it");
			goto done;
		}
		if ((err = check_signature(&ic, &sd)) < 0)
			goto done;
		der_in(&sc, &ic);
		der_next(&sc, &seq);
		der_in(&sc, &seq);
		der_next(&sc, &alg);
		check_alg = alg.tlv;
		check_alg_len = alg.tlv_len;
	} else {
		err = der_bad("unknown integrity check");
		goto done;
	}
	if (encrypted) {
		uint8_t *plain = NULL;
		size_t plain_len = 0;

		der_in(&c, &sd);
		if ((err = der_get(&c, T_SEQ, &enc_alg, "store")) < 0 ||
		    (err = der_get(&c, T_OCT, &ct, "store")) < 0 ||
		    (err = der_done(&c, "store")) < 0)
			goto done;
		err = pbes2_decrypt(s, &plain, &plain_len, &enc_alg, ct.v,
				    ct.len, &u, "STORE_ENCRYPTION", "BCFKS store",
				    "keystore password incorrect, or the file "
				    "was modified");
		/* A signed store has no password: Bouncy Castle writes it
		 * and reads it with the empty one. */
		if (err == WKS_ERR_INTEGRITY && ic.tag == T_CTX0 && u.len) {
			wks_buf_dispose(&u);
			err = pbes2_decrypt(s, &plain, &plain_len, &enc_alg, ct.v,
					    ct.len, &u, "STORE_ENCRYPTION",
					    "BCFKS store", "the signed store does "
					    "not decrypt: modified");
		}
		if (err < 0)
			goto done;
		s->plain = plain;
		s->plain_len = plain_len;
		store = plain;
		store_len = plain_len;
	} else {
		store = sd.tlv;
		store_len = sd.tlv_len;
	}
	if ((err = bcfks_store_data(s, f, store, store_len, &ialg,
				    &ialg_len)) < 0)
		goto done;
	if (ialg_len != check_alg_len || memcmp(ialg, check_alg, ialg_len))
		err = der_bad("the store data names another integrity "
			      "algorithm than its check");
done:
	wks_buf_dispose(&u);
	return err;
}

/* ---- keys ---------------------------------------------------------------- */

/* The JCA name of a secret key algorithm OID: Bouncy Castle's own
 * additions, else as PKCS#12 readers name it (the dotted OID if
 * unknown). */
static char *alg_name(const der_item *oid)
{
	static const struct {
		const char *oid, *name;
	} bc[] = {
		{ "2.16.840.1.101.3.4.2.19", "KMAC128" },
		{ "2.16.840.1.101.3.4.2.20", "KMAC256" },
		{ "1.2.410.200004.1.4", "SEED" },
		{ "1.2.392.200011.61.1.1.1.2", "Camellia" },
		{ "1.2.392.200011.61.1.1.1.3", "Camellia" },
		{ "1.2.392.200011.61.1.1.1.4", "Camellia" },
		{ "1.2.410.200046.1.1.2", "ARIA" },
		{ "1.2.410.200046.1.1.7", "ARIA" },
		{ "1.2.410.200046.1.1.12", "ARIA" },
	};
	const unsigned char *p = oid->tlv;
	ASN1_OBJECT *o = d2i_ASN1_OBJECT(NULL, &p, (long)oid->tlv_len);
	char dotted[128], *name = NULL;

	if (!o)
		return NULL;
	if (OBJ_obj2txt(dotted, sizeof(dotted), o, 1) > 0)
		for (size_t i = 0; i < sizeof(bc) / sizeof(bc[0]) && !name; i++)
			if (!strcmp(bc[i].oid, dotted))
				name = strdup(bc[i].name);
	if (!name)
		name = wks__p12_alg_name(o);
	ASN1_OBJECT_free(o);
	return name;
}

int bcfks_get_key(uint8_t **key, size_t *key_len, char **algorithm,
		  bc_store *s, const jks_entry *e, int sub, int want_private,
		  const char *pw, size_t pw_len)
{
	der_item seq, alg, ct, oid, kb;
	wks_buf u = WKS_BUF_INIT;
	uint8_t *plain = NULL;
	size_t plain_len = 0;
	der c;
	int err;

	if (sub == BC_SUB_PROTECTED)
		return wks__err(WKS_ERR_UNSUPPORTED, "a key its application "
				"protected itself (setKeyEntry with an encoded "
				"key): only it can open it");
	c.p = e->blob;
	c.left = e->blob_len;
	if ((err = der_get(&c, T_SEQ, &seq, "key")) < 0 ||
	    (err = der_done(&c, "key")) < 0)
		return err;
	der_in(&c, &seq);
	if ((err = der_get(&c, T_SEQ, &alg, "key")) < 0 ||
	    (err = der_get(&c, T_OCT, &ct, "key")) < 0 ||
	    (err = der_done(&c, "key")) < 0)
		return err;
	if ((err = pw_bytes(&u, pw, pw_len)) < 0 ||
	    (err = pbes2_decrypt(s, &plain, &plain_len, &alg, ct.v, ct.len, &u,
				 want_private ? "PRIVATE_KEY_ENCRYPTION" :
						"SECRET_KEY_ENCRYPTION",
				 "BCFKS key", "key password incorrect")) < 0)
		goto done;
	if (want_private) {
		const unsigned char *p = plain;
		PKCS8_PRIV_KEY_INFO *p8 = d2i_PKCS8_PRIV_KEY_INFO(
			NULL, &p, (long)plain_len);
		int ok = p8 && (size_t)(p - plain) == plain_len;

		PKCS8_PRIV_KEY_INFO_free(p8);
		if (!ok) {
			err = der_bad("the decrypted key is not PKCS#8");
			goto done;
		}
		*key = plain;
		*key_len = plain_len;
		plain = NULL;
		goto done;
	}
	/* SecretKeyData ::= SEQUENCE { OID, OCTET STRING } */
	c.p = plain;
	c.left = plain_len;
	if ((err = der_get(&c, T_SEQ, &seq, "secret key")) < 0 ||
	    (err = der_done(&c, "secret key")) < 0)
		goto done;
	der_in(&c, &seq);
	if ((err = der_get(&c, T_OID, &oid, "secret key")) < 0 ||
	    (err = der_get(&c, T_OCT, &kb, "secret key")) < 0 ||
	    (err = der_done(&c, "secret key")) < 0)
		goto done;
	if (kb.len == 0) {
		err = der_bad("an empty secret key");
		goto done;
	}
	if (!(*algorithm = alg_name(&oid))) {
		err = der_bad("bad secret key algorithm");
		goto done;
	}
	if (!(*key = malloc(kb.len))) {
		free(*algorithm);
		*algorithm = NULL;
		err = WKS_ERR_NOMEM;
		goto done;
	}
	memcpy(*key, kb.v, kb.len);
	*key_len = kb.len;
done:
	if (plain)
		wks_wipe_free(plain, plain_len);
	wks_buf_dispose(&u);
	return err;
}
