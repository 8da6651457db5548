/*
 * C_Sign* and C_Verify*: RSA PKCS#1 v1.5 and PSS, ECDSA, EdDSA, HMAC and
 * AES-CMAC (full or CKM_AES_CMAC_GENERAL's shorter tag), raw and combined
 * with a digest, all computed by OpenSSL.
 *
 * The fast path: a key decrypted once per login (token.c) and, per
 * session, the last signature context kept for the next C_SignInit with
 * the same key, mechanism and parameters, so a loop of C_SignInit +
 * C_Sign sets nothing up in OpenSSL after the first round: C_SignInit
 * looks the key up under the token's lock, C_Sign runs EVP_PKEY_sign()
 * with no lock of the module held.  A combined mechanism (CKM_SHA256_*)
 * hashes with a prefetched digest and signs the hash with the same kept
 * context (for RSA PKCS#1 with the DigestInfo of that digest).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/rsa.h>

#include "p11.h"

/* ---- parameters -------------------------------------------------------- */

static CK_RV pss_params(const w11_mech *m, const CK_MECHANISM *mech,
			w11_op *op)
{
	CK_RSA_PKCS_PSS_PARAMS p;
	const EVP_MD *md;

	if (!mech->pParameter || mech->ulParameterLen != sizeof(p))
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(&p, mech->pParameter, sizeof(p));
	if (!(md = w11_md_of_ckm(p.hashAlg)) || !w11_md_of_mgf(p.mgf))
		return CKR_MECHANISM_PARAM_INVALID;
	/* A combined mechanism names its digest twice: they must agree. */
	if (m->md && strcmp(EVP_MD_get0_name(md),
			    EVP_MD_get0_name(w11_md(m->md))) != 0)
		return CKR_MECHANISM_PARAM_INVALID;
	if (p.sLen > 0x7fffffffUL)
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(op->param, &p, sizeof(p));
	op->param_len = sizeof(p);
	return CKR_OK;
}

static CK_RV eddsa_params(const CK_MECHANISM *mech)
{
	wks_p11_eddsa_params p;

	if (!mech->pParameter && mech->ulParameterLen == 0)
		return CKR_OK;
	if (!mech->pParameter || mech->ulParameterLen != sizeof(p))
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(&p, mech->pParameter, sizeof(p));
	/* Ed25519ph, Ed25519ctx and Ed448 contexts: not offered */
	if (p.phFlag || p.ulContextDataLen)
		return CKR_MECHANISM_PARAM_INVALID;
	return CKR_OK;
}

/* CKM_AES_CMAC: a 16-byte tag; CKM_AES_CMAC_GENERAL: CK_MAC_GENERAL_PARAMS,
 * the tag's length (1 to 16). */
static CK_RV cmac_params(const CK_MECHANISM *mech, w11_op *op)
{
	CK_ULONG len; /* CK_MAC_GENERAL_PARAMS */

	if (mech->mechanism == CKM_AES_CMAC) {
		op->tag_len = 16;
		return mech->ulParameterLen ? CKR_MECHANISM_PARAM_INVALID
					    : CKR_OK;
	}
	if (!mech->pParameter || mech->ulParameterLen != sizeof(len))
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(&len, mech->pParameter, sizeof(len));
	if (len < 1 || len > 16)
		return CKR_MECHANISM_PARAM_INVALID;
	op->tag_len = len;
	memcpy(op->param, &len, sizeof(len));
	op->param_len = sizeof(len);
	return CKR_OK;
}

/* ---- set-up ------------------------------------------------------------- */

static int is_verify(const w11_op *op)
{
	return op->kind == W11_OP_VERIFY;
}

/* A kept context for this key, mechanism and parameters, if any. */
static EVP_PKEY_CTX *cache_take(w11_session *s, w11_op *op)
{
	w11_ctxcache *c = &s->cache[is_verify(op)];
	EVP_PKEY_CTX *ctx;

	if (!c->pctx || c->pkey != op->pkey || c->m != op->m ||
	    c->param_len != op->param_len ||
	    memcmp(c->param, op->param, op->param_len) != 0)
		return NULL;
	ctx = c->pctx;
	EVP_PKEY_free(c->pkey);
	w11_keymat_unref(c->km);
	memset(c, 0, sizeof(*c));
	return ctx;
}

static void cache_keep(w11_session *s, w11_op *op)
{
	w11_ctxcache *c = &s->cache[is_verify(op)];

	if (!op->pctx || !op->pkey)
		return;
	EVP_PKEY_CTX_free(c->pctx);
	EVP_PKEY_free(c->pkey);
	w11_keymat_unref(c->km);
	c->pctx = op->pctx;
	op->pctx = NULL;
	c->pkey = op->pkey;
	EVP_PKEY_up_ref(op->pkey);
	c->km = w11_keymat_ref(op->km);
	c->m = op->m;
	memcpy(c->param, op->param, op->param_len);
	c->param_len = op->param_len;
}

static CK_RV new_pkey_ctx(w11_op *op)
{
	const w11_mech *m = op->m;
	EVP_PKEY_CTX *ctx;
	int v = is_verify(op), ok;

	if (!(ctx = EVP_PKEY_CTX_new_from_pkey(w11_libctx, op->pkey, NULL)))
		return CKR_HOST_MEMORY;
	ok = (v ? EVP_PKEY_verify_init(ctx) : EVP_PKEY_sign_init(ctx)) > 0;
	if (ok && m->kind == W11_K_RSA_PKCS) {
		ok = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0;
		/* combined: the hash gets its DigestInfo */
		if (ok && m->md)
			ok = EVP_PKEY_CTX_set_signature_md(ctx,
							   w11_md(m->md)) > 0;
	} else if (ok && m->kind == W11_K_RSA_PSS) {
		CK_RSA_PKCS_PSS_PARAMS p;

		memcpy(&p, op->param, sizeof(p));
		ok = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) >
			     0 &&
		     EVP_PKEY_CTX_set_signature_md(ctx,
						   w11_md_of_ckm(p.hashAlg)) >
			     0 &&
		     EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, w11_md_of_mgf(p.mgf)) >
			     0 &&
		     EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, (int)p.sLen) > 0;
	}
	if (!ok) {
		W11_LOG("%s: OpenSSL refused the key for mechanism 0x%lx",
			v ? "C_VerifyInit" : "C_SignInit",
			(unsigned long)m->type);
		EVP_PKEY_CTX_free(ctx);
		return CKR_KEY_TYPE_INCONSISTENT;
	}
	op->pctx = ctx;
	return CKR_OK;
}

static CK_RV sig_setup(w11_session *s, w11_op *op)
{
	const w11_mech *m = op->m;
	OSSL_PARAM params[2];
	CK_RV rv;

	switch (m->kind) {
	case W11_K_RSA_PKCS:
	case W11_K_RSA_PSS:
	case W11_K_ECDSA:
		if (!(op->pctx = cache_take(s, op)) &&
		    (rv = new_pkey_ctx(op)) != CKR_OK)
			return rv;
		if (m->md) {
			if (!(op->mdctx = EVP_MD_CTX_new()) ||
			    !EVP_DigestInit_ex(op->mdctx, w11_md(m->md), NULL))
				return CKR_HOST_MEMORY;
		}
		return CKR_OK;
	case W11_K_EDDSA:
		return CKR_OK; /* the message is collected, signed at the end */
	case W11_K_HMAC:
		if (!op->sec || !w11_hmac() ||
		    !(op->mac = EVP_MAC_CTX_new(w11_hmac())))
			return CKR_HOST_MEMORY;
		params[0] = OSSL_PARAM_construct_utf8_string(
			OSSL_MAC_PARAM_DIGEST, (char *)m->md, 0);
		params[1] = OSSL_PARAM_construct_end();
		if (!EVP_MAC_init(op->mac, op->sec, op->sec_len, params))
			return CKR_KEY_SIZE_RANGE;
		return CKR_OK;
	case W11_K_CMAC: {
		const EVP_CIPHER *c = w11_cipher(CKK_AES, m->kind, op->sec_len);

		if (!c)
			return CKR_KEY_SIZE_RANGE;
		if (!op->sec || !w11_mac("CMAC") ||
		    !(op->mac = EVP_MAC_CTX_new(w11_mac("CMAC"))))
			return CKR_HOST_MEMORY;
		params[0] = OSSL_PARAM_construct_utf8_string(
			OSSL_MAC_PARAM_CIPHER, (char *)EVP_CIPHER_get0_name(c),
			0);
		params[1] = OSSL_PARAM_construct_end();
		if (!EVP_MAC_init(op->mac, op->sec, op->sec_len, params))
			return CKR_FUNCTION_FAILED;
		return CKR_OK;
	}
	default:
		return CKR_MECHANISM_INVALID;
	}
}

/* The object behind `key` for an operation: checks its class, key type
 * and usage flag, and takes a reference on its key material.  With the
 * token's lock held. */
static CK_RV op_key(w11_token *t, CK_OBJECT_HANDLE key, const w11_mech *m,
		    CK_ATTRIBUTE_TYPE usage, w11_keymat **km, int *is_public)
{
	w11_obj *o = w11_token_find(t, key);
	const w11_attr *kt;

	if (!o || o->cls == CKO_CERTIFICATE || !o->km)
		return CKR_KEY_HANDLE_INVALID;
	if (!w11_obj_visible(t, o))
		return CKR_USER_NOT_LOGGED_IN;
	kt = w11_attrs_get(&o->attrs, CKA_KEY_TYPE);
	if (!kt || kt->len != sizeof(CK_KEY_TYPE) ||
	    *(CK_KEY_TYPE *)kt->val != m->ktype)
		return CKR_KEY_TYPE_INCONSISTENT;
	if (!w11_attrs_is_true(&o->attrs, usage))
		return CKR_KEY_FUNCTION_NOT_PERMITTED;
	if (!w11_mech_allowed(o, m->type))
		return CKR_MECHANISM_INVALID;
	*is_public = o->cls == CKO_PUBLIC_KEY;
	*km = w11_keymat_ref(o->km);
	return CKR_OK;
}

/* The debug log on a key with a password of its own, which programs
 * (gnutls-serv, NSS, pkcs11-tool) report as a wrong PIN although the
 * store's PIN was right: say so, and how to give the key the store's
 * password. */
static void own_password_note(w11_keymat *km, int refused)
{
	w11_token *t = km->tok;
	char alias[256] = "";

	if (!w11_debug || !t)
		return;
	pthread_mutex_lock(&t->lock);
	if (km->alias)
		snprintf(alias, sizeof(alias), "%s", km->alias);
	pthread_mutex_unlock(&t->lock);
	if (refused)
		W11_LOG("key \"%s\": C_Login(CKU_CONTEXT_SPECIFIC): not the "
			"key's password (CKR_PIN_INCORRECT)", alias);
	W11_LOG("key \"%s\" of token \"%s\" has a password of its own, "
		"not the store's (CKA_ALWAYS_AUTHENTICATE): each use needs "
		"C_Login(CKU_CONTEXT_SPECIFIC) with it, and a program that "
		"gives the store's PIN there reports a wrong PIN; to use the "
		"key with the store's PIN: wks keypasswd -k %s -a %s "
		"--keypass KEY-PASSWORD --new-keypass STORE-PASSWORD", alias,
		t->conf->label, t->conf->store, alias);
}

/*
 * Common to C_SignInit/C_VerifyInit and C_EncryptInit/C_DecryptInit:
 * find the key, take its material (decrypting a token key at its first
 * use in a login), and set the operation up, or leave it waiting for a
 * context-specific login (a key with its own password).
 */
CK_RV w11_op_start(w11_session *s, w11_op *op, const w11_mech *m,
		   CK_OBJECT_HANDLE key, CK_ATTRIBUTE_TYPE usage)
{
	w11_token *t = s->tok;
	int is_public = 0, stale;
	uint64_t gen;
	CK_RV rv;

	/* A key whose entry another program deleted or replaced is not
	 * used again: a look at the store file at every operation init
	 * (at most one a millisecond), and a reload when it changed (the
	 * handle of a deleted or replaced entry is then unknown). */
	w11_token_check(t);
	pthread_mutex_lock(&t->lock);
	rv = op_key(t, key, m, usage, &op->km, &is_public);
	gen = t->login_gen;
	stale = (s->cache[0].km && s->cache[0].km->gone) ||
		(s->cache[1].km && s->cache[1].km->gone);
	pthread_mutex_unlock(&t->lock);
	if (s->cache_gen != gen || stale) {
		/* kept contexts of an earlier login hold its keys, and
		 * those of a key that is gone hold it */
		w11_session_cache_clear(s);
		s->cache_gen = gen;
	}
	if (rv != CKR_OK)
		return rv;
	op->m = m;
	if (is_public) {
		if (!op->km->pub)
			return CKR_KEY_HANDLE_INVALID;
		EVP_PKEY_up_ref(op->km->pub);
		op->pkey = op->km->pub;
	} else {
		rv = w11_keymat_get(op->km, NULL, 0, &op->pkey, &op->sec,
				    &op->sec_len);
		if (rv == CKR_USER_NOT_LOGGED_IN) {
			int later;

			pthread_mutex_lock(&t->lock);
			later = t->login == CKU_USER &&
				(op->km->always_auth == 1 ||
				 op->km->force_auth);
			pthread_mutex_unlock(&t->lock);
			if (later) {
				/* CKA_ALWAYS_AUTHENTICATE: the key password
				 * comes with C_Login(CKU_CONTEXT_SPECIFIC) */
				own_password_note(op->km, 0);
				op->need_login = 1;
				op->active = 1;
				return CKR_OK;
			}
		}
		if (rv != CKR_OK)
			return rv;
	}
	if ((rv = op->setup(s, op)) != CKR_OK)
		return rv;
	op->active = 1;
	return CKR_OK;
}

CK_RV w11_sign_init(w11_session *s, const CK_MECHANISM *mech,
		    CK_OBJECT_HANDLE key, int verify)
{
	w11_op *op = &s->op[verify ? W11_OP_VERIFY : W11_OP_SIGN];
	const w11_mech *m;
	CK_RV rv;

	if (!mech)
		return CKR_ARGUMENTS_BAD;
	if (op->active)
		return CKR_OPERATION_ACTIVE;
	if (!(m = w11_mech_find(mech->mechanism)) ||
	    !(m->flags & (verify ? CKF_VERIFY : CKF_SIGN)))
		return CKR_MECHANISM_INVALID;
	op->kind = verify ? W11_OP_VERIFY : W11_OP_SIGN;
	op->setup = sig_setup;
	if (m->kind == W11_K_RSA_PSS)
		rv = pss_params(m, mech, op);
	else if (m->kind == W11_K_CMAC)
		rv = cmac_params(mech, op);
	else if (m->kind == W11_K_EDDSA)
		rv = eddsa_params(mech);
	else
		rv = mech->ulParameterLen ? CKR_MECHANISM_PARAM_INVALID : CKR_OK;
	if (rv == CKR_OK)
		rv = w11_op_start(s, op, m, key, verify ? CKA_VERIFY : CKA_SIGN);
	if (rv != CKR_OK)
		w11_op_end(op);
	return rv;
}

CK_RV w11_context_login(w11_session *s, const char *pin, size_t len)
{
	/* (encrypt and verify too: a secret key made always-authenticate
	 * through the attribute record) */
	static const int kinds[] = { W11_OP_SIGN, W11_OP_DECRYPT,
				     W11_OP_ENCRYPT, W11_OP_VERIFY };
	w11_op *op = NULL;
	CK_RV rv;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (s->op[kinds[i]].active && s->op[kinds[i]].need_login) {
			op = &s->op[kinds[i]];
			break;
		}
	if (!op)
		return CKR_OPERATION_NOT_INITIALIZED;
	rv = w11_keymat_get(op->km, pin, len, &op->pkey, &op->sec,
			    &op->sec_len);
	if (rv == CKR_PIN_INCORRECT)
		own_password_note(op->km, 1);
	if (rv != CKR_OK)
		return rv; /* a wrong password may be tried again */
	op->need_login = 0;
	if ((rv = op->setup(s, op)) != CKR_OK)
		w11_op_end(op);
	return rv;
}

/* ---- computing --------------------------------------------------------- */

static size_t sig_len(const w11_op *op)
{
	switch (op->m->kind) {
	case W11_K_ECDSA:
		return 2 * (((size_t)EVP_PKEY_get_bits(op->pkey) + 7) / 8);
	case W11_K_EDDSA:
		return EVP_PKEY_get_base_id(op->pkey) == EVP_PKEY_ED448 ? 114
									 : 64;
	case W11_K_HMAC:
		return (size_t)EVP_MD_get_size(w11_md(op->m->md));
	case W11_K_CMAC:
		return op->tag_len;
	default:
		return (size_t)EVP_PKEY_get_size(op->pkey);
	}
}

/* DER ECDSA-Sig-Value -> r || s, each as long as the order. */
static CK_RV ecdsa_to_raw(unsigned char *out, size_t half,
			  const unsigned char *der, size_t der_len)
{
	const unsigned char *p = der;
	ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)der_len);
	const BIGNUM *r, *s;
	CK_RV rv = CKR_FUNCTION_FAILED;

	if (!sig)
		return rv;
	ECDSA_SIG_get0(sig, &r, &s);
	if (BN_bn2binpad(r, out, (int)half) == (int)half &&
	    BN_bn2binpad(s, out + half, (int)half) == (int)half)
		rv = CKR_OK;
	ECDSA_SIG_free(sig);
	return rv;
}

static CK_RV ecdsa_to_der(unsigned char **der, size_t *der_len,
			  const unsigned char *raw, size_t len)
{
	ECDSA_SIG *sig = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(raw, (int)(len / 2), NULL);
	BIGNUM *s = BN_bin2bn(raw + len / 2, (int)(len / 2), NULL);
	int n;

	*der = NULL;
	if (!sig || !r || !s || !ECDSA_SIG_set0(sig, r, s)) {
		ECDSA_SIG_free(sig);
		BN_free(r);
		BN_free(s);
		return CKR_HOST_MEMORY;
	}
	n = i2d_ECDSA_SIG(sig, der);
	ECDSA_SIG_free(sig);
	if (n <= 0)
		return CKR_HOST_MEMORY;
	*der_len = (size_t)n;
	return CKR_OK;
}

/* The input of the raw primitive: the data itself, or its digest. */
static CK_RV tbs_of(w11_op *op, const unsigned char *data, size_t len,
		    int final, unsigned char *md, size_t *md_len,
		    const unsigned char **tbs, size_t *tbs_len)
{
	unsigned int n = 0;

	if (!op->m->md) {
		*tbs = data;
		*tbs_len = len;
		return CKR_OK;
	}
	if ((!final && !EVP_DigestUpdate(op->mdctx, data, len)) ||
	    !EVP_DigestFinal_ex(op->mdctx, md, &n))
		return CKR_FUNCTION_FAILED;
	*md_len = n;
	*tbs = md;
	*tbs_len = n;
	return CKR_OK;
}

/* Input length rules of the raw mechanisms. */
static CK_RV check_raw_len(const w11_op *op, size_t len)
{
	size_t k = (size_t)EVP_PKEY_get_size(op->pkey);
	CK_RSA_PKCS_PSS_PARAMS p;

	if (op->m->md)
		return CKR_OK;
	switch (op->m->kind) {
	case W11_K_RSA_PKCS:
		return len + 11 <= k ? CKR_OK : CKR_DATA_LEN_RANGE;
	case W11_K_RSA_PSS:
		memcpy(&p, op->param, sizeof(p));
		return len == (size_t)EVP_MD_get_size(w11_md_of_ckm(p.hashAlg))
			       ? CKR_OK
			       : CKR_DATA_LEN_RANGE;
	case W11_K_ECDSA:
		return len ? CKR_OK : CKR_DATA_LEN_RANGE;
	default:
		return CKR_OK;
	}
}

CK_RV w11_op_append(w11_op *op, const unsigned char *p, size_t n)
{
	if (n > ((size_t)1 << 30) - op->len)
		return CKR_DATA_LEN_RANGE;
	if (op->len + n > op->cap) {
		size_t cap = op->cap ? op->cap : 256;
		unsigned char *nb;

		while (cap < op->len + n)
			cap *= 2;
		if (!(nb = OPENSSL_malloc(cap)))
			return CKR_HOST_MEMORY;
		if (op->len)
			memcpy(nb, op->buf, op->len);
		OPENSSL_clear_free(op->buf, op->cap);
		op->buf = nb;
		op->cap = cap;
	}
	if (n)
		memcpy(op->buf + op->len, p, n);
	op->len += n;
	return CKR_OK;
}

/* Sign: `final` says the data came through C_SignUpdate (and `data` is
 * not used). */
static CK_RV do_sign(w11_op *op, const unsigned char *data, size_t len,
		     int final, unsigned char *sig, size_t *out_len)
{
	unsigned char md[EVP_MAX_MD_SIZE], der[200];
	const unsigned char *tbs;
	size_t md_len = 0, tbs_len, n;
	EVP_MD_CTX *mc = NULL;
	CK_RV rv;

	switch (op->m->kind) {
	case W11_K_RSA_PKCS:
	case W11_K_RSA_PSS:
	case W11_K_ECDSA:
		if ((rv = check_raw_len(op, len)) != CKR_OK ||
		    (rv = tbs_of(op, data, len, final, md, &md_len, &tbs,
				 &tbs_len)) != CKR_OK)
			break;
		if (op->m->kind != W11_K_ECDSA) {
			n = *out_len;
			rv = EVP_PKEY_sign(op->pctx, sig, &n, tbs, tbs_len) > 0
				     ? CKR_OK
				     : CKR_FUNCTION_FAILED;
			*out_len = n;
			break;
		}
		n = sizeof(der);
		if (EVP_PKEY_sign(op->pctx, der, &n, tbs, tbs_len) <= 0) {
			rv = CKR_FUNCTION_FAILED;
			break;
		}
		rv = ecdsa_to_raw(sig, *out_len / 2, der, n);
		break;
	case W11_K_EDDSA:
		if (final) {
			data = op->buf;
			len = op->len;
		}
		n = *out_len;
		rv = (mc = EVP_MD_CTX_new()) &&
			     EVP_DigestSignInit_ex(mc, NULL, NULL, w11_libctx, NULL,
						   op->pkey, NULL) > 0 &&
			     EVP_DigestSign(mc, sig, &n, data ? data
							      : (const unsigned char *)"",
					    len) > 0
			     ? CKR_OK
			     : CKR_FUNCTION_FAILED;
		*out_len = n;
		break;
	case W11_K_HMAC:
		n = *out_len;
		rv = ((final || EVP_MAC_update(op->mac, data, len)) &&
		      EVP_MAC_final(op->mac, sig, &n, *out_len))
			     ? CKR_OK
			     : CKR_FUNCTION_FAILED;
		*out_len = n;
		break;
	case W11_K_CMAC:
		/* the whole tag, then as much of it as asked */
		n = sizeof(md);
		rv = ((final || EVP_MAC_update(op->mac, data, len)) &&
		      EVP_MAC_final(op->mac, md, &n, sizeof(md)) &&
		      n >= op->tag_len)
			     ? CKR_OK
			     : CKR_FUNCTION_FAILED;
		if (rv == CKR_OK) {
			memcpy(sig, md, op->tag_len);
			*out_len = op->tag_len;
		}
		break;
	default:
		rv = CKR_MECHANISM_INVALID;
	}
	EVP_MD_CTX_free(mc);
	OPENSSL_cleanse(md, sizeof(md));
	return rv;
}

static CK_RV do_verify(w11_op *op, const unsigned char *data, size_t len,
		       int final, const unsigned char *sig, size_t sig_n)
{
	unsigned char md[EVP_MAX_MD_SIZE], mac[EVP_MAX_MD_SIZE], *der = NULL;
	const unsigned char *tbs;
	size_t md_len = 0, tbs_len, der_len = 0, n;
	EVP_MD_CTX *mc = NULL;
	CK_RV rv;
	int r;

	switch (op->m->kind) {
	case W11_K_RSA_PKCS:
	case W11_K_RSA_PSS:
	case W11_K_ECDSA:
		if (sig_n != sig_len(op))
			return CKR_SIGNATURE_LEN_RANGE;
		if ((rv = check_raw_len(op, len)) != CKR_OK ||
		    (rv = tbs_of(op, data, len, final, md, &md_len, &tbs,
				 &tbs_len)) != CKR_OK)
			return rv;
		if (op->m->kind == W11_K_ECDSA) {
			if ((rv = ecdsa_to_der(&der, &der_len, sig, sig_n)) !=
			    CKR_OK)
				return rv;
			r = EVP_PKEY_verify(op->pctx, der, der_len, tbs,
					    tbs_len);
			OPENSSL_free(der);
		} else {
			r = EVP_PKEY_verify(op->pctx, sig, sig_n, tbs,
					    tbs_len);
		}
		return r == 1 ? CKR_OK : CKR_SIGNATURE_INVALID;
	case W11_K_EDDSA:
		if (sig_n != sig_len(op))
			return CKR_SIGNATURE_LEN_RANGE;
		if (final) {
			data = op->buf;
			len = op->len;
		}
		rv = CKR_SIGNATURE_INVALID;
		if ((mc = EVP_MD_CTX_new()) &&
		    EVP_DigestVerifyInit_ex(mc, NULL, NULL, w11_libctx, NULL,
					    op->pkey, NULL) > 0 &&
		    EVP_DigestVerify(mc, sig, sig_n,
				     data ? data : (const unsigned char *)"",
				     len) == 1)
			rv = CKR_OK;
		EVP_MD_CTX_free(mc);
		return rv;
	case W11_K_HMAC:
		if (sig_n != sig_len(op))
			return CKR_SIGNATURE_LEN_RANGE;
		n = sizeof(mac);
		if ((!final && !EVP_MAC_update(op->mac, data, len)) ||
		    !EVP_MAC_final(op->mac, mac, &n, sizeof(mac)))
			return CKR_FUNCTION_FAILED;
		rv = n == sig_n && CRYPTO_memcmp(mac, sig, n) == 0
			     ? CKR_OK
			     : CKR_SIGNATURE_INVALID;
		OPENSSL_cleanse(mac, sizeof(mac));
		return rv;
	case W11_K_CMAC:
		if (sig_n != op->tag_len)
			return CKR_SIGNATURE_LEN_RANGE;
		n = sizeof(mac);
		if ((!final && !EVP_MAC_update(op->mac, data, len)) ||
		    !EVP_MAC_final(op->mac, mac, &n, sizeof(mac)) ||
		    n < sig_n)
			return CKR_FUNCTION_FAILED;
		rv = CRYPTO_memcmp(mac, sig, sig_n) == 0 ? CKR_OK
							 : CKR_SIGNATURE_INVALID;
		OPENSSL_cleanse(mac, sizeof(mac));
		return rv;
	default:
		return CKR_MECHANISM_INVALID;
	}
}

static CK_RV update(w11_op *op, const unsigned char *p, size_t n)
{
	if (!op->m->multipart)
		return CKR_FUNCTION_NOT_SUPPORTED;
	op->multi = 1;
	switch (op->m->kind) {
	case W11_K_EDDSA:
		return w11_op_append(op, p, n);
	case W11_K_HMAC:
	case W11_K_CMAC:
		return EVP_MAC_update(op->mac, p, n) ? CKR_OK
						      : CKR_FUNCTION_FAILED;
	default:
		return EVP_DigestUpdate(op->mdctx, p, n) ? CKR_OK
							 : CKR_FUNCTION_FAILED;
	}
}

/* ---- entry points -------------------------------------------------------- */

static CK_RV sign_init(w11_session *s, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k,
		       int verify)
{
	return w11_sign_init(s, m, k, verify);
}

CK_RV C_SignInit(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, sign_init(s, m, k, 0));
}

CK_RV C_VerifyInit(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m,
		   CK_OBJECT_HANDLE k)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, sign_init(s, m, k, 1));
}

/* The checks every C_Sign* / C_Verify* makes first. */
static CK_RV op_ready(w11_op *op)
{
	if (!op->active)
		return CKR_OPERATION_NOT_INITIALIZED;
	if (op->need_login) {
		w11_op_end(op);
		return CKR_USER_NOT_LOGGED_IN;
	}
	return CKR_OK;
}

/* C_Sign and C_SignFinal: the size query and the buffer check, then the
 * signature; the operation ends unless the answer was a length. */
static CK_RV sign_out(w11_session *s, w11_op *op, const unsigned char *data,
		      size_t len, int final, CK_BYTE_PTR sig,
		      CK_ULONG_PTR sig_len_p)
{
	size_t need, n;
	CK_RV rv;

	if (!sig_len_p) {
		w11_op_end(op);
		return CKR_ARGUMENTS_BAD;
	}
	need = sig_len(op);
	if (!sig) {
		*sig_len_p = need;
		return CKR_OK;
	}
	if (*sig_len_p < need) {
		*sig_len_p = need;
		return CKR_BUFFER_TOO_SMALL;
	}
	n = need;
	rv = do_sign(op, data, len, final, sig, &n);
	if (rv == CKR_OK) {
		*sig_len_p = n;
		cache_keep(s, op);
	}
	w11_op_end(op);
	return rv;
}

static CK_RV sign(w11_session *s, CK_BYTE_PTR d, CK_ULONG n, CK_BYTE_PTR sig,
		  CK_ULONG_PTR sn)
{
	w11_op *op = &s->op[W11_OP_SIGN];
	CK_RV rv;

	if ((rv = op_ready(op)) != CKR_OK)
		return rv;
	if ((!d && n) || op->multi) {
		w11_op_end(op);
		return !d && n ? CKR_ARGUMENTS_BAD : CKR_OPERATION_ACTIVE;
	}
	return sign_out(s, op, d, n, 0, sig, sn);
}

CK_RV C_Sign(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG n, CK_BYTE_PTR sig,
	     CK_ULONG_PTR sn)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, sign(s, d, n, sig, sn));
}

static CK_RV op_update(w11_op *op, CK_BYTE_PTR p, CK_ULONG n)
{
	CK_RV rv;

	if ((rv = op_ready(op)) != CKR_OK)
		return rv;
	if (!p && n)
		rv = CKR_ARGUMENTS_BAD;
	else
		rv = update(op, p, n);
	if (rv != CKR_OK)
		w11_op_end(op);
	return rv;
}

CK_RV C_SignUpdate(CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG n)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, op_update(&s->op[W11_OP_SIGN], p, n));
}

static CK_RV sign_final(w11_session *s, CK_BYTE_PTR sig, CK_ULONG_PTR sn)
{
	w11_op *op = &s->op[W11_OP_SIGN];
	CK_RV rv;

	if ((rv = op_ready(op)) != CKR_OK)
		return rv;
	if (!op->m->multipart) {
		w11_op_end(op);
		return CKR_FUNCTION_NOT_SUPPORTED;
	}
	return sign_out(s, op, NULL, 0, 1, sig, sn);
}

CK_RV C_SignFinal(CK_SESSION_HANDLE h, CK_BYTE_PTR sig, CK_ULONG_PTR sn)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, sign_final(s, sig, sn));
}

static CK_RV verify(w11_session *s, CK_BYTE_PTR d, CK_ULONG n,
		    CK_BYTE_PTR sig, CK_ULONG sn, int final)
{
	w11_op *op = &s->op[W11_OP_VERIFY];
	CK_RV rv;

	if ((rv = op_ready(op)) != CKR_OK)
		return rv;
	if ((!final && !d && n) || !sig) {
		rv = CKR_ARGUMENTS_BAD;
	} else if (!final && op->multi) {
		rv = CKR_OPERATION_ACTIVE;
	} else if (final && !op->m->multipart) {
		rv = CKR_FUNCTION_NOT_SUPPORTED;
	} else {
		rv = do_verify(op, d, n, final, sig, sn);
		if (rv == CKR_OK || rv == CKR_SIGNATURE_INVALID)
			cache_keep(s, op);
	}
	w11_op_end(op);
	return rv;
}

CK_RV C_Verify(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG n,
	       CK_BYTE_PTR sig, CK_ULONG sn)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, verify(s, d, n, sig, sn, 0));
}

CK_RV C_VerifyUpdate(CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG n)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, op_update(&s->op[W11_OP_VERIFY], p, n));
}

CK_RV C_VerifyFinal(CK_SESSION_HANDLE h, CK_BYTE_PTR sig, CK_ULONG sn)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, verify(s, NULL, 0, sig, sn, 1));
}
