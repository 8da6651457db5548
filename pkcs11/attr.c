/*
 * Attribute lists, templates, the spec's rules for returning values, and
 * the DER pieces of key attributes (CKA_EC_PARAMS, CKA_EC_POINT, CKA_ID).
 * Also the memory that holds a logged-in token's PIN.
 */
#define _GNU_SOURCE /* MADV_WIPEONFORK, MADV_DONTDUMP */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "p11.h"

/* ---- attribute lists ----------------------------------------------------- */

CK_RV w11_attrs_set(w11_attrs *a, CK_ATTRIBUTE_TYPE t, const void *val,
		    size_t len)
{
	unsigned char *v = NULL;
	w11_attr *e = NULL;

	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].type == t)
			e = &a->v[i];
	if (len && !(v = OPENSSL_memdup(val, len)))
		return CKR_HOST_MEMORY;
	if (!e) {
		if (a->n == a->cap) {
			size_t cap = a->cap ? a->cap * 2 : 32;
			w11_attr *nv = OPENSSL_realloc(a->v,
						       cap * sizeof(*nv));

			if (!nv) {
				OPENSSL_free(v);
				return CKR_HOST_MEMORY;
			}
			a->v = nv;
			a->cap = cap;
		}
		e = &a->v[a->n++];
	} else {
		OPENSSL_clear_free(e->val, e->len);
	}
	e->type = t;
	e->len = len;
	e->val = v;
	return CKR_OK;
}

CK_RV w11_attrs_bool(w11_attrs *a, CK_ATTRIBUTE_TYPE t, int v)
{
	CK_BBOOL b = v ? CK_TRUE : CK_FALSE;

	return w11_attrs_set(a, t, &b, sizeof(b));
}

CK_RV w11_attrs_ulong(w11_attrs *a, CK_ATTRIBUTE_TYPE t, CK_ULONG v)
{
	return w11_attrs_set(a, t, &v, sizeof(v));
}

const w11_attr *w11_attrs_get(const w11_attrs *a, CK_ATTRIBUTE_TYPE t)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].type == t)
			return &a->v[i];
	return NULL;
}

int w11_attrs_is_true(const w11_attrs *a, CK_ATTRIBUTE_TYPE t)
{
	const w11_attr *e = w11_attrs_get(a, t);

	return e && e->len == sizeof(CK_BBOOL) && e->val[0] == CK_TRUE;
}

CK_RV w11_attrs_copy(w11_attrs *dst, const w11_attrs *src)
{
	CK_RV rv;

	for (size_t i = 0; i < src->n; i++)
		if ((rv = w11_attrs_set(dst, src->v[i].type, src->v[i].val,
					src->v[i].len)) != CKR_OK)
			return rv;
	return CKR_OK;
}

void w11_attrs_free(w11_attrs *a)
{
	for (size_t i = 0; i < a->n; i++)
		OPENSSL_clear_free(a->v[i].val, a->v[i].len);
	OPENSSL_free(a->v);
	memset(a, 0, sizeof(*a));
}

/* ---- templates ------------------------------------------------------------- */

const CK_ATTRIBUTE *w11_tmpl(const CK_ATTRIBUTE *t, CK_ULONG n,
			     CK_ATTRIBUTE_TYPE type)
{
	for (CK_ULONG i = 0; i < n; i++)
		if (t[i].type == type)
			return &t[i];
	return NULL;
}

CK_RV w11_tmpl_bool(const CK_ATTRIBUTE *t, CK_ULONG n, CK_ATTRIBUTE_TYPE type,
		    int *out)
{
	const CK_ATTRIBUTE *a = w11_tmpl(t, n, type);

	if (!a)
		return CKR_OK;
	if (a->ulValueLen != sizeof(CK_BBOOL) || !a->pValue)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	*out = *(CK_BBOOL *)a->pValue ? 1 : 0;
	return CKR_OK;
}

CK_RV w11_tmpl_ulong(const CK_ATTRIBUTE *t, CK_ULONG n,
		     CK_ATTRIBUTE_TYPE type, CK_ULONG *out)
{
	const CK_ATTRIBUTE *a = w11_tmpl(t, n, type);

	if (!a)
		return CKR_OK;
	if (a->ulValueLen != sizeof(CK_ULONG) || !a->pValue)
		return CKR_ATTRIBUTE_VALUE_INVALID;
	memcpy(out, a->pValue, sizeof(CK_ULONG));
	return CKR_OK;
}

/* Every template a C_* function takes passes here first, before any of
 * its values is read: a NULL array with a count, a NULL value with a
 * length (the caller would have the module read through it), a count no
 * program uses (the duplicate check is quadratic), and, for templates
 * that make or change an object, an attribute given twice. */
#define W11_TMPL_MAX 1024
CK_RV w11_tmpl_check_ex(const CK_ATTRIBUTE *t, CK_ULONG n, int search)
{
	if (n && !t)
		return CKR_ARGUMENTS_BAD;
	if (n > W11_TMPL_MAX)
		return CKR_TEMPLATE_INCONSISTENT;
	for (CK_ULONG i = 0; i < n; i++) {
		if (!t[i].pValue && t[i].ulValueLen)
			return search ? CKR_ARGUMENTS_BAD
				      : CKR_ATTRIBUTE_VALUE_INVALID;
		for (CK_ULONG j = 0; j < i && !search; j++)
			if (t[j].type == t[i].type)
				return CKR_TEMPLATE_INCONSISTENT;
	}
	return CKR_OK;
}

CK_RV w11_tmpl_check(const CK_ATTRIBUTE *t, CK_ULONG n)
{
	return w11_tmpl_check_ex(t, n, 0);
}

/*
 * C_GetAttributeValue's rules for one attribute: a NULL pValue asks for
 * the length; a buffer too small gets CK_UNAVAILABLE_INFORMATION and
 * CKR_BUFFER_TOO_SMALL.
 */
CK_RV w11_attr_out(CK_ATTRIBUTE *a, const void *val, CK_ULONG len)
{
	if (!a->pValue) {
		a->ulValueLen = len;
		return CKR_OK;
	}
	if (a->ulValueLen < len) {
		a->ulValueLen = CK_UNAVAILABLE_INFORMATION;
		return CKR_BUFFER_TOO_SMALL;
	}
	if (len)
		memcpy(a->pValue, val, len);
	a->ulValueLen = len;
	return CKR_OK;
}

void w11_pad(CK_UTF8CHAR *dst, size_t width, const char *s)
{
	size_t n = strlen(s);

	if (n > width)
		n = width;
	memset(dst, ' ', width);
	memcpy(dst, s, n);
}

/* ---- keys and DER ---------------------------------------------------------- */

CK_KEY_TYPE w11_pkey_type(const EVP_PKEY *pk)
{
	switch (EVP_PKEY_get_base_id(pk)) {
	case EVP_PKEY_RSA:
	case EVP_PKEY_RSA_PSS:
		return CKK_RSA;
	case EVP_PKEY_EC:
		return CKK_EC;
	case EVP_PKEY_ED25519:
	case EVP_PKEY_ED448:
		return CKK_EC_EDWARDS;
	default:
		return CKK_VENDOR_DEFINED;
	}
}

CK_ULONG w11_pkey_bits(const EVP_PKEY *pk)
{
	int b = EVP_PKEY_get_bits(pk);

	return b > 0 ? (CK_ULONG)b : 0;
}

/* The curve's OID as DER (a named curve is all the module accepts). */
static CK_RV oid_der(unsigned char **out, size_t *len, int nid)
{
	ASN1_OBJECT *o = OBJ_nid2obj(nid);
	unsigned char *p = NULL;
	int n;

	if (!o || (n = i2d_ASN1_OBJECT(o, &p)) <= 0)
		return CKR_FUNCTION_FAILED;
	*out = p;
	*len = (size_t)n;
	return CKR_OK;
}

CK_RV w11_ec_params(unsigned char **out, size_t *len, const EVP_PKEY *pk)
{
	char name[80];
	int nid;

	*out = NULL;
	*len = 0;
	switch (EVP_PKEY_get_base_id(pk)) {
	case EVP_PKEY_ED25519:
		return oid_der(out, len, NID_ED25519);
	case EVP_PKEY_ED448:
		return oid_der(out, len, NID_ED448);
	case EVP_PKEY_EC:
		if (!EVP_PKEY_get_utf8_string_param(pk,
			OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof(name), NULL))
			return CKR_FUNCTION_FAILED;
		nid = OBJ_txt2nid(name);
		if (nid == NID_undef)
			nid = EC_curve_nist2nid(name);
		return nid == NID_undef ? CKR_FUNCTION_FAILED
					: oid_der(out, len, (int)nid);
	default:
		return CKR_FUNCTION_FAILED;
	}
}

/* DER OCTET STRING around `n` bytes. */
static CK_RV octet_string(unsigned char **out, size_t *len,
			  const unsigned char *p, size_t n)
{
	ASN1_OCTET_STRING *os = ASN1_OCTET_STRING_new();
	unsigned char *d = NULL;
	int dn = -1;

	if (os && n <= 0x7fffffff &&
	    ASN1_OCTET_STRING_set(os, p, (int)n))
		dn = i2d_ASN1_OCTET_STRING(os, &d);
	ASN1_OCTET_STRING_free(os);
	if (dn <= 0)
		return CKR_HOST_MEMORY;
	*out = d;
	*len = (size_t)dn;
	return CKR_OK;
}

CK_RV w11_ec_point(unsigned char **out, size_t *len, const EVP_PKEY *pk)
{
	unsigned char buf[160];
	size_t n = 0;

	*out = NULL;
	*len = 0;
	switch (EVP_PKEY_get_base_id(pk)) {
	case EVP_PKEY_ED25519:
	case EVP_PKEY_ED448:
		n = sizeof(buf);
		if (!EVP_PKEY_get_raw_public_key(pk, buf, &n))
			return CKR_FUNCTION_FAILED;
		break;
	case EVP_PKEY_EC:
		/* uncompressed, whatever the certificate carried */
		if (!EVP_PKEY_get_octet_string_param(pk,
			OSSL_PKEY_PARAM_PUB_KEY, buf, sizeof(buf), &n))
			return CKR_FUNCTION_FAILED;
		if (n && buf[0] != 0x04) {
			EC_GROUP *g = NULL;
			EC_POINT *pt = NULL;
			char name[80];
			int nid;

			if (!EVP_PKEY_get_utf8_string_param(pk,
				OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof(name),
				NULL) ||
			    (nid = OBJ_txt2nid(name)) == NID_undef ||
			    !(g = EC_GROUP_new_by_curve_name_ex(w11_libctx, NULL, nid)) ||
			    !(pt = EC_POINT_new(g)) ||
			    !EC_POINT_oct2point(g, pt, buf, n, NULL) ||
			    !(n = EC_POINT_point2oct(g, pt,
				POINT_CONVERSION_UNCOMPRESSED, buf,
				sizeof(buf), NULL))) {
				EC_POINT_free(pt);
				EC_GROUP_free(g);
				return CKR_FUNCTION_FAILED;
			}
			EC_POINT_free(pt);
			EC_GROUP_free(g);
		}
		break;
	default:
		return CKR_FUNCTION_FAILED;
	}
	return octet_string(out, len, buf, n);
}

int w11_curve_from_params(const unsigned char *p, size_t len)
{
	const unsigned char *q = p;
	ASN1_OBJECT *o;
	int nid = NID_undef;

	if (!p || len < 2 || len > 64)
		return NID_undef;
	if (p[0] == 0x06) {
		if ((o = d2i_ASN1_OBJECT(NULL, &q, (long)len)) != NULL) {
			if (q == p + len)
				nid = OBJ_obj2nid(o);
			ASN1_OBJECT_free(o);
		}
		return nid;
	}
	/* PKCS#11 3.0 also names the Edwards curves as a PrintableString */
	if (p[0] == 0x13 && p[1] == len - 2) {
		if (len - 2 == 12 && memcmp(p + 2, "edwards25519", 12) == 0)
			return NID_ED25519;
		if (len - 2 == 10 && memcmp(p + 2, "edwards448", 10) == 0)
			return NID_ED448;
	}
	return NID_undef;
}

CK_RV w11_key_id(unsigned char out[20], const EVP_PKEY *pk)
{
	X509_PUBKEY *xp = NULL;
	const unsigned char *bits;
	int n;
	CK_RV rv = CKR_FUNCTION_FAILED;

	if (X509_PUBKEY_set(&xp, (EVP_PKEY *)pk) &&
	    X509_PUBKEY_get0_param(NULL, &bits, &n, NULL, xp) && n >= 0 &&
	    w11_digest(out, "SHA1", bits, (size_t)n))
		rv = CKR_OK;
	X509_PUBKEY_free(xp);
	return rv;
}

/* ---- PIN memory ------------------------------------------------------------ */

CK_RV w11_secret_set(w11_secret *s, const void *pin, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (len >= page)
		return CKR_PIN_LEN_RANGE;
	if (!s->p) {
		void *p = mmap(NULL, page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return CKR_HOST_MEMORY;
		/* Best effort: a failure leaves the page as it is. */
		(void)mlock(p, page);
#ifdef MADV_DONTDUMP
		(void)madvise(p, page, MADV_DONTDUMP);
#endif
#ifdef MADV_WIPEONFORK
		(void)madvise(p, page, MADV_WIPEONFORK);
#endif
		s->p = p;
	}
	OPENSSL_cleanse(s->p, page);
	memcpy(s->p, pin, len);
	s->len = len;
	return CKR_OK;
}

void w11_secret_free(w11_secret *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (s->p) {
		OPENSSL_cleanse(s->p, page);
		munlock(s->p, page);
		munmap(s->p, page);
	}
	s->p = NULL;
	s->len = 0;
}

int w11_mech_allowed(const w11_obj *o, CK_MECHANISM_TYPE m)
{
	const w11_attr *a = w11_attrs_get(&o->attrs, CKA_ALLOWED_MECHANISMS);
	CK_MECHANISM_TYPE v;

	/* absent or empty: any mechanism of the key's type */
	if (!a || !a->len)
		return 1;
	for (CK_ULONG i = 0; i + sizeof(v) <= a->len; i += sizeof(v)) {
		memcpy(&v, a->val + i, sizeof(v));
		if (v == m)
			return 1;
	}
	return 0;
}
