/* Crypto primitives used by the store, one file per backend
 * (crypto_openssl.c, crypto_wolfcrypt.c; cmake -DWKS_CRYPTO=...): the
 * only files besides pki_<backend>.c and sha512_<backend>.c that include
 * a crypto library's headers.  They convert the library's results into
 * wks_err codes. */
#ifndef WKS_CRYPTO_CRYPTO_H
#define WKS_CRYPTO_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#include <wks/backend.h>

#ifdef WKS_CRYPTO_OPENSSL
#include <openssl/types.h>
#endif

#include "crypto/kdf.h"
#include "util/buf.h"

#define WKS_SALT_LEN 16
#define WKS_IV_LEN 16
#define WKS_MAC_LEN 64
#define WKS_AES_KEY_LEN 32
#define WKS_DK_LEN 96       /* entry key: AES key (32) + HMAC key (64) */
#define WKS_STORE_KEY_LEN 64

/* Which PBKDF2 implementation to use (property libwks.kdf.impl):
 * libwks's own, or the backend's (OpenSSL's PKCS5_PBKDF2_HMAC, or
 * wolfCrypt's wc_PBKDF2; the value is named WKS_KDF_BACKEND_NAME). */
typedef enum { WKS_KDF_NATIVE = 0, WKS_KDF_OPENSSL = 1 } wks_kdf_impl;

#ifdef WKS_CRYPTO_OPENSSL
#define WKS_KDF_BACKEND_NAME "openssl"
#else
#define WKS_KDF_BACKEND_NAME "wolfcrypt"
#endif

/* The 64-bit words that hold one backend SHA-512 state (an OpenSSL
 * SHA512_CTX, a wolfCrypt wc_Sha512): each backend asserts its fit. */
#ifdef WKS_CRYPTO_OPENSSL
#define WKS_SHA512_STATE_WORDS 28
#else
#define WKS_SHA512_STATE_WORDS 40
#endif

/* A SHA-512 state that can be copied by value (the cache's prepared
 * tag and shielding states, shield.c): init/update/final on the
 * backend's own SHA-512.  None can fail on a valid state. */
typedef struct {
	uint64_t w[WKS_SHA512_STATE_WORDS];
} wks_sha512_state;

void wks__sha512_init(wks_sha512_state *s);
void wks__sha512_update(wks_sha512_state *s, const uint8_t *data, size_t len);
void wks__sha512_final(uint8_t out[64], wks_sha512_state *s);

struct wks_crypto_ctx;
/* SHAKE256(in) -> out[out_len] (pqc.c's ML-DSA check), in the store's
 * context cc (NULL: the default); WKS_ERR_CRYPTO "SHAKE256 is not
 * available" where the backend lacks it. */
int wks__shake256_cc(const struct wks_crypto_ctx *cc, uint8_t *out,
                     size_t out_len, const uint8_t *in, size_t in_len);

/* Overwrite n bytes in a way the compiler cannot remove (util/wipe.c's
 * wks_wipe() is this). */
void wks__cleanse(void *p, size_t n);

#ifdef WKS_CRYPTO_OPENSSL
/*
 * The OpenSSL library context and property query of one store
 * (wks_store_new_ex()), with the algorithms fetched from it once, when the
 * store is made.  A NULL wks_crypto_ctx * means OpenSSL's default context
 * and no query: today's fast paths (the per-thread AES context, HMAC on
 * prepared SHA-512 states, the native PBKDF2).  A non-NULL one sends
 * every primitive through the context: AES-256-CBC, HMAC-SHA512 and
 * PBKDF2 are the fetched objects below (NULL when the context lacks them:
 * the operation then fails with WKS_ERR_CRYPTO, nothing falls back to the
 * default context), the RNG is the context's (RAND_bytes_ex), and X.509
 * and PKCS#8 objects are made in it (pki.h).  The native PBKDF2 still
 * serves a context that offers PBKDF2 and is not FIPS (its results are
 * identical); with `fips` set PBKDF2 always comes from the context.
 */
typedef struct wks_crypto_ctx {
	OSSL_LIB_CTX *libctx; /* not owned; NULL = the default context */
	char *propq;          /* owned copy, or NULL */
	int fips;             /* default properties or propq ask for fips=yes */
	EVP_CIPHER *aes;      /* AES-256-CBC */
	EVP_MAC *hmac;        /* HMAC (digest SHA512 set per use) */
	EVP_KDF *pbkdf2;      /* PBKDF2 */
	EVP_MD *sha512;       /* SHA512: what HMAC and PBKDF2 use */
} wks_crypto_ctx;

/* *out = NULL for (NULL, NULL), else a new context with its fetches
 * done (missing algorithms are left NULL, not an error). */
int wks__crypto_ctx_new(wks_crypto_ctx **out, OSSL_LIB_CTX *libctx,
                        const char *propq);
#else
/* wolfCrypt has no library contexts: no store has one (wks_store_new_ex()
 * is OpenSSL's), every cc is NULL.  The type exists so that the store's
 * code is the same on both backends. */
typedef struct wks_crypto_ctx {
	int fips; /* never set */
} wks_crypto_ctx;
#endif
void wks__crypto_ctx_free(wks_crypto_ctx *cc);

/* TEST ONLY: how many PBKDF2 derivations ran on the native
 * implementation through a non-NULL context (see wks__pbkdf2_cc). */
unsigned long wks__kdf_native_ctx_runs(void);

/* TEST ONLY: derivations run through wks__pbkdf2_cc() and
 * wks__pbkdf2_batch_cc() (any implementation), and the batches of two
 * derivations or more that ran side by side on the native one. */
unsigned long wks__kdf_test_derivations(void);
unsigned long wks__kdf_test_batches(void);

/* Fill out with n random bytes (RAND_bytes). */
int wks__random(uint8_t *out, size_t n);

/*
 * PBKDF2-HMAC-SHA512(pw, salt, iter) -> out[out_len], by the chosen
 * implementation; `threads` is libwks.kdf.threads (0 = auto).  The
 * results of every implementation are identical.
 */
int wks__pbkdf2(uint8_t *out, size_t out_len, const uint8_t *pw, size_t pw_len,
                const uint8_t *salt, size_t salt_len, uint32_t iter,
                wks_kdf_impl impl, int threads);

/* An HMAC-SHA512 key with its inner and outer SHA-512 states prepared
 * (each state is an OpenSSL SHA512_CTX, kept opaque here), so that a MAC
 * costs no key processing.  Wipe it with wks_wipe() after use. */
typedef struct {
	uint64_t inner[WKS_SHA512_STATE_WORDS];
	uint64_t outer[WKS_SHA512_STATE_WORDS];
} wks_hmac_key;

void wks__hmac_prepare(wks_hmac_key *k, const uint8_t *key, size_t key_len);
void wks__hmac_compute(uint8_t out[WKS_MAC_LEN], const wks_hmac_key *k,
                       const uint8_t *data, size_t len);

/* Constant-time equality (CRYPTO_memcmp): 1 if equal. */
int wks__mac_equal(const uint8_t *a, const uint8_t *b, size_t n);

/* HMAC-SHA512(key, data) -> out[64]. */
int wks__hmac_sha512(uint8_t out[WKS_MAC_LEN], const uint8_t *key,
                     size_t key_len, const uint8_t *data, size_t len);

/* AES-256-CBC with PKCS#5 padding.  Decryption checks the padding
 * strictly and reports a bad one as WKS_ERR_INTEGRITY; the output buffer
 * is wiped on every failure. */
int wks__aes256cbc_encrypt(wks_buf *out, const uint8_t key[WKS_AES_KEY_LEN],
                           const uint8_t iv[WKS_IV_LEN],
                           const uint8_t *pt, size_t pt_len);
int wks__aes256cbc_decrypt(wks_buf *out, const uint8_t key[WKS_AES_KEY_LEN],
                           const uint8_t iv[WKS_IV_LEN],
                           const uint8_t *ct, size_t ct_len);

/* Zero the CPU's vector registers (x86-64: xmm/ymm/zmm, whichever the CPU
 * has; elsewhere nothing), which keep the last bytes that memcpy or a
 * cipher moved and end up in core dumps and signal frames.  Called at the
 * end of the API calls that handle keys. */
void wks__wipe_registers(void);

/* The same primitives through a store's context cc (NULL: exactly the
 * functions above).  HMAC can fail here (a context without HMAC). */
int wks__random_cc(const wks_crypto_ctx *cc, uint8_t *out, size_t n);
int wks__pbkdf2_cc(const wks_crypto_ctx *cc, uint8_t *out, size_t out_len,
                   const uint8_t *pw, size_t pw_len, const uint8_t *salt,
                   size_t salt_len, uint32_t iter, wks_kdf_impl impl,
                   int threads);
/*
 * Several PBKDF2-HMAC-SHA512 derivations at once (kdf.h's wks_kdf_job),
 * as wks__pbkdf2_cc() would make them one by one: the native
 * implementation runs them as one batch over every SIMD lane and thread
 * (wks__pbkdf2_sha512_batch()); OpenSSL's and a FIPS context's run one
 * after the other.  On failure every output is wiped.
 */
int wks__pbkdf2_batch_cc(const wks_crypto_ctx *cc, const wks_kdf_job *jobs,
                         size_t njobs, wks_kdf_impl impl, int threads);

/* How many 64-byte PBKDF2 blocks one pass of the native batch runs side
 * by side here with `threads` (0 = auto): SIMD lanes x threads.  A batch
 * of fewer blocks costs about as long as one of this many. */
size_t wks__pbkdf2_batch_width(int threads);

/* How many more 64-byte blocks a batch of `blocks` blocks could take at
 * no cost (the free lanes of its last pass, by the native batch's cost
 * model), with implementation `impl` in context cc; 0 where batches run
 * one derivation after another. */
size_t wks__pbkdf2_batch_spare(const wks_crypto_ctx *cc, size_t blocks,
                               wks_kdf_impl impl, int threads);

int wks__hmac_sha512_cc(const wks_crypto_ctx *cc, uint8_t out[WKS_MAC_LEN],
                        const uint8_t *key, size_t key_len,
                        const uint8_t *data, size_t len);
int wks__aes256cbc_encrypt_cc(const wks_crypto_ctx *cc, wks_buf *out,
                              const uint8_t key[WKS_AES_KEY_LEN],
                              const uint8_t iv[WKS_IV_LEN],
                              const uint8_t *pt, size_t pt_len);
int wks__aes256cbc_decrypt_cc(const wks_crypto_ctx *cc, wks_buf *out,
                              const uint8_t key[WKS_AES_KEY_LEN],
                              const uint8_t iv[WKS_IV_LEN],
                              const uint8_t *ct, size_t ct_len);

/* SHA-256 of data (for tests and tools). */
int wks__sha256(uint8_t out[32], const uint8_t *data, size_t len);

#endif
