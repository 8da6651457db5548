/* X.509 / PKCS#8 work on wolfCrypt: the certificate check of every load,
 * key algorithm names, the key and chain checks of setKeyEntry.
 *
 * A stored certificate must be loadable whatever its algorithms (an
 * ML-DSA certificate that this wolfCrypt cannot verify still loads, as on
 * OpenSSL 3.0), so wks__x509_check() is a strict DER walk of the X.509
 * structure (RFC 5280 4.1) without wolfCrypt's decoder.  The set-time
 * checks use wolfCrypt: ParseCert() for an issuer's public key,
 * wc_CheckCertSigPubKey() for each signature, the key decoders for the
 * key <-> leaf match.  Where the linked wolfCrypt lacks the algorithm
 * (ML-DSA, SLH-DSA in Debian's 5.5.4; X25519, X448 and DSA have no check
 * here) the check is refused with WKS_ERR_UNSUPPORTED naming it; ML-DSA
 * and SLH-DSA leaf matches are made at the DER level (pqc.c), as on
 * OpenSSL. */
#include "crypto/pki.h"
#include "crypto/pqc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/asn.h>
#include <wolfssl/wolfcrypt/asn_public.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/ed25519.h>
#include <wolfssl/wolfcrypt/ed448.h>
#include <wolfssl/wolfcrypt/error-crypt.h>
#include <wolfssl/wolfcrypt/rsa.h>
#include <wolfssl/version.h>

#include "util/error.h"
#include "util/wipe.h"
#include "wks/wks.h"

/* ---- a strict DER reader ----------------------------------------------- */

typedef struct {
	const uint8_t *p;
	size_t len;
} span;

/* One TLV at *p within [*p, end): tag byte, definite minimal length. */
static int take(const uint8_t **p, const uint8_t *end, uint8_t *tag,
                span *content, span *whole)
{
	const uint8_t *q = *p;
	size_t left = (size_t)(end - q), len, hdr = 2, k, i;

	if (left < 2 || (q[0] & 0x1f) == 0x1f)
		return 0;
	len = q[1];
	if (len & 0x80) {
		k = len & 0x7f;
		if (k == 0 || k > sizeof(size_t) || left < 2 + k || q[2] == 0)
			return 0;
		len = 0;
		for (i = 0; i < k; i++)
			len = (len << 8) | q[2 + i];
		if (len < 0x80)
			return 0;
		hdr += k;
	}
	if (len > left - hdr)
		return 0;
	if (tag)
		*tag = q[0];
	if (content) {
		content->p = q + hdr;
		content->len = len;
	}
	if (whole) {
		whole->p = q;
		whole->len = hdr + len;
	}
	*p = q + hdr + len;
	return 1;
}

static int expect(const uint8_t **p, const uint8_t *end, uint8_t want,
                  span *content, span *whole)
{
	const uint8_t *q = *p;
	uint8_t tag;

	if (!take(&q, end, &tag, content, whole) || tag != want)
		return 0;
	*p = q;
	return 1;
}

/* An AlgorithmIdentifier: SEQUENCE { OID, params... }. */
static int alg_id(const uint8_t **p, const uint8_t *end, span *oid)
{
	span a;
	const uint8_t *q;

	if (!expect(p, end, 0x30, &a, NULL))
		return 0;
	q = a.p;
	return expect(&q, a.p + a.len, 0x06, oid, NULL) && oid->len > 0;
}

/* The parts of a certificate that the checks need, from the walk. */
typedef struct {
	span tbs;      /* tbsCertificate, whole TLV */
	span spki;     /* subjectPublicKeyInfo, whole TLV */
	span key_oid;  /* its algorithm OID's contents */
	span key_params; /* what follows that OID in its AlgorithmIdentifier */
	span key_bits; /* the BIT STRING's contents after the unused-bits byte */
} cert_parts;

/*
 * Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm,
 * signatureValue BIT STRING }, tbsCertificate ::= SEQUENCE { [0] version
 * OPTIONAL, serialNumber INTEGER, signature AlgorithmIdentifier, issuer
 * Name, validity SEQUENCE { Time, Time }, subject Name,
 * subjectPublicKeyInfo SEQUENCE { AlgorithmIdentifier, BIT STRING },
 * [1] [2] [3] OPTIONAL }, in DER, nothing after the certificate.
 */
static int cert_walk(cert_parts *c, const uint8_t *der, size_t len)
{
	const uint8_t *p = der, *end = der + len, *q, *qe, *r, *re;
	span cert, tbs, v, x, alg, spki, bits, oid;
	uint8_t tag;
	int last = 0;

	memset(c, 0, sizeof(*c));
	if (!expect(&p, end, 0x30, &cert, NULL) || p != end)
		return 0;
	q = cert.p;
	qe = cert.p + cert.len;
	if (!expect(&q, qe, 0x30, &tbs, &c->tbs) || !alg_id(&q, qe, &oid) ||
	    !expect(&q, qe, 0x03, &bits, NULL) || bits.len < 1 || q != qe)
		return 0;
	r = tbs.p;
	re = tbs.p + tbs.len;
	if (r < re && *r == 0xa0) {
		const uint8_t *vp;

		if (!take(&r, re, NULL, &v, NULL))
			return 0;
		vp = v.p;
		if (!expect(&vp, v.p + v.len, 0x02, &x, NULL) || x.len != 1 ||
		    x.p[0] > 2 || vp != v.p + v.len)
			return 0;
	}
	if (!expect(&r, re, 0x02, &x, NULL) || x.len == 0 ||
	    !alg_id(&r, re, &oid) ||
	    !expect(&r, re, 0x30, &x, NULL) ||   /* issuer */
	    !expect(&r, re, 0x30, &v, NULL) ||   /* validity */
	    !expect(&r, re, 0x30, &x, NULL) ||   /* subject */
	    !expect(&r, re, 0x30, &spki, &c->spki))
		return 0;
	/* validity: two Times (UTCTime 0x17 or GeneralizedTime 0x18) */
	q = v.p;
	qe = v.p + v.len;
	if (!take(&q, qe, &tag, NULL, NULL) || (tag != 0x17 && tag != 0x18) ||
	    !take(&q, qe, &tag, NULL, NULL) || (tag != 0x17 && tag != 0x18) ||
	    q != qe)
		return 0;
	q = spki.p;
	qe = spki.p + spki.len;
	if (!expect(&q, qe, 0x30, &alg, NULL) ||
	    !expect(&q, qe, 0x03, &bits, NULL) || bits.len < 1 || q != qe)
		return 0;
	r = alg.p;
	if (!expect(&r, alg.p + alg.len, 0x06, &c->key_oid, NULL) ||
	    c->key_oid.len == 0)
		return 0;
	c->key_params.p = r;
	c->key_params.len = (size_t)(alg.p + alg.len - r);
	c->key_bits.p = bits.p + 1;
	c->key_bits.len = bits.len - 1;
	/* [1] issuerUniqueID, [2] subjectUniqueID, [3] extensions, in order */
	r = spki.p + spki.len;
	while (r < re) {
		int n;

		if (!take(&r, re, &tag, NULL, NULL))
			return 0;
		n = tag == 0x81 || tag == 0xa1 ? 1 : tag == 0x82 || tag == 0xa2 ? 2
		  : tag == 0xa3 ? 3 : 0;
		if (n <= last)
			return 0;
		last = n;
	}
	return 1;
}

/* ---- algorithm names ----------------------------------------------------- */

/* The DER contents of the key OIDs named here. */
static const struct {
	const char *name;
	uint8_t len;
	uint8_t der[10];
} key_algs[] = {
	{ "RSA", 9, { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01 } },
	{ "RSASSA-PSS", 9, { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a } },
	{ "EC", 7, { 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01 } },
	{ "ED25519", 3, { 0x2b, 0x65, 0x70 } },
	{ "ED448", 3, { 0x2b, 0x65, 0x71 } },
	{ "X25519", 3, { 0x2b, 0x65, 0x6e } },
	{ "X448", 3, { 0x2b, 0x65, 0x6f } },
	{ "DSA", 7, { 0x2a, 0x86, 0x48, 0xce, 0x38, 0x04, 0x01 } },
	{ "ML-DSA-44", 9, { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11 } },
	{ "ML-DSA-65", 9, { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12 } },
	{ "ML-DSA-87", 9, { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13 } },
};
#define N_ALGS (sizeof(key_algs) / sizeof(key_algs[0]))

enum { ALG_RSA = 0, ALG_PSS, ALG_EC, ALG_ED25519, ALG_ED448, ALG_X25519,
       ALG_X448, ALG_DSA, ALG_UNKNOWN = -1 };

static int alg_index(const uint8_t *oid, size_t len)
{
	size_t i;

	for (i = 0; i < N_ALGS; i++)
		if (key_algs[i].len == len && memcmp(key_algs[i].der, oid, len) == 0)
			return (int)i;
	return ALG_UNKNOWN;
}

/* An OID's contents in dotted form (as OBJ_obj2txt(, 1) writes it). */
static int oid_text(char *out, size_t out_len, const uint8_t *p, size_t len)
{
	size_t i, n = 0;
	uint64_t v = 0;
	int first = 1, w;

	if (!len || (p[len - 1] & 0x80) || out_len == 0)
		return 0;
	out[0] = '\0';
	for (i = 0; i < len; i++) {
		if (v == 0 && p[i] == 0x80)
			return 0; /* not minimal */
		if (v >> 56)
			return 0;
		v = (v << 7) | (p[i] & 0x7f);
		if (p[i] & 0x80)
			continue;
		if (first) {
			unsigned a = v < 40 ? 0 : v < 80 ? 1 : 2;

			w = snprintf(out + n, out_len - n, "%u.%llu", a,
			             (unsigned long long)(v - 40u * a));
			first = 0;
		} else {
			w = snprintf(out + n, out_len - n, ".%llu",
			             (unsigned long long)v);
		}
		if (w < 0 || (size_t)w >= out_len - n)
			return 0;
		n += (size_t)w;
		v = 0;
	}
	return 1;
}

int wks__pkcs8_algorithm(char *out, size_t out_len, const uint8_t *der,
                         size_t len)
{
	wks_p8 f;
	char oid[128];
	int i;

	if (!wks__p8_walk(&f, der, len))
		return wks__err(WKS_ERR_FORMAT, "not a PKCS#8 private key");
	if ((i = alg_index(f.oid.p, f.oid.len)) != ALG_UNKNOWN) {
		snprintf(out, out_len, "%s", key_algs[i].name);
		return WKS_OK;
	}
	if (wks__pqc_kind(&f) == WKS_PQC_SLHDSA) {
		snprintf(out, out_len, "SLH-DSA");
		return WKS_OK;
	}
	if (!oid_text(oid, sizeof(oid), f.oid.p, f.oid.len))
		return wks__err(WKS_ERR_FORMAT, "PKCS#8 key without an algorithm");
	snprintf(out, out_len, "%s", oid);
	return WKS_OK;
}

/* A name for a certificate's key algorithm, for messages. */
static void cert_alg_name(char *out, size_t out_len, const cert_parts *c)
{
	wks_p8 f;
	int i = alg_index(c->key_oid.p, c->key_oid.len);

	if (i != ALG_UNKNOWN) {
		snprintf(out, out_len, "%s", key_algs[i].name);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.oid.p = c->key_oid.p;
	f.oid.len = c->key_oid.len;
	if (wks__pqc_kind(&f) == WKS_PQC_SLHDSA)
		snprintf(out, out_len, "SLH-DSA");
	else if (!oid_text(out, out_len, c->key_oid.p, c->key_oid.len))
		snprintf(out, out_len, "unknown");
}

/* ---- certificates ---------------------------------------------------------- */

int wks__x509_check(const uint8_t *der, size_t len)
{
	cert_parts c;

	if (len == 0 || len > INT32_MAX)
		return wks__err(WKS_ERR_FORMAT, "certificate of %zu bytes", len);
	if (!cert_walk(&c, der, len))
		return wks__err(WKS_ERR_FORMAT, "unparsable X.509 certificate");
	return WKS_OK;
}

int wks__x509_check_cc(const wks_crypto_ctx *cc, const uint8_t *der,
                       size_t len)
{
	(void)cc;
	return wks__x509_check(der, len);
}

/* Whether this wolfCrypt can use a key of algorithm index i in a
 * certificate (decode it, verify with it). */
static int alg_supported(int i)
{
	switch (i) {
	case ALG_RSA:
		return 1;
	case ALG_PSS:
#ifdef WC_RSA_PSS
		return 1;
#else
		return 0;
#endif
	case ALG_EC:
#ifdef HAVE_ECC
		return 1;
#else
		return 0;
#endif
	case ALG_ED25519:
#ifdef HAVE_ED25519
		return 1;
#else
		return 0;
#endif
	case ALG_ED448:
#ifdef HAVE_ED448
		return 1;
#else
		return 0;
#endif
	default:
		return 0;
	}
}

/* The bits of an RSA modulus: the first INTEGER of the SEQUENCE at der
 * (RSAPrivateKey after its version, or RSAPublicKey), 0 if unreadable. */
static size_t rsa_bits(const uint8_t *der, size_t len, int has_version)
{
	const uint8_t *p = der, *q, *qe;
	span seq, n;
	size_t bits;

	if (!expect(&p, der + len, 0x30, &seq, NULL))
		return 0;
	q = seq.p;
	qe = seq.p + seq.len;
	if ((has_version && !expect(&q, qe, 0x02, &n, NULL)) ||
	    !expect(&q, qe, 0x02, &n, NULL) || n.len == 0)
		return 0;
	while (n.len > 1 && n.p[0] == 0) {
		n.p++;
		n.len--;
	}
	for (bits = 8 * n.len; bits && !(n.p[0] & (1u << ((bits - 1) % 8)));
	     bits--)
		;
	return bits;
}

#ifndef RSA_MAX_SIZE
#define RSA_MAX_SIZE 4096
#endif

static int rsa_too_big(size_t bits)
{
	return wks__err(WKS_ERR_UNSUPPORTED, "cannot check an RSA key of %zu "
	                "bits: wolfCrypt " LIBWOLFSSL_VERSION_STRING " here "
	                "handles RSA up to %d bits (RSA_MAX_SIZE)", bits,
	                RSA_MAX_SIZE);
}

/* chain[i] signed by chain[i + 1] (issuer). */
static int check_link(const uint8_t *der, size_t len, const cert_parts *cp,
                      const uint8_t *idder, size_t idlen,
                      const cert_parts *ip, size_t i)
{
	DecodedCert dc;
	char name[64];
	int alg = alg_index(ip->key_oid.p, ip->key_oid.len), ret, err;

	(void)cp;
	if (!alg_supported(alg)) {
		cert_alg_name(name, sizeof(name), ip);
		return wks__err(WKS_ERR_UNSUPPORTED, "cannot check chain "
		                "certificate %zu: wolfCrypt " LIBWOLFSSL_VERSION_STRING
		                " here has no %s (the issuer's key algorithm)", i,
		                name);
	}
	/* Its RSA refuses a modulus above RSA_MAX_SIZE: a signature it
	 * cannot check is not a bad one. */
	if ((alg == ALG_RSA || alg == ALG_PSS) &&
	    rsa_bits(ip->key_bits.p, ip->key_bits.len, 0) > RSA_MAX_SIZE)
		return rsa_too_big(rsa_bits(ip->key_bits.p, ip->key_bits.len, 0));
	/* The issuer's public key as wolfCrypt's signature check takes it. */
	InitDecodedCert(&dc, idder, (word32)idlen, NULL);
	ret = ParseCert(&dc, CERT_TYPE, NO_VERIFY, NULL);
	if (ret != 0) {
		FreeDecodedCert(&dc);
		return wks__err(WKS_ERR_FORMAT, "chain certificate %zu is not "
		                "valid X.509 (wolfCrypt: error %d)", i + 1, ret);
	}
	ret = wc_CheckCertSigPubKey(der, (word32)len, NULL, dc.publicKey,
	                            dc.pubKeySize, (int)dc.keyOID);
	FreeDecodedCert(&dc);
	if (ret == 0)
		err = WKS_OK;
	else if (ret == ASN_SIG_HASH_E || ret == NOT_COMPILED_IN)
		err = wks__err(WKS_ERR_UNSUPPORTED, "cannot check chain "
		               "certificate %zu: wolfCrypt cannot check its "
		               "signature algorithm (error %d)", i, ret);
	else
		err = wks__err(WKS_ERR_INVALID, "chain certificate %zu is not "
		               "signed by certificate %zu", i, i + 1);
	return err;
}

/* ---- key <-> leaf ---------------------------------------------------------- */

static int mismatch(void)
{
	return wks__err(WKS_ERR_INVALID, "the private key does not match "
	                "the leaf certificate");
}

static int bad_key(const char *alg)
{
	return wks__err(WKS_ERR_FORMAT, "not a valid %s private key", alg);
}

static int match_rsa(const wks_p8 *f, const cert_parts *c)
{
	RsaKey priv, pub;
	uint8_t n1[1024], e1[16], n2[1024], e2[16];
	word32 n1l = sizeof(n1), e1l = sizeof(e1), n2l = sizeof(n2),
	       e2l = sizeof(e2), idx = 0;
	int err, ok;

	if (wc_InitRsaKey(&priv, NULL) != 0)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if (wc_InitRsaKey(&pub, NULL) != 0) {
		wc_FreeRsaKey(&priv);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	if (wc_RsaPrivateKeyDecode(f->priv.p, &idx, &priv,
	                           (word32)f->priv.len) != 0 ||
	    idx != f->priv.len ||
	    wc_RsaFlattenPublicKey(&priv, e1, &e1l, n1, &n1l) != 0) {
		/* (a key beyond what this wolfCrypt's integers hold is not a
		 * malformed one) */
		if (rsa_bits(f->priv.p, f->priv.len, 1) > RSA_MAX_SIZE)
			err = rsa_too_big(rsa_bits(f->priv.p, f->priv.len, 1));
		else
			err = bad_key("RSA");
		goto done;
	}
	idx = 0;
	ok = wc_RsaPublicKeyDecode(c->key_bits.p, &idx, &pub,
	                           (word32)c->key_bits.len) == 0 &&
	     wc_RsaFlattenPublicKey(&pub, e2, &e2l, n2, &n2l) == 0;
	if (!ok)
		err = wks__err(WKS_ERR_FORMAT, "the leaf certificate's RSA "
		               "public key does not decode");
	else if (n1l != n2l || e1l != e2l || memcmp(n1, n2, n1l) != 0 ||
	         memcmp(e1, e2, e1l) != 0)
		err = mismatch();
	else
		err = WKS_OK;
done:
	wc_FreeRsaKey(&priv);
	wc_FreeRsaKey(&pub);
	wks_wipe(&priv, sizeof(priv));
	return err;
}

#ifdef HAVE_ECC
/* The curve of an EC AlgorithmIdentifier's parameters (a named curve
 * OID), or -1. */
static int ec_curve(span params)
{
	const uint8_t *p = params.p;
	span oid;

	if (!expect(&p, params.p + params.len, 0x06, &oid, NULL) ||
	    p != params.p + params.len)
		return -1;
	return wc_ecc_get_curve_id_from_oid(oid.p, (word32)oid.len);
}

static int match_ec(const wks_p8 *f, const cert_parts *c)
{
	ecc_key priv, pub;
	span seq, ver, d, x, key_pub = { NULL, 0 };
	const uint8_t *p = f->priv.p, *q, *qe;
	uint8_t pt1[160], pt2[160];
	word32 l1 = sizeof(pt1), l2 = sizeof(pt2);
	int curve, ccurve, err, ok;
	uint8_t tag;

	curve = ec_curve((span){ f->params.p, f->params.len });
	ccurve = ec_curve(c->key_params);
	if (curve < 0)
		return wks__err(WKS_ERR_UNSUPPORTED, "cannot check an EC private "
		                "key on a curve wolfCrypt does not name");
	/* ECPrivateKey ::= SEQUENCE { version 1, privateKey OCTET STRING,
	 * [0] parameters OPTIONAL, [1] publicKey BIT STRING OPTIONAL } */
	if (!expect(&p, f->priv.p + f->priv.len, 0x30, &seq, NULL) ||
	    p != f->priv.p + f->priv.len)
		return bad_key("EC");
	q = seq.p;
	qe = seq.p + seq.len;
	if (!expect(&q, qe, 0x02, &ver, NULL) || ver.len != 1 || ver.p[0] != 1 ||
	    !expect(&q, qe, 0x04, &d, NULL) || d.len == 0)
		return bad_key("EC");
	while (q < qe) {
		if (!take(&q, qe, &tag, &x, NULL))
			return bad_key("EC");
		if (tag == 0xa1) {
			const uint8_t *r = x.p;
			span bits;

			if (!expect(&r, x.p + x.len, 0x03, &bits, NULL) ||
			    bits.len < 2 || bits.p[0] != 0)
				return bad_key("EC");
			key_pub.p = bits.p + 1;
			key_pub.len = bits.len - 1;
		}
	}
	if (wc_ecc_init(&priv) != 0)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if (wc_ecc_init(&pub) != 0) {
		wc_ecc_free(&priv);
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	}
	/* The key's public point: the one it carries, as OpenSSL takes it,
	 * else made from the private scalar. */
	if (key_pub.p)
		ok = wc_ecc_import_private_key_ex(d.p, (word32)d.len, key_pub.p,
		                                  (word32)key_pub.len, &priv,
		                                  curve) == 0;
	else
		ok = wc_ecc_import_private_key_ex(d.p, (word32)d.len, NULL, 0,
		                                  &priv, curve) == 0 &&
		     wc_ecc_make_pub(&priv, NULL) == 0;
	if (!ok || wc_ecc_export_x963(&priv, pt1, &l1) != 0) {
		err = bad_key("EC");
		goto done;
	}
	if (ccurve != curve) {
		err = mismatch();
		goto done;
	}
	if (wc_ecc_import_x963_ex(c->key_bits.p, (word32)c->key_bits.len, &pub,
	                          ccurve) != 0 ||
	    wc_ecc_export_x963(&pub, pt2, &l2) != 0) {
		err = wks__err(WKS_ERR_FORMAT, "the leaf certificate's EC public "
		               "key does not decode");
		goto done;
	}
	err = l1 == l2 && memcmp(pt1, pt2, l1) == 0 ? WKS_OK : mismatch();
done:
	wc_ecc_free(&priv);
	wc_ecc_free(&pub);
	wks_wipe(&priv, sizeof(priv));
	return err;
}
#endif

/* Ed25519 / Ed448: privateKey is OCTET STRING { the seed }. */
static int eddsa_seed(const wks_p8 *f, size_t want, span *seed)
{
	const uint8_t *p = f->priv.p;

	return f->params.len == 0 &&
	       expect(&p, f->priv.p + f->priv.len, 0x04, seed, NULL) &&
	       p == f->priv.p + f->priv.len && seed->len == want;
}

#ifdef HAVE_ED25519
static int match_ed25519(const wks_p8 *f, const cert_parts *c)
{
	ed25519_key k;
	span seed;
	uint8_t pub[ED25519_PUB_KEY_SIZE];
	word32 pl = sizeof(pub);
	int err;

	if (!eddsa_seed(f, ED25519_KEY_SIZE, &seed))
		return bad_key("Ed25519");
	if (wc_ed25519_init(&k) != 0)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if (wc_ed25519_import_private_only(seed.p, (word32)seed.len, &k) != 0 ||
	    wc_ed25519_make_public(&k, pub, pl) != 0)
		err = bad_key("Ed25519");
	else
		err = c->key_bits.len == pl &&
		      memcmp(c->key_bits.p, pub, pl) == 0 ? WKS_OK : mismatch();
	wc_ed25519_free(&k);
	wks_wipe(&k, sizeof(k));
	return err;
}
#endif

#ifdef HAVE_ED448
static int match_ed448(const wks_p8 *f, const cert_parts *c)
{
	ed448_key k;
	span seed;
	uint8_t pub[ED448_PUB_KEY_SIZE];
	word32 pl = sizeof(pub);
	int err;

	if (!eddsa_seed(f, ED448_KEY_SIZE, &seed))
		return bad_key("Ed448");
	if (wc_ed448_init(&k) != 0)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if (wc_ed448_import_private_only(seed.p, (word32)seed.len, &k) != 0 ||
	    wc_ed448_make_public(&k, pub, pl) != 0)
		err = bad_key("Ed448");
	else
		err = c->key_bits.len == pl &&
		      memcmp(c->key_bits.p, pub, pl) == 0 ? WKS_OK : mismatch();
	wc_ed448_free(&k);
	wks_wipe(&k, sizeof(k));
	return err;
}
#endif

static int match_key(const wks_p8 *f, int alg, const cert_parts *leaf)
{
	int calg = alg_index(leaf->key_oid.p, leaf->key_oid.len);

	/* A key matches only a certificate key of its own type (OpenSSL's
	 * EVP_PKEY_eq: an RSASSA-PSS key never matches an rsaEncryption
	 * certificate, nor the other way round). */
	if (alg_supported(alg) && calg != alg)
		return mismatch();
	switch (alg) {
	case ALG_RSA:
	case ALG_PSS:
		return match_rsa(f, leaf);
#ifdef HAVE_ECC
	case ALG_EC:
		return match_ec(f, leaf);
#endif
#ifdef HAVE_ED25519
	case ALG_ED25519:
		return match_ed25519(f, leaf);
#endif
#ifdef HAVE_ED448
	case ALG_ED448:
		return match_ed448(f, leaf);
#endif
	default:
		break;
	}
	{
		char name[128];

		if (alg >= 0)
			snprintf(name, sizeof(name), "%s", key_algs[alg].name);
		else if (!oid_text(name, sizeof(name), f->oid.p, f->oid.len))
			snprintf(name, sizeof(name), "unknown");
		return wks__err(WKS_ERR_UNSUPPORTED, "cannot check a private key "
		                "of algorithm %s: wolfCrypt "
		                LIBWOLFSSL_VERSION_STRING " here has no check for "
		                "it", name);
	}
}

int wks__check_key_and_chain(const uint8_t *pkcs8, size_t pkcs8_len,
                             const uint8_t *const *certs, const size_t *lens,
                             size_t n)
{
	cert_parts *c = NULL;
	wks_p8 f;
	int pqc, alg, err;
	size_t i;

	if (n == 0)
		return wks__err(WKS_ERR_INVALID,
		                "a private key needs a certificate chain");
	if (!wks__p8_walk(&f, pkcs8, pkcs8_len))
		return wks__err(WKS_ERR_FORMAT, "not a PKCS#8 private key");
	pqc = wks__pqc_kind(&f);
	alg = alg_index(f.oid.p, f.oid.len);
	/* As OpenSSL 3.0 reads PKCS#8: version 0 or 1 PrivateKeyInfo without
	 * the [1] public key (which only ML-DSA and SLH-DSA keys may carry,
	 * checked at the DER level). */
	if (!pqc && (f.has_pub || f.version < 0 || f.version > 1))
		return wks__err(WKS_ERR_FORMAT, "not a PKCS#8 private key");
	if (!(c = calloc(n, sizeof(*c))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		if (lens[i] == 0 || lens[i] > INT32_MAX ||
		    !cert_walk(&c[i], certs[i], lens[i])) {
			err = wks__err(WKS_ERR_FORMAT,
			               "chain certificate %zu is not valid X.509", i);
			goto done;
		}
	}
	/* Every link, leaf included: chain[i] must be signed by chain[i+1]. */
	for (i = 0; i + 1 < n; i++)
		if ((err = check_link(certs[i], lens[i], &c[i], certs[i + 1],
		                      lens[i + 1], &c[i + 1], i)) < 0)
			goto done;
	if (pqc)
		err = wks__pqc_match(NULL, &f, certs[0], lens[0]);
	else
		err = match_key(&f, alg, &c[0]);
done:
	free(c);
	return err;
}

int wks__check_key_and_chain_cc(const wks_crypto_ctx *cc,
                                const uint8_t *pkcs8, size_t pkcs8_len,
                                const uint8_t *const *certs,
                                const size_t *lens, size_t n)
{
	(void)cc;
	return wks__check_key_and_chain(pkcs8, pkcs8_len, certs, lens, n);
}
