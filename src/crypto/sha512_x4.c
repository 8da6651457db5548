/* PBKDF2 lane kernels: several SHA-512 chains in one SIMD register.
 *
 * Lane l of every vector holds block l's word, so four (ymm) or eight
 * (zmm) independent output blocks advance with one instruction stream.
 * The round text is the same as the scalar one (kdf.h macros on GCC vector
 * types); the compiler turns it into
 *   - AVX2: each 64-bit rotate is two shifts and an OR (no vector rotate);
 *   - AVX-512VL (ymm) and AVX-512F (zmm): vprorq for the rotates and
 *     vpternlogq for the three-input XORs, Ch and Maj, which shortens both
 *     the instruction count and the critical path of a round.
 * The kernels are bound by vector instruction throughput: on the reference
 * machine (docs/KDF.md) an 8-lane zmm pass costs about what a 4-lane ymm
 * pass does, and two interleaved ymm streams cost twice one.
 *
 * Every lane has its own HMAC states and its own iteration count, and a
 * lane whose block is done takes the next one from the feed (kdf.h), so a
 * batch of derivations keeps all lanes busy whatever their shapes.  The
 * generic body is always_inline and instantiated in functions carrying
 * the target attribute, so no global compiler flag is needed and
 * kdf_native.c calls each one only after checking the CPU.
 */
#include "crypto/kdf.h"

#include <string.h>

#include "util/wipe.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define WKS__HAVE_SIMD 1
#endif

#ifdef WKS__HAVE_SIMD

typedef uint64_t wks_v4 __attribute__((vector_size(32), aligned(32)));
typedef uint64_t wks_v8 __attribute__((vector_size(64), aligned(64)));

static const uint64_t K[80] = WKS__SHA512_K_INIT;

/* out = st + compress(st, m || padding of a 192-byte message); W is
 * scratch, passed in so that the caller can wipe it once at the end. */
#define DEFINE_COMPRESS(name, V) \
static inline __attribute__((always_inline)) void \
name(V out[8], const V st[8], const V m[8], V W[16]) \
{ \
	V a = st[0], b = st[1], c = st[2], d = st[3]; \
	V e = st[4], f = st[5], g = st[6], h = st[7]; \
	V zero; \
	int i; \
 \
	memset(&zero, 0, sizeof(zero)); \
	for (i = 0; i < 8; i++) \
		W[i] = m[i]; \
	W[8] = zero + UINT64_C(0x8000000000000000); \
	for (i = 9; i < 15; i++) \
		W[i] = zero; \
	W[15] = zero + 192 * 8; \
	WKS__S512_ROUNDS80(K, W, a, b, c, d, e, f, g, h); \
	out[0] = st[0] + a; \
	out[1] = st[1] + b; \
	out[2] = st[2] + c; \
	out[3] = st[3] + d; \
	out[4] = st[4] + e; \
	out[5] = st[5] + f; \
	out[6] = st[6] + g; \
	out[7] = st[7] + h; \
}

DEFINE_COMPRESS(compress4, wks_v4)
DEFINE_COMPRESS(compress8, wks_v8)

/*
 * The lane loop.  Fill every empty lane from the feed (a block with no
 * iteration left is done at once); run as many iterations as the lane
 * closest to its end still needs, all lanes together; hand the finished
 * blocks back; repeat until the feed is empty and no lane is busy.  The
 * step count check costs nothing next to the 2 x 80 rounds of an
 * iteration, and a refill touches one lane of each vector.
 */
#define DEFINE_LANES(name, V, L, compress, target_spec) \
__attribute__((target(target_spec))) void name(wks__kdf_feed *feed) \
{ \
	V is[8], os[8], u[8], x[8], acc[8], W[16]; \
	wks__kdf_block blk[L]; \
	uint32_t rem[L], step, it; \
	int live[L], active = 0, more = 1; \
	size_t l; \
	int i; \
 \
	memset(is, 0, sizeof(is)); \
	memset(os, 0, sizeof(os)); \
	memset(u, 0, sizeof(u)); \
	memset(acc, 0, sizeof(acc)); \
	memset(live, 0, sizeof(live)); \
	for (;;) { \
		for (l = 0; more && l < (L); l++) { \
			while (!live[l]) { \
				if (!feed->next(feed, &blk[l])) { \
					more = 0; \
					break; \
				} \
				if (blk[l].n == 0) { \
					feed->done(feed, &blk[l]); \
					continue; \
				} \
				for (i = 0; i < 8; i++) { \
					is[i][l] = blk[l].ist[i]; \
					os[i][l] = blk[l].ost[i]; \
					u[i][l] = blk[l].t[i]; \
					acc[i][l] = blk[l].t[i]; \
				} \
				rem[l] = blk[l].n; \
				live[l] = 1; \
				active++; \
			} \
		} \
		if (!active) \
			break; \
		step = UINT32_MAX; \
		for (l = 0; l < (L); l++) \
			if (live[l] && rem[l] < step) \
				step = rem[l]; \
		for (it = 0; it < step; it++) { \
			compress(x, is, u, W); \
			compress(u, os, x, W); \
			for (i = 0; i < 8; i++) \
				acc[i] ^= u[i]; \
		} \
		for (l = 0; l < (L); l++) { \
			if (!live[l] || (rem[l] -= step) != 0) \
				continue; \
			for (i = 0; i < 8; i++) \
				blk[l].t[i] = acc[i][l]; \
			feed->done(feed, &blk[l]); \
			live[l] = 0; \
			active--; \
		} \
	} \
	wks_wipe(is, sizeof(is)); \
	wks_wipe(os, sizeof(os)); \
	wks_wipe(u, sizeof(u)); \
	wks_wipe(x, sizeof(x)); \
	wks_wipe(acc, sizeof(acc)); \
	wks_wipe(W, sizeof(W)); \
	wks_wipe(blk, sizeof(blk)); \
}

DEFINE_LANES(wks__kdf_lanes_avx2, wks_v4, 4, compress4, "avx2")
DEFINE_LANES(wks__kdf_lanes_avx512, wks_v4, 4, compress4,
             "avx512f,avx512vl")
DEFINE_LANES(wks__kdf_lanes_avx512x8, wks_v8, 8, compress8, "avx512f")

#else /* !WKS__HAVE_SIMD: never called (wks__kdf_path_available says 0) */

static void one_lane(wks__kdf_feed *feed)
{
	wks__kdf_block b;

	while (feed->next(feed, &b)) {
		if (b.n)
			wks__kdf_chain_scalar(&b.t, 1, b.ist, b.ost, b.n);
		feed->done(feed, &b);
	}
	wks_wipe(&b, sizeof(b));
}

void wks__kdf_lanes_avx2(wks__kdf_feed *feed)
{
	one_lane(feed);
}

void wks__kdf_lanes_avx512(wks__kdf_feed *feed)
{
	one_lane(feed);
}

void wks__kdf_lanes_avx512x8(wks__kdf_feed *feed)
{
	one_lane(feed);
}

#endif
