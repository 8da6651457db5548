/* Symmetric primitives on wolfSSL's wolfCrypt (cmake -DWKS_CRYPTO=wolfcrypt,
 * docs/BACKENDS.md): PBKDF2 (wc_PBKDF2), HMAC-SHA512 on prepared
 * wc_Sha512 states, AES-256-CBC with PKCS#5 padding done here (wolfCrypt's
 * CBC has none), SHA-256/512, SHAKE256, the random generator (one Hash
 * DRBG per thread, made anew in a forked child), constant-time compare and
 * wiping.  wolfCrypt has no library contexts: every wks_crypto_ctx * is
 * NULL here (crypto.h), and the _cc functions are the plain ones.
 *
 * On a FIPS wolfCrypt (HAVE_FIPS in wolfssl/options.h) only the
 * validated module's PBKDF2 runs: libwks.kdf.impl=native is served by
 * wc_PBKDF2 too, and no batch runs on the native kernels (docs/KDF.md,
 * "FIPS"). */
#include "crypto/crypto.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/hmac.h>
#include <wolfssl/wolfcrypt/pwdbased.h>
#include <wolfssl/wolfcrypt/random.h>
#include <wolfssl/wolfcrypt/sha256.h>
#include <wolfssl/wolfcrypt/sha3.h>
#include <wolfssl/wolfcrypt/sha512.h>

#include "crypto/kdf.h"
#include "util/error.h"
#include "util/wipe.h"

_Static_assert(sizeof(wc_Sha512) <= sizeof(((wks_hmac_key *)0)->inner),
               "wks_hmac_key too small for wc_Sha512");
_Static_assert(sizeof(wc_Sha512) <= sizeof(wks_sha512_state),
               "wks_sha512_state too small for wc_Sha512");

/* FIPS mode: on a FIPS wolfCrypt (HAVE_FIPS), or forced with
 * -DWKS_WOLFCRYPT_FIPS_MODE=1 to run these paths on any wolfCrypt (what
 * CI can test; docs/BACKENDS.md "FIPS"): PBKDF2 is only the module's
 * wc_PBKDF2 and HMAC-SHA512 only its wc_Hmac. */
#if defined(HAVE_FIPS) || (defined(WKS_WOLFCRYPT_FIPS_MODE) && WKS_WOLFCRYPT_FIPS_MODE)
#define WKS_NATIVE_KDF_ALLOWED 0
#else
#define WKS_NATIVE_KDF_ALLOWED 1
#endif

/* ---- wiping and comparing ----------------------------------------------
 * wolfCrypt's ForceZero and ConstantCompare are inline in its misc.c, not
 * exported: the same, here.  memset through a volatile function pointer
 * cannot be removed by the compiler. */
static void *(*volatile wipe_memset)(void *, int, size_t) = memset;

void wks__cleanse(void *p, size_t n)
{
	wipe_memset(p, 0, n);
}

int wks__mac_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	volatile uint8_t d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= (uint8_t)(a[i] ^ b[i]);
	return d == 0;
}

/* ---- SHA-512 states, SHA-256, SHAKE256 --------------------------------- */

/* wc_Sha512 copies by value (a software state: digest, buffer, lengths,
 * a heap pointer that is NULL here); its Update/Final fail only on NULL
 * arguments or hardware back ends, which this build has none of. */
void wks__sha512_init(wks_sha512_state *s)
{
	(void)wc_InitSha512((wc_Sha512 *)s->w);
}

void wks__sha512_update(wks_sha512_state *s, const uint8_t *data, size_t len)
{
	while (len) {
		word32 n = len > 0x40000000u ? 0x40000000u : (word32)len;

		(void)wc_Sha512Update((wc_Sha512 *)s->w, data, n);
		data += n;
		len -= n;
	}
}

void wks__sha512_final(uint8_t out[64], wks_sha512_state *s)
{
	(void)wc_Sha512Final((wc_Sha512 *)s->w, out);
}

int wks__sha256(uint8_t out[32], const uint8_t *data, size_t len)
{
	if (len > UINT32_MAX || wc_Sha256Hash(data, (word32)len, out) != 0)
		return wks__err(WKS_ERR_CRYPTO, "SHA-256 failed");
	return WKS_OK;
}

int wks__shake256_cc(const wks_crypto_ctx *cc, uint8_t *out, size_t out_len,
                     const uint8_t *in, size_t in_len)
{
#ifdef WOLFSSL_SHAKE256
	wc_Shake s;
	int ok;

	(void)cc;
	ok = in_len <= UINT32_MAX && out_len <= UINT32_MAX &&
	     wc_InitShake256(&s, NULL, INVALID_DEVID) == 0;
	if (ok) {
		ok = wc_Shake256_Update(&s, in, (word32)in_len) == 0 &&
		     wc_Shake256_Final(&s, out, (word32)out_len) == 0;
		wc_Shake256_Free(&s);
		wks_wipe(&s, sizeof(s));
	}
	if (!ok)
		return wks__err(WKS_ERR_CRYPTO, "SHAKE256 is not available");
	return WKS_OK;
#else
	(void)cc;
	(void)out;
	(void)out_len;
	(void)in;
	(void)in_len;
	return wks__err(WKS_ERR_CRYPTO, "SHAKE256 is not available");
#endif
}

/* ---- random bytes -------------------------------------------------------
 * A WC_RNG is not thread-safe: one per thread, seeded by wolfCrypt from
 * the OS on first use.  A forked child holds a copy of its parent's DRBG
 * state and would repeat its output: the owner's pid is kept with it and
 * a child makes its own. */
typedef struct {
	WC_RNG rng;
	pid_t pid;
} thread_rng;

static pthread_once_t rng_once = PTHREAD_ONCE_INIT;
static pthread_key_t rng_key;
static int rng_key_ok;

static void rng_free(void *p)
{
	thread_rng *t = p;

	wc_FreeRng(&t->rng);
	wks_wipe_free(t, sizeof(*t));
}

static void rng_init(void)
{
	rng_key_ok = pthread_key_create(&rng_key, rng_free) == 0;
}

static WC_RNG *thread_rng_get(void)
{
	thread_rng *t;

	pthread_once(&rng_once, rng_init);
	if (!rng_key_ok)
		return NULL;
	t = pthread_getspecific(rng_key);
	if (t && t->pid == getpid())
		return &t->rng;
	if (t) {
		/* Inherited over fork(): drop the copy (not the parent's). */
		pthread_setspecific(rng_key, NULL);
		rng_free(t);
	}
	if (!(t = calloc(1, sizeof(*t))))
		return NULL;
	if (wc_InitRng(&t->rng) != 0) {
		free(t);
		return NULL;
	}
	t->pid = getpid();
	if (pthread_setspecific(rng_key, t) != 0) {
		rng_free(t);
		return NULL;
	}
	return &t->rng;
}

int wks__random(uint8_t *out, size_t n)
{
	WC_RNG *rng;

	if (n > INT32_MAX || !(rng = thread_rng_get()))
		return wks__err(WKS_ERR_CRYPTO, "random number generator failed");
	while (n) {
		/* (wolfCrypt's DRBG gives at most RNG_MAX_BLOCK_LEN a call.) */
		word32 k = n > 0x10000 ? 0x10000 : (word32)n;

		if (wc_RNG_GenerateBlock(rng, out, k) != 0)
			return wks__err(WKS_ERR_CRYPTO,
			                "random number generator failed");
		out += k;
		n -= k;
	}
	return WKS_OK;
}

int wks__random_cc(const wks_crypto_ctx *cc, uint8_t *out, size_t n)
{
	(void)cc;
	return wks__random(out, n);
}

/* ---- PBKDF2 ------------------------------------------------------------- */

static atomic_ulong test_derivations, test_batches;

unsigned long wks__kdf_native_ctx_runs(void)
{
	return 0; /* no library contexts on wolfCrypt */
}

unsigned long wks__kdf_test_derivations(void)
{
	return atomic_load_explicit(&test_derivations, memory_order_relaxed);
}

unsigned long wks__kdf_test_batches(void)
{
	return atomic_load_explicit(&test_batches, memory_order_relaxed);
}

static int backend_pbkdf2(uint8_t *out, size_t out_len, const uint8_t *pw,
                          size_t pw_len, const uint8_t *salt, size_t salt_len,
                          uint32_t iter)
{
	if (wc_PBKDF2(out, pw, (int)pw_len, salt, (int)salt_len, (int)iter,
	              (int)out_len, WC_SHA512) != 0) {
		wks_wipe(out, out_len);
		return wks__err(WKS_ERR_CRYPTO, "PBKDF2 failed");
	}
	return WKS_OK;
}

int wks__pbkdf2(uint8_t *out, size_t out_len, const uint8_t *pw, size_t pw_len,
                const uint8_t *salt, size_t salt_len, uint32_t iter,
                wks_kdf_impl impl, int threads)
{
	if (iter == 0 || iter > INT32_MAX || pw_len > INT32_MAX ||
	    salt_len > INT32_MAX || out_len > INT32_MAX)
		return wks__err(WKS_ERR_INVALID, "PBKDF2 parameters out of range");
	if (impl == WKS_KDF_NATIVE && WKS_NATIVE_KDF_ALLOWED)
		return wks__pbkdf2_sha512_native(out, out_len, pw, pw_len, salt,
		                                  salt_len, iter, threads,
		                                  WKS_KDF_PATH_AUTO);
	return backend_pbkdf2(out, out_len, pw, pw_len, salt, salt_len, iter);
}

int wks__pbkdf2_cc(const wks_crypto_ctx *cc, uint8_t *out, size_t out_len,
                   const uint8_t *pw, size_t pw_len, const uint8_t *salt,
                   size_t salt_len, uint32_t iter, wks_kdf_impl impl,
                   int threads)
{
	(void)cc;
	atomic_fetch_add_explicit(&test_derivations, 1, memory_order_relaxed);
	return wks__pbkdf2(out, out_len, pw, pw_len, salt, salt_len, iter,
	                   impl, threads);
}

int wks__pbkdf2_batch_cc(const wks_crypto_ctx *cc, const wks_kdf_job *jobs,
                         size_t njobs, wks_kdf_impl impl, int threads)
{
	size_t i;
	int err = WKS_OK;

	if (!jobs && njobs)
		return wks__err(WKS_ERR_INVALID, "PBKDF2: no jobs");
	for (i = 0; i < njobs; i++)
		if (jobs[i].iter == 0 || jobs[i].iter > INT32_MAX ||
		    jobs[i].pw_len > INT32_MAX || jobs[i].salt_len > INT32_MAX ||
		    jobs[i].out_len > INT32_MAX)
			return wks__err(WKS_ERR_INVALID,
			                "PBKDF2 parameters out of range");
	if (impl == WKS_KDF_NATIVE && WKS_NATIVE_KDF_ALLOWED) {
		atomic_fetch_add_explicit(&test_derivations, njobs,
		                          memory_order_relaxed);
		if (njobs > 1)
			atomic_fetch_add_explicit(&test_batches, 1,
			                          memory_order_relaxed);
		err = wks__pbkdf2_sha512_batch(jobs, njobs, threads,
		                               WKS_KDF_PATH_AUTO);
	} else {
		for (i = 0; i < njobs && err == WKS_OK; i++)
			err = wks__pbkdf2_cc(cc, jobs[i].out, jobs[i].out_len,
			                     jobs[i].pw, jobs[i].pw_len,
			                     jobs[i].salt, jobs[i].salt_len,
			                     jobs[i].iter, impl, threads);
	}
	if (err < 0)
		for (i = 0; i < njobs; i++)
			if (jobs[i].out)
				wks_wipe(jobs[i].out, jobs[i].out_len);
	return err;
}

size_t wks__pbkdf2_batch_width(int threads)
{
	wks_kdf_path path = WKS_KDF_PATH_AUTO;

	if (!WKS_NATIVE_KDF_ALLOWED)
		return 1;
	if (threads < 0)
		threads = 0;
	wks__kdf_resolve_blocks(&path, &threads, 1024);
	return (size_t)threads * wks__kdf_path_lanes(path);
}

size_t wks__pbkdf2_batch_spare(const wks_crypto_ctx *cc, size_t blocks,
                               wks_kdf_impl impl, int threads)
{
	size_t t, k, limit;

	(void)cc;
	if (impl != WKS_KDF_NATIVE || !WKS_NATIVE_KDF_ALLOWED || blocks == 0)
		return 0;
	if (threads < 0)
		threads = 0;
	t = wks__kdf_estimate(blocks, threads);
	limit = wks__pbkdf2_batch_width(threads);
	for (k = 0; k < limit && wks__kdf_estimate(blocks + k + 1, threads) <= t;
	     k++)
		;
	return k;
}

/* ---- HMAC-SHA512 on prepared states ------------------------------------ */

void wks__hmac_prepare(wks_hmac_key *k, const uint8_t *key, size_t key_len)
{
	uint8_t block[128], kh[64];
	size_t i;

	memset(block, 0, sizeof(block));
	if (key_len > sizeof(block)) {
		wks_sha512_state h;

		wks__sha512_init(&h);
		wks__sha512_update(&h, key, key_len);
		wks__sha512_final(kh, &h);
		wks_wipe(&h, sizeof(h));
		memcpy(block, kh, sizeof(kh));
		wks_wipe(kh, sizeof(kh));
	} else if (key_len) {
		memcpy(block, key, key_len);
	}
	for (i = 0; i < sizeof(block); i++)
		block[i] ^= 0x36;
	(void)wc_InitSha512((wc_Sha512 *)k->inner);
	(void)wc_Sha512Update((wc_Sha512 *)k->inner, block, sizeof(block));
	for (i = 0; i < sizeof(block); i++)
		block[i] ^= 0x36 ^ 0x5c;
	(void)wc_InitSha512((wc_Sha512 *)k->outer);
	(void)wc_Sha512Update((wc_Sha512 *)k->outer, block, sizeof(block));
	wks_wipe(block, sizeof(block));
}

void wks__hmac_compute(uint8_t out[WKS_MAC_LEN], const wks_hmac_key *k,
                       const uint8_t *data, size_t len)
{
	wks_sha512_state c;
	uint8_t ih[64];

	memcpy(c.w, k->inner, sizeof(wc_Sha512));
	wks__sha512_update(&c, data, len);
	wks__sha512_final(ih, &c);
	memcpy(c.w, k->outer, sizeof(wc_Sha512));
	wks__sha512_update(&c, ih, sizeof(ih));
	wks__sha512_final(out, &c);
	wks_wipe(ih, sizeof(ih));
	wks_wipe(&c, sizeof(c));
}

int wks__hmac_sha512(uint8_t out[WKS_MAC_LEN], const uint8_t *key,
                     size_t key_len, const uint8_t *data, size_t len)
{
#if WKS_NATIVE_KDF_ALLOWED
	wks_hmac_key k;

	wks__hmac_prepare(&k, key, key_len);
	wks__hmac_compute(out, &k, data, len);
	wks_wipe(&k, sizeof(k));
	return WKS_OK;
#else
	/* The module's HMAC service, not HMAC built on its SHA-512. */
	Hmac h;
	int ok = key_len <= UINT32_MAX &&
	         wc_HmacInit(&h, NULL, INVALID_DEVID) == 0;

	if (ok) {
		ok = wc_HmacSetKey(&h, WC_SHA512, key, (word32)key_len) == 0;
		while (ok && len) {
			word32 n = len > 0x40000000u ? 0x40000000u : (word32)len;

			ok = wc_HmacUpdate(&h, data, n) == 0;
			data += n;
			len -= n;
		}
		ok = ok && wc_HmacFinal(&h, out) == 0;
		wc_HmacFree(&h);
		wks_wipe(&h, sizeof(h));
	}
	if (!ok) {
		wks_wipe(out, WKS_MAC_LEN);
		return wks__err(WKS_ERR_CRYPTO, "HMAC-SHA512 failed");
	}
	return WKS_OK;
#endif
}

int wks__hmac_sha512_cc(const wks_crypto_ctx *cc, uint8_t out[WKS_MAC_LEN],
                        const uint8_t *key, size_t key_len,
                        const uint8_t *data, size_t len)
{
	(void)cc;
	return wks__hmac_sha512(out, key, key_len, data, len);
}

/* ---- AES-256-CBC, PKCS#5 padding ----------------------------------------
 * wolfCrypt's CBC works on whole blocks; the padding is added and checked
 * here as OpenSSL's EVP does it: every pad byte must equal p, 1 <= p <= 16
 * (checked without a data-dependent branch over the pad bytes).  The Aes
 * object (key schedule, chaining block) lives on the stack and is wiped
 * after each call. */
static int aes_cbc(wks_buf *out, const uint8_t key[WKS_AES_KEY_LEN],
                   const uint8_t iv[WKS_IV_LEN], const uint8_t *in,
                   size_t in_len, int enc)
{
	Aes aes;
	uint8_t last[16];
	uint8_t *dst;
	size_t full, i;
	int err = WKS_OK, ok;

	if (in_len > INT32_MAX - 32)
		return wks__err(WKS_ERR_LIMIT, "data too large to encrypt");
	if ((err = wks_buf_reserve(out, in_len + 16)) < 0)
		return err;
	dst = out->ptr + out->len;
	if (wc_AesInit(&aes, NULL, INVALID_DEVID) != 0)
		return wks__err(WKS_ERR_CRYPTO, "AES-256-CBC failed");
	ok = wc_AesSetKey(&aes, key, WKS_AES_KEY_LEN, iv,
	                  enc ? AES_ENCRYPTION : AES_DECRYPTION) == 0;
	if (enc) {
		size_t pad = 16 - in_len % 16;

		full = in_len - in_len % 16;
		memcpy(last, in + full, in_len % 16);
		memset(last + in_len % 16, (int)pad, pad);
		ok = ok && (full == 0 ||
		            wc_AesCbcEncrypt(&aes, dst, in, (word32)full) == 0) &&
		     wc_AesCbcEncrypt(&aes, dst + full, last, 16) == 0;
		if (ok)
			out->len += full + 16;
		else
			err = wks__err(WKS_ERR_CRYPTO,
			               "AES-256-CBC encryption failed");
	} else {
		uint8_t p, bad;

		ok = ok && wc_AesCbcDecrypt(&aes, dst, in, (word32)in_len) == 0;
		if (!ok) {
			err = wks__err(WKS_ERR_CRYPTO,
			               "AES-256-CBC decryption failed");
		} else {
			p = dst[in_len - 1];
			bad = (uint8_t)(p == 0) | (uint8_t)(p > 16);
			for (i = 1; i <= 16; i++) {
				/* mask: this byte is part of the padding */
				uint8_t in_pad = (uint8_t)(0 - (uint8_t)(i <= p));

				bad |= in_pad & (uint8_t)(dst[in_len - i] != p);
			}
			if (bad)
				err = wks__err(WKS_ERR_INTEGRITY,
				               "bad padding after decryption");
			else {
				out->len += in_len - p;
				/* (the pad bytes, left past the end) */
				wks_wipe(dst + in_len - p, p);
			}
		}
	}
	if (err < 0)
		wks_wipe(dst, in_len + 16);
	wc_AesFree(&aes);
	wks_wipe(&aes, sizeof(aes));
	wks_wipe(last, sizeof(last));
	return err;
}

int wks__aes256cbc_encrypt(wks_buf *out, const uint8_t key[WKS_AES_KEY_LEN],
                           const uint8_t iv[WKS_IV_LEN],
                           const uint8_t *pt, size_t pt_len)
{
	return aes_cbc(out, key, iv, pt, pt_len, 1);
}

int wks__aes256cbc_decrypt(wks_buf *out, const uint8_t key[WKS_AES_KEY_LEN],
                           const uint8_t iv[WKS_IV_LEN],
                           const uint8_t *ct, size_t ct_len)
{
	if (ct_len == 0 || ct_len % 16 != 0)
		return wks__err(WKS_ERR_INTEGRITY,
		                "ciphertext length %zu is not a positive multiple of 16",
		                ct_len);
	return aes_cbc(out, key, iv, ct, ct_len, 0);
}

int wks__aes256cbc_encrypt_cc(const wks_crypto_ctx *cc, wks_buf *out,
                              const uint8_t key[WKS_AES_KEY_LEN],
                              const uint8_t iv[WKS_IV_LEN],
                              const uint8_t *pt, size_t pt_len)
{
	(void)cc;
	return wks__aes256cbc_encrypt(out, key, iv, pt, pt_len);
}

int wks__aes256cbc_decrypt_cc(const wks_crypto_ctx *cc, wks_buf *out,
                              const uint8_t key[WKS_AES_KEY_LEN],
                              const uint8_t iv[WKS_IV_LEN],
                              const uint8_t *ct, size_t ct_len)
{
	(void)cc;
	return wks__aes256cbc_decrypt(out, key, iv, ct, ct_len);
}

void wks__crypto_ctx_free(wks_crypto_ctx *cc)
{
	(void)cc; /* never made on wolfCrypt */
}
