/*
 * C_Digest* (SHA-1, SHA-224, SHA-256, SHA-384, SHA-512) and
 * C_GenerateRandom (OpenSSL's generator).
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "p11.h"

static CK_RV digest_init(w11_session *s, CK_MECHANISM_PTR mech)
{
	w11_op *op = &s->op[W11_OP_DIGEST];
	const w11_mech *m;

	if (!mech)
		return CKR_ARGUMENTS_BAD;
	if (op->active)
		return CKR_OPERATION_ACTIVE;
	if (!(m = w11_mech_find(mech->mechanism)) || m->kind != W11_K_DIGEST)
		return CKR_MECHANISM_INVALID;
	if (mech->ulParameterLen)
		return CKR_MECHANISM_PARAM_INVALID;
	op->kind = W11_OP_DIGEST;
	op->m = m;
	if (!(op->mdctx = EVP_MD_CTX_new()) ||
	    !EVP_DigestInit_ex(op->mdctx, w11_md(m->md), NULL)) {
		w11_op_end(op);
		return CKR_HOST_MEMORY;
	}
	op->active = 1;
	return CKR_OK;
}

CK_RV C_DigestInit(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, digest_init(s, m));
}

/* The size query and buffer check of C_Digest and C_DigestFinal; the
 * operation ends unless the answer was a length. */
static CK_RV digest_out(w11_op *op, CK_BYTE_PTR in, CK_ULONG n, int final,
			CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	size_t need;
	unsigned int got = 0;
	CK_RV rv = CKR_OK;

	if (!op->active)
		return CKR_OPERATION_NOT_INITIALIZED;
	if (!out_len || (!final && !in && n)) {
		w11_op_end(op);
		return CKR_ARGUMENTS_BAD;
	}
	if (!final && op->multi) {
		w11_op_end(op);
		return CKR_OPERATION_ACTIVE;
	}
	need = (size_t)EVP_MD_get_size(EVP_MD_CTX_get0_md(op->mdctx));
	if (!out) {
		*out_len = need;
		return CKR_OK;
	}
	if (*out_len < need) {
		*out_len = need;
		return CKR_BUFFER_TOO_SMALL;
	}
	if ((!final && n && !EVP_DigestUpdate(op->mdctx, in, n)) ||
	    !EVP_DigestFinal_ex(op->mdctx, out, &got))
		rv = CKR_FUNCTION_FAILED;
	else
		*out_len = got;
	w11_op_end(op);
	return rv;
}

CK_RV C_Digest(CK_SESSION_HANDLE h, CK_BYTE_PTR in, CK_ULONG n,
	       CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	w11_session *s;

	W11_SESSION_CALL(h, s,
			 digest_out(&s->op[W11_OP_DIGEST], in, n, 0, out,
				    out_len));
}

static CK_RV digest_update(w11_op *op, const void *p, size_t n)
{
	if (!op->active)
		return CKR_OPERATION_NOT_INITIALIZED;
	if (!p && n) {
		w11_op_end(op);
		return CKR_ARGUMENTS_BAD;
	}
	op->multi = 1;
	if (n && !EVP_DigestUpdate(op->mdctx, p, n)) {
		w11_op_end(op);
		return CKR_FUNCTION_FAILED;
	}
	return CKR_OK;
}

CK_RV C_DigestUpdate(CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG n)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, digest_update(&s->op[W11_OP_DIGEST], p, n));
}

/* The value of a secret key goes into the digest: a session key, or a
 * token key decrypted with the login's PIN. */
static CK_RV digest_key(w11_session *s, CK_OBJECT_HANDLE k)
{
	w11_op *op = &s->op[W11_OP_DIGEST];
	w11_token *t = s->tok;
	w11_keymat *km = NULL;
	unsigned char *sec = NULL;
	size_t sec_len = 0;
	w11_obj *o;
	CK_RV rv;

	if (!op->active)
		return CKR_OPERATION_NOT_INITIALIZED;
	pthread_mutex_lock(&t->lock);
	o = w11_token_find(t, k);
	if (!o || !w11_obj_visible(t, o))
		rv = CKR_KEY_HANDLE_INVALID;
	else if (o->cls != CKO_SECRET_KEY || !o->km)
		rv = CKR_KEY_INDIGESTIBLE;
	else {
		km = w11_keymat_ref(o->km);
		rv = CKR_OK;
	}
	pthread_mutex_unlock(&t->lock);
	if (rv == CKR_OK)
		rv = w11_keymat_get(km, NULL, 0, NULL, &sec, &sec_len);
	if (rv == CKR_USER_NOT_LOGGED_IN && km &&
	    (km->always_auth == 1 || km->force_auth))
		rv = CKR_KEY_INDIGESTIBLE;
	if (rv == CKR_OK)
		rv = digest_update(op, sec, sec_len);
	else
		w11_op_end(op);
	OPENSSL_clear_free(sec, sec_len);
	w11_keymat_unref(km);
	return rv;
}

CK_RV C_DigestKey(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE k)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, digest_key(s, k));
}

CK_RV C_DigestFinal(CK_SESSION_HANDLE h, CK_BYTE_PTR out, CK_ULONG_PTR n)
{
	w11_session *s;

	W11_SESSION_CALL(h, s,
			 digest_out(&s->op[W11_OP_DIGEST], NULL, 0, 1, out, n));
}

static CK_RV random_bytes(CK_BYTE_PTR p, CK_ULONG n)
{
	if (!p && n)
		return CKR_ARGUMENTS_BAD;
	while (n) {
		int chunk = n > (1u << 30) ? (1 << 30) : (int)n;

		if (RAND_bytes_ex(w11_libctx, p, chunk, 0) != 1)
			return CKR_FUNCTION_FAILED;
		p += chunk;
		n -= (CK_ULONG)chunk;
	}
	return CKR_OK;
}

CK_RV C_GenerateRandom(CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG n)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, random_bytes(p, n));
}
