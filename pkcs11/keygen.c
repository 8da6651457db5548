/*
 * C_GenerateKeyPair (RSA, EC on P-256/P-384/P-521, Ed25519, Ed448),
 * C_GenerateKey (AES, DES3 with its parity bits, generic and HKDF
 * secrets) and the self-signed certificate a
 * key pair needs to be a WKS entry.
 *
 * The certificate is what keytool -genkeypair makes: version 3, a random
 * serial, valid for 90 days, signed by the key itself with keytool's
 * default algorithm for it, subject CN=<the key's label>.  Its subject
 * key identifier is the key's CKA_ID (the template's, else the SHA-1 of
 * the public key), which is how the CKA_ID survives in a store that keeps
 * no attributes (the module reads a key's CKA_ID from its certificate).
 */
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "p11.h"

#define CERT_DAYS 90

/* keytool's default signature algorithm for a key. */
static const EVP_MD *sig_md(EVP_PKEY *key)
{
	int bits = EVP_PKEY_get_bits(key);

	switch (w11_pkey_type(key)) {
	case CKK_RSA:
		return w11_md(bits >= 7680 ? "SHA512"
			      : bits >= 3072 ? "SHA384" : "SHA256");
	case CKK_EC:
		return w11_md(bits > 384 ? "SHA512"
			      : bits > 256 ? "SHA384" : "SHA256");
	default:
		return NULL; /* EdDSA */
	}
}

static int add_key_ids(X509 *x, const unsigned char *id, size_t id_len)
{
	ASN1_OCTET_STRING *ski = ASN1_OCTET_STRING_new();
	AUTHORITY_KEYID *aki = AUTHORITY_KEYID_new();
	int ok;

	ok = ski && aki && ASN1_OCTET_STRING_set(ski, id, (int)id_len) &&
	     (aki->keyid = ASN1_OCTET_STRING_dup(ski)) != NULL &&
	     X509_add1_ext_i2d(x, NID_subject_key_identifier, ski, 0,
			       X509V3_ADD_REPLACE) > 0 &&
	     X509_add1_ext_i2d(x, NID_authority_key_identifier, aki, 0,
			       X509V3_ADD_REPLACE) > 0;
	ASN1_OCTET_STRING_free(ski);
	AUTHORITY_KEYID_free(aki);
	return ok;
}

CK_RV w11_self_signed(X509 **out, EVP_PKEY *key, const char *cn,
		      const unsigned char *id, size_t id_len, const X509 *like)
{
	unsigned char kid[20], serial[8];
	X509 *x = NULL;
	X509_NAME *name = NULL;
	BIGNUM *bn = NULL;
	CK_RV rv = CKR_FUNCTION_FAILED;

	*out = NULL;
	if (!id_len) {
		if (w11_key_id(kid, key) != CKR_OK)
			return rv;
		id = kid;
		id_len = sizeof(kid);
	}
	if (!(x = X509_new_ex(w11_libctx, NULL)) || !X509_set_version(x, 2))
		goto done;
	if (like) {
		if (!X509_set_serialNumber(x,
			(ASN1_INTEGER *)X509_get0_serialNumber(like)) ||
		    !X509_set_subject_name(x, X509_get_subject_name(like)) ||
		    !X509_set_issuer_name(x, X509_get_subject_name(like)) ||
		    !X509_set1_notBefore(x, X509_get0_notBefore(like)) ||
		    !X509_set1_notAfter(x, X509_get0_notAfter(like)))
			goto done;
	} else {
		if (RAND_bytes_ex(w11_libctx, serial, sizeof(serial), 0) != 1)
			goto done;
		serial[0] &= 0x7f; /* positive */
		serial[0] |= 0x01;
		if (!(bn = BN_bin2bn(serial, sizeof(serial), NULL)) ||
		    !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) ||
		    !(name = X509_NAME_new()) ||
		    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
						(const unsigned char *)cn, -1,
						-1, 0) ||
		    !X509_set_subject_name(x, name) ||
		    !X509_set_issuer_name(x, name) ||
		    !X509_gmtime_adj(X509_getm_notBefore(x), 0) ||
		    !X509_time_adj_ex(X509_getm_notAfter(x), CERT_DAYS, 0,
				      NULL))
			goto done;
	}
	if (!X509_set_pubkey(x, key) || !add_key_ids(x, id, id_len) ||
	    X509_sign(x, key, sig_md(key)) <= 0)
		goto done;
	*out = x;
	x = NULL;
	rv = CKR_OK;
done:
	X509_free(x);
	X509_NAME_free(name);
	BN_free(bn);
	return rv;
}

/* ---- key generation -------------------------------------------------------- */

static CK_RV gen_pkey(EVP_PKEY **out, const w11_mech *m, const CK_ATTRIBUTE *t,
		      CK_ULONG n)
{
	EVP_PKEY_CTX *c = NULL;
	const CK_ATTRIBUTE *a;
	CK_ULONG bits = 0;
	BIGNUM *e = NULL;
	CK_RV rv;
	int nid, ok = 0;

	*out = NULL;
	switch (m->kind) {
	case W11_K_GEN_RSA:
		if ((rv = w11_tmpl_ulong(t, n, CKA_MODULUS_BITS, &bits)) !=
		    CKR_OK)
			return rv;
		if (!bits)
			return CKR_TEMPLATE_INCOMPLETE;
		if (bits < m->min || bits > m->max)
			return CKR_KEY_SIZE_RANGE;
		if ((a = w11_tmpl(t, n, CKA_PUBLIC_EXPONENT)) &&
		    (!a->pValue || !a->ulValueLen || a->ulValueLen > 8 ||
		     !(e = BN_bin2bn(a->pValue, (int)a->ulValueLen, NULL))))
			return CKR_ATTRIBUTE_VALUE_INVALID;
		if (e && (!BN_is_odd(e) || BN_num_bits(e) < 2)) {
			BN_free(e);
			return CKR_ATTRIBUTE_VALUE_INVALID;
		}
		ok = (c = EVP_PKEY_CTX_new_from_name(w11_libctx, "RSA", NULL)) &&
		     EVP_PKEY_keygen_init(c) > 0 &&
		     EVP_PKEY_CTX_set_rsa_keygen_bits(c, (int)bits) > 0 &&
		     (!e || EVP_PKEY_CTX_set1_rsa_keygen_pubexp(c, e) > 0);
		break;
	case W11_K_GEN_EC:
	case W11_K_GEN_ED:
		if (!(a = w11_tmpl(t, n, CKA_EC_PARAMS)) || !a->pValue)
			return CKR_TEMPLATE_INCOMPLETE;
		nid = w11_curve_from_params(a->pValue, a->ulValueLen);
		if (m->kind == W11_K_GEN_ED) {
			if (nid != NID_ED25519 && nid != NID_ED448)
				return CKR_CURVE_NOT_SUPPORTED;
			ok = (c = EVP_PKEY_CTX_new_from_name(w11_libctx,
				nid == NID_ED25519 ? "ED25519" : "ED448",
				NULL)) &&
			     EVP_PKEY_keygen_init(c) > 0;
			break;
		}
		if (nid != NID_X9_62_prime256v1 && nid != NID_secp384r1 &&
		    nid != NID_secp521r1)
			return CKR_CURVE_NOT_SUPPORTED;
		ok = (c = EVP_PKEY_CTX_new_from_name(w11_libctx, "EC", NULL)) &&
		     EVP_PKEY_keygen_init(c) > 0 &&
		     EVP_PKEY_CTX_set_group_name(c, OBJ_nid2sn(nid)) > 0;
		break;
	default:
		return CKR_MECHANISM_INVALID;
	}
	if (ok)
		ok = EVP_PKEY_keygen(c, out) > 0;
	EVP_PKEY_CTX_free(c);
	BN_free(e);
	return ok ? CKR_OK : CKR_FUNCTION_FAILED;
}

/* A template's CKA_CLASS / CKA_KEY_TYPE, if given, must be the ones
 * generated. */
static CK_RV check_class(const CK_ATTRIBUTE *t, CK_ULONG n,
			 CK_OBJECT_CLASS cls, CK_KEY_TYPE kt)
{
	CK_ULONG v;
	CK_RV rv;

	v = cls;
	if ((rv = w11_tmpl_ulong(t, n, CKA_CLASS, &v)) != CKR_OK)
		return rv;
	if (v != cls)
		return CKR_TEMPLATE_INCONSISTENT;
	v = kt;
	if ((rv = w11_tmpl_ulong(t, n, CKA_KEY_TYPE, &v)) != CKR_OK)
		return rv;
	return v == kt ? CKR_OK : CKR_TEMPLATE_INCONSISTENT;
}

static CK_RV generate_key_pair(w11_session *s, CK_MECHANISM_PTR mech,
			       CK_ATTRIBUTE_PTR pub_t, CK_ULONG pub_n,
			       CK_ATTRIBUTE_PTR priv_t, CK_ULONG priv_n,
			       CK_OBJECT_HANDLE_PTR pub_h,
			       CK_OBJECT_HANDLE_PTR priv_h)
{
	const w11_mech *m;
	EVP_PKEY *pk = NULL;
	int pub_tok = 0, priv_tok = 0, priv_private = 1, pub_private = 0;
	CK_RV rv;

	if (!mech || !pub_h || !priv_h)
		return CKR_ARGUMENTS_BAD;
	if (!(m = w11_mech_find(mech->mechanism)) ||
	    !(m->flags & CKF_GENERATE_KEY_PAIR))
		return CKR_MECHANISM_INVALID;
	if (mech->ulParameterLen)
		return CKR_MECHANISM_PARAM_INVALID;
	if ((rv = w11_tmpl_check(pub_t, pub_n)) ||
	    (rv = w11_tmpl_check(priv_t, priv_n)) ||
	    (rv = check_class(pub_t, pub_n, CKO_PUBLIC_KEY, m->ktype)) ||
	    (rv = check_class(priv_t, priv_n, CKO_PRIVATE_KEY, m->ktype)) ||
	    (rv = w11_tmpl_bool(pub_t, pub_n, CKA_TOKEN, &pub_tok)) ||
	    (rv = w11_tmpl_bool(priv_t, priv_n, CKA_TOKEN, &priv_tok)) ||
	    (rv = w11_tmpl_bool(pub_t, pub_n, CKA_PRIVATE, &pub_private)) ||
	    (rv = w11_tmpl_bool(priv_t, priv_n, CKA_PRIVATE, &priv_private)))
		return rv;
	/* A store keeps a public key only with its private key. */
	if (pub_tok && !priv_tok)
		return CKR_TEMPLATE_INCONSISTENT;
	if ((rv = w11_may_create(s, priv_tok, priv_private || pub_private)) !=
	    CKR_OK)
		return rv;
	/* the key's parameters are in the public key's template (some
	 * programs put them in both) */
	if ((rv = gen_pkey(&pk, m, pub_t, pub_n)) == CKR_TEMPLATE_INCOMPLETE)
		rv = gen_pkey(&pk, m, priv_t, priv_n);
	if (rv != CKR_OK)
		return rv;
	if (!priv_tok)
		rv = w11_session_keypair(s, pk, pub_t, pub_n, priv_t, priv_n,
					 mech->mechanism, pub_h, priv_h);
	else if (pub_tok)
		rv = w11_token_keypair(s, pk, pub_t, pub_n, priv_t, priv_n,
				       mech->mechanism, pub_h, priv_h);
	else if ((rv = w11_token_keypair(s, pk, pub_t, pub_n, priv_t, priv_n,
					 mech->mechanism, NULL, priv_h)) ==
		 CKR_OK)
		/* the token's key with a session public key object */
		rv = w11_session_keypair(s, pk, pub_t, pub_n, NULL, 0,
					 mech->mechanism, pub_h, NULL);
	EVP_PKEY_free(pk);
	W11_LOG("C_GenerateKeyPair 0x%lx: 0x%lx", (unsigned long)m->type,
		(unsigned long)rv);
	return rv;
}

CK_RV C_GenerateKeyPair(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m,
			CK_ATTRIBUTE_PTR pub_t, CK_ULONG pub_n,
			CK_ATTRIBUTE_PTR priv_t, CK_ULONG priv_n,
			CK_OBJECT_HANDLE_PTR pub_h, CK_OBJECT_HANDLE_PTR priv_h)
{
	w11_session *s;

	W11_SESSION_CALL(h, s,
			 generate_key_pair(s, m, pub_t, pub_n, priv_t, priv_n,
					   pub_h, priv_h));
}

static CK_RV generate_key(w11_session *s, CK_MECHANISM_PTR mech,
			  CK_ATTRIBUTE_PTR t, CK_ULONG n,
			  CK_OBJECT_HANDLE_PTR h)
{
	const w11_mech *m;
	unsigned char key[512];
	CK_ULONG len = 0;
	CK_KEY_TYPE kt;
	int token = 0, priv = 1;
	CK_RV rv;

	if (!mech || !h)
		return CKR_ARGUMENTS_BAD;
	if (!(m = w11_mech_find(mech->mechanism)) ||
	    !(m->flags & CKF_GENERATE))
		return CKR_MECHANISM_INVALID;
	if (mech->ulParameterLen)
		return CKR_MECHANISM_PARAM_INVALID;
	kt = m->ktype;
	if ((rv = w11_tmpl_check(t, n)) ||
	    (rv = check_class(t, n, CKO_SECRET_KEY, kt)) ||
	    (rv = w11_tmpl_ulong(t, n, CKA_VALUE_LEN, &len)) ||
	    (rv = w11_tmpl_bool(t, n, CKA_TOKEN, &token)) ||
	    (rv = w11_tmpl_bool(t, n, CKA_PRIVATE, &priv)))
		return rv;
	if (!len && kt == CKK_DES3)
		len = 24; /* its only size */
	if (!len)
		return CKR_TEMPLATE_INCOMPLETE;
	if (len < m->min || len > m->max || !w11_secret_len_ok(kt, len))
		return CKR_ATTRIBUTE_VALUE_INVALID;
	if ((rv = w11_may_create(s, token, priv)) != CKR_OK)
		return rv;
	if (RAND_priv_bytes_ex(w11_libctx, key, len, 0) != 1)
		return CKR_FUNCTION_FAILED;
	if (kt == CKK_DES3)
		w11_des_parity(key, len);
	if (token)
		rv = w11_token_secret(s, kt, key, len, t, n, mech->mechanism,
				      h);
	else
		rv = w11_session_secret(s, kt, key, len, t, n,
					mech->mechanism, h);
	OPENSSL_cleanse(key, sizeof(key));
	return rv;
}

CK_RV C_GenerateKey(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m,
		    CK_ATTRIBUTE_PTR t, CK_ULONG n, CK_OBJECT_HANDLE_PTR out)
{
	w11_session *s;

	W11_SESSION_CALL(h, s, generate_key(s, m, t, n, out));
}
