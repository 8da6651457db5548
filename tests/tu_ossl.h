/* The OpenSSL calls the tests use as a reference (PBKDF2, HMAC, SHA-2,
 * SHAKE256, PEM files, DER of certificates and keys): OpenSSL itself in
 * the OpenSSL build; in the wolfCrypt build (WKS_CRYPTO_WOLFCRYPT) the
 * same names from wolfSSL's OpenSSL compatibility layer
 * (<wolfssl/openssl/...>, in Debian's libwolfssl), so that no test links
 * libcrypto there.  Include it instead of <openssl/...>. */
#ifndef WKS_TESTS_TU_OSSL_H
#define WKS_TESTS_TU_OSSL_H

#include <wks/backend.h>

#ifdef WKS_CRYPTO_WOLFCRYPT
#include <wolfssl/options.h>
#include <wolfssl/openssl/bio.h>
#include <wolfssl/openssl/err.h>
#include <wolfssl/openssl/evp.h>
#include <wolfssl/openssl/hmac.h>
#include <wolfssl/openssl/objects.h>
#include <wolfssl/openssl/pem.h>
#include <wolfssl/openssl/rand.h>
#include <wolfssl/openssl/sha.h>
#include <wolfssl/openssl/x509.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/pwdbased.h>
#else
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#endif

#endif
