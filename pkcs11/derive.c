/*
 * C_DeriveKey:
 *   - CKM_ECDH1_DERIVE (and CKM_ECDH1_COFACTOR_DERIVE, the same on the
 *     module's curves, whose cofactor is 1) with CKD_NULL (the raw shared secret, truncated to
 *     CKA_VALUE_LEN if given) or the ANSI X9.63 KDF over SHA-1 ... SHA-512
 *     (CKD_SHA*_KDF, with the optional shared data; OpenSSL's X963KDF);
 *   - CKM_HKDF_DERIVE and CKM_HKDF_DATA (RFC 5869; OpenSSL's HKDF):
 *     extract and/or expand, the salt none, given or another key's value,
 *     from a generic secret or CKK_HKDF key with CKA_DERIVE; HKDF_DERIVE
 *     makes a secret key, HKDF_DATA a session data object holding the
 *     output in CKA_VALUE.
 * The new key's template is checked as C_CreateObject's (w11_tmpl_check).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>

/* Bounds of what a caller gives: shared data, salt, info. */
#define DERIVE_MAX_DATA 65536

#include "p11.h"

/* The peer's public key on the base key's curve. */
static CK_RV peer_key(EVP_PKEY **out, EVP_PKEY *base,
		      const CK_ECDH1_DERIVE_PARAMS *p)
{
	char group[80];
	const unsigned char *pt;
	size_t pt_len, fb;
	OSSL_PARAM_BLD *b = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *c = NULL;
	CK_RV rv = CKR_MECHANISM_PARAM_INVALID;
	int nid;

	*out = NULL;
	if (!EVP_PKEY_get_utf8_string_param(base, OSSL_PKEY_PARAM_GROUP_NAME,
					    group, sizeof(group), NULL) ||
	    (nid = OBJ_txt2nid(group)) == NID_undef ||
	    !(fb = w11_curve_bytes(nid)))
		return CKR_KEY_TYPE_INCONSISTENT;
	if (w11_point_bytes(&pt, &pt_len, p->pPublicData, p->ulPublicDataLen,
			    2 * fb + 1) != CKR_OK)
		return rv;
	if ((b = OSSL_PARAM_BLD_new()) &&
	    OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME,
					    group, 0) &&
	    OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pt,
					     pt_len) &&
	    (params = OSSL_PARAM_BLD_to_param(b)) &&
	    (c = EVP_PKEY_CTX_new_from_name(w11_libctx, "EC", NULL)) &&
	    EVP_PKEY_fromdata_init(c) > 0 &&
	    EVP_PKEY_fromdata(c, out, EVP_PKEY_PUBLIC_KEY, params) > 0)
		rv = CKR_OK;
	EVP_PKEY_CTX_free(c);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(b);
	return rv;
}

static CK_RV ecdh(unsigned char **secret, size_t *len, EVP_PKEY *base,
		  EVP_PKEY *peer)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(w11_libctx, base, NULL);
	CK_RV rv = CKR_FUNCTION_FAILED;

	*secret = NULL;
	if (c && EVP_PKEY_derive_init(c) > 0 &&
	    EVP_PKEY_derive_set_peer(c, peer) > 0 &&
	    EVP_PKEY_derive(c, NULL, len) > 0 &&
	    (*secret = OPENSSL_malloc(*len)) &&
	    EVP_PKEY_derive(c, *secret, len) > 0)
		rv = CKR_OK;
	else if (*secret) {
		OPENSSL_clear_free(*secret, *len);
		*secret = NULL;
		rv = CKR_MECHANISM_PARAM_INVALID; /* not a point of the curve */
	}
	EVP_PKEY_CTX_free(c);
	return rv;
}

/* The digest of an X9.63 KDF (CKD_SHA*_KDF); NULL for CKD_NULL or an
 * unknown one (*ok 0). */
static const char *x963_md(CK_ULONG kdf, int *ok)
{
	*ok = 1;
	switch (kdf) {
	case CKD_NULL:
		return NULL;
	case CKD_SHA1_KDF:
		return "SHA1";
	case CKD_SHA224_KDF:
		return "SHA224";
	case CKD_SHA256_KDF:
		return "SHA256";
	case CKD_SHA384_KDF:
		return "SHA384";
	case CKD_SHA512_KDF:
		return "SHA512";
	default:
		*ok = 0;
		return NULL;
	}
}

/* out[0..len) = KDF (X963KDF, HKDF) over `params`. */
static CK_RV run_kdf(const char *name, OSSL_PARAM *params, unsigned char *out,
		     size_t len)
{
	EVP_KDF *k = w11_kdf(name);
	EVP_KDF_CTX *c = k ? EVP_KDF_CTX_new(k) : NULL;
	CK_RV rv = CKR_FUNCTION_FAILED;

	if (c && EVP_KDF_derive(c, out, len, params) > 0)
		rv = CKR_OK;
	EVP_KDF_CTX_free(c);
	if (rv != CKR_OK)
		OPENSSL_cleanse(out, len);
	return rv;
}

static CK_RV x963(unsigned char *out, size_t len, const char *md,
		  const unsigned char *z, size_t zl, const unsigned char *info,
		  size_t il)
{
	OSSL_PARAM p[4], *q = p;

	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
						(char *)md, 0);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
						 (void *)z, zl);
	if (il)
		*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
							 (void *)info, il);
	*q = OSSL_PARAM_construct_end();
	return run_kdf("X963KDF", p, out, len);
}

/* ---- HKDF ------------------------------------------------------------------ */

/* A secret value for HKDF (its key or its salt key): a generic secret or
 * CKK_HKDF key with CKA_DERIVE (the base key: whose CKA_ALLOWED_MECHANISMS
 * allow `mech`; a salt key: mech CK_UNAVAILABLE_INFORMATION).  Lock held;
 * a reference on its material. */
static CK_RV hkdf_key(w11_token *tok, CK_OBJECT_HANDLE h,
		      CK_MECHANISM_TYPE mech, w11_keymat **km)
{
	w11_obj *o = w11_token_find(tok, h);

	if (!o || !o->km || (o->cls != CKO_SECRET_KEY &&
			     o->cls != CKO_PRIVATE_KEY &&
			     o->cls != CKO_PUBLIC_KEY))
		return CKR_KEY_HANDLE_INVALID;
	if (!w11_obj_visible(tok, o))
		return CKR_USER_NOT_LOGGED_IN;
	if (o->cls != CKO_SECRET_KEY ||
	    (o->km->ktype != CKK_GENERIC_SECRET && o->km->ktype != CKK_HKDF))
		return CKR_KEY_TYPE_INCONSISTENT;
	if (!w11_attrs_is_true(&o->attrs, CKA_DERIVE))
		return CKR_KEY_FUNCTION_NOT_PERMITTED;
	if (mech != CK_UNAVAILABLE_INFORMATION && !w11_mech_allowed(o, mech))
		return CKR_MECHANISM_INVALID;
	*km = w11_keymat_ref(o->km);
	return CKR_OK;
}

static CK_RV secret_bytes(w11_keymat *km, unsigned char **sec, size_t *len)
{
	EVP_PKEY *pk = NULL;
	CK_RV rv = w11_keymat_get(km, NULL, 0, &pk, sec, len);

	EVP_PKEY_free(pk);
	if (rv == CKR_OK && !*sec)
		rv = CKR_KEY_TYPE_INCONSISTENT;
	return rv;
}

/* The data object of CKM_HKDF_DATA: the caller's template (less the
 * class, value and length) with the output as its CKA_VALUE; private
 * (seen only logged in) unless the template says otherwise. */
static CK_RV hkdf_data_obj(w11_session *s, const CK_ATTRIBUTE *t, CK_ULONG n,
			   unsigned char *v, size_t len, CK_OBJECT_HANDLE *h)
{
	CK_OBJECT_CLASS cls = CKO_DATA;
	CK_BBOOL yes = CK_TRUE;
	CK_ATTRIBUTE *nt = calloc(n + 3, sizeof(*nt));
	CK_ULONG nn = 0;
	CK_RV rv;

	if (!nt)
		return CKR_HOST_MEMORY;
	nt[nn++] = (CK_ATTRIBUTE){ CKA_CLASS, &cls, sizeof(cls) };
	nt[nn++] = (CK_ATTRIBUTE){ CKA_VALUE, v, len };
	if (!w11_tmpl(t, n, CKA_PRIVATE))
		nt[nn++] = (CK_ATTRIBUTE){ CKA_PRIVATE, &yes, 1 };
	for (CK_ULONG i = 0; i < n; i++)
		if (t[i].type != CKA_CLASS && t[i].type != CKA_VALUE &&
		    t[i].type != CKA_VALUE_LEN)
			nt[nn++] = t[i];
	rv = w11_create_object(s, nt, nn, h);
	free(nt);
	return rv;
}

static CK_RV hkdf_derive(w11_session *s, const w11_mech *m,
			 const CK_MECHANISM *mech, CK_OBJECT_HANDLE base,
			 const CK_ATTRIBUTE *t, CK_ULONG n, CK_OBJECT_HANDLE *h)
{
	w11_token *tok = s->tok;
	int data = mech->mechanism == CKM_HKDF_DATA;
	CK_HKDF_PARAMS p;
	const EVP_MD *md;
	CK_OBJECT_CLASS cls = data ? CKO_DATA : CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_GENERIC_SECRET;
	CK_ULONG want = 0;
	int token = 0, priv = 1, mode;
	size_t hl, ikm_len = 0, salt_len = 0;
	unsigned char *ikm = NULL, *salt = NULL, *out = NULL;
	w11_keymat *km = NULL, *skm = NULL;
	OSSL_PARAM prm[6], *q = prm;
	CK_RV rv;

	(void)m;
	if (!mech->pParameter || mech->ulParameterLen != sizeof(p))
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(&p, mech->pParameter, sizeof(p));
	if ((!p.bExtract && !p.bExpand) ||
	    !(md = w11_md_of_ckm(p.prfHashMechanism)))
		return CKR_MECHANISM_PARAM_INVALID;
	hl = (size_t)EVP_MD_get_size(md);
	if (p.bExtract) {
		switch (p.ulSaltType) {
		case CKF_HKDF_SALT_NULL:
			if (p.pSalt || p.ulSaltLen)
				return CKR_MECHANISM_PARAM_INVALID;
			break;
		case CKF_HKDF_SALT_DATA:
			if (!p.pSalt || !p.ulSaltLen ||
			    p.ulSaltLen > DERIVE_MAX_DATA)
				return CKR_MECHANISM_PARAM_INVALID;
			break;
		case CKF_HKDF_SALT_KEY:
			break;
		default:
			return CKR_MECHANISM_PARAM_INVALID;
		}
	}
	if (p.bExpand &&
	    ((p.ulInfoLen && !p.pInfo) || p.ulInfoLen > DERIVE_MAX_DATA))
		return CKR_MECHANISM_PARAM_INVALID;
	if ((rv = w11_tmpl_check(t, n)) ||
	    (rv = w11_tmpl_ulong(t, n, CKA_CLASS, &cls)) ||
	    (rv = w11_tmpl_ulong(t, n, CKA_KEY_TYPE, &kt)) ||
	    (rv = w11_tmpl_ulong(t, n, CKA_VALUE_LEN, &want)) ||
	    (rv = w11_tmpl_bool(t, n, CKA_TOKEN, &token)) ||
	    (rv = w11_tmpl_bool(t, n, CKA_PRIVATE, &priv)))
		return rv;
	if (data ? cls != CKO_DATA
		 : (cls != CKO_SECRET_KEY ||
		    (kt != CKK_GENERIC_SECRET && kt != CKK_AES &&
		     kt != CKK_DES3 && kt != CKK_HKDF)))
		return CKR_TEMPLATE_INCONSISTENT;
	if (!want && (!p.bExpand || (!data && kt == CKK_DES3)))
		want = p.bExpand ? 24 : hl; /* extract only: the PRK */
	if (!want)
		return CKR_TEMPLATE_INCOMPLETE;
	if (want > 255 * hl) /* RFC 5869 2.3 */
		return CKR_KEY_SIZE_RANGE;
	if ((!p.bExpand && want != hl) ||
	    (!data && !w11_secret_len_ok(kt, want)))
		return CKR_TEMPLATE_INCONSISTENT;
	if ((rv = w11_may_create(s, token, priv)) != CKR_OK)
		return rv;
	w11_token_check(tok); /* as every operation init */
	pthread_mutex_lock(&tok->lock);
	rv = hkdf_key(tok, base, mech->mechanism, &km);
	if (rv == CKR_OK && p.bExtract && p.ulSaltType == CKF_HKDF_SALT_KEY &&
	    (rv = hkdf_key(tok, p.hSaltKey, CK_UNAVAILABLE_INFORMATION,
			   &skm)) != CKR_OK)
		rv = rv == CKR_KEY_HANDLE_INVALID ? CKR_MECHANISM_PARAM_INVALID
						  : rv;
	pthread_mutex_unlock(&tok->lock);
	if (rv != CKR_OK ||
	    (rv = secret_bytes(km, &ikm, &ikm_len)) != CKR_OK ||
	    (skm && (rv = secret_bytes(skm, &salt, &salt_len)) != CKR_OK))
		goto done;
	if (!(out = OPENSSL_malloc(want))) {
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	mode = !p.bExpand ? EVP_KDF_HKDF_MODE_EXTRACT_ONLY
	       : !p.bExtract ? EVP_KDF_HKDF_MODE_EXPAND_ONLY
			     : EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND;
	*q++ = OSSL_PARAM_construct_utf8_string(
		OSSL_KDF_PARAM_DIGEST, (char *)EVP_MD_get0_name(md), 0);
	*q++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, ikm,
						 ikm_len);
	if (p.bExtract && (salt || p.ulSaltType == CKF_HKDF_SALT_DATA))
		*q++ = OSSL_PARAM_construct_octet_string(
			OSSL_KDF_PARAM_SALT,
			salt ? salt : p.pSalt, salt ? salt_len : p.ulSaltLen);
	if (p.bExpand && p.ulInfoLen)
		*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
							 p.pInfo, p.ulInfoLen);
	*q = OSSL_PARAM_construct_end();
	if ((rv = run_kdf("HKDF", prm, out, want)) != CKR_OK)
		goto done;
	if (data)
		rv = hkdf_data_obj(s, t, n, out, want, h);
	else
		rv = token ? w11_token_secret(s, kt, out, want, t, n,
					      CK_UNAVAILABLE_INFORMATION, h)
			   : w11_session_secret(s, kt, out, want, t, n,
						CK_UNAVAILABLE_INFORMATION, h);
done:
	OPENSSL_clear_free(out, want);
	OPENSSL_clear_free(ikm, ikm_len);
	OPENSSL_clear_free(salt, salt_len);
	w11_keymat_unref(km);
	w11_keymat_unref(skm);
	return rv;
}

/* ---- C_DeriveKey -------------------------------------------------------- */

static CK_RV derive_key(w11_session *s, CK_MECHANISM_PTR mech,
			CK_OBJECT_HANDLE base, CK_ATTRIBUTE_PTR t, CK_ULONG n,
			CK_OBJECT_HANDLE_PTR h)
{
	w11_op op;
	CK_ECDH1_DERIVE_PARAMS p;
	const w11_mech *m;
	EVP_PKEY *peer = NULL;
	unsigned char *secret = NULL;
	size_t slen = 0;
	CK_OBJECT_CLASS cls = CKO_SECRET_KEY;
	CK_KEY_TYPE kt = CKK_GENERIC_SECRET;
	CK_ULONG want = 0;
	const char *kdf_md;
	unsigned char *out = NULL;
	int token = 0, priv = 1, kdf_ok;
	CK_RV rv;

	memset(&op, 0, sizeof(op));
	if (!mech || !h)
		return CKR_ARGUMENTS_BAD;
	if (!(m = w11_mech_find(mech->mechanism)) ||
	    !(m->flags & CKF_DERIVE))
		return CKR_MECHANISM_INVALID;
	if (m->kind == W11_K_HKDF)
		return hkdf_derive(s, m, mech, base, t, n, h);
	if (!mech->pParameter || mech->ulParameterLen != sizeof(p))
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(&p, mech->pParameter, sizeof(p));
	kdf_md = x963_md(p.kdf, &kdf_ok);
	/* the null KDF takes no shared data (PKCS#11 3.0, 2.3.7) */
	if (!kdf_ok || (!kdf_md && p.ulSharedDataLen) ||
	    (p.ulSharedDataLen && !p.pSharedData) ||
	    p.ulSharedDataLen > DERIVE_MAX_DATA || !p.pPublicData ||
	    !p.ulPublicDataLen || p.ulPublicDataLen > 256)
		return CKR_MECHANISM_PARAM_INVALID;
	if ((rv = w11_tmpl_check(t, n)) ||
	    (rv = w11_tmpl_ulong(t, n, CKA_CLASS, &cls)) ||
	    (rv = w11_tmpl_ulong(t, n, CKA_KEY_TYPE, &kt)) ||
	    (rv = w11_tmpl_ulong(t, n, CKA_VALUE_LEN, &want)) ||
	    (rv = w11_tmpl_bool(t, n, CKA_TOKEN, &token)) ||
	    (rv = w11_tmpl_bool(t, n, CKA_PRIVATE, &priv)))
		return rv;
	if (cls != CKO_SECRET_KEY ||
	    (kt != CKK_GENERIC_SECRET && kt != CKK_AES && kt != CKK_DES3 &&
	     kt != CKK_HKDF))
		return CKR_TEMPLATE_INCONSISTENT;
	if ((rv = w11_may_create(s, token, priv)) != CKR_OK)
		return rv;
	/* the base key as for a signature, with CKA_DERIVE */
	op.kind = W11_OP_SIGN;
	op.setup = NULL;
	{
		w11_token *tok = s->tok;
		w11_obj *o;

		/* as every operation init (w11_op_start()) */
		w11_token_check(tok);
		pthread_mutex_lock(&tok->lock);
		o = w11_token_find(tok, base);
		if (!o || !o->km || o->cls != CKO_PRIVATE_KEY)
			rv = CKR_KEY_HANDLE_INVALID;
		else if (!w11_obj_visible(tok, o))
			rv = CKR_USER_NOT_LOGGED_IN;
		else if (o->km->ktype != CKK_EC)
			rv = CKR_KEY_TYPE_INCONSISTENT;
		else if (!w11_attrs_is_true(&o->attrs, CKA_DERIVE))
			rv = CKR_KEY_FUNCTION_NOT_PERMITTED;
		else if (!w11_mech_allowed(o, m->type))
			rv = CKR_MECHANISM_INVALID;
		else
			op.km = w11_keymat_ref(o->km);
		pthread_mutex_unlock(&tok->lock);
	}
	if (rv != CKR_OK)
		goto done;
	if ((rv = w11_keymat_get(op.km, NULL, 0, &op.pkey, NULL, NULL)) !=
	    CKR_OK ||
	    (rv = peer_key(&peer, op.pkey, &p)) != CKR_OK ||
	    (rv = ecdh(&secret, &slen, op.pkey, peer)) != CKR_OK)
		goto done;
	if (!want)
		want = kt == CKK_AES ? (slen >= 32 ? 32 : 16)
		       : kt == CKK_DES3 ? 24 : slen;
	/* the null KDF gives at most the shared secret */
	if ((!kdf_md && want > slen) || !w11_secret_len_ok(kt, want)) {
		rv = CKR_TEMPLATE_INCONSISTENT;
		goto done;
	}
	if (kdf_md) {
		if (!(out = OPENSSL_malloc(want))) {
			rv = CKR_HOST_MEMORY;
			goto done;
		}
		if ((rv = x963(out, want, kdf_md, secret, slen, p.pSharedData,
			       p.ulSharedDataLen)) != CKR_OK)
			goto done;
	}
	rv = token ? w11_token_secret(s, kt, out ? out : secret, want, t, n,
				      CK_UNAVAILABLE_INFORMATION, h)
		   : w11_session_secret(s, kt, out ? out : secret, want, t, n,
					CK_UNAVAILABLE_INFORMATION, h);
done:
	OPENSSL_clear_free(out, want);
	OPENSSL_clear_free(secret, slen);
	EVP_PKEY_free(peer);
	w11_op_end(&op);
	return rv;
}

CK_RV C_DeriveKey(CK_SESSION_HANDLE hs, CK_MECHANISM_PTR m,
		  CK_OBJECT_HANDLE base, CK_ATTRIBUTE_PTR t, CK_ULONG n,
		  CK_OBJECT_HANDLE_PTR h)
{
	w11_session *s;

	W11_SESSION_CALL(hs, s, derive_key(s, m, base, t, n, h));
}
