/*
 * BKS in (bc.h has the format): the header, the MAC checked before any
 * entry is read, the entries, and the keys sealed under
 * PBEWithSHAAnd3-KeyTripleDES-CBC (the PKCS#12 key derivation with SHA-1,
 * 3DES-CBC).  Keys stored in the clear (type 2, from old stores) are read
 * too; what Bouncy Castle writes only on an application's request (raw
 * protected bytes, type 3) and public keys are listed but not opened.
 * Stores sealed by Bouncy Castle releases before 1.0 ("Broken" and "Old"
 * PBE) are not read.
 */
#include "convert/bc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

#include "format/mutf8.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/reader.h"
#include "util/wipe.h"

enum { BKS_NULL, BKS_CERT, BKS_KEY, BKS_SECRET, BKS_SEALED };
enum { KEY_PRIVATE, KEY_PUBLIC, KEY_SECRET };

#define BKS_MAC_LEN 20
#define BKS_SALT_MAX 1024
#define BKS_ID_KEY 1
#define BKS_ID_IV 2
#define BKS_ID_MAC 3

/* A failure: with its detail when parsing for real, quietly when only
 * walking (the detection must not touch the caller's error detail). */
#define BAD(quiet, code, ...) ((quiet) ? (code) : wks__err(code, __VA_ARGS__))

/* A Java UTF string: its bytes. */
static const uint8_t *take_utf(wks_reader *r, size_t *n)
{
	*n = wks_rd_u16(r);
	return wks_rd_take(r, *n);
}

static int utf_is(const uint8_t *p, size_t n, const char *s)
{
	return n == strlen(s) && memcmp(p, s, n) == 0;
}

static int take_alias(char **out, const uint8_t *p, size_t n)
{
	wks_buf b = WKS_BUF_INIT;
	int err;

	*out = NULL;
	if ((err = wks__mutf8_to_api(&b, p, n)) < 0 ||
	    (err = wks_buf_put(&b, "", 1)) < 0) {
		wks_buf_dispose(&b);
		return err == WKS_ERR_NOMEM ? err : wks__err(WKS_ERR_FORMAT,
							      "bad alias");
	}
	*out = (char *)b.ptr;
	return 0;
}

/* The encoded key of types 2 and 4 (what BcKeyStoreSpi.encodeKey writes):
 * key type, format, algorithm, length, encoding; exactly n bytes. */
typedef struct {
	int key_type;
	const uint8_t *format, *alg, *enc;
	size_t format_len, alg_len, enc_len;
} bks_key;

static int parse_key(bks_key *k, const uint8_t *p, size_t n)
{
	wks_reader r;
	const uint8_t *t;
	int32_t len;

	wks_reader_init(&r, p, n);
	t = wks_rd_take(&r, 1);
	k->key_type = t ? *t : -1;
	k->format = take_utf(&r, &k->format_len);
	k->alg = take_utf(&r, &k->alg_len);
	len = wks_rd_i32(&r);
	if (r.err || len <= 0 || (size_t)len != r.left ||
	    k->key_type < KEY_PRIVATE || k->key_type > KEY_SECRET)
		return WKS_ERR_FORMAT;
	k->enc_len = (size_t)len;
	k->enc = wks_rd_take(&r, k->enc_len);
	return 0;
}

/* A sealed key's parameters: salt length, salt, iteration count, then the
 * ciphertext (whole 3DES blocks). */
typedef struct {
	const uint8_t *salt, *ct;
	size_t salt_len, ct_len;
	int32_t iter;
} bks_sealed;

static int parse_sealed(bks_sealed *s, const uint8_t *p, size_t n)
{
	wks_reader r;
	int32_t sl;

	wks_reader_init(&r, p, n);
	sl = wks_rd_i32(&r);
	if (r.err || sl <= 0 || sl > BKS_SALT_MAX || (size_t)sl > r.left)
		return WKS_ERR_FORMAT;
	s->salt_len = (size_t)sl;
	s->salt = wks_rd_take(&r, s->salt_len);
	s->iter = wks_rd_i32(&r);
	if (r.err || s->iter < 1 || r.left == 0 || r.left % 8)
		return WKS_ERR_FORMAT;
	s->ct_len = r.left;
	s->ct = wks_rd_take(&r, r.left);
	return 0;
}

/* One certificate: type, length, DER. */
static int take_cert(jks_entry *e, size_t j, wks_reader *r,
		     const jks_limits *lim, int quiet)
{
	size_t tn;
	const uint8_t *t = take_utf(r, &tn);
	int32_t n = wks_rd_i32(r);

	if (!t || r->err || n <= 0 || (size_t)n > r->left)
		return BAD(quiet, WKS_ERR_FORMAT, "truncated certificate");
	if (lim && (size_t)n > lim->max_blob)
		return BAD(quiet, WKS_ERR_LIMIT, "certificate of %d bytes "
			   "exceeds the limit %zu", (int)n, lim->max_blob);
	if (e) {
		e->cert[j] = wks_rd_take(r, (size_t)n);
		e->cert_len[j] = (size_t)n;
		if (!utf_is(t, tn, "X.509"))
			e->non_x509 = 1;
	} else {
		wks_rd_take(r, (size_t)n);
	}
	return 0;
}

/* One entry after its type byte; f == NULL only walks it. */
static int take_entry(jks_file *f, bc_store *s, int type, wks_reader *r,
		      const jks_limits *lim)
{
	int quiet = f == NULL;
	const uint8_t *alias, *blob;
	size_t alias_len, nchain = 0, blob_len;
	jks_entry *e = NULL;
	int64_t date;
	int32_t n;
	int sub, tag, err;

	alias = take_utf(r, &alias_len);
	date = wks_rd_i64(r);
	n = wks_rd_i32(r);
	if (!alias || r->err || n < 0)
		return BAD(quiet, WKS_ERR_FORMAT, "truncated or bad entry");
	/* Each certificate takes at least 7 bytes. */
	if ((size_t)n > r->left / 7)
		return BAD(quiet, WKS_ERR_FORMAT, "chain length %d with %zu bytes "
			   "left", (int)n, r->left);
	if (lim && (size_t)n > lim->max_chain)
		return BAD(quiet, WKS_ERR_LIMIT, "chain length %d exceeds the "
			   "limit %zu", (int)n, lim->max_chain);
	if (type == BKS_CERT && n != 0)
		return BAD(quiet, WKS_ERR_FORMAT, "a certificate entry with a "
			   "chain");
	nchain = (size_t)n;
	if (f) {
		/* The sub and tag are known only after the body; the entry
		 * is made now so the chain can point into it. */
		if (!(e = bc_add_entry(s, f, BC_SUB_SEALED)) ||
		    jks_entry_alloc_certs(e, type == BKS_CERT ? 1 : nchain) < 0)
			return WKS_ERR_NOMEM;
		e->date_ms = date;
		if ((err = take_alias(&e->alias, alias, alias_len)) < 0)
			return err;
	}
	for (size_t j = 0; j < nchain; j++)
		if ((err = take_cert(e, j, r, lim, quiet)) < 0)
			return err;
	if (type == BKS_CERT) {
		if ((err = take_cert(e, 0, r, lim, quiet)) < 0)
			return err;
		if (e)
			e->tag = JKS_TAG_CERT;
		return 0;
	}
	if (type == BKS_KEY) {
		/* In the clear: key type, format, algorithm, length, bytes. */
		const uint8_t *start = r->p, *t = wks_rd_take(r, 1);
		size_t fl, al;
		int32_t kl;

		take_utf(r, &fl);
		take_utf(r, &al);
		kl = wks_rd_i32(r);
		if (!t || r->err || kl <= 0 || (size_t)kl > r->left ||
		    *t > KEY_SECRET)
			return BAD(quiet, WKS_ERR_FORMAT, "bad key");
		wks_rd_take(r, (size_t)kl);
		blob = start;
		blob_len = (size_t)(r->p - start);
		sub = BC_SUB_CLEAR;
		tag = *t == KEY_PRIVATE ? JKS_TAG_KEY : JKS_TAG_SECRET;
	} else {
		n = wks_rd_i32(r);
		if (r->err || n <= 0 || (size_t)n > r->left)
			return BAD(quiet, WKS_ERR_FORMAT, "key length %d with %zu "
				   "bytes left", (int)n, r->left);
		blob_len = (size_t)n;
		blob = wks_rd_take(r, blob_len);
		sub = type == BKS_SEALED ? BC_SUB_SEALED : BC_SUB_RAW;
		/* Bouncy Castle requires a chain for a private key: a key
		 * entry with one is a private key (as keytool lists it). */
		tag = nchain ? JKS_TAG_KEY : JKS_TAG_SECRET;
		if (sub == BC_SUB_SEALED) {
			bks_sealed sl;

			if (parse_sealed(&sl, blob, blob_len) < 0)
				return BAD(quiet, WKS_ERR_FORMAT, "bad sealed "
					   "key");
		}
	}
	if (lim && blob_len > lim->max_blob)
		return BAD(quiet, WKS_ERR_LIMIT, "key of %zu bytes exceeds the "
			   "limit %zu", blob_len, lim->max_blob);
	if (e) {
		e->tag = tag;
		e->blob = blob;
		e->blob_len = blob_len;
		s->sub[f->count - 1] = (unsigned char)sub;
	}
	return 0;
}

int bks_entries(jks_file *f, bc_store *s, const uint8_t *data, size_t len,
		size_t *used, const jks_limits *lim)
{
	int quiet = f == NULL;
	wks_reader r;
	size_t count = 0;

	*used = 0;
	wks_reader_init(&r, data, len);
	for (;;) {
		size_t pos = wks_reader_pos(&r);
		const uint8_t *t = wks_rd_take(&r, 1);
		int err;

		if (!t)
			return BAD(quiet, WKS_ERR_FORMAT, "truncated: no end of "
				   "the entries");
		if (*t == BKS_NULL)
			break;
		if (*t > BKS_SEALED)
			return BAD(quiet, WKS_ERR_FORMAT, "entry %zu (offset %zu): "
				   "unknown type %u", count, pos, *t);
		if (++count > JKS_MAX_ENTRIES)
			return BAD(quiet, WKS_ERR_LIMIT, "more than %d entries",
				   JKS_MAX_ENTRIES);
		err = take_entry(f, s, *t, &r, lim);
		if (err == 0 && r.err)
			err = BAD(quiet, WKS_ERR_FORMAT, "truncated");
		if (err < 0) {
			char d[256];

			if (quiet || err == WKS_ERR_NOMEM)
				return err;
			snprintf(d, sizeof(d), "%s", wks_error_detail());
			return wks__err(err, "entry %zu (offset %zu): %s",
					count - 1, pos,
					*d ? d : "truncated or malformed");
		}
	}
	*used = wks_reader_pos(&r);
	return 0;
}

/* ---- key derivation -------------------------------------------------------- */

struct bks_kdf {
	const wks_buf *pw;
	const uint8_t *salt;
	size_t salt_len;
	int id;
	int32_t iter;
};

static int bks_kdf_run(void *arg, uint8_t *out, size_t n)
{
	const struct bks_kdf *k = arg;
	static unsigned char empty[1];

	return PKCS12_key_gen_uni(k->pw->len ? k->pw->ptr : empty,
				  (int)k->pw->len, (unsigned char *)k->salt,
				  (int)k->salt_len, k->id, (int)k->iter, (int)n,
				  out, EVP_sha1());
}

/* The PKCS#12 key derivation (SHA-1) of BKS: the one place a BKS key is
 * derived, checked against the limits and run on the conversion's meter
 * (its budget; a derivation it ran before is not run again). */
static int bks_derive(bc_store *s, uint8_t *out, size_t n, int id,
		      const wks_buf *pw, const uint8_t *salt, size_t salt_len,
		      int32_t iter, const char *what)
{
	const struct bks_kdf k = { pw, salt, salt_len, id, iter };
	const wks__kdf_desc d = {
		"BKS PKCS12-KDF/sha1", (uint64_t)iter,
		((uint64_t)(unsigned)id << 32) | n, salt, salt_len,
		pw->len ? (const char *)pw->ptr : "", pw->len
	};
	int err;

	if ((err = bc_check_iter(s, (uint64_t)iter, what)) < 0)
		return err;
	return wks__kdf_run(s->lim.kdf, &d, (uint64_t)iter, bks_kdf_run,
			    (void *)&k, out, n);
}

/* PKCS12PasswordToBytes: UTF-16BE and 00 00, nothing for "". */
static int pw_bytes(wks_buf *b, const char *pw, size_t n)
{
	int err = wks__pw_utf16be(b, pw, n);

	if (err == 0 && n)
		err = wks_buf_put(b, "\0\0", 2);
	return err;
}

/* ---- the file ---------------------------------------------------------------- */

int bks_parse(bc_store *s, jks_file *f, const uint8_t *data, size_t len,
	      const char *pw, size_t pw_len)
{
	wks_reader r;
	uint32_t version;
	int32_t sl, iter;
	const uint8_t *salt;
	size_t hdr, body_len, used = 0;
	int err = 0;

	wks_reader_init(&r, data, len);
	version = (uint32_t)wks_rd_i32(&r);
	sl = wks_rd_i32(&r);
	if (r.err)
		return wks__err(WKS_ERR_FORMAT, "file of %zu bytes is too short "
				"for a BKS keystore", len);
	if (version > 2)
		return wks__err(WKS_ERR_UNSUPPORTED, "BKS version %u", version);
	if (sl <= 0 || sl > BKS_SALT_MAX || (size_t)sl > r.left)
		return wks__err(WKS_ERR_FORMAT, "BKS salt length %d", (int)sl);
	salt = wks_rd_take(&r, (size_t)sl);
	iter = wks_rd_i32(&r);
	if (r.err || r.left < 1 + BKS_MAC_LEN)
		return wks__err(WKS_ERR_FORMAT, "file of %zu bytes is too short "
				"for a BKS keystore", len);
	if (iter < 1)
		return wks__err(WKS_ERR_FORMAT, "BKS iteration count %d",
				(int)iter);
	s->version = (int)version;
	hdr = wks_reader_pos(&r);
	body_len = len - hdr - BKS_MAC_LEN;
	/* The MAC before any entry is trusted. */
	if (pw) {
		wks_buf u = WKS_BUF_INIT;
		uint8_t key[20], mac[EVP_MAX_MD_SIZE];
		unsigned int mac_len = 0;
		/* Bouncy Castle asks for a key of 160 bits, before version 2
		 * of 20 (bits, so 2 bytes). */
		size_t key_len = version == 2 ? 20 : 2;

		if ((err = pw_bytes(&u, pw, pw_len)) == 0 &&
		    (err = bks_derive(s, key, key_len, BKS_ID_MAC, &u, salt,
				      (size_t)sl, iter, "BKS MAC")) == 0 &&
		    !HMAC(EVP_sha1(), key, (int)key_len, data + hdr, body_len,
			  mac, &mac_len))
			err = wks__err(WKS_ERR_CRYPTO, "HMAC-SHA1 failed");
		if (err == 0 && (mac_len != BKS_MAC_LEN ||
				 CRYPTO_memcmp(mac, data + len - BKS_MAC_LEN,
					       BKS_MAC_LEN) != 0))
			err = wks__err(WKS_ERR_INTEGRITY, "keystore password "
				       "incorrect, or the file was modified");
		wks_wipe(key, sizeof(key));
		wks_wipe(mac, sizeof(mac));
		wks_buf_dispose(&u);
		if (err < 0)
			return err;
	}
	if ((err = bks_entries(f, s, data + hdr, body_len, &used,
			       &s->lim)) < 0)
		return err;
	if (used != body_len)
		return wks__err(WKS_ERR_FORMAT, "%zu bytes after the last entry",
				body_len - used);
	return bc_check_unique(f);
}

/* ---- keys ---------------------------------------------------------------- */

/* PBEWithSHAAnd3-KeyTripleDES-CBC: PKCS#12 key derivation (SHA-1) of a
 * 24-byte key (ID 1) and an 8-byte IV (ID 2), 3DES-CBC, PKCS#5 padding. */
static int unseal(uint8_t **out, size_t *out_len, bc_store *s,
		  const bks_sealed *sl, const char *pw, size_t pw_len)
{
	wks_buf u = WKS_BUF_INIT;
	uint8_t key[24], iv[8], *plain = NULL;
	EVP_CIPHER_CTX *cc = NULL;
	int n1 = 0, n2 = 0, err;

	if (sl->ct_len > INT_MAX - 8)
		return wks__err(WKS_ERR_LIMIT, "sealed key too large");
	if ((err = pw_bytes(&u, pw, pw_len)) < 0 ||
	    (err = bks_derive(s, key, sizeof(key), BKS_ID_KEY, &u, sl->salt,
			      sl->salt_len, sl->iter, "BKS sealed key")) < 0 ||
	    (err = bks_derive(s, iv, sizeof(iv), BKS_ID_IV, &u, sl->salt,
			      sl->salt_len, sl->iter, "BKS sealed key")) < 0)
		goto done;
	if (!(cc = EVP_CIPHER_CTX_new()) ||
	    !(plain = malloc(sl->ct_len + 8))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	if (!EVP_DecryptInit_ex(cc, EVP_des_ede3_cbc(), NULL, key, iv) ||
	    !EVP_DecryptUpdate(cc, plain, &n1, sl->ct, (int)sl->ct_len)) {
		err = wks__err(WKS_ERR_CRYPTO, "3DES failed");
		goto done;
	}
	if (!EVP_DecryptFinal_ex(cc, plain + n1, &n2)) {
		err = wks__err(WKS_ERR_INTEGRITY, "key password incorrect");
		goto done;
	}
	*out = plain;
	*out_len = (size_t)n1 + (size_t)n2;
	plain = NULL;
done:
	if (plain)
		wks_wipe_free(plain, sl->ct_len + 8);
	wks_wipe(key, sizeof(key));
	wks_wipe(iv, sizeof(iv));
	wks_buf_dispose(&u);
	EVP_CIPHER_CTX_free(cc);
	return err;
}

static int is_pkcs8(const uint8_t *p, size_t n)
{
	const unsigned char *q = p;
	PKCS8_PRIV_KEY_INFO *p8 = n <= LONG_MAX ?
		d2i_PKCS8_PRIV_KEY_INFO(NULL, &q, (long)n) : NULL;
	int ok = p8 && (size_t)(q - p) == n;

	PKCS8_PRIV_KEY_INFO_free(p8);
	return ok;
}

int bks_get_key(uint8_t **key, size_t *key_len, char **algorithm,
		bc_store *s, const jks_entry *e, int sub, int want_private,
		const char *pw, size_t pw_len)
{
	uint8_t *plain = NULL;
	size_t plain_len = 0;
	const uint8_t *p = e->blob;
	size_t n = e->blob_len;
	bks_key k;
	int err = 0;

	if (sub == BC_SUB_RAW)
		return wks__err(WKS_ERR_UNSUPPORTED, "a key its application "
				"stored as protected bytes (setKeyEntry with "
				"an encoded key): only it can open them");
	if (sub == BC_SUB_SEALED) {
		bks_sealed sl;

		if (parse_sealed(&sl, e->blob, e->blob_len) < 0)
			return wks__err(WKS_ERR_FORMAT, "bad sealed key");
		if ((err = unseal(&plain, &plain_len, s, &sl, pw, pw_len)) < 0)
			return err;
		p = plain;
		n = plain_len;
	}
	if (parse_key(&k, p, n) < 0) {
		/* Sealed: a wrong password that passed the padding. */
		err = sub == BC_SUB_SEALED ?
		      wks__err(WKS_ERR_INTEGRITY, "key password incorrect (the "
			       "unsealed data is not a key)") :
		      wks__err(WKS_ERR_FORMAT, "bad key");
		goto done;
	}
	if (want_private) {
		if (k.key_type != KEY_PRIVATE ||
		    !(utf_is(k.format, k.format_len, "PKCS#8") ||
		      utf_is(k.format, k.format_len, "PKCS8"))) {
			err = wks__err(WKS_ERR_UNSUPPORTED, "the entry holds a "
				       "%s key with a certificate chain",
				       k.key_type == KEY_PUBLIC ? "public" :
				       k.key_type == KEY_SECRET ? "secret" :
				       "private (not PKCS#8)");
			goto done;
		}
		if (!is_pkcs8(k.enc, k.enc_len)) {
			err = sub == BC_SUB_SEALED ?
			      wks__err(WKS_ERR_INTEGRITY, "key password "
				       "incorrect (the unsealed key is not "
				       "PKCS#8)") :
			      wks__err(WKS_ERR_FORMAT, "the key is not PKCS#8");
			goto done;
		}
	} else {
		wks_buf ab = WKS_BUF_INIT;

		if (k.key_type != KEY_SECRET ||
		    !utf_is(k.format, k.format_len, "RAW")) {
			err = wks__err(WKS_ERR_UNSUPPORTED, "the entry holds %s",
				       k.key_type == KEY_PUBLIC ? "a public key" :
				       k.key_type == KEY_PRIVATE ?
				       "a private key without a certificate "
				       "chain" : "a secret key not in RAW form");
			goto done;
		}
		if (k.alg_len == 0 ||
		    (err = wks__mutf8_to_api(&ab, k.alg, k.alg_len)) < 0 ||
		    (err = wks_buf_put(&ab, "", 1)) < 0) {
			wks_buf_dispose(&ab);
			if (err != WKS_ERR_NOMEM)
				err = wks__err(WKS_ERR_FORMAT, "bad algorithm "
					       "name");
			goto done;
		}
		*algorithm = (char *)ab.ptr;
	}
	if (!(*key = malloc(k.enc_len))) {
		err = WKS_ERR_NOMEM;
		if (algorithm && *algorithm) {
			free(*algorithm);
			*algorithm = NULL;
		}
		goto done;
	}
	memcpy(*key, k.enc, k.enc_len);
	*key_len = k.enc_len;
done:
	if (plain)
		wks_wipe_free(plain, plain_len);
	return err;
}
