/* X.509 / PKCS#8 work on OpenSSL: parsing, key algorithm names, the key
 * and chain checks of setKeyEntry. */
#include "crypto/pki.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/asn1.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/err.h>
#include <openssl/x509.h>

#include <stdlib.h>

#include "util/error.h"
#include "util/wipe.h"
#include "wks/wks.h"

/* cc: the store's library context (crypto.h), NULL for the default. */
static OSSL_LIB_CTX *libctx_of(const wks_crypto_ctx *cc)
{
	return cc ? cc->libctx : NULL;
}

static const char *propq_of(const wks_crypto_ctx *cc)
{
	return cc ? cc->propq : NULL;
}

static int x509_parse(const wks_crypto_ctx *cc, X509 **out,
                      const uint8_t *der, size_t len)
{
	const unsigned char *p = der;
	X509 *x = NULL;

	*out = NULL;
	if (len == 0 || len > INT32_MAX)
		return wks__err(WKS_ERR_FORMAT, "certificate of %zu bytes", len);
	/* In the store's context, so that its public key is decoded and its
	 * signature later checked there (X509_new_ex() then d2i into it; a
	 * failed d2i frees it and sets x to NULL). */
	if (cc && !(x = X509_new_ex(cc->libctx, cc->propq)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if (!d2i_X509(&x, &p, (long)len)) {
		X509_free(x);
		return wks__err(WKS_ERR_FORMAT, "unparsable X.509 certificate");
	}
	if ((size_t)(p - der) != len) {
		X509_free(x);
		return wks__err(WKS_ERR_FORMAT,
		                "%zu bytes after the X.509 certificate",
		                len - (size_t)(p - der));
	}
	*out = x;
	return WKS_OK;
}

static int x509_der(wks_buf *out, X509 *cert)
{
	int n = cert ? i2d_X509(cert, NULL) : -1;
	unsigned char *p;
	int err;

	if (n <= 0)
		return wks__err(WKS_ERR_INVALID, "certificate cannot be encoded");
	if ((err = wks_buf_reserve(out, (size_t)n)) < 0)
		return err;
	p = out->ptr + out->len;
	if (i2d_X509(cert, &p) != n)
		return wks__err(WKS_ERR_CRYPTO, "certificate encoding failed");
	out->len += (size_t)n;
	return WKS_OK;
}

/* Exactly one PKCS#8 PrivateKeyInfo (its key octets are cleansed when it
 * is freed). */
static int pkcs8_parse(PKCS8_PRIV_KEY_INFO **out, const uint8_t *der,
                       size_t len)
{
	const unsigned char *p = der;
	PKCS8_PRIV_KEY_INFO *p8;

	*out = NULL;
	if (len == 0 || len > INT32_MAX)
		return wks__err(WKS_ERR_FORMAT, "PKCS#8 key of %zu bytes", len);
	p8 = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)len);
	if (!p8 || (size_t)(p - der) != len) {
		PKCS8_PRIV_KEY_INFO_free(p8);
		return wks__err(WKS_ERR_FORMAT, "not a PKCS#8 private key");
	}
	*out = p8;
	return WKS_OK;
}

/* The AlgorithmIdentifier OID of a PKCS#8 key, dotted. */
static int pkcs8_oid(char *oid, size_t oid_len, const uint8_t **pk,
                     int *pk_len, PKCS8_PRIV_KEY_INFO **p8_out,
                     const uint8_t *der, size_t len)
{
	PKCS8_PRIV_KEY_INFO *p8;
	const ASN1_OBJECT *obj = NULL;
	int err;

	*p8_out = NULL;
	if ((err = pkcs8_parse(&p8, der, len)) < 0)
		return err;
	if (PKCS8_pkey_get0(&obj, pk, pk_len, NULL, p8) != 1 || !obj ||
	    OBJ_obj2txt(oid, (int)oid_len, obj, 1) <= 0) {
		PKCS8_PRIV_KEY_INFO_free(p8);
		return wks__err(WKS_ERR_FORMAT, "PKCS#8 key without an algorithm");
	}
	*p8_out = p8;
	return WKS_OK;
}

static const struct {
	const char *oid, *name;
} key_algs[] = {
	{ "1.2.840.113549.1.1.1", "RSA" },
	{ "1.2.840.113549.1.1.10", "RSASSA-PSS" },
	{ "1.2.840.10045.2.1", "EC" },
	{ "1.3.101.112", "ED25519" },
	{ "1.3.101.113", "ED448" },
	{ "1.3.101.110", "X25519" },
	{ "1.3.101.111", "X448" },
	{ "1.2.840.10040.4.1", "DSA" },
	{ "2.16.840.1.101.3.4.3.17", "ML-DSA-44" },
	{ "2.16.840.1.101.3.4.3.18", "ML-DSA-65" },
	{ "2.16.840.1.101.3.4.3.19", "ML-DSA-87" },
};

static int is_slh_dsa(const char *oid)
{
	int n;

	return sscanf(oid, "2.16.840.1.101.3.4.3.%d", &n) == 1 && n >= 20 &&
	       n <= 31;
}

/* The DER contents of the known OIDs, made once (OBJ_txt2obj). */
#define N_ALGS (sizeof(key_algs) / sizeof(key_algs[0]))
static pthread_once_t oids_once = PTHREAD_ONCE_INIT;
static ASN1_OBJECT *alg_objs[N_ALGS];

static void make_oids(void)
{
	size_t i;

	for (i = 0; i < N_ALGS; i++)
		alg_objs[i] = OBJ_txt2obj(key_algs[i].oid, 1);
}

/*
 * The AlgorithmIdentifier OID contents of a PKCS#8 key, found by walking
 * the DER headers with ASN1_get_object(): no allocation and no parse of
 * the key itself, because get_key's cache-hit path names the algorithm of
 * every key it returns.
 */
static int pkcs8_oid_bytes(const uint8_t **oid, long *oid_len,
                           const uint8_t *der, size_t len)
{
	const unsigned char *p = der, *end;
	long n;
	int tag, cls, r;

	if (len == 0 || len > INT32_MAX)
		return 0;
	end = der + len;
	r = ASN1_get_object(&p, &n, &tag, &cls, (long)len);
	if ((r & 0x80) || tag != V_ASN1_SEQUENCE || !(r & V_ASN1_CONSTRUCTED))
		return 0;
	r = ASN1_get_object(&p, &n, &tag, &cls, end - p);
	if ((r & 0x80) || tag != V_ASN1_INTEGER)
		return 0;
	p += n;
	r = ASN1_get_object(&p, &n, &tag, &cls, end - p);
	if ((r & 0x80) || tag != V_ASN1_SEQUENCE || !(r & V_ASN1_CONSTRUCTED))
		return 0;
	r = ASN1_get_object(&p, &n, &tag, &cls, end - p);
	if ((r & 0x80) || tag != V_ASN1_OBJECT)
		return 0;
	*oid = p;
	*oid_len = n;
	return 1;
}

static int pkcs8_algorithm(char *out, size_t out_len, const uint8_t *der,
                           size_t len)
{
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	const uint8_t *pk, *ob;
	char oid[128];
	long ob_len;
	size_t i;
	int pk_len, err;

	pthread_once(&oids_once, make_oids);
	if (pkcs8_oid_bytes(&ob, &ob_len, der, len))
		for (i = 0; i < N_ALGS; i++)
			if (alg_objs[i] && OBJ_length(alg_objs[i]) == (size_t)ob_len &&
			    memcmp(OBJ_get0_data(alg_objs[i]), ob, (size_t)ob_len) == 0) {
				snprintf(out, out_len, "%s", key_algs[i].name);
				return WKS_OK;
			}
	/* Unknown or odd: the full parse, and the OID in dotted form. */
	if ((err = pkcs8_oid(oid, sizeof(oid), &pk, &pk_len, &p8, der, len)) < 0)
		return err;
	PKCS8_PRIV_KEY_INFO_free(p8);
	snprintf(out, out_len, "%s", is_slh_dsa(oid) ? "SLH-DSA" : oid);
	return WKS_OK;
}

static int pkey_from_pkcs8(const wks_crypto_ctx *cc, EVP_PKEY **out,
                           const uint8_t *der, size_t len)
{
	PKCS8_PRIV_KEY_INFO *p8;
	EVP_PKEY *k = NULL;
	int err;

	*out = NULL;
	if ((err = pkcs8_parse(&p8, der, len)) < 0)
		return err;
	k = EVP_PKCS82PKEY_ex(p8, libctx_of(cc), propq_of(cc));
	PKCS8_PRIV_KEY_INFO_free(p8);
	if (!k)
		return wks__err(WKS_ERR_UNSUPPORTED,
		                "OpenSSL cannot use this private key's algorithm");
	*out = k;
	return WKS_OK;
}

static int pkcs8_from_pkey(wks_buf *out, EVP_PKEY *key)
{
	PKCS8_PRIV_KEY_INFO *p8 = key ? EVP_PKEY2PKCS8(key) : NULL;
	unsigned char *der = NULL;
	int n, err;

	if (!p8)
		return wks__err(WKS_ERR_INVALID, "key cannot be encoded as PKCS#8");
	n = i2d_PKCS8_PRIV_KEY_INFO(p8, &der);
	PKCS8_PRIV_KEY_INFO_free(p8);
	if (n <= 0)
		return wks__err(WKS_ERR_INVALID, "key cannot be encoded as PKCS#8");
	err = wks_buf_put(out, der, (size_t)n);
	OPENSSL_clear_free(der, (size_t)n);
	return err;
}

/*
 * ML-DSA key <-> certificate without ML-DSA support in OpenSSL 3.0: the
 * PKCS#8 key holds SEQUENCE { seed(32), expandedKey }; with pk the
 * certificate's public key, expandedKey[0..32) = pk[0..32) (rho) and
 * expandedKey[64..128) = SHAKE256(pk, 64) (tr).
 */
static int mldsa_matches(const wks_crypto_ctx *cc, const uint8_t *pk8,
                         int pk8_len, X509 *leaf)
{
	const unsigned char *p = pk8;
	STACK_OF(ASN1_TYPE) *seq = d2i_ASN1_SEQUENCE_ANY(NULL, &p, pk8_len);
	ASN1_BIT_STRING *pub = X509_get0_pubkey_bitstr(leaf);
	ASN1_TYPE *ex;
	const uint8_t *exp, *pkb;
	uint8_t tr[64];
	int ok = 0, exp_len, pkb_len;

	if (!seq || sk_ASN1_TYPE_num(seq) != 2 || !pub)
		goto done;
	ex = sk_ASN1_TYPE_value(seq, 1);
	if (ex->type != V_ASN1_OCTET_STRING)
		goto done;
	exp = ASN1_STRING_get0_data(ex->value.octet_string);
	exp_len = ASN1_STRING_length(ex->value.octet_string);
	pkb = ASN1_STRING_get0_data(pub);
	pkb_len = ASN1_STRING_length(pub);
	if (exp_len < 128 || pkb_len < 32)
		goto done;
	{
		EVP_MD_CTX *c = EVP_MD_CTX_new();
		EVP_MD *md = EVP_MD_fetch(libctx_of(cc), "SHAKE256",
		                          propq_of(cc));

		ok = c && md && EVP_DigestInit_ex2(c, md, NULL) == 1 &&
		     EVP_DigestUpdate(c, pkb, (size_t)pkb_len) == 1 &&
		     EVP_DigestFinalXOF(c, tr, sizeof(tr)) == 1;
		EVP_MD_CTX_free(c);
		EVP_MD_free(md);
	}
	ok = ok && memcmp(exp, pkb, 32) == 0 && memcmp(exp + 64, tr, 64) == 0;
done:
	sk_ASN1_TYPE_pop_free(seq, ASN1_TYPE_free);
	return ok;
}

static int check_key_and_chain(const wks_crypto_ctx *cc,
                               const uint8_t *pkcs8, size_t pkcs8_len,
                               const uint8_t *const *certs,
                               const size_t *lens, size_t n)
{
	X509 **x = NULL;
	EVP_PKEY *key = NULL;
	PKCS8_PRIV_KEY_INFO *p8 = NULL;
	const uint8_t *pk;
	char oid[128];
	size_t i;
	int err, pk_len;

	if (n == 0)
		return wks__err(WKS_ERR_INVALID,
		                "a private key needs a certificate chain");
	if ((err = pkcs8_oid(oid, sizeof(oid), &pk, &pk_len, &p8, pkcs8,
	                     pkcs8_len)) < 0)
		return err;
	if (!(x = calloc(n, sizeof(*x)))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < n; i++)
		if ((err = x509_parse(cc, &x[i], certs[i], lens[i])) < 0) {
			err = wks__err(err, "chain certificate %zu is not valid X.509", i);
			goto done;
		}
	/* Every link, leaf included: chain[i] must be signed by chain[i+1]. */
	for (i = 0; i + 1 < n; i++) {
		EVP_PKEY *issuer = X509_get0_pubkey(x[i + 1]);

		if (!issuer) {
			err = wks__err(WKS_ERR_UNSUPPORTED,
			               "cannot check chain certificate %zu: issuer "
			               "key algorithm not supported", i);
			goto done;
		}
		if (X509_verify(x[i], issuer) != 1) {
			err = wks__err(WKS_ERR_INVALID,
			               "chain certificate %zu is not signed by "
			               "certificate %zu", i, i + 1);
			goto done;
		}
	}
	key = EVP_PKCS82PKEY_ex(p8, libctx_of(cc), propq_of(cc));
	if (key) {
		if (X509_check_private_key(x[0], key) != 1) {
			err = wks__err(WKS_ERR_INVALID,
			               "the private key does not match the leaf "
			               "certificate");
			goto done;
		}
	} else if (strncmp(oid, "2.16.840.1.101.3.4.3.1", 22) == 0 &&
	           strlen(oid) == 23 && oid[22] >= '7' && oid[22] <= '9') {
		if (!mldsa_matches(cc, pk, pk_len, x[0])) {
			err = wks__err(WKS_ERR_INVALID,
			               "the ML-DSA private key does not match the "
			               "leaf certificate");
			goto done;
		}
	} else {
		err = wks__err(WKS_ERR_UNSUPPORTED,
		               "cannot check a private key of algorithm %s", oid);
		goto done;
	}
	err = WKS_OK;
done:
	EVP_PKEY_free(key);
	PKCS8_PRIV_KEY_INFO_free(p8);
	if (x)
		for (i = 0; i < n; i++)
			X509_free(x[i]);
	free(x);
	return err;
}

/*
 * The entry points.  OpenSSL reports why a parse or check failed on the
 * calling thread's error queue, and some calls that succeed leave entries
 * there too (a decoder that tried and rejected a key format).  libwks has
 * its own error model (wks_error_detail()), so each entry point removes
 * what OpenSSL queued during the call and nothing else: an application
 * that uses OpenSSL itself (a TLS server checking ERR_get_error() after
 * SSL_read()) never finds stale entries from libwks, and entries it
 * queued before the call stay.  tests/test_errqueue.c checks both.
 */
int wks__x509_parse_cc(const wks_crypto_ctx *cc, X509 **out,
                       const uint8_t *der, size_t len)
{
	int err;

	ERR_set_mark();
	err = x509_parse(cc, out, der, len);
	ERR_pop_to_mark();
	return err;
}

int wks__x509_parse(X509 **out, const uint8_t *der, size_t len)
{
	return wks__x509_parse_cc(NULL, out, der, len);
}

int wks__x509_check_cc(const wks_crypto_ctx *cc, const uint8_t *der,
                       size_t len)
{
	X509 *x = NULL;
	int err = wks__x509_parse_cc(cc, &x, der, len);

	X509_free(x);
	return err;
}

int wks__x509_check(const uint8_t *der, size_t len)
{
	return wks__x509_check_cc(NULL, der, len);
}

int wks__x509_der(wks_buf *out, X509 *cert)
{
	int err;

	ERR_set_mark();
	err = x509_der(out, cert);
	ERR_pop_to_mark();
	return err;
}

int wks__pkcs8_algorithm(char *out, size_t out_len, const uint8_t *der,
                         size_t len)
{
	int err;

	ERR_set_mark();
	err = pkcs8_algorithm(out, out_len, der, len);
	ERR_pop_to_mark();
	return err;
}

int wks__pkey_from_pkcs8_cc(const wks_crypto_ctx *cc, EVP_PKEY **out,
                            const uint8_t *der, size_t len)
{
	int err;

	ERR_set_mark();
	err = pkey_from_pkcs8(cc, out, der, len);
	ERR_pop_to_mark();
	return err;
}

int wks__pkey_from_pkcs8(EVP_PKEY **out, const uint8_t *der, size_t len)
{
	return wks__pkey_from_pkcs8_cc(NULL, out, der, len);
}

int wks__pkcs8_from_pkey(wks_buf *out, EVP_PKEY *key)
{
	int err;

	ERR_set_mark();
	err = pkcs8_from_pkey(out, key);
	ERR_pop_to_mark();
	return err;
}

int wks__check_key_and_chain_cc(const wks_crypto_ctx *cc,
                                const uint8_t *pkcs8, size_t pkcs8_len,
                                const uint8_t *const *certs,
                                const size_t *lens, size_t n)
{
	int err;

	ERR_set_mark();
	err = check_key_and_chain(cc, pkcs8, pkcs8_len, certs, lens, n);
	ERR_pop_to_mark();
	return err;
}

int wks__check_key_and_chain(const uint8_t *pkcs8, size_t pkcs8_len,
                             const uint8_t *const *certs, const size_t *lens,
                             size_t n)
{
	return wks__check_key_and_chain_cc(NULL, pkcs8, pkcs8_len, certs, lens,
	                                   n);
}
