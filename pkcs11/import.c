/*
 * Keys from templates (C_CreateObject): the components of an RSA, EC or
 * Edwards key as PKCS#11 attributes -> an OpenSSL key.
 */
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>

#include "p11.h"

/* An EC point as CKA_EC_POINT or ECDH's public data carries it: DER
 * OCTET STRING (the specification) or the bare point (what most
 * programs pass to ECDH).  `raw_len` is the bare point's length for the
 * curve (uncompressed), which tells the two apart. */
CK_RV w11_point_bytes(const unsigned char **pt, size_t *pt_len,
		      const unsigned char *p, size_t n, size_t raw_len)
{
	if (!p || !n)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if (n != raw_len && n > 2 && p[0] == 0x04) {
		const unsigned char *q = p;
		long len;
		int tag, cls;

		if (!(ASN1_get_object(&q, &len, &tag, &cls, (long)n) & 0x80) &&
		    tag == V_ASN1_OCTET_STRING && cls == V_ASN1_UNIVERSAL &&
		    q + len == p + n) {
			*pt = q;
			*pt_len = (size_t)len;
			return CKR_OK;
		}
	}
	*pt = p;
	*pt_len = n;
	return CKR_OK;
}

/* Field size in bytes of a named curve, 0 if unknown. */
size_t w11_curve_bytes(int nid)
{
	EC_GROUP *g;
	size_t n = 0;

	if (nid == NID_ED25519)
		return 32;
	if (nid == NID_ED448)
		return 57;
	if ((g = EC_GROUP_new_by_curve_name_ex(w11_libctx, NULL, nid)) != NULL) {
		n = ((size_t)EC_GROUP_get_degree(g) + 7) / 8;
		EC_GROUP_free(g);
	}
	return n;
}

static const CK_ATTRIBUTE *need(const CK_ATTRIBUTE *t, CK_ULONG n,
				CK_ATTRIBUTE_TYPE type, CK_RV *rv)
{
	const CK_ATTRIBUTE *a = w11_tmpl(t, n, type);

	if (!a || !a->pValue || !a->ulValueLen) {
		if (*rv == CKR_OK)
			*rv = CKR_TEMPLATE_INCOMPLETE;
		return NULL;
	}
	return a;
}

static int push_bn(OSSL_PARAM_BLD *b, const char *key, const CK_ATTRIBUTE *a,
		   BIGNUM **keep)
{
	BIGNUM *bn;

	if (!a || a->ulValueLen > 2048)
		return 0;
	if (!(bn = BN_bin2bn(a->pValue, (int)a->ulValueLen, NULL)))
		return 0;
	BN_set_flags(bn, BN_FLG_CONSTTIME);
	*keep = bn;
	return OSSL_PARAM_BLD_push_BN(b, key, bn);
}

static CK_RV from_data(EVP_PKEY **out, const char *type, OSSL_PARAM *params,
		       int selection)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(w11_libctx, type, NULL);
	CK_RV rv = CKR_ATTRIBUTE_VALUE_INVALID;

	*out = NULL;
	if (c && EVP_PKEY_fromdata_init(c) > 0 &&
	    EVP_PKEY_fromdata(c, out, selection, params) > 0)
		rv = CKR_OK;
	EVP_PKEY_CTX_free(c);
	return rv;
}

static CK_RV rsa_key(EVP_PKEY **out, int priv, const CK_ATTRIBUTE *t,
		     CK_ULONG n)
{
	static const struct {
		CK_ATTRIBUTE_TYPE type;
		const char *key;
		int required;
	} parts[] = {
		{ CKA_MODULUS, OSSL_PKEY_PARAM_RSA_N, 1 },
		{ CKA_PUBLIC_EXPONENT, OSSL_PKEY_PARAM_RSA_E, 1 },
		{ CKA_PRIVATE_EXPONENT, OSSL_PKEY_PARAM_RSA_D, 2 },
		{ CKA_PRIME_1, OSSL_PKEY_PARAM_RSA_FACTOR1, 0 },
		{ CKA_PRIME_2, OSSL_PKEY_PARAM_RSA_FACTOR2, 0 },
		{ CKA_EXPONENT_1, OSSL_PKEY_PARAM_RSA_EXPONENT1, 0 },
		{ CKA_EXPONENT_2, OSSL_PKEY_PARAM_RSA_EXPONENT2, 0 },
		{ CKA_COEFFICIENT, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, 0 },
	};
	OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	BIGNUM *bn[8] = { 0 };
	size_t crt = 0;
	CK_RV rv = CKR_OK;

	if (!b)
		return CKR_HOST_MEMORY;
	for (size_t i = 0; i < 8 && rv == CKR_OK; i++) {
		const CK_ATTRIBUTE *a;

		if (parts[i].required == 2 && !priv)
			break;
		if (parts[i].required) {
			if (!(a = need(t, n, parts[i].type, &rv)))
				break;
		} else if (!(a = w11_tmpl(t, n, parts[i].type))) {
			continue;
		} else {
			crt++;
		}
		if (!push_bn(b, parts[i].key, a, &bn[i]))
			rv = CKR_ATTRIBUTE_VALUE_INVALID;
	}
	/* the CRT values come all five or not at all */
	if (rv == CKR_OK && crt != 0 && crt != 5)
		rv = CKR_TEMPLATE_INCONSISTENT;
	if (rv == CKR_OK && !(params = OSSL_PARAM_BLD_to_param(b)))
		rv = CKR_HOST_MEMORY;
	if (rv == CKR_OK)
		rv = from_data(out, "RSA", params,
			       priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(b);
	for (size_t i = 0; i < 8; i++)
		BN_clear_free(bn[i]);
	return rv;
}

static CK_RV ec_key(EVP_PKEY **out, int priv, int nid, const CK_ATTRIBUTE *t,
		    CK_ULONG n)
{
	OSSL_PARAM_BLD *b = NULL;
	OSSL_PARAM *params = NULL;
	EC_GROUP *g = NULL;
	EC_POINT *pt = NULL;
	BIGNUM *d = NULL;
	unsigned char pub[160];
	const unsigned char *pp;
	size_t pn = 0, fb = w11_curve_bytes(nid);
	const CK_ATTRIBUTE *a;
	CK_RV rv = CKR_OK;

	if (!(g = EC_GROUP_new_by_curve_name_ex(w11_libctx, NULL, nid)) || !fb)
		return CKR_CURVE_NOT_SUPPORTED;
	if (priv) {
		if (!(a = need(t, n, CKA_VALUE, &rv)))
			goto done;
		if (a->ulValueLen > fb + 1 ||
		    !(d = BN_bin2bn(a->pValue, (int)a->ulValueLen, NULL))) {
			rv = CKR_ATTRIBUTE_VALUE_INVALID;
			goto done;
		}
		BN_set_flags(d, BN_FLG_CONSTTIME);
		if (!(pt = EC_POINT_new(g)) ||
		    !EC_POINT_mul(g, pt, d, NULL, NULL, NULL) ||
		    !(pn = EC_POINT_point2oct(g, pt,
					      POINT_CONVERSION_UNCOMPRESSED, pub,
					      sizeof(pub), NULL))) {
			rv = CKR_ATTRIBUTE_VALUE_INVALID;
			goto done;
		}
		pp = pub;
	} else {
		if (!(a = need(t, n, CKA_EC_POINT, &rv)) ||
		    (rv = w11_point_bytes(&pp, &pn, a->pValue, a->ulValueLen,
					  2 * fb + 1)) != CKR_OK)
			goto done;
	}
	if (!(b = OSSL_PARAM_BLD_new()) ||
	    !OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME,
					     OBJ_nid2sn(nid), 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pp,
					      pn) ||
	    (d && !OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_PRIV_KEY, d)) ||
	    !(params = OSSL_PARAM_BLD_to_param(b))) {
		rv = CKR_HOST_MEMORY;
		goto done;
	}
	rv = from_data(out, "EC", params,
		       priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY);
done:
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(b);
	EC_POINT_free(pt);
	EC_GROUP_free(g);
	BN_clear_free(d);
	OPENSSL_cleanse(pub, sizeof(pub));
	return rv;
}

static CK_RV ed_key(EVP_PKEY **out, int priv, int nid, const CK_ATTRIBUTE *t,
		    CK_ULONG n)
{
	const char *name = nid == NID_ED25519 ? "ED25519" : "ED448";
	size_t fb = w11_curve_bytes(nid), pn;
	const unsigned char *pp;
	const CK_ATTRIBUTE *a;
	CK_RV rv = CKR_OK;

	*out = NULL;
	if (priv) {
		if (!(a = need(t, n, CKA_VALUE, &rv)))
			return rv;
		if (a->ulValueLen != fb)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		*out = EVP_PKEY_new_raw_private_key_ex(w11_libctx, name, NULL,
						       a->pValue, fb);
	} else {
		if (!(a = need(t, n, CKA_EC_POINT, &rv)) ||
		    (rv = w11_point_bytes(&pp, &pn, a->pValue, a->ulValueLen,
					  fb)) != CKR_OK)
			return rv;
		if (pn != fb)
			return CKR_ATTRIBUTE_VALUE_INVALID;
		*out = EVP_PKEY_new_raw_public_key_ex(w11_libctx, name, NULL, pp, pn);
	}
	return *out ? CKR_OK : CKR_ATTRIBUTE_VALUE_INVALID;
}

CK_RV w11_pkey_from_template(EVP_PKEY **out, int priv, CK_KEY_TYPE kt,
			     const CK_ATTRIBUTE *t, CK_ULONG n)
{
	const CK_ATTRIBUTE *a;
	CK_RV rv = CKR_OK;
	int nid;

	*out = NULL;
	switch (kt) {
	case CKK_RSA:
		return rsa_key(out, priv, t, n);
	case CKK_EC:
	case CKK_EC_EDWARDS:
		if (!(a = need(t, n, CKA_EC_PARAMS, &rv)))
			return rv;
		nid = w11_curve_from_params(a->pValue, a->ulValueLen);
		if (nid == NID_undef)
			return CKR_CURVE_NOT_SUPPORTED;
		if ((kt == CKK_EC_EDWARDS) !=
		    (nid == NID_ED25519 || nid == NID_ED448))
			return CKR_TEMPLATE_INCONSISTENT;
		return kt == CKK_EC ? ec_key(out, priv, nid, t, n)
				    : ed_key(out, priv, nid, t, n);
	default:
		return CKR_ATTRIBUTE_VALUE_INVALID;
	}
}

/* A copy holding only the public key. */
CK_RV w11_pkey_public(EVP_PKEY **out, EVP_PKEY *pk)
{
	unsigned char *der = NULL;
	const unsigned char *p;
	int n = i2d_PUBKEY(pk, &der);

	*out = NULL;
	if (n <= 0)
		return CKR_FUNCTION_FAILED;
	p = der;
	*out = d2i_PUBKEY_ex(NULL, &p, n, w11_libctx, NULL);
	OPENSSL_free(der);
	return *out ? CKR_OK : CKR_FUNCTION_FAILED;
}
