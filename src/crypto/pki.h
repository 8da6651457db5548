/* X.509 and PKCS#8 checks: pki_openssl.c, pki_wolfcrypt.c.  The calls
 * with OpenSSL types exist in the OpenSSL build only. */
#ifndef WKS_CRYPTO_PKI_H
#define WKS_CRYPTO_PKI_H

#include <stddef.h>
#include <stdint.h>

#include "crypto/crypto.h"

#ifdef WKS_CRYPTO_OPENSSL
#include <openssl/types.h>
#endif
#include "util/buf.h"

/* WKS_OK if der[len] is exactly one parsable X.509 certificate, else
 * WKS_ERR_FORMAT. */
int wks__x509_check(const uint8_t *der, size_t len);

#ifdef WKS_CRYPTO_OPENSSL
/* Parse one certificate (WKS_ERR_FORMAT if it is not exactly one). */
int wks__x509_parse(X509 **out, const uint8_t *der, size_t len);

/* DER of an X509 into caller memory (wks_buf). */
int wks__x509_der(wks_buf *out, X509 *cert);
#endif

/*
 * The algorithm name of a PKCS#8 key: "RSA", "RSASSA-PSS", "EC",
 * "ED25519", "ED448", "X25519", "X448", "DSA", "ML-DSA-44/65/87",
 * "SLH-DSA", else the dotted OID.  WKS_ERR_FORMAT if not PKCS#8.
 */
int wks__pkcs8_algorithm(char *out, size_t out_len, const uint8_t *der,
                         size_t len);

#ifdef WKS_CRYPTO_OPENSSL
/* PKCS#8 DER -> EVP_PKEY (WKS_ERR_UNSUPPORTED if OpenSSL can't). */
int wks__pkey_from_pkcs8(EVP_PKEY **out, const uint8_t *der, size_t len);

/* EVP_PKEY -> PKCS#8 DER (appended to out). */
int wks__pkcs8_from_pkey(wks_buf *out, EVP_PKEY *key);
#endif

/*
 * The checks of setKeyEntry, done fully (docs/FORMAT.md "Where libwks is
 * stricter"): the key parses, every certificate parses, each certificate
 * is signed by the next one (leaf included; dates not checked), and the
 * key matches the leaf's public key.  ML-DSA / SLH-DSA keys that OpenSSL
 * cannot parse or match are compared at the DER level (pqc.h).
 * WKS_ERR_INVALID / WKS_ERR_FORMAT / WKS_ERR_UNSUPPORTED with a detail.
 */
int wks__check_key_and_chain(const uint8_t *pkcs8, size_t pkcs8_len,
                             const uint8_t *const *certs, const size_t *lens,
                             size_t n);

/*
 * The same through a store's library context (crypto.h; NULL = the
 * functions above): certificates are made with X509_new_ex() in it, keys
 * with EVP_PKCS82PKEY_ex(), digests fetched from it, so their public keys
 * are decoded and their signatures checked by its providers.
 */
#ifdef WKS_CRYPTO_OPENSSL
int wks__x509_parse_cc(const wks_crypto_ctx *cc, X509 **out,
                       const uint8_t *der, size_t len);
int wks__pkey_from_pkcs8_cc(const wks_crypto_ctx *cc, EVP_PKEY **out,
                            const uint8_t *der, size_t len);
#endif
int wks__x509_check_cc(const wks_crypto_ctx *cc, const uint8_t *der,
                       size_t len);
int wks__check_key_and_chain_cc(const wks_crypto_ctx *cc,
                                const uint8_t *pkcs8, size_t pkcs8_len,
                                const uint8_t *const *certs,
                                const size_t *lens, size_t n);

#endif
