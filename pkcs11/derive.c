/*
 * C_DeriveKey: CKM_ECDH1_DERIVE with CKD_NULL (the raw shared secret,
 * truncated to CKA_VALUE_LEN if given) into a new secret key object.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>

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
	int token = 0, priv = 1;
	CK_RV rv;

	memset(&op, 0, sizeof(op));
	if (!mech || !h)
		return CKR_ARGUMENTS_BAD;
	if (!(m = w11_mech_find(mech->mechanism)) || m->kind != W11_K_ECDH)
		return CKR_MECHANISM_INVALID;
	if (!mech->pParameter || mech->ulParameterLen != sizeof(p))
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(&p, mech->pParameter, sizeof(p));
	if (p.kdf != CKD_NULL || p.ulSharedDataLen || !p.pPublicData ||
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
	    (kt != CKK_GENERIC_SECRET && kt != CKK_AES))
		return CKR_TEMPLATE_INCONSISTENT;
	if ((rv = w11_may_create(s, token, priv)) != CKR_OK)
		return rv;
	/* the base key as for a signature, with CKA_DERIVE */
	op.kind = W11_OP_SIGN;
	op.setup = NULL;
	{
		w11_token *tok = s->tok;
		w11_obj *o;

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
		want = kt == CKK_AES ? (slen >= 32 ? 32 : 16) : slen;
	if (want > slen || (kt == CKK_AES && want != 16 && want != 24 &&
			    want != 32)) {
		rv = CKR_TEMPLATE_INCONSISTENT;
		goto done;
	}
	rv = token ? w11_token_secret(s, kt, secret, want, t, n, h)
		   : w11_session_secret(s, kt, secret, want, t, n,
					CK_UNAVAILABLE_INFORMATION, h);
done:
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
