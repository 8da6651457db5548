/*
 * C_Encrypt* and C_Decrypt*: RSA PKCS#1 v1.5 and OAEP (single-part), AES
 * in ECB, CBC, CBC with PKCS#7 padding, CTR and GCM, Triple DES in ECB,
 * CBC and CBC with padding (single- and multi-part), and AES key wrap
 * (RFC 3394, RFC 5649; single-part), computed by OpenSSL.
 *
 * Output lengths follow PKCS#11's convention exactly: a NULL buffer asks
 * for the length and changes nothing; a buffer too small gets
 * CKR_BUFFER_TOO_SMALL with the length needed, and changes nothing.  So
 * each call works out the exact length first (the module mirrors what
 * OpenSSL holds back in block modes), and where only the decryption
 * itself can tell (RSA, CBC_PAD's padding) it decrypts into a copy.
 *
 * GCM decryption returns no plaintext before the tag has been checked:
 * C_DecryptUpdate collects the ciphertext, C_DecryptFinal checks and
 * returns it all.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/rsa.h>

#include "p11.h"

#define AES_BLOCK 16 /* the largest block: AES's */

/* A symmetric cipher (AES, DES3), else RSA. */
static int is_aes(const w11_mech *m)
{
	return m->ktype == CKK_AES || m->ktype == CKK_DES3;
}

/* The block size of the operation's cipher. */
static size_t blk(const w11_op *op)
{
	return op->m->ktype == CKK_DES3 ? 8 : AES_BLOCK;
}

static int is_kw(const w11_mech *m)
{
	return m->kind == W11_K_AES_KW || m->kind == W11_K_AES_KWP;
}

static int is_dec(const w11_op *op)
{
	return op->kind == W11_OP_DECRYPT;
}

/* ---- parameters ----------------------------------------------------------- */

static CK_RV oaep_params(const CK_MECHANISM *mech, w11_op *op)
{
	CK_RSA_PKCS_OAEP_PARAMS p;

	if (!mech->pParameter || mech->ulParameterLen != sizeof(p))
		return CKR_MECHANISM_PARAM_INVALID;
	memcpy(&p, mech->pParameter, sizeof(p));
	if (!w11_md_of_ckm(p.hashAlg) || !w11_md_of_mgf(p.mgf))
		return CKR_MECHANISM_PARAM_INVALID;
	if (p.source != 0 && p.source != CKZ_DATA_SPECIFIED)
		return CKR_MECHANISM_PARAM_INVALID;
	if (p.ulSourceDataLen) {
		if (!p.pSourceData || p.ulSourceDataLen > 65536)
			return CKR_MECHANISM_PARAM_INVALID;
		if (!(op->aad = OPENSSL_memdup(p.pSourceData,
					       p.ulSourceDataLen)))
			return CKR_HOST_MEMORY;
		op->aad_len = p.ulSourceDataLen;
	}
	p.pSourceData = NULL;
	memcpy(op->param, &p, sizeof(p));
	op->param_len = sizeof(p);
	return CKR_OK;
}

static CK_RV aes_params(const w11_mech *m, const CK_MECHANISM *mech,
			w11_op *op)
{
	CK_AES_CTR_PARAMS ctr;
	CK_GCM_PARAMS g;

	size_t bs = m->ktype == CKK_DES3 ? 8 : AES_BLOCK;

	switch (m->kind) {
	case W11_K_AES_ECB:
		return mech->ulParameterLen ? CKR_MECHANISM_PARAM_INVALID
					    : CKR_OK;
	case W11_K_AES_CBC:
	case W11_K_AES_CBC_PAD:
		if (!mech->pParameter || mech->ulParameterLen != bs)
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(op->param, mech->pParameter, bs);
		op->param_len = bs;
		return CKR_OK;
	case W11_K_AES_KW:
	case W11_K_AES_KWP:
		return w11_kw_params(m, mech, op->param, &op->param_len);
	case W11_K_AES_CTR:
		if (!mech->pParameter || mech->ulParameterLen != sizeof(ctr))
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(&ctr, mech->pParameter, sizeof(ctr));
		/* OpenSSL counts with the whole block: counters narrower
		 * than 128 bits behave alike until they would wrap. */
		if (ctr.ulCounterBits == 0 || ctr.ulCounterBits > 128)
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(op->param, ctr.cb, AES_BLOCK);
		op->param_len = AES_BLOCK;
		return CKR_OK;
	case W11_K_AES_GCM:
		if (!mech->pParameter || mech->ulParameterLen != sizeof(g))
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(&g, mech->pParameter, sizeof(g));
		if (!g.pIv || g.ulIvLen == 0 || g.ulIvLen > sizeof(op->param) ||
		    g.ulTagBits % 8 || g.ulTagBits < 32 || g.ulTagBits > 128 ||
		    (g.ulAADLen && !g.pAAD) || g.ulAADLen > (1UL << 24))
			return CKR_MECHANISM_PARAM_INVALID;
		memcpy(op->param, g.pIv, g.ulIvLen);
		op->param_len = g.ulIvLen;
		op->tag_len = g.ulTagBits / 8;
		if (g.ulAADLen) {
			if (!(op->aad = OPENSSL_memdup(g.pAAD, g.ulAADLen)))
				return CKR_HOST_MEMORY;
			op->aad_len = g.ulAADLen;
		}
		return CKR_OK;
	default:
		return CKR_MECHANISM_INVALID;
	}
}

/* ---- set-up ----------------------------------------------------------------- */

static CK_RV rsa_setup(w11_op *op)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(w11_libctx, op->pkey, NULL);
	int ok;

	if (!c)
		return CKR_HOST_MEMORY;
	ok = (is_dec(op) ? EVP_PKEY_decrypt_init(c) : EVP_PKEY_encrypt_init(c)) >
	     0;
	if (ok && op->m->kind == W11_K_RSA_PKCS) {
		ok = EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_PADDING) > 0;
	} else if (ok) {
		CK_RSA_PKCS_OAEP_PARAMS p;

		memcpy(&p, op->param, sizeof(p));
		ok = EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) >
			     0 &&
		     EVP_PKEY_CTX_set_rsa_oaep_md(c, w11_md_of_ckm(p.hashAlg)) >
			     0 &&
		     EVP_PKEY_CTX_set_rsa_mgf1_md(c, w11_md_of_mgf(p.mgf)) > 0;
		if (ok && op->aad_len) {
			unsigned char *l = OPENSSL_memdup(op->aad, op->aad_len);

			ok = l && EVP_PKEY_CTX_set0_rsa_oaep_label(
					  c, l, (int)op->aad_len) > 0;
			if (!ok)
				OPENSSL_free(l);
		}
	}
	if (!ok) {
		EVP_PKEY_CTX_free(c);
		return CKR_KEY_TYPE_INCONSISTENT;
	}
	op->pctx = c;
	return CKR_OK;
}

static CK_RV aes_setup(w11_op *op)
{
	const EVP_CIPHER *c = w11_cipher(op->m->ktype, op->m->kind,
					 op->sec_len);
	OSSL_PARAM params[2], *pp = NULL;
	size_t ivlen = op->param_len;
	int outl, enc = !is_dec(op);

	if (!c)
		return w11_secret_len_ok(op->m->ktype, op->sec_len)
			       ? CKR_FUNCTION_FAILED
			       : CKR_KEY_SIZE_RANGE;
	if (is_kw(op->m))
		return CKR_OK; /* the whole input at once: w11_kw() */
	if (!(op->cctx = EVP_CIPHER_CTX_new()))
		return CKR_HOST_MEMORY;
	if (op->m->kind == W11_K_AES_GCM) {
		params[0] = OSSL_PARAM_construct_size_t(
			OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen);
		params[1] = OSSL_PARAM_construct_end();
		pp = params;
	}
	if (!EVP_CipherInit_ex2(op->cctx, c, op->sec,
				op->param_len ? op->param : NULL, enc, pp))
		return CKR_FUNCTION_FAILED;
	EVP_CIPHER_CTX_set_padding(op->cctx,
				   op->m->kind == W11_K_AES_CBC_PAD);
	if (op->m->kind == W11_K_AES_GCM && op->aad_len &&
	    !EVP_CipherUpdate(op->cctx, NULL, &outl, op->aad,
			      (int)op->aad_len))
		return CKR_FUNCTION_FAILED;
	return CKR_OK;
}

static CK_RV crypt_setup(w11_session *s, w11_op *op)
{
	(void)s;
	return is_aes(op->m) ? aes_setup(op) : rsa_setup(op);
}

CK_RV w11_crypt_init(w11_session *s, const CK_MECHANISM *mech,
		     CK_OBJECT_HANDLE key, int decrypt)
{
	w11_op *op = &s->op[decrypt ? W11_OP_DECRYPT : W11_OP_ENCRYPT];
	const w11_mech *m;
	CK_RV rv;

	if (!mech)
		return CKR_ARGUMENTS_BAD;
	if (op->active)
		return CKR_OPERATION_ACTIVE;
	if (!(m = w11_mech_find(mech->mechanism)) ||
	    !(m->flags & (decrypt ? CKF_DECRYPT : CKF_ENCRYPT)))
		return CKR_MECHANISM_INVALID;
	op->kind = decrypt ? W11_OP_DECRYPT : W11_OP_ENCRYPT;
	op->setup = crypt_setup;
	if (m->kind == W11_K_RSA_OAEP)
		rv = oaep_params(mech, op);
	else if (m->kind == W11_K_RSA_PKCS)
		rv = mech->ulParameterLen ? CKR_MECHANISM_PARAM_INVALID : CKR_OK;
	else
		rv = aes_params(m, mech, op);
	if (rv == CKR_OK)
		rv = w11_op_start(s, op, m, key,
				  decrypt ? CKA_DECRYPT : CKA_ENCRYPT);
	if (rv != CKR_OK)
		w11_op_end(op);
	return rv;
}

/* ---- lengths ------------------------------------------------------------- */

/* RSA: the input limit of encryption (k - 11, or k - 2 hLen - 2). */
static size_t rsa_max_in(const w11_op *op)
{
	size_t k = (size_t)EVP_PKEY_get_size(op->pkey), h;
	CK_RSA_PKCS_OAEP_PARAMS p;

	if (op->m->kind == W11_K_RSA_PKCS)
		return k > 11 ? k - 11 : 0;
	memcpy(&p, op->param, sizeof(p));
	h = (size_t)EVP_MD_get_size(w11_md_of_ckm(p.hashAlg));
	return k > 2 * h + 2 ? k - 2 * h - 2 : 0;
}

/* What an update of n bytes gives out in a block mode, by OpenSSL's
 * rules: whole blocks, and a CBC_PAD decryption keeps its last one. */
static size_t block_out(const w11_op *op, size_t n, size_t *keep)
{
	size_t bs = blk(op), total = op->pending + n, out = total / bs * bs;

	if (op->m->kind == W11_K_AES_CBC_PAD && is_dec(op) && out &&
	    out == total)
		out -= bs;
	*keep = total - out;
	return out;
}

/* ---- single-part ------------------------------------------------------------ */

static CK_RV out_len_check(size_t need, CK_BYTE_PTR out, CK_ULONG_PTR out_len,
			   int *done)
{
	*done = 1;
	if (!out) {
		*out_len = need;
		return CKR_OK;
	}
	if (*out_len < need) {
		*out_len = need;
		return CKR_BUFFER_TOO_SMALL;
	}
	*done = 0;
	return CKR_OK;
}

static CK_RV rsa_crypt(w11_op *op, const unsigned char *in, size_t n,
		       CK_BYTE_PTR out, CK_ULONG_PTR out_len, int *keep)
{
	size_t k = (size_t)EVP_PKEY_get_size(op->pkey), got = k;
	unsigned char *tmp;
	CK_RV rv;
	int done;

	if (!is_dec(op)) {
		if (n > rsa_max_in(op))
			return CKR_DATA_LEN_RANGE;
		if ((rv = out_len_check(k, out, out_len, &done)) != CKR_OK ||
		    done) {
			*keep = 1;
			return rv;
		}
		if (EVP_PKEY_encrypt(op->pctx, out, &got, in, n) <= 0)
			return CKR_FUNCTION_FAILED;
		*out_len = got;
		return CKR_OK;
	}
	if (n != k)
		return CKR_ENCRYPTED_DATA_LEN_RANGE;
	if (!out) {
		/* an upper bound: the length is known after decryption */
		*out_len = k;
		*keep = 1;
		return CKR_OK;
	}
	if (!(tmp = OPENSSL_malloc(k)))
		return CKR_HOST_MEMORY;
	if (EVP_PKEY_decrypt(op->pctx, tmp, &got, in, n) <= 0) {
		rv = CKR_ENCRYPTED_DATA_INVALID;
	} else if (*out_len < got) {
		*out_len = got;
		*keep = 1;
		rv = CKR_BUFFER_TOO_SMALL;
	} else {
		memcpy(out, tmp, got);
		*out_len = got;
		rv = CKR_OK;
	}
	OPENSSL_clear_free(tmp, k);
	return rv;
}

/* GCM decryption of ct || tag into out (ct_len bytes). */
static CK_RV gcm_open(w11_op *op, const unsigned char *in, size_t n,
		      unsigned char *out)
{
	size_t ct = n - op->tag_len;
	int l1 = 0, l2 = 0;

	if (!EVP_CIPHER_CTX_ctrl(op->cctx, EVP_CTRL_GCM_SET_TAG,
				 (int)op->tag_len, (void *)(in + ct)) ||
	    (ct && !EVP_DecryptUpdate(op->cctx, out, &l1, in, (int)ct)) ||
	    EVP_DecryptFinal_ex(op->cctx, out + l1, &l2) <= 0) {
		OPENSSL_cleanse(out, ct);
		return CKR_ENCRYPTED_DATA_INVALID;
	}
	return CKR_OK;
}

/* Key wrap as C_Encrypt / C_Decrypt: the whole input at once. */
static CK_RV kw_crypt(w11_op *op, const unsigned char *in, size_t n,
		      CK_BYTE_PTR out, CK_ULONG_PTR out_len, int *keep)
{
	int dec = is_dec(op);
	size_t need, got;
	unsigned char *tmp;
	CK_RV rv;

	if ((rv = w11_kw_len(op->m, dec, n, &need)) != CKR_OK)
		return rv == CKR_WRAPPED_KEY_LEN_RANGE
			       ? CKR_ENCRYPTED_DATA_LEN_RANGE
			       : rv == CKR_KEY_SIZE_RANGE ? CKR_DATA_LEN_RANGE
							  : rv;
	if (!out || !dec || op->m->kind == W11_K_AES_KW) {
		/* the exact length (an upper bound for an unpadded KWP) */
		if ((rv = out_len_check(need, out, out_len, keep)) != CKR_OK ||
		    *keep)
			return rv;
		got = need;
		rv = w11_kw(op->m, !dec, op->sec, op->sec_len, op->param,
			    op->param_len, in, n, out, &got);
		if (rv == CKR_OK)
			*out_len = got;
		return rv == CKR_WRAPPED_KEY_INVALID
			       ? CKR_ENCRYPTED_DATA_INVALID
			       : rv;
	}
	/* KWP decryption: its length is known once decrypted */
	if (!(tmp = OPENSSL_malloc(need ? need : 1)))
		return CKR_HOST_MEMORY;
	got = need;
	rv = w11_kw(op->m, 0, op->sec, op->sec_len, op->param, op->param_len,
		    in, n, tmp, &got);
	if (rv == CKR_WRAPPED_KEY_INVALID) {
		rv = CKR_ENCRYPTED_DATA_INVALID;
	} else if (rv == CKR_OK && *out_len < got) {
		*out_len = got;
		*keep = 1;
		rv = CKR_BUFFER_TOO_SMALL;
	} else if (rv == CKR_OK) {
		memcpy(out, tmp, got);
		*out_len = got;
	}
	OPENSSL_clear_free(tmp, need ? need : 1);
	return rv;
}

static CK_RV aes_crypt(w11_op *op, const unsigned char *in, size_t n,
		       CK_BYTE_PTR out, CK_ULONG_PTR out_len, int *keep)
{
	int kind = op->m->kind, dec = is_dec(op), l1 = 0, l2 = 0, done;
	size_t need, bs = blk(op);
	CK_RV rv;

	if (n > 0x7fffff00UL)
		return dec ? CKR_ENCRYPTED_DATA_LEN_RANGE : CKR_DATA_LEN_RANGE;
	if (is_kw(op->m))
		return kw_crypt(op, in, n, out, out_len, keep);
	switch (kind) {
	case W11_K_AES_ECB:
	case W11_K_AES_CBC:
		if (n % bs)
			return dec ? CKR_ENCRYPTED_DATA_LEN_RANGE
				   : CKR_DATA_LEN_RANGE;
		need = n;
		break;
	case W11_K_AES_CBC_PAD:
		if (dec && (n == 0 || n % bs))
			return CKR_ENCRYPTED_DATA_LEN_RANGE;
		need = dec ? n : (n / bs + 1) * bs;
		break;
	case W11_K_AES_CTR:
		need = n;
		break;
	default: /* GCM */
		if (dec && n < op->tag_len)
			return CKR_ENCRYPTED_DATA_LEN_RANGE;
		need = dec ? n - op->tag_len : n + op->tag_len;
		break;
	}
	if (kind == W11_K_AES_CBC_PAD && dec && out && *out_len < need) {
		/* the padding decides: find out on a copy of the context */
		EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
		unsigned char *tmp = OPENSSL_malloc(n + AES_BLOCK);
		/* (n + one block of any of the ciphers) */

		rv = CKR_HOST_MEMORY;
		if (c && tmp && EVP_CIPHER_CTX_copy(c, op->cctx)) {
			if (EVP_DecryptUpdate(c, tmp, &l1, in, (int)n) &&
			    EVP_DecryptFinal_ex(c, tmp + l1, &l2) > 0) {
				need = (size_t)(l1 + l2);
				rv = CKR_OK;
			} else {
				rv = CKR_ENCRYPTED_DATA_INVALID;
			}
		}
		EVP_CIPHER_CTX_free(c);
		OPENSSL_clear_free(tmp, n + AES_BLOCK);
		if (rv != CKR_OK)
			return rv;
	}
	if ((rv = out_len_check(need, out, out_len, &done)) != CKR_OK || done) {
		*keep = 1;
		return rv;
	}
	if (kind == W11_K_AES_GCM && dec) {
		if ((rv = gcm_open(op, in, n, out)) == CKR_OK)
			*out_len = need;
		return rv;
	}
	if ((n && !EVP_CipherUpdate(op->cctx, out, &l1, in, (int)n)) ||
	    EVP_CipherFinal_ex(op->cctx, out + l1, &l2) <= 0)
		return dec ? CKR_ENCRYPTED_DATA_INVALID : CKR_FUNCTION_FAILED;
	if (kind == W11_K_AES_GCM &&
	    !EVP_CIPHER_CTX_ctrl(op->cctx, EVP_CTRL_GCM_GET_TAG,
				 (int)op->tag_len, out + l1 + l2))
		return CKR_FUNCTION_FAILED;
	*out_len = (CK_ULONG)(l1 + l2) + (kind == W11_K_AES_GCM && !dec
						  ? op->tag_len
						  : 0);
	return CKR_OK;
}

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

static CK_RV crypt_once(w11_session *s, int dec, CK_BYTE_PTR in, CK_ULONG n,
			CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	w11_op *op = &s->op[dec ? W11_OP_DECRYPT : W11_OP_ENCRYPT];
	int keep = 0;
	CK_RV rv;

	if ((rv = op_ready(op)) != CKR_OK)
		return rv;
	if ((!in && n) || !out_len)
		rv = CKR_ARGUMENTS_BAD;
	else if (op->multi)
		rv = CKR_OPERATION_ACTIVE;
	else if (is_aes(op->m))
		rv = aes_crypt(op, in, n, out, out_len, &keep);
	else
		rv = rsa_crypt(op, in, n, out, out_len, &keep);
	if (!keep)
		w11_op_end(op);
	return rv;
}

/* ---- multi-part ------------------------------------------------------------ */

static CK_RV crypt_update(w11_session *s, int dec, CK_BYTE_PTR in, CK_ULONG n,
			  CK_BYTE_PTR out, CK_ULONG_PTR out_len)
{
	w11_op *op = &s->op[dec ? W11_OP_DECRYPT : W11_OP_ENCRYPT];
	size_t need, keep_n = 0;
	int l = 0, done;
	CK_RV rv;

	if ((rv = op_ready(op)) != CKR_OK)
		return rv;
	if ((!in && n) || !out_len || n > 0x7fffff00UL) {
		rv = !out_len || (!in && n) ? CKR_ARGUMENTS_BAD
					    : CKR_DATA_LEN_RANGE;
		goto fail;
	}
	if (!op->m->multipart) {
		rv = CKR_FUNCTION_NOT_SUPPORTED;
		goto fail;
	}
	switch (op->m->kind) {
	case W11_K_AES_ECB:
	case W11_K_AES_CBC:
	case W11_K_AES_CBC_PAD:
		need = block_out(op, n, &keep_n);
		break;
	case W11_K_AES_GCM:
		need = dec ? 0 : n;
		break;
	default: /* CTR */
		need = n;
		break;
	}
	if ((rv = out_len_check(need, out, out_len, &done)) != CKR_OK || done)
		return rv;
	op->multi = 1;
	if (op->m->kind == W11_K_AES_GCM && dec) {
		if ((rv = w11_op_append(op, in, n)) != CKR_OK)
			goto fail;
		*out_len = 0;
		return CKR_OK;
	}
	if (n && !EVP_CipherUpdate(op->cctx, out, &l, in, (int)n)) {
		rv = CKR_FUNCTION_FAILED;
		goto fail;
	}
	op->pending = keep_n;
	*out_len = (CK_ULONG)l;
	return CKR_OK;
fail:
	w11_op_end(op);
	return rv;
}

static CK_RV crypt_final(w11_session *s, int dec, CK_BYTE_PTR out,
			 CK_ULONG_PTR out_len)
{
	w11_op *op = &s->op[dec ? W11_OP_DECRYPT : W11_OP_ENCRYPT];
	unsigned char last[AES_BLOCK];
	size_t need;
	int l = 0, done;
	CK_RV rv;

	if ((rv = op_ready(op)) != CKR_OK)
		return rv;
	if (!out_len) {
		rv = CKR_ARGUMENTS_BAD;
		goto end;
	}
	if (!op->m->multipart) {
		rv = CKR_FUNCTION_NOT_SUPPORTED;
		goto end;
	}
	switch (op->m->kind) {
	case W11_K_AES_ECB:
	case W11_K_AES_CBC:
		if (op->pending) {
			rv = dec ? CKR_ENCRYPTED_DATA_LEN_RANGE
				 : CKR_DATA_LEN_RANGE;
			goto end;
		}
		need = 0;
		break;
	case W11_K_AES_CBC_PAD:
		if (!dec) {
			need = blk(op);
			break;
		}
		if (op->pending != blk(op)) {
			rv = CKR_ENCRYPTED_DATA_LEN_RANGE;
			goto end;
		}
		/* the last block, unpadded, on a copy of the context */
		{
			EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

			rv = CKR_ENCRYPTED_DATA_INVALID;
			if (c && EVP_CIPHER_CTX_copy(c, op->cctx) &&
			    EVP_DecryptFinal_ex(c, last, &l) > 0)
				rv = CKR_OK;
			EVP_CIPHER_CTX_free(c);
			if (rv != CKR_OK)
				goto end;
			need = (size_t)l;
		}
		break;
	case W11_K_AES_GCM:
		if (dec && op->len < op->tag_len) {
			rv = CKR_ENCRYPTED_DATA_LEN_RANGE;
			goto end;
		}
		need = dec ? op->len - op->tag_len : op->tag_len;
		break;
	default:
		need = 0;
		break;
	}
	if ((rv = out_len_check(need, out, out_len, &done)) != CKR_OK || done) {
		OPENSSL_cleanse(last, sizeof(last));
		return rv;
	}
	if (op->m->kind == W11_K_AES_GCM && dec) {
		rv = gcm_open(op, op->buf, op->len, out);
	} else if (op->m->kind == W11_K_AES_CBC_PAD && dec) {
		memcpy(out, last, need);
	} else if (EVP_CipherFinal_ex(op->cctx, out, &l) <= 0) {
		rv = CKR_FUNCTION_FAILED;
	} else if (op->m->kind == W11_K_AES_GCM &&
		   !EVP_CIPHER_CTX_ctrl(op->cctx, EVP_CTRL_GCM_GET_TAG,
					(int)op->tag_len, out + l)) {
		rv = CKR_FUNCTION_FAILED;
	}
	if (rv == CKR_OK)
		*out_len = need;
end:
	OPENSSL_cleanse(last, sizeof(last));
	w11_op_end(op);
	return rv;
}

/* ---- entry points -------------------------------------------------------- */

CK_RV C_EncryptInit(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m,
		    CK_OBJECT_HANDLE k)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, w11_crypt_init(s, m, k, 0));
}

CK_RV C_Encrypt(CK_SESSION_HANDLE h, CK_BYTE_PTR in, CK_ULONG n,
		CK_BYTE_PTR out, CK_ULONG_PTR on)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, crypt_once(s, 0, in, n, out, on));
}

CK_RV C_EncryptUpdate(CK_SESSION_HANDLE h, CK_BYTE_PTR in, CK_ULONG n,
		      CK_BYTE_PTR out, CK_ULONG_PTR on)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, crypt_update(s, 0, in, n, out, on));
}

CK_RV C_EncryptFinal(CK_SESSION_HANDLE h, CK_BYTE_PTR out, CK_ULONG_PTR on)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, crypt_final(s, 0, out, on));
}

CK_RV C_DecryptInit(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m,
		    CK_OBJECT_HANDLE k)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, w11_crypt_init(s, m, k, 1));
}

CK_RV C_Decrypt(CK_SESSION_HANDLE h, CK_BYTE_PTR in, CK_ULONG n,
		CK_BYTE_PTR out, CK_ULONG_PTR on)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, crypt_once(s, 1, in, n, out, on));
}

CK_RV C_DecryptUpdate(CK_SESSION_HANDLE h, CK_BYTE_PTR in, CK_ULONG n,
		      CK_BYTE_PTR out, CK_ULONG_PTR on)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, crypt_update(s, 1, in, n, out, on));
}

CK_RV C_DecryptFinal(CK_SESSION_HANDLE h, CK_BYTE_PTR out, CK_ULONG_PTR on)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, crypt_final(s, 1, out, on));
}
