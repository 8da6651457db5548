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
	WKS_KDF_PATH_AVX2 = 3,    /* 4 lanes in AVX2 registers, if the CPU has it */
	WKS_KDF_PATH_AVX512 = 4,  /* 4 lanes in ymm registers with the AVX-512VL
	                           * rotate and ternary-logic instructions */
	WKS_KDF_PATH_AVX512X8 = 5 /* 8 lanes in zmm registers (AVX-512F) */
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

/*
 * A batch: M independent derivations, whose output blocks all run side by
 * side (every SIMD lane of every thread; a lane that finishes a block takes
 * the next one, so mixed iteration counts and lengths keep the lanes
 * busy).  Each job's output is exactly wks__pbkdf2_sha512_native()'s.
 * Every job is checked before any work starts: on failure nothing is
 * derived (the outputs are untouched).  `threads` and `path` as above, for
 * the batch as a whole.
 */
typedef struct {
	uint8_t *out;
	size_t out_len;
	const uint8_t *pw;
	size_t pw_len;
	const uint8_t *salt;
	size_t salt_len;
	uint32_t iter;
} wks_kdf_job;

int wks__pbkdf2_sha512_batch(const wks_kdf_job *jobs, size_t njobs,
                             int threads, wks_kdf_path path);

/* 1 if the path is available on this CPU. */
int wks__kdf_path_available(wks_kdf_path path);

/*
 * What AUTO path and threads == 0 resolve to for an output of out_len
 * bytes: *path and *threads are replaced when AUTO / 0, kept otherwise
 * (for benchmarks and docs; wks__pbkdf2_sha512_native() does the same).
 */
void wks__kdf_resolve(wks_kdf_path *path, int *threads, size_t out_len);

/* The same for a batch of `blocks` output blocks in all. */
void wks__kdf_resolve_blocks(wks_kdf_path *path, int *threads, size_t blocks);

/* The estimated time of a batch of `blocks` blocks on AUTO with at most
 * `threads` threads (0 = auto), in the cost model's units (OpenSSL's
 * kernel on one block = 100); 0 for no block.  A batch can take more
 * blocks at no cost while this stays the same: the last pass's free
 * lanes. */
size_t wks__kdf_estimate(size_t blocks, int threads);

/* How many blocks one kernel pass of `path` runs (1, 4 or 8). */
size_t wks__kdf_path_lanes(wks_kdf_path path);

/* "scalar", "openssl", "avx2", "avx512", "avx512x8" or "auto". */
const char *wks__kdf_path_name(wks_kdf_path path);

/* ------------------------------------------------------------------------
 * Internal to the KDF module (kdf_native.c and the sha512_*.c kernels).
 *
 * SHA-512 state and message words are host-order uint64_t; the byte
 * stream is big-endian words, so the digest words of one compression are
 * the first eight message words of the next one without any conversion.
 */

/* Most lanes a kernel has (the widest SIMD kernel). */
#define WKS__KDF_MAX_LANES 8

/*
 * A one-lane chain kernel runs `n` further PBKDF2 iterations for `lanes`
 * independent output blocks, one after the other, that share the HMAC
 * states ist/ost (SHA-512 state after the ipad / opad key block).
 * On entry t[l] is U_1 of block l; on return it is U_1 ^ ... ^ U_(n+1).
 * The message of every compression is the previous 64-byte digest
 * followed by the fixed padding for a 192-byte message.  Kernels wipe
 * their own intermediates.
 */
typedef void wks__kdf_chain_fn(uint64_t t[][8], size_t lanes,
                               const uint64_t ist[8], const uint64_t ost[8],
                               uint32_t n);

wks__kdf_chain_fn wks__kdf_chain_scalar;  /* sha512_scalar.c */
wks__kdf_chain_fn wks__kdf_chain_openssl; /* sha512_<backend>.c */

/* The cost of one block on wks__kdf_chain_openssl, in the cost model's
 * units (OpenSSL's assembly = 100; sha512_<backend>.c says). */
unsigned wks__kdf_chain_openssl_cost(void);

/*
 * The SIMD kernels take their blocks from a feed, each block with its own
 * HMAC states and iteration count, and keep every lane busy: when a lane's
 * block is done (its T handed to done()), the lane takes the next block
 * from next(), until the feed is empty and every lane is done.  A lane
 * runs its block's iterations exactly; lanes without a block compute on
 * whatever they hold, and that is never read.
 */
typedef struct wks__kdf_block {
	const uint64_t *ist, *ost; /* its derivation's HMAC states */
	uint64_t t[8];             /* in: U_1; out: U_1 ^ ... ^ U_(n+1) */
	uint32_t n;                /* iterations after the first */
	size_t job, index;         /* for the feed: which derivation, block */
} wks__kdf_block;

typedef struct wks__kdf_feed wks__kdf_feed;
struct wks__kdf_feed {
	/* Fill *b with the next block (1), or 0 when there is none left. */
	int (*next)(wks__kdf_feed *f, wks__kdf_block *b);
	/* Block b is finished: b->t holds its T. */
	void (*done)(wks__kdf_feed *f, wks__kdf_block *b);
};

typedef void wks__kdf_lanes_fn(wks__kdf_feed *f);

/* sha512_x4.c; each only on a CPU that has what it needs. */
wks__kdf_lanes_fn wks__kdf_lanes_avx2;     /* 4 lanes, AVX2 */
wks__kdf_lanes_fn wks__kdf_lanes_avx512;   /* 4 lanes, AVX-512F+VL (ymm) */
wks__kdf_lanes_fn wks__kdf_lanes_avx512x8; /* 8 lanes, AVX-512F (zmm) */

/* The portable SHA-512 compression function on 16 message words. */
void wks__sha512_compress(uint64_t h[8], const uint64_t w[16]);

/* SHA-512 initial hash value and round constants (FIPS 180-4). */
#define WKS__SHA512_IV_INIT { \
	UINT64_C(0x6a09e667f3bcc908), UINT64_C(0xbb67ae8584caa73b), \
	UINT64_C(0x3c6ef372fe94f82b), UINT64_C(0xa54ff53a5f1d36f1), \
	UINT64_C(0x510e527fade682d1), UINT64_C(0x9b05688c2b3e6c1f), \
	UINT64_C(0x1f83d9abfb41bd6b), UINT64_C(0x5be0cd19137e2179) }

#define WKS__SHA512_K_INIT { \
	UINT64_C(0x428a2f98d728ae22), UINT64_C(0x7137449123ef65cd), \
	UINT64_C(0xb5c0fbcfec4d3b2f), UINT64_C(0xe9b5dba58189dbbc), \
	UINT64_C(0x3956c25bf348b538), UINT64_C(0x59f111f1b605d019), \
	UINT64_C(0x923f82a4af194f9b), UINT64_C(0xab1c5ed5da6d8118), \
	UINT64_C(0xd807aa98a3030242), UINT64_C(0x12835b0145706fbe), \
	UINT64_C(0x243185be4ee4b28c), UINT64_C(0x550c7dc3d5ffb4e2), \
	UINT64_C(0x72be5d74f27b896f), UINT64_C(0x80deb1fe3b1696b1), \
	UINT64_C(0x9bdc06a725c71235), UINT64_C(0xc19bf174cf692694), \
	UINT64_C(0xe49b69c19ef14ad2), UINT64_C(0xefbe4786384f25e3), \
	UINT64_C(0x0fc19dc68b8cd5b5), UINT64_C(0x240ca1cc77ac9c65), \
	UINT64_C(0x2de92c6f592b0275), UINT64_C(0x4a7484aa6ea6e483), \
	UINT64_C(0x5cb0a9dcbd41fbd4), UINT64_C(0x76f988da831153b5), \
	UINT64_C(0x983e5152ee66dfab), UINT64_C(0xa831c66d2db43210), \
	UINT64_C(0xb00327c898fb213f), UINT64_C(0xbf597fc7beef0ee4), \
	UINT64_C(0xc6e00bf33da88fc2), UINT64_C(0xd5a79147930aa725), \
	UINT64_C(0x06ca6351e003826f), UINT64_C(0x142929670a0e6e70), \
	UINT64_C(0x27b70a8546d22ffc), UINT64_C(0x2e1b21385c26c926), \
	UINT64_C(0x4d2c6dfc5ac42aed), UINT64_C(0x53380d139d95b3df), \
	UINT64_C(0x650a73548baf63de), UINT64_C(0x766a0abb3c77b2a8), \
	UINT64_C(0x81c2c92e47edaee6), UINT64_C(0x92722c851482353b), \
	UINT64_C(0xa2bfe8a14cf10364), UINT64_C(0xa81a664bbc423001), \
	UINT64_C(0xc24b8b70d0f89791), UINT64_C(0xc76c51a30654be30), \
	UINT64_C(0xd192e819d6ef5218), UINT64_C(0xd69906245565a910), \
	UINT64_C(0xf40e35855771202a), UINT64_C(0x106aa07032bbd1b8), \
	UINT64_C(0x19a4c116b8d2d0c8), UINT64_C(0x1e376c085141ab53), \
	UINT64_C(0x2748774cdf8eeb99), UINT64_C(0x34b0bcb5e19b48a8), \
	UINT64_C(0x391c0cb3c5c95a63), UINT64_C(0x4ed8aa4ae3418acb), \
	UINT64_C(0x5b9cca4f7763e373), UINT64_C(0x682e6ff3d6b2b8a3), \
	UINT64_C(0x748f82ee5defb2fc), UINT64_C(0x78a5636f43172f60), \
	UINT64_C(0x84c87814a1f0ab72), UINT64_C(0x8cc702081a6439ec), \
	UINT64_C(0x90befffa23631e28), UINT64_C(0xa4506cebde82bde9), \
	UINT64_C(0xbef9a3f7b2c67915), UINT64_C(0xc67178f2e372532b), \
	UINT64_C(0xca273eceea26619c), UINT64_C(0xd186b8c721c0c207), \
	UINT64_C(0xeada7dd6cde0eb1e), UINT64_C(0xf57d4f7fee6ed178), \
	UINT64_C(0x06f067aa72176fba), UINT64_C(0x0a637dc5a2c898a6), \
	UINT64_C(0x113f9804bef90dae), UINT64_C(0x1b710b35131c471b), \
	UINT64_C(0x28db77f523047d84), UINT64_C(0x32caab7b40c72493), \
	UINT64_C(0x3c9ebe0a15c9bebc), UINT64_C(0x431d67c49c100d4c), \
	UINT64_C(0x4cc5d4becb3e42b6), UINT64_C(0x597f299cfc657e2a), \
	UINT64_C(0x5fcb6fab3ad6faec), UINT64_C(0x6c44198c4a475817) }

/* The round functions, written so that they work on uint64_t and on GCC
 * vector types alike (the SIMD kernels use the same text). */
#define WKS__ROR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))
#define WKS__S512_BS0(x) \
	(WKS__ROR64(x, 28) ^ WKS__ROR64(x, 34) ^ WKS__ROR64(x, 39))
#define WKS__S512_BS1(x) \
	(WKS__ROR64(x, 14) ^ WKS__ROR64(x, 18) ^ WKS__ROR64(x, 41))
#define WKS__S512_SS0(x) (WKS__ROR64(x, 1) ^ WKS__ROR64(x, 8) ^ ((x) >> 7))
#define WKS__S512_SS1(x) (WKS__ROR64(x, 19) ^ WKS__ROR64(x, 61) ^ ((x) >> 6))
#define WKS__S512_CH(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define WKS__S512_MAJ(x, y, z) (((x) & (y)) | ((z) & ((x) | (y))))

/*
 * Round i (0..15 within a group of 16 rounds whose round constants start
 * at K) on state words a..h (the names rotate between rounds, so only d
 * and h are written).  The message schedule lives in a 16-word circular
 * buffer W; when `sched` is true (rounds 16..79) the word is first
 * extended in place.  The additions that do not depend on e and a come
 * first so that they leave the critical path.
 */
#define WKS__S512_ROUND(K, W, i, sched, a, b, c, d, e, f, g, h) do { \
	if (sched) \
		W[(i) & 15] += WKS__S512_SS1(W[((i) + 14) & 15]) + \
		               W[((i) + 9) & 15] + \
		               WKS__S512_SS0(W[((i) + 1) & 15]); \
	h += K[i] + W[(i) & 15]; \
	h += WKS__S512_CH(e, f, g); \
	h += WKS__S512_BS1(e); \
	d += h; \
	h += WKS__S512_BS0(a) + WKS__S512_MAJ(a, b, c); \
} while (0)

/* Sixteen rounds; K points at their round constants. */
#define WKS__S512_ROUNDS16(K, W, sched, a, b, c, d, e, f, g, h) do { \
	WKS__S512_ROUND(K, W, 0, sched, a, b, c, d, e, f, g, h); \
	WKS__S512_ROUND(K, W, 1, sched, h, a, b, c, d, e, f, g); \
	WKS__S512_ROUND(K, W, 2, sched, g, h, a, b, c, d, e, f); \
	WKS__S512_ROUND(K, W, 3, sched, f, g, h, a, b, c, d, e); \
	WKS__S512_ROUND(K, W, 4, sched, e, f, g, h, a, b, c, d); \
	WKS__S512_ROUND(K, W, 5, sched, d, e, f, g, h, a, b, c); \
	WKS__S512_ROUND(K, W, 6, sched, c, d, e, f, g, h, a, b); \
	WKS__S512_ROUND(K, W, 7, sched, b, c, d, e, f, g, h, a); \
	WKS__S512_ROUND(K, W, 8, sched, a, b, c, d, e, f, g, h); \
	WKS__S512_ROUND(K, W, 9, sched, h, a, b, c, d, e, f, g); \
	WKS__S512_ROUND(K, W, 10, sched, g, h, a, b, c, d, e, f); \
	WKS__S512_ROUND(K, W, 11, sched, f, g, h, a, b, c, d, e); \
	WKS__S512_ROUND(K, W, 12, sched, e, f, g, h, a, b, c, d); \
	WKS__S512_ROUND(K, W, 13, sched, d, e, f, g, h, a, b, c); \
	WKS__S512_ROUND(K, W, 14, sched, c, d, e, f, g, h, a, b); \
	WKS__S512_ROUND(K, W, 15, sched, b, c, d, e, f, g, h, a); \
} while (0)

/*
 * All 80 rounds: the first 16 unrolled (their message words are known,
 * constants fold), the other 64 as a loop of 16.  Unrolling everything
 * makes the kernels larger than the CPU's decoded-instruction cache and
 * slower (measured: docs/KDF.md).
 */
#define WKS__S512_ROUNDS80(K, W, a, b, c, d, e, f, g, h) do { \
	int r_; \
	WKS__S512_ROUNDS16(K, W, 0, a, b, c, d, e, f, g, h); \
	WKS__S512_NOUNROLL \
	for (r_ = 16; r_ < 80; r_ += 16) \
		WKS__S512_ROUNDS16((K + r_), W, 1, a, b, c, d, e, f, g, h); \
} while (0)

#if defined(__clang__)
#define WKS__S512_NOUNROLL _Pragma("nounroll")
#elif defined(__GNUC__)
#define WKS__S512_NOUNROLL _Pragma("GCC unroll 1")
#else
#define WKS__S512_NOUNROLL
#endif

#endif
