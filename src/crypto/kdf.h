/* PBKDF2-HMAC-SHA512, native implementation (see docs/KDF.md).
 *
 * The inner and outer HMAC states are prepared once per derivation; each
 * iteration runs two bare SHA-512 compressions on one fixed block.
 * Independent 64-byte output blocks are computed concurrently (SIMD lanes
 * and/or a small thread pool).  The output is identical to OpenSSL's
 * PKCS5_PBKDF2_HMAC with EVP_sha512() for every input. */
#ifndef WKS_CRYPTO_KDF_H
#define WKS_CRYPTO_KDF_H

#include <stddef.h>
#include <stdint.h>

/* Code paths, for tests and benchmarks.  AUTO picks the fastest one
 * available on this CPU. */
typedef enum {
	WKS_KDF_PATH_AUTO = 0,
	WKS_KDF_PATH_SCALAR = 1, /* portable C compression function */
	WKS_KDF_PATH_OPENSSL = 2, /* OpenSSL's SHA512_Transform-based assembly */
	WKS_KDF_PATH_AVX2 = 3     /* 4 lanes in AVX2 registers, if the CPU has it */
} wks_kdf_path;

/*
 * threads: 0 = auto (whatever is fastest here), 1 = single-threaded,
 * n = at most n threads from the pool.  Returns WKS_OK or a wks_err
 * (WKS_ERR_UNSUPPORTED if `path` is not available on this CPU).
 */
int wks__pbkdf2_sha512_native(uint8_t *out, size_t out_len,
                              const uint8_t *pw, size_t pw_len,
                              const uint8_t *salt, size_t salt_len,
                              uint32_t iter, int threads, wks_kdf_path path);

/* 1 if the path is available on this CPU. */
int wks__kdf_path_available(wks_kdf_path path);

#endif
