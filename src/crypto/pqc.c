/* PKCS#8 at the DER level; ML-DSA and SLH-DSA keys against their leaf
 * certificate (spec 7.1) without ML-DSA or SLH-DSA in OpenSSL. */
#include "crypto/pqc.h"

#include <string.h>

#include "util/error.h"

/* ---- a strict DER reader --------------------------------------------- */

/* One TLV at *p within [*p, end): a one-byte tag (no high tag numbers),
 * a definite length in its shortest form.  Moves *p past it. */
static int der_take(const uint8_t **p, const uint8_t *end, uint8_t *tag,
                    wks_der_span *content, wks_der_span *whole)
{
	const uint8_t *q = *p;
	size_t left = (size_t)(end - q), len, hdr = 2, k, i;

	if (left < 2 || (q[0] & 0x1f) == 0x1f)
		return 0;
	len = q[1];
	if (len & 0x80) {
		k = len & 0x7f;
		if (k == 0 || k > 4 || left - 2 < k || q[2] == 0)
			return 0;
		for (len = 0, i = 0; i < k; i++)
			len = len << 8 | q[2 + i];
		if (len < 0x80)
			return 0;
		hdr += k;
	}
	if (len > left - hdr)
		return 0;
	*tag = q[0];
	content->p = q + hdr;
	content->len = len;
	if (whole) {
		whole->p = q;
		whole->len = hdr + len;
	}
	*p = q + hdr + len;
	return 1;
}

/* The TLV at *p must have tag `want`. */
static int der_expect(const uint8_t **p, const uint8_t *end, uint8_t want,
                      wks_der_span *content, wks_der_span *whole)
{
	uint8_t tag;

	return der_take(p, end, &tag, content, whole) && tag == want;
}

static int span_eq(wks_der_span a, wks_der_span b)
{
	return a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
}

/* ---- PKCS#8 ------------------------------------------------------------ */

int wks__p8_walk(wks_p8 *f, const uint8_t *der, size_t len)
{
	const uint8_t *p = der, *end = der + len, *q, *qe;
	wks_der_span seq, ver, alg, c;
	uint8_t tag;
	size_t i;

	memset(f, 0, sizeof(*f));
	if (!der || !der_expect(&p, end, 0x30, &seq, NULL) || p != end)
		return 0;
	p = seq.p;
	end = seq.p + seq.len;
	if (!der_expect(&p, end, 0x02, &ver, NULL) || ver.len == 0)
		return 0;
	f->version = ver.len <= 4 && !(ver.p[0] & 0x80) ? 0 : -1;
	for (i = 0; f->version >= 0 && i < ver.len; i++)
		f->version = f->version << 8 | ver.p[i];
	if (!der_expect(&p, end, 0x30, &alg, NULL))
		return 0;
	q = alg.p;
	qe = alg.p + alg.len;
	if (!der_expect(&q, qe, 0x06, &f->oid, &f->oid_tlv) || f->oid.len == 0)
		return 0;
	f->params.p = q;
	f->params.len = (size_t)(qe - q);
	if (!der_expect(&p, end, 0x04, &f->priv, NULL))
		return 0;
	if (p < end && *p == 0xA0 && !der_take(&p, end, &tag, &c, NULL))
		return 0;
	if (p < end && (*p == 0x81 || *p == 0xA1)) {
		if (!der_take(&p, end, &f->pub_tag, &f->pub, NULL))
			return 0;
		f->has_pub = 1;
	}
	return p == end;
}

/* 2.16.840.1.101.3.4.3: NIST's signature algorithms. */
static const uint8_t nist_sig[] = { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
                                    0x03 };

/* The last arc of a NIST signature OID, or -1. */
static int nist_arc(wks_der_span oid)
{
	if (oid.len != sizeof(nist_sig) + 1 ||
	    memcmp(oid.p, nist_sig, sizeof(nist_sig)) != 0 ||
	    (oid.p[sizeof(nist_sig)] & 0x80))
		return -1;
	return oid.p[sizeof(nist_sig)];
}

int wks__pqc_kind(const wks_p8 *f)
{
	int arc = nist_arc(f->oid);

	if (arc >= 17 && arc <= 19)
		return WKS_PQC_MLDSA;
	if (arc >= 20 && arc <= 31)
		return WKS_PQC_SLHDSA;
	return WKS_PQC_NONE;
}

/* ---- the certificate's SubjectPublicKeyInfo ------------------------------ */

typedef struct {
	wks_der_span oid_tlv; /* the AlgorithmIdentifier's OID */
	wks_der_span params;  /* after it: empty, 05 00, or anything else */
	wks_der_span pk;      /* the BIT STRING's bits (unused-bits octet 0) */
} cert_spki;

/* Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version
 * OPTIONAL, serial, signature, issuer, validity, subject, spki, ... },
 * ... } */
static int cert_spki_of(cert_spki *s, const uint8_t *der, size_t len)
{
	const uint8_t *p = der, *end = der + len, *q, *qe;
	wks_der_span cert, tbs, spki, alg, c;
	uint8_t tag;
	int i;

	if (!der_expect(&p, end, 0x30, &cert, NULL) || p != end)
		return 0;
	p = cert.p;
	if (!der_expect(&p, cert.p + cert.len, 0x30, &tbs, NULL))
		return 0;
	p = tbs.p;
	end = tbs.p + tbs.len;
	if (p < end && *p == 0xA0 && !der_take(&p, end, &tag, &c, NULL))
		return 0;
	for (i = 0; i < 5; i++) /* serial, signature, issuer, validity, subject */
		if (!der_take(&p, end, &tag, &c, NULL))
			return 0;
	if (!der_expect(&p, end, 0x30, &spki, NULL))
		return 0;
	p = spki.p;
	end = spki.p + spki.len;
	if (!der_expect(&p, end, 0x30, &alg, NULL))
		return 0;
	q = alg.p;
	qe = alg.p + alg.len;
	if (!der_expect(&q, qe, 0x06, &c, &s->oid_tlv))
		return 0;
	s->params.p = q;
	s->params.len = (size_t)(qe - q);
	if (!der_expect(&p, end, 0x03, &c, NULL) || p != end || c.len < 1 ||
	    c.p[0] != 0)
		return 0;
	s->pk.p = c.p + 1;
	s->pk.len = c.len - 1;
	return 1;
}

/* What wolfJCE's stripNullAlgIdParams() leaves of the parameters: none
 * if they were absent or one NULL (05 00); anything else stays. */
static int params_absent_after_strip(wks_der_span params)
{
	return params.len == 0 ||
	       (params.len == 2 && params.p[0] == 0x05 && params.p[1] == 0x00);
}

/* The public key attached to a version 1 key: [1] IMPLICIT BIT STRING
 * (81 len 00 pk), also without the unused-bits octet when the length says
 * so, or the BIT STRING wrapped explicitly (A1 len 03 len 00 pk). */
static int attached_pk(wks_der_span *pk, const wks_p8 *f, size_t pk_len)
{
	wks_der_span c = f->pub;
	const uint8_t *p;
	uint8_t tag;

	if (f->pub_tag == 0xA1) {
		p = f->pub.p;
		if (!der_take(&p, f->pub.p + f->pub.len, &tag, &c, NULL) ||
		    tag != 0x03 || p != f->pub.p + f->pub.len)
			return 0;
	}
	if (c.len == pk_len + 1 && c.p[0] == 0) {
		pk->p = c.p + 1;
		pk->len = pk_len;
		return 1;
	}
	if (f->pub_tag == 0x81 && c.len == pk_len) {
		*pk = c;
		return 1;
	}
	return 0;
}

/* ---- ML-DSA and SLH-DSA ------------------------------------------------- */

static const struct {
	const char *name;
	size_t pk_len, sk_len;
} mldsa_sets[3] = {
	{ "ML-DSA-44", 1312, 2560 },
	{ "ML-DSA-65", 1952, 4032 },
	{ "ML-DSA-87", 2592, 4896 },
};

/* n of SLH-DSA's parameter sets, by OID arc 20..31 (FIPS 205 / RFC 9909:
 * SHA2-128s, -128f, -192s, -192f, -256s, -256f, then the same for SHAKE). */
static const size_t slhdsa_n[12] = { 16, 16, 24, 24, 32, 32,
                                     16, 16, 24, 24, 32, 32 };

/*
 * The ML-DSA privateKey contents (RFC 9881's choice, and wolfCrypt's
 * older shapes): seed [0] (80 20 ...), expandedKey (04 ...), both
 * (30 { 04 seed, 04 expandedKey }), or either one unwrapped (exactly 32
 * or exactly sk_len bytes).
 */
static int mldsa_parts(wks_der_span *seed, wks_der_span *expanded,
                       wks_der_span priv, size_t sk_len)
{
	const uint8_t *p = priv.p, *end = priv.p + priv.len;
	wks_der_span c, a, b;
	uint8_t tag;

	seed->len = expanded->len = 0;
	if (priv.len == 32) {
		*seed = priv;
		return 1;
	}
	if (priv.len == sk_len) {
		*expanded = priv;
		return 1;
	}
	if (!der_take(&p, end, &tag, &c, NULL) || p != end)
		return 0;
	if (tag == 0x80 && c.len == 32) {
		*seed = c;
		return 1;
	}
	if (tag == 0x04 && c.len == sk_len) {
		*expanded = c;
		return 1;
	}
	if (tag != 0x30)
		return 0;
	p = c.p;
	end = c.p + c.len;
	if (!der_expect(&p, end, 0x04, &a, NULL) || a.len != 32 ||
	    !der_expect(&p, end, 0x04, &b, NULL) || b.len != sk_len || p != end)
		return 0;
	*seed = a;
	*expanded = b;
	return 1;
}

/* FIPS 204: sk = rho(32) || K(32) || tr(64) || ..., pk = rho || t1 and
 * tr = SHAKE256(pk, 64): an expanded key names its public key exactly. */
static int mldsa_expanded_matches(const wks_crypto_ctx *cc,
                                  wks_der_span expanded, wks_der_span pk,
                                  int *ok)
{
	uint8_t tr[64];
	int err;

	if ((err = wks__shake256_cc(cc, tr, sizeof(tr), pk.p, pk.len)) < 0)
		return err;
	*ok = memcmp(expanded.p, pk.p, 32) == 0 &&
	      memcmp(expanded.p + 64, tr, sizeof(tr)) == 0;
	return WKS_OK;
}

static int mismatch(const char *alg, const char *why)
{
	return wks__err(WKS_ERR_INVALID, "the %s private key does not match the "
	                "leaf certificate: %s", alg, why);
}

int wks__pqc_match(const wks_crypto_ctx *cc, const wks_p8 *f,
                   const uint8_t *cert, size_t cert_len)
{
	wks_der_span own = { NULL, 0 }, att, seed = { NULL, 0 },
	             expanded = { NULL, 0 };
	const char *alg;
	cert_spki s;
	size_t pk_len;
	int arc = nist_arc(f->oid), kind = wks__pqc_kind(f), ok = 0, err;

	if (kind == WKS_PQC_MLDSA) {
		alg = mldsa_sets[arc - 17].name;
		pk_len = mldsa_sets[arc - 17].pk_len;
		if (!mldsa_parts(&seed, &expanded, f->priv,
		                 mldsa_sets[arc - 17].sk_len))
			return wks__err(WKS_ERR_FORMAT, "malformed %s private key",
			                alg);
	} else if (kind == WKS_PQC_SLHDSA) {
		size_t n = slhdsa_n[arc - 20];

		alg = "SLH-DSA";
		pk_len = 2 * n;
		/* SK.seed || SK.prf || PK.seed || PK.root, n bytes each. */
		if (f->priv.len != 4 * n)
			return wks__err(WKS_ERR_FORMAT, "SLH-DSA private key of %zu "
			                "bytes, not %zu", f->priv.len, 4 * n);
		own.p = f->priv.p + 2 * n;
		own.len = pk_len;
	} else {
		return wks__err(WKS_ERR_UNSUPPORTED, "not an ML-DSA or SLH-DSA key");
	}
	if (f->has_pub) {
		if (!attached_pk(&att, f, pk_len))
			return wks__err(WKS_ERR_FORMAT, "malformed public key attached "
			                "to the %s private key", alg);
		if (own.p && !span_eq(att, own))
			return wks__err(WKS_ERR_INVALID, "the public key attached to "
			                "the %s private key is not its own", alg);
		own = att;
	}
	if (!cert_spki_of(&s, cert, cert_len))
		return wks__err(WKS_ERR_FORMAT, "unreadable SubjectPublicKeyInfo in "
		                "the leaf certificate");
	if (!span_eq(s.oid_tlv, f->oid_tlv))
		return mismatch(alg, "its key is of another algorithm");
	if (!params_absent_after_strip(s.params))
		return mismatch(alg, "its AlgorithmIdentifier has parameters");
	if (s.pk.len != pk_len)
		return mismatch(alg, "its public key has the wrong length");
	if (own.p && !span_eq(s.pk, own))
		return mismatch(alg, "another public key");
	if (kind == WKS_PQC_MLDSA) {
		if (expanded.len) {
			if ((err = mldsa_expanded_matches(cc, expanded, s.pk, &ok)) < 0)
				return err;
			if (!ok)
				return mismatch(alg, "another public key");
		} else if (!own.p) {
			return wks__err(WKS_ERR_UNSUPPORTED, "cannot check a seed-only "
			                "%s private key without its public key (needs "
			                "ML-DSA in OpenSSL)", alg);
		}
	}
	return WKS_OK;
}
