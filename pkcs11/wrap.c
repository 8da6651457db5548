/*
 * C_WrapKey and C_UnwrapKey: AES key wrap (CKM_AES_KEY_WRAP, RFC 3394)
 * and AES key wrap with padding (CKM_AES_KEY_WRAP_PAD, RFC 5649) of
 * secret keys, computed by OpenSSL's AES-*-WRAP and AES-*-WRAP-PAD.
 *
 * What may be wrapped (PKCS#11 3.0, 5.18.6):
 *   - the wrapping key is an AES secret key with CKA_WRAP (the
 *     unwrapping key one with CKA_UNWRAP);
 *   - the key to wrap is a secret key with CKA_EXTRACTABLE true: a token
 *     key never is (object.c; nothing can make it so), so a token key
 *     never leaves the module, sensitive or not, and a session key that
 *     is sensitive leaves only wrapped;
 *   - a key with CKA_WRAP_WITH_TRUSTED only under a CKA_TRUSTED wrapping
 *     key (which no one can make through the module: write.c refuses
 *     CKA_TRUSTED in every template).
 * C_UnwrapKey makes a secret key (AES, generic, DES3, HKDF) from its
 * template, a session key, or a token key (AES, generic, DES3) stored as
 * a new WKS entry; an unwrapped key is neither "always sensitive" nor
 * "never extractable", nor CKA_LOCAL.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "p11.h"

/* Largest key value wrapped or unwrapped (the module's secret keys are
 * at most 512 bytes). */
#define KW_MAX_KEY 4096

CK_RV w11_kw_params(const w11_mech *m, const CK_MECHANISM *mech,
		    unsigned char *iv, size_t *iv_len)
{
	/* an optional initial value: 8 bytes (RFC 3394 2.2.3), 4 bytes
	 * (RFC 5649's alternative initial value's first half) */
	size_t want = m->kind == W11_K_AES_KW ? 8 : 4;

	*iv_len = 0;
	if (!mech->ulParameterLen)
		return CKR_OK;
	if (!mech->pParameter || mech->ulParameterLen != want)
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(iv, mech->pParameter, want);
	*iv_len = want;
	return CKR_OK;
}

CK_RV w11_kw_len(const w11_mech *m, int unwrap, size_t n, size_t *need)
{
	if (m->kind == W11_K_AES_KW) {
		if (!unwrap) {
			if (n < 16 || n % 8 || n > 0x7fffff00UL)
				return CKR_KEY_SIZE_RANGE;
			*need = n + 8;
			return CKR_OK;
		}
		if (n < 24 || n % 8 || n > 0x7fffff00UL)
			return CKR_WRAPPED_KEY_LEN_RANGE;
		*need = n - 8;
		return CKR_OK;
	}
	if (!unwrap) {
		if (n < 1 || n > 0x7fffff00UL)
			return CKR_KEY_SIZE_RANGE;
		*need = (n + 7) / 8 * 8 + 8;
		return CKR_OK;
	}
	if (n < 16 || n % 8 || n > 0x7fffff00UL)
		return CKR_WRAPPED_KEY_LEN_RANGE;
	*need = n - 8; /* at most; the padding says how much less */
	return CKR_OK;
}

CK_RV w11_kw(const w11_mech *m, int wrap, const unsigned char *key,
	     size_t key_len, const unsigned char *iv, size_t iv_len,
	     const unsigned char *in, size_t n, unsigned char *out,
	     size_t *out_len)
{
	const EVP_CIPHER *c = w11_cipher(CKK_AES, m->kind, key_len);
	EVP_CIPHER_CTX *ctx;
	unsigned char *dst;
	size_t need, room;
	int l1 = 0, l2 = 0, ok;
	CK_RV rv;

	if (!c)
		return key_len == 16 || key_len == 24 || key_len == 32
			       ? CKR_FUNCTION_FAILED
			       : CKR_KEY_SIZE_RANGE;
	if ((rv = w11_kw_len(m, !wrap, n, &need)) != CKR_OK)
		return rv;
	if (*out_len < need)
		return CKR_BUFFER_TOO_SMALL;
	/* An unwrap goes through a buffer of the input's length: OpenSSL
	 * wipes that many bytes of its output when the check fails. */
	room = wrap ? need : n;
	if (wrap)
		dst = out;
	else if (!(dst = OPENSSL_malloc(room)))
		return CKR_HOST_MEMORY;
	if (!(ctx = EVP_CIPHER_CTX_new())) {
		if (!wrap)
			OPENSSL_free(dst);
		return CKR_HOST_MEMORY;
	}
	ok = EVP_CipherInit_ex2(ctx, c, key, iv_len ? iv : NULL, wrap, NULL) &&
	     EVP_CipherUpdate(ctx, dst, &l1, in, (int)n) > 0 && l1 >= 0 &&
	     (size_t)l1 <= need &&
	     EVP_CipherFinal_ex(ctx, dst + l1, &l2) > 0 && l2 == 0;
	EVP_CIPHER_CTX_free(ctx);
	if (ok && !wrap)
		memcpy(out, dst, (size_t)l1);
	if (!wrap)
		OPENSSL_clear_free(dst, room);
	if (!ok) {
		OPENSSL_cleanse(out, need);
		return wrap ? CKR_FUNCTION_FAILED : CKR_WRAPPED_KEY_INVALID;
	}
	*out_len = (size_t)l1;
	return CKR_OK;
}

/* The AES key behind handle `h` for wrapping (usage CKA_WRAP) or
 * unwrapping (CKA_UNWRAP) with mechanism m (which its
 * CKA_ALLOWED_MECHANISMS must allow): a reference on its material.  Lock
 * held. */
static CK_RV kw_key(w11_token *t, CK_OBJECT_HANDLE h, const w11_mech *m,
		    int unwrap, w11_keymat **km, w11_obj **obj)
{
	w11_obj *o = w11_token_find(t, h);

	if (!o || !o->km || (o->cls != CKO_SECRET_KEY &&
			     o->cls != CKO_PUBLIC_KEY &&
			     o->cls != CKO_PRIVATE_KEY))
		return unwrap ? CKR_UNWRAPPING_KEY_HANDLE_INVALID
			      : CKR_WRAPPING_KEY_HANDLE_INVALID;
	if (!w11_obj_visible(t, o))
		return CKR_USER_NOT_LOGGED_IN;
	if (o->cls != CKO_SECRET_KEY || o->km->ktype != CKK_AES)
		return unwrap ? CKR_UNWRAPPING_KEY_TYPE_INCONSISTENT
			      : CKR_WRAPPING_KEY_TYPE_INCONSISTENT;
	if (!w11_attrs_is_true(&o->attrs, unwrap ? CKA_UNWRAP : CKA_WRAP))
		return CKR_KEY_FUNCTION_NOT_PERMITTED;
	if (!w11_mech_allowed(o, m->type))
		return CKR_MECHANISM_INVALID;
	*km = w11_keymat_ref(o->km);
	*obj = o;
	return CKR_OK;
}

/* A secret's bytes (sec: free with OPENSSL_clear_free). */
static CK_RV secret_of(w11_keymat *km, unsigned char **sec, size_t *len)
{
	EVP_PKEY *pk = NULL;
	CK_RV rv = w11_keymat_get(km, NULL, 0, &pk, sec, len);

	EVP_PKEY_free(pk);
	if (rv == CKR_OK && !*sec)
		rv = CKR_KEY_HANDLE_INVALID;
	return rv;
}

static CK_RV wrap_key(w11_session *s, CK_MECHANISM_PTR mech,
		      CK_OBJECT_HANDLE wh, CK_OBJECT_HANDLE kh,
		      CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	w11_token *t = s->tok;
	const w11_mech *m;
	w11_keymat *wkm = NULL, *kkm = NULL;
	w11_obj *w = NULL, *k;
	unsigned char iv[8], *wsec = NULL, *ksec = NULL;
	size_t iv_len = 0, wlen = 0, klen = 0, need, got;
	CK_RV rv;

	if (!mech || !out_len)
		return CKR_ARGUMENTS_BAD;
	if (!(m = w11_mech_find(mech->mechanism)) || !(m->flags & CKF_WRAP))
		return CKR_MECHANISM_INVALID;
	if ((rv = w11_kw_params(m, mech, iv, &iv_len)) != CKR_OK)
		return rv;
	/* as every operation init: another program's change is seen */
	w11_token_check(t);
	pthread_mutex_lock(&t->lock);
	rv = kw_key(t, wh, m, 0, &wkm, &w);
	if (rv == CKR_OK) {
		k = w11_token_find(t, kh);
		if (!k || !k->km || (k->cls != CKO_SECRET_KEY &&
				     k->cls != CKO_PRIVATE_KEY &&
				     k->cls != CKO_PUBLIC_KEY))
			rv = CKR_KEY_HANDLE_INVALID;
		else if (!w11_obj_visible(t, k))
			rv = CKR_USER_NOT_LOGGED_IN;
		else if (k->cls != CKO_SECRET_KEY)
			rv = CKR_KEY_NOT_WRAPPABLE; /* secret keys only */
		else if ((k->flags & W11_OF_TOKEN) || k->km->tok ||
			 !w11_attrs_is_true(&k->attrs, CKA_EXTRACTABLE))
			rv = CKR_KEY_UNEXTRACTABLE;
		else if (w11_attrs_is_true(&k->attrs,
					   CKA_WRAP_WITH_TRUSTED) &&
			 !w11_attrs_is_true(&w->attrs, CKA_TRUSTED))
			rv = CKR_KEY_NOT_WRAPPABLE;
		else
			kkm = w11_keymat_ref(k->km);
	}
	pthread_mutex_unlock(&t->lock);
	if (rv != CKR_OK)
		goto done;
	/* a session key: its value is at hand (no PBKDF2) */
	if ((rv = secret_of(kkm, &ksec, &klen)) != CKR_OK)
		goto done;
	if (klen > KW_MAX_KEY) {
		rv = CKR_KEY_SIZE_RANGE;
		goto done;
	}
	if ((rv = w11_kw_len(m, 0, klen, &need)) != CKR_OK)
		goto done;
	if (!out) {
		*out_len = need;
		goto done;
	}
	if (*out_len < need) {
		*out_len = need;
		rv = CKR_BUFFER_TOO_SMALL;
		goto done;
	}
	if ((rv = secret_of(wkm, &wsec, &wlen)) != CKR_OK)
		goto done;
	got = need;
	if ((rv = w11_kw(m, 1, wsec, wlen, iv, iv_len, ksec, klen, out,
			 &got)) == CKR_OK)
		*out_len = got;
	else if (rv == CKR_KEY_SIZE_RANGE)
		rv = CKR_WRAPPING_KEY_SIZE_RANGE;
done:
	OPENSSL_clear_free(wsec, wlen);
	OPENSSL_clear_free(ksec, klen);
	w11_keymat_unref(wkm);
	w11_keymat_unref(kkm);
	OPENSSL_cleanse(iv, sizeof(iv));
	W11_LOG("C_WrapKey 0x%lx: 0x%lx",
		(unsigned long)(mech ? mech->mechanism : 0), (unsigned long)rv);
	return rv;
}

CK_RV C_WrapKey(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE w,
		CK_OBJECT_HANDLE k, CK_BYTE_PTR out, CK_ULONG_PTR n)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, wrap_key(s, m, w, k, out, n));
}

static CK_RV unwrap_key(w11_session *s, CK_MECHANISM_PTR mech,
			CK_OBJECT_HANDLE uh, CK_BYTE_PTR in, CK_ULONG n,
			CK_ATTRIBUTE_PTR t, CK_ULONG tn, CK_OBJECT_HANDLE_PTR h)
{
	w11_token *tok = s->tok;
	const w11_mech *m;
	w11_keymat *ukm = NULL;
	w11_obj *u = NULL;
	unsigned char iv[8], *usec = NULL, *val = NULL;
	size_t iv_len = 0, ulen = 0, need = 0, got;
	CK_OBJECT_CLASS cls = CK_UNAVAILABLE_INFORMATION;
	CK_KEY_TYPE kt = CK_UNAVAILABLE_INFORMATION;
	CK_ULONG vlen = 0;
	int token = 0, priv = 1;
	CK_RV rv;

	if (!mech || !h || (!in && n))
		return CKR_ARGUMENTS_BAD;
	if ((rv = w11_tmpl_check(t, tn)) != CKR_OK)
		return rv;
	if (!(m = w11_mech_find(mech->mechanism)) || !(m->flags & CKF_UNWRAP))
		return CKR_MECHANISM_INVALID;
	if ((rv = w11_kw_params(m, mech, iv, &iv_len)) != CKR_OK)
		return rv;
	if ((rv = w11_tmpl_ulong(t, tn, CKA_CLASS, &cls)) ||
	    (rv = w11_tmpl_ulong(t, tn, CKA_KEY_TYPE, &kt)) ||
	    (rv = w11_tmpl_ulong(t, tn, CKA_VALUE_LEN, &vlen)) ||
	    (rv = w11_tmpl_bool(t, tn, CKA_TOKEN, &token)) ||
	    (rv = w11_tmpl_bool(t, tn, CKA_PRIVATE, &priv)))
		return rv;
	if (cls == CK_UNAVAILABLE_INFORMATION ||
	    kt == CK_UNAVAILABLE_INFORMATION)
		return CKR_TEMPLATE_INCOMPLETE;
	/* secret keys only; the value is what is unwrapped */
	if (cls != CKO_SECRET_KEY || w11_tmpl(t, tn, CKA_VALUE) ||
	    (kt != CKK_AES && kt != CKK_GENERIC_SECRET && kt != CKK_DES3 &&
	     kt != CKK_HKDF) ||
	    (token && !w11_jca_of_ktype(kt)))
		return CKR_TEMPLATE_INCONSISTENT;
	if ((rv = w11_kw_len(m, 1, n, &need)) != CKR_OK)
		return rv;
	if ((rv = w11_may_create(s, token, priv)) != CKR_OK)
		return rv;
	w11_token_check(tok);
	pthread_mutex_lock(&tok->lock);
	rv = kw_key(tok, uh, m, 1, &ukm, &u);
	pthread_mutex_unlock(&tok->lock);
	if (rv != CKR_OK)
		goto done;
	if ((rv = secret_of(ukm, &usec, &ulen)) != CKR_OK)
		goto done;
	if (!(val = OPENSSL_malloc(need ? need : 1))) {
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	got = need;
	if ((rv = w11_kw(m, 0, usec, ulen, iv, iv_len, in, n, val, &got)) !=
	    CKR_OK) {
		if (rv == CKR_KEY_SIZE_RANGE)
			rv = CKR_UNWRAPPING_KEY_SIZE_RANGE;
		goto done;
	}
	if (!w11_secret_len_ok(kt, got)) {
		rv = CKR_WRAPPED_KEY_INVALID;
		goto done;
	}
	if (vlen && vlen != got) {
		rv = CKR_TEMPLATE_INCONSISTENT;
		goto done;
	}
	rv = token ? w11_token_secret(s, kt, val, got, t, tn,
				      CK_UNAVAILABLE_INFORMATION, h)
		   : w11_session_secret(s, kt, val, got, t, tn,
					CK_UNAVAILABLE_INFORMATION, h);
done:
	OPENSSL_clear_free(val, need ? need : 1);
	OPENSSL_clear_free(usec, ulen);
	w11_keymat_unref(ukm);
	OPENSSL_cleanse(iv, sizeof(iv));
	W11_LOG("C_UnwrapKey 0x%lx: 0x%lx", (unsigned long)mech->mechanism,
		(unsigned long)rv);
	return rv;
}

CK_RV C_UnwrapKey(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE u,
		  CK_BYTE_PTR w, CK_ULONG wn, CK_ATTRIBUTE_PTR t, CK_ULONG tn,
		  CK_OBJECT_HANDLE_PTR k)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, unwrap_key(s, m, u, w, wn, t, tn, k));
}
