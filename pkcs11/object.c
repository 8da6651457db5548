/*
 * The object model: what a WKS entry looks like as PKCS#11 objects, one
 * attribute table per kind of object (certificate, public key, private
 * key, secret key), built once when the entry is read.  The attributes
 * are PKCS#11 3.0's; docs/PKCS11.md lists them with their values.
 *
 * Sensitive attributes (a private key's CKA_PRIVATE_EXPONENT .. or
 * CKA_VALUE, a secret key's CKA_VALUE) are never stored in the table:
 * they are read from the decrypted key, for a session key created
 * non-sensitive and extractable only; a token key is always sensitive.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include "p11.h"

void w11_obj_free(w11_obj *o)
{
	if (!o)
		return;
	w11_attrs_free(&o->attrs);
	w11_keymat_unref(o->km);
	free(o->alias);
	free(o);
}

static w11_obj *obj_new(CK_OBJECT_CLASS cls, int role, const char *alias)
{
	w11_obj *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->cls = cls;
	o->role = role;
	o->handle = w11_new_handle();
	if (alias && !(o->alias = strdup(alias))) {
		free(o);
		return NULL;
	}
	return o;
}

/* The identity of a token object across reloads: its role, index and
 * the bytes it shows (certificate, public key, secret's algorithm); the
 * alias is compared apart (token.c), so that a renamed entry keeps its
 * objects. */
static void ident_of(w11_obj *o, const unsigned char *p, size_t n)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned char r = (unsigned char)o->role;
	uint64_t idx = o->chain_index;

	memset(o->ident, 0, sizeof(o->ident));
	if (!c || !EVP_DigestInit_ex(c, w11_md("SHA256"), NULL) ||
	    !EVP_DigestUpdate(c, &r, 1) ||
	    !EVP_DigestUpdate(c, &idx, sizeof(idx)) ||
	    (p && !EVP_DigestUpdate(c, p, n)) ||
	    !EVP_DigestFinal_ex(c, o->ident, NULL))
		memset(o->ident, 0, sizeof(o->ident));
	EVP_MD_CTX_free(c);
}

static CK_RV common(w11_obj *o, const char *label, int modifiable,
		    int destroyable)
{
	char uid[40];
	CK_RV rv;

	if (o->flags & W11_OF_TOKEN) {
		/* Unique per object: the same certificate in two entries'
		 * chains has one identity but two aliases.  (So a rename
		 * gives new ids: a WKS entry has no place to keep one.) */
		unsigned char h[32], *b;
		const char *al = o->alias ? o->alias : "";
		size_t an = strlen(al) + 1;
		int ok;

		if (!(b = malloc(sizeof(o->ident) + an)))
			return CKR_HOST_MEMORY;
		memcpy(b, o->ident, sizeof(o->ident));
		memcpy(b + sizeof(o->ident), al, an);
		ok = w11_digest(h, "SHA256", b, sizeof(o->ident) + an);
		free(b);
		if (!ok)
			return CKR_FUNCTION_FAILED;
		for (int i = 0; i < 16; i++)
			snprintf(uid + 2 * i, 3, "%02x", h[i]);
	} else {
		snprintf(uid, sizeof(uid), "s%lu", (unsigned long)o->handle);
	}
	if ((rv = w11_attrs_ulong(&o->attrs, CKA_CLASS, o->cls)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_TOKEN,
				 o->flags & W11_OF_TOKEN)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_PRIVATE,
				 o->flags & W11_OF_PRIVATE)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_MODIFIABLE, modifiable)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_COPYABLE, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_DESTROYABLE, destroyable)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_LABEL, label,
				label ? strlen(label) : 0)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_UNIQUE_ID, uid, strlen(uid))))
		return rv;
	return CKR_OK;
}

/* ---- certificates ---------------------------------------------------------- */

CK_RV w11_cert_id(unsigned char *out, size_t *len, size_t cap, X509 *x)
{
	const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(x);
	const unsigned char *bits;
	int n;

	if (ski && ski->length > 0 && (size_t)ski->length <= cap) {
		memcpy(out, ski->data, (size_t)ski->length);
		*len = (size_t)ski->length;
		return CKR_OK;
	}
	/* from the encoded key, which need not be of a type OpenSSL
	 * knows (an ML-DSA certificate in OpenSSL 3.0) */
	if (cap < 20 ||
	    !X509_PUBKEY_get0_param(NULL, &bits, &n, NULL,
				    X509_get_X509_PUBKEY(x)) ||
	    n < 0 || !w11_digest(out, "SHA1", bits, (size_t)n))
		return CKR_FUNCTION_FAILED;
	*len = 20;
	return CKR_OK;
}

static CK_RV der_attr(w11_obj *o, CK_ATTRIBUTE_TYPE t, int n,
		      unsigned char *d)
{
	CK_RV rv = n > 0 ? w11_attrs_set(&o->attrs, t, d, (size_t)n)
			 : CKR_FUNCTION_FAILED;

	OPENSSL_free(d);
	return rv;
}

static CK_RV date_attr(w11_obj *o, CK_ATTRIBUTE_TYPE t, const ASN1_TIME *at)
{
	CK_DATE d;
	struct tm tm;
	char buf[48];

	if (!at || !ASN1_TIME_to_tm(at, &tm) || tm.tm_year + 1900 > 9999 ||
	    tm.tm_year + 1900 < 0)
		return w11_attrs_set(&o->attrs, t, NULL, 0);
	snprintf(buf, sizeof(buf), "%04d%02d%02d", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday);
	memcpy(d.year, buf, 4);
	memcpy(d.month, buf + 4, 2);
	memcpy(d.day, buf + 6, 2);
	return w11_attrs_set(&o->attrs, t, &d, sizeof(d));
}

/* Attributes taken from a certificate: shared by certificate objects and
 * (CKA_SUBJECT, CKA_PUBLIC_KEY_INFO) by key objects. */
static CK_RV subject_spki(w11_obj *o, X509 *x)
{
	unsigned char *d = NULL;
	CK_RV rv;
	int n;

	n = i2d_X509_NAME(X509_get_subject_name(x), &d);
	if ((rv = der_attr(o, CKA_SUBJECT, n, d)) != CKR_OK)
		return rv;
	d = NULL;
	n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &d);
	return der_attr(o, CKA_PUBLIC_KEY_INFO, n, d);
}

CK_RV w11_obj_cert(w11_obj **out, X509 *x, int role, const char *alias,
		   size_t index, const unsigned char *id, size_t id_len)
{
	w11_obj *o;
	unsigned char *der = NULL, *d = NULL, sha[20], label_idx[300];
	const char *label = alias;
	CK_ULONG cat;
	CK_RV rv = CKR_HOST_MEMORY;
	int n;

	*out = NULL;
	if (!(o = obj_new(CKO_CERTIFICATE, role, alias)))
		return CKR_HOST_MEMORY;
	o->flags = W11_OF_TOKEN;
	o->chain_index = index;
	if ((n = i2d_X509(x, &der)) <= 0) {
		rv = CKR_FUNCTION_FAILED;
		goto fail;
	}
	ident_of(o, der, (size_t)n);
	if (role == W11_R_CHAIN) {
		/* "alias/1", "alias/2": the chain's certificates by position */
		snprintf((char *)label_idx, sizeof(label_idx), "%.256s/%zu",
			 alias, index);
		label = (const char *)label_idx;
	}
	if (role == W11_R_LEAF)
		cat = 1; /* token user */
	else if (X509_check_ca(x) > 0)
		cat = 2; /* authority */
	else
		cat = 3; /* other entity */
	if ((rv = common(o, label, role != W11_R_CHAIN,
			 role == W11_R_TRUSTED)) ||
	    (rv = w11_attrs_ulong(&o->attrs, CKA_CERTIFICATE_TYPE, CKC_X_509)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_TRUSTED,
				 role == W11_R_TRUSTED)) ||
	    (rv = w11_attrs_ulong(&o->attrs, CKA_CERTIFICATE_CATEGORY, cat)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_ID, id, id_len)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_VALUE, der, (size_t)n)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_URL, NULL, 0)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_HASH_OF_SUBJECT_PUBLIC_KEY,
				NULL, 0)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_HASH_OF_ISSUER_PUBLIC_KEY,
				NULL, 0)) ||
	    (rv = w11_attrs_ulong(&o->attrs, CKA_JAVA_MIDP_SECURITY_DOMAIN, 0)) ||
	    (rv = w11_attrs_ulong(&o->attrs, CKA_NAME_HASH_ALGORITHM,
				  CKM_SHA_1)) ||
	    (rv = subject_spki(o, x)) ||
	    (rv = date_attr(o, CKA_START_DATE, X509_get0_notBefore(x))) ||
	    (rv = date_attr(o, CKA_END_DATE, X509_get0_notAfter(x))))
		goto fail;
	if (!w11_digest(sha, "SHA1", der, (size_t)n))
		memset(sha, 0, sizeof(sha));
	if ((rv = w11_attrs_set(&o->attrs, CKA_CHECK_VALUE, sha, 3)))
		goto fail;
	n = i2d_X509_NAME(X509_get_issuer_name(x), &d);
	if ((rv = der_attr(o, CKA_ISSUER, n, d)))
		goto fail;
	d = NULL;
	n = i2d_ASN1_INTEGER(X509_get_serialNumber(x), &d);
	if ((rv = der_attr(o, CKA_SERIAL_NUMBER, n, d)))
		goto fail;
	OPENSSL_free(der);
	*out = o;
	return CKR_OK;
fail:
	OPENSSL_free(der);
	w11_obj_free(o);
	return rv;
}

/* ---- keys ------------------------------------------------------------------ */

static CK_RV bn_attr(w11_obj *o, CK_ATTRIBUTE_TYPE t, const EVP_PKEY *pk,
		     const char *param)
{
	BIGNUM *bn = NULL;
	unsigned char *b;
	int n;
	CK_RV rv = CKR_FUNCTION_FAILED;

	if (!EVP_PKEY_get_bn_param(pk, param, &bn))
		return rv;
	n = BN_num_bytes(bn);
	if ((b = OPENSSL_malloc(n > 0 ? (size_t)n : 1)) != NULL) {
		BN_bn2bin(bn, b);
		rv = w11_attrs_set(&o->attrs, t, b, (size_t)n);
		OPENSSL_clear_free(b, n > 0 ? (size_t)n : 1);
	}
	BN_clear_free(bn);
	return rv;
}

/* No CKA_ALLOWED_MECHANISMS: a key allows every mechanism of its type
 * (C_GetMechanismList), which is what the attribute's absence says, and
 * p11-kit 0.24's RPC cannot answer its length query (docs/PKCS11.md). */
static CK_RV key_common(w11_obj *o, CK_KEY_TYPE kt, const unsigned char *id,
			size_t id_len, int derive)
{
	CK_RV rv;

	if ((rv = w11_attrs_ulong(&o->attrs, CKA_KEY_TYPE, kt)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_ID, id, id_len)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_START_DATE, NULL, 0)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_END_DATE, NULL, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_DERIVE, derive)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_LOCAL, 0)) ||
	    (rv = w11_attrs_ulong(&o->attrs, CKA_KEY_GEN_MECHANISM,
				  CK_UNAVAILABLE_INFORMATION)))
		return rv;
	return CKR_OK;
}

/* The public parts of an asymmetric key: RSA's modulus and exponent, an
 * EC or Edwards key's curve (and point, for public key objects). */
static CK_RV public_parts(w11_obj *o, const EVP_PKEY *pk, int point)
{
	unsigned char *d = NULL;
	size_t n;
	CK_RV rv;

	switch (w11_pkey_type(pk)) {
	case CKK_RSA:
		if ((rv = bn_attr(o, CKA_MODULUS, pk, OSSL_PKEY_PARAM_RSA_N)) ||
		    (rv = bn_attr(o, CKA_PUBLIC_EXPONENT, pk,
				  OSSL_PKEY_PARAM_RSA_E)))
			return rv;
		if (point)
			return w11_attrs_ulong(&o->attrs, CKA_MODULUS_BITS,
					       w11_pkey_bits(pk));
		return CKR_OK;
	case CKK_EC:
	case CKK_EC_EDWARDS:
		if ((rv = w11_ec_params(&d, &n, pk)) != CKR_OK)
			return rv;
		rv = w11_attrs_set(&o->attrs, CKA_EC_PARAMS, d, n);
		OPENSSL_free(d);
		if (rv != CKR_OK || !point)
			return rv;
		if ((rv = w11_ec_point(&d, &n, pk)) != CKR_OK)
			return rv;
		rv = w11_attrs_set(&o->attrs, CKA_EC_POINT, d, n);
		OPENSSL_free(d);
		return rv;
	default:
		return CKR_KEY_TYPE_INCONSISTENT;
	}
}

static CK_RV spki_of_pkey(w11_obj *o, const EVP_PKEY *pk)
{
	unsigned char *d = NULL;
	int n = i2d_PUBKEY((EVP_PKEY *)pk, &d);

	return der_attr(o, CKA_PUBLIC_KEY_INFO, n, d);
}

CK_RV w11_obj_pubkey(w11_obj **out, w11_keymat *km, X509 *leaf,
		     const char *alias, const unsigned char *id, size_t id_len,
		     unsigned flags)
{
	CK_KEY_TYPE kt = w11_pkey_type(km->pub);
	w11_obj *o;
	CK_RV rv;

	*out = NULL;
	if (!(o = obj_new(CKO_PUBLIC_KEY, W11_R_PUB, alias)))
		return CKR_HOST_MEMORY;
	o->flags = flags & ~W11_OF_PRIVATE;
	o->km = w11_keymat_ref(km);
	ident_of(o, km->ident, sizeof(km->ident));
	/* (a token key pair's public key object can be destroyed: the
	 * attribute record says it is gone, the entry stays) */
	if ((rv = common(o, alias, 1, 1)) ||
	    (rv = key_common(o, kt, id, id_len, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_ENCRYPT, kt == CKK_RSA)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_VERIFY, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_VERIFY_RECOVER, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_WRAP, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_TRUSTED, 0)) ||
	    (rv = public_parts(o, km->pub, 1)))
		goto fail;
	if (leaf)
		rv = subject_spki(o, leaf);
	else if (!(rv = spki_of_pkey(o, km->pub)))
		rv = w11_attrs_set(&o->attrs, CKA_SUBJECT, NULL, 0);
	if (rv)
		goto fail;
	*out = o;
	return CKR_OK;
fail:
	w11_obj_free(o);
	return rv;
}

CK_RV w11_obj_privkey(w11_obj **out, w11_keymat *km, X509 *leaf,
		      const char *alias, const unsigned char *id,
		      size_t id_len, unsigned flags)
{
	CK_KEY_TYPE kt = w11_pkey_type(km->pub);
	w11_obj *o;
	CK_RV rv;

	*out = NULL;
	if (!(o = obj_new(CKO_PRIVATE_KEY, W11_R_PRIV, alias)))
		return CKR_HOST_MEMORY;
	o->flags = flags | W11_OF_PRIVATE;
	o->km = w11_keymat_ref(km);
	ident_of(o, km->ident, sizeof(km->ident));
	/* A token key is sensitive and cannot leave the token through
	 * PKCS#11; it is neither "always sensitive" nor "never
	 * extractable": the store file holds it, encrypted under a
	 * password, and wks(1) exports it. */
	if ((rv = common(o, alias, 1, 1)) ||
	    (rv = key_common(o, kt, id, id_len, kt == CKK_EC)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_SENSITIVE, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_EXTRACTABLE, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_ALWAYS_SENSITIVE, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_NEVER_EXTRACTABLE, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_DECRYPT, kt == CKK_RSA)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_SIGN, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_SIGN_RECOVER, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_UNWRAP, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_WRAP_WITH_TRUSTED, 0)) ||
	    (rv = public_parts(o, km->pub, 0)))
		goto fail;
	if (leaf)
		rv = subject_spki(o, leaf);
	else if (!(rv = spki_of_pkey(o, km->pub)))
		rv = w11_attrs_set(&o->attrs, CKA_SUBJECT, NULL, 0);
	if (rv)
		goto fail;
	*out = o;
	return CKR_OK;
fail:
	w11_obj_free(o);
	return rv;
}

CK_RV w11_obj_secret(w11_obj **out, w11_keymat *km, const char *alias,
		     unsigned flags)
{
	CK_KEY_TYPE kt = km->ktype;
	/* by default: AES and DES3 keys encrypt, AES (CMAC) and generic
	 * secrets (HMAC) sign; CKA_WRAP, CKA_UNWRAP and CKA_DERIVE are
	 * given by a template */
	int cipher = kt == CKK_AES || kt == CKK_DES3;
	int mac = kt == CKK_AES || kt == CKK_GENERIC_SECRET;
	w11_obj *o;
	CK_RV rv;

	*out = NULL;
	if (!(o = obj_new(CKO_SECRET_KEY, W11_R_SECRET, alias)))
		return CKR_HOST_MEMORY;
	o->flags = flags | W11_OF_PRIVATE;
	o->km = w11_keymat_ref(km);
	ident_of(o, km->ident, sizeof(km->ident));
	if ((rv = common(o, alias, 1, 1)) ||
	    (rv = key_common(o, kt, NULL, 0, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_SENSITIVE, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_EXTRACTABLE, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_ALWAYS_SENSITIVE, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_NEVER_EXTRACTABLE, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_ENCRYPT, cipher)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_DECRYPT, cipher)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_SIGN, mac)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_VERIFY, mac)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_WRAP, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_UNWRAP, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_TRUSTED, 0)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_WRAP_WITH_TRUSTED, 0)))
		goto fail;
	*out = o;
	return CKR_OK;
fail:
	w11_obj_free(o);
	return rv;
}

/* ---- token data objects (the attribute record's items of kind 2) ---------- */

CK_RV w11_obj_data(w11_obj **out, const w11_ritem *it)
{
	static const CK_ATTRIBUTE_TYPE given[] = {
		CKA_LABEL, CKA_APPLICATION, CKA_OBJECT_ID, CKA_VALUE,
	};
	const w11_rattr *pa = w11_ritem_get(it, CKA_PRIVATE);
	int priv = pa && pa->len == 1 && pa->val[0];
	char uid[72];
	w11_obj *o;
	CK_RV rv;

	*out = NULL;
	if (!(o = obj_new(CKO_DATA, W11_R_DATA, "")))
		return CKR_HOST_MEMORY;
	o->flags = W11_OF_TOKEN | (priv ? W11_OF_PRIVATE : 0);
	memcpy(o->edig, it->entry, 32);
	ident_of(o, it->entry, 32);
	/* the object's own id, as its unique id ("d" and hex) */
	uid[0] = 'd';
	for (int i = 0; i < 32; i++)
		snprintf(uid + 1 + 2 * i, 3, "%02x", it->entry[i]);
	if ((rv = w11_attrs_ulong(&o->attrs, CKA_CLASS, CKO_DATA)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_TOKEN, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_PRIVATE, priv)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_MODIFIABLE, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_COPYABLE, 1)) ||
	    (rv = w11_attrs_bool(&o->attrs, CKA_DESTROYABLE, 1)) ||
	    (rv = w11_attrs_set(&o->attrs, CKA_UNIQUE_ID, uid, 65)))
		goto fail;
	for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++) {
		const w11_rattr *a = w11_ritem_get(it, given[i]);

		if ((rv = w11_attrs_set(&o->attrs, given[i], a ? a->val : NULL,
					a ? a->len : 0)) != CKR_OK)
			goto fail;
	}
	*out = o;
	return CKR_OK;
fail:
	w11_obj_free(o);
	return rv;
}

/* ---- reading attributes ------------------------------------------------ */

static int sensitive_type(const w11_obj *o, CK_ATTRIBUTE_TYPE t)
{
	if (o->cls == CKO_SECRET_KEY)
		return t == CKA_VALUE;
	if (o->cls != CKO_PRIVATE_KEY)
		return 0;
	switch (t) {
	case CKA_VALUE:
	case CKA_PRIVATE_EXPONENT:
	case CKA_PRIME_1:
	case CKA_PRIME_2:
	case CKA_EXPONENT_1:
	case CKA_EXPONENT_2:
	case CKA_COEFFICIENT:
		return 1;
	default:
		return 0;
	}
}

/* A sensitive attribute of a non-sensitive, extractable session key. */
static CK_RV secret_value(const w11_obj *o, CK_ATTRIBUTE_TYPE t,
			  CK_ULONG *len, unsigned char **tmp)
{
	static const struct {
		CK_ATTRIBUTE_TYPE t;
		const char *param;
	} rsa[] = {
		{ CKA_PRIVATE_EXPONENT, OSSL_PKEY_PARAM_RSA_D },
		{ CKA_PRIME_1, OSSL_PKEY_PARAM_RSA_FACTOR1 },
		{ CKA_PRIME_2, OSSL_PKEY_PARAM_RSA_FACTOR2 },
		{ CKA_EXPONENT_1, OSSL_PKEY_PARAM_RSA_EXPONENT1 },
		{ CKA_EXPONENT_2, OSSL_PKEY_PARAM_RSA_EXPONENT2 },
		{ CKA_COEFFICIENT, OSSL_PKEY_PARAM_RSA_COEFFICIENT1 },
	};
	const w11_keymat *km = o->km;
	EVP_PKEY *pk;
	BIGNUM *bn = NULL;
	size_t n;

	/* A token key's value never leaves the module, whatever an object
	 * that shares its material says of itself (a copy, say). */
	if (!km || km->tok)
		return CKR_ATTRIBUTE_SENSITIVE;
	if (o->cls == CKO_SECRET_KEY) {
		if (!km->sec)
			return CKR_ATTRIBUTE_SENSITIVE;
		if (!(*tmp = OPENSSL_memdup(km->sec, km->sec_len ? km->sec_len
								 : 1)))
			return CKR_HOST_MEMORY;
		*len = km->sec_len;
		return CKR_OK;
	}
	if (!(pk = km->priv))
		return CKR_ATTRIBUTE_SENSITIVE;
	if (w11_pkey_type(pk) == CKK_RSA) {
		for (size_t i = 0; i < sizeof(rsa) / sizeof(rsa[0]); i++) {
			int bl;

			if (rsa[i].t != t)
				continue;
			if (!EVP_PKEY_get_bn_param(pk, rsa[i].param, &bn))
				return CKR_ATTRIBUTE_TYPE_INVALID;
			bl = BN_num_bytes(bn);
			*tmp = OPENSSL_malloc(bl > 0 ? (size_t)bl : 1);
			if (*tmp)
				BN_bn2bin(bn, *tmp);
			BN_clear_free(bn);
			*len = (CK_ULONG)bl;
			return *tmp ? CKR_OK : CKR_HOST_MEMORY;
		}
		return CKR_ATTRIBUTE_TYPE_INVALID;
	}
	if (t != CKA_VALUE)
		return CKR_ATTRIBUTE_TYPE_INVALID;
	if (w11_pkey_type(pk) == CKK_EC_EDWARDS) {
		if (!(*tmp = OPENSSL_malloc(64)))
			return CKR_HOST_MEMORY;
		n = 64;
		if (!EVP_PKEY_get_raw_private_key(pk, *tmp, &n))
			return CKR_FUNCTION_FAILED;
		*len = n;
		return CKR_OK;
	}
	if (!EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_PRIV_KEY, &bn))
		return CKR_FUNCTION_FAILED;
	/* CKA_VALUE of an EC key: the scalar, as long as the order */
	n = (w11_pkey_bits(pk) + 7) / 8;
	if ((*tmp = OPENSSL_malloc(n ? n : 1)) != NULL &&
	    BN_bn2binpad(bn, *tmp, (int)n) < 0) {
		OPENSSL_free(*tmp);
		*tmp = NULL;
	}
	BN_clear_free(bn);
	*len = n;
	return *tmp ? CKR_OK : CKR_FUNCTION_FAILED;
}

CK_RV w11_obj_attr(const w11_obj *o, CK_ATTRIBUTE_TYPE t,
		   const unsigned char **val, CK_ULONG *len,
		   unsigned char **tmp)
{
	const w11_attr *a;
	static const CK_BBOOL yes = CK_TRUE, no = CK_FALSE;

	*tmp = NULL;
	if (sensitive_type(o, t)) {
		CK_RV rv;

		if (w11_attrs_is_true(&o->attrs, CKA_SENSITIVE) ||
		    !w11_attrs_is_true(&o->attrs, CKA_EXTRACTABLE))
			return CKR_ATTRIBUTE_SENSITIVE;
		if ((rv = secret_value(o, t, len, tmp)) == CKR_OK)
			*val = *tmp;
		return rv;
	}
	/* (secret keys too: a token secret with a password of its own needs
	 * the same context-specific login) */
	if (t == CKA_ALWAYS_AUTHENTICATE &&
	    (o->cls == CKO_PRIVATE_KEY || o->cls == CKO_SECRET_KEY)) {
		*val = o->km && (o->km->always_auth == 1 || o->km->force_auth)
			   ? &yes
			   : &no;
		*len = sizeof(CK_BBOOL);
		return CKR_OK;
	}
	if (t == CKA_VALUE_LEN && o->cls == CKO_SECRET_KEY && o->km &&
	    !w11_attrs_get(&o->attrs, CKA_VALUE_LEN)) {
		CK_ULONG *v;

		if (o->km->sec_len == 0)
			return CKR_ATTRIBUTE_SENSITIVE;
		if (!(v = OPENSSL_malloc(sizeof(*v))))
			return CKR_HOST_MEMORY;
		*v = o->km->sec_len;
		*tmp = (unsigned char *)v;
		*val = *tmp;
		*len = sizeof(*v);
		return CKR_OK;
	}
	if (!(a = w11_attrs_get(&o->attrs, t)))
		return CKR_ATTRIBUTE_TYPE_INVALID;
	*val = a->val;
	*len = a->len;
	return CKR_OK;
}
