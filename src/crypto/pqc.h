/* PKCS#8 read at the DER level, and the key/certificate match of ML-DSA
 * and SLH-DSA keys, which OpenSSL 3.0 can neither parse nor compare. */
#ifndef WKS_CRYPTO_PQC_H
#define WKS_CRYPTO_PQC_H

#include <stddef.h>
#include <stdint.h>

#include "crypto/crypto.h"

typedef struct {
	const uint8_t *p;
	size_t len;
} wks_der_span;

/*
 * The fields of a PKCS#8 PrivateKeyInfo (version 0) or OneAsymmetricKey
 * (RFC 5958, version 1):
 *
 *   SEQUENCE { INTEGER version, SEQUENCE { OID, params... },
 *              OCTET STRING privateKey, [0] attributes OPTIONAL,
 *              [1] publicKey OPTIONAL }
 *
 * DER only (definite, minimal lengths), nothing after the SEQUENCE.
 * Spans point into the input.
 */
typedef struct {
	long version;         /* -1 if not a small non-negative INTEGER */
	wks_der_span oid;     /* the OID's contents */
	wks_der_span oid_tlv; /* the OID, tag and length included */
	wks_der_span params;  /* what follows the OID in the AlgorithmIdentifier */
	wks_der_span priv;    /* privateKey contents */
	int has_pub;
	uint8_t pub_tag;      /* 0x81 ([1] IMPLICIT BIT STRING) or 0xA1 */
	wks_der_span pub;     /* publicKey contents */
} wks_p8;

/* 1 and *f filled if der[len] has the shape above, else 0. */
int wks__p8_walk(wks_p8 *f, const uint8_t *der, size_t len);

/* The algorithm of a PKCS#8 OID: 0 = neither, else ML-DSA or SLH-DSA. */
enum { WKS_PQC_NONE = 0, WKS_PQC_MLDSA, WKS_PQC_SLHDSA };
int wks__pqc_kind(const wks_p8 *f);

/*
 * Whether the ML-DSA or SLH-DSA key `f` belongs to the certificate
 * cert[cert_len] (spec 7.1): the certificate's SubjectPublicKeyInfo, with
 * an explicit NULL AlgorithmIdentifier parameter stripped, must equal
 * SEQUENCE { SEQUENCE { key OID }, BIT STRING { public key } } with the
 * key's own public key: for SLH-DSA the second half of the private key
 * (PK.seed || PK.root); for ML-DSA the public key attached to a version 1
 * key, and in any case one that the expanded private key was made from
 * (its rho and tr = SHAKE256(pk, 64)).  WKS_OK on a match,
 * WKS_ERR_INVALID on a mismatch, WKS_ERR_FORMAT for a malformed key or
 * certificate, WKS_ERR_UNSUPPORTED for a seed-only ML-DSA key without its
 * public key (checking it needs ML-DSA arithmetic).
 */
int wks__pqc_match(const wks_crypto_ctx *cc, const wks_p8 *f,
                   const uint8_t *cert, size_t cert_len);

#endif
