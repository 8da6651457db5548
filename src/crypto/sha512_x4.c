/* PBKDF2 chain kernels: four SHA-512 lanes in one 256-bit register.
 *
 * Lane l of every vector holds block l's word, so four independent output
 * blocks advance with one instruction stream.  The round text is the same
 * as the scalar one (kdf.h macros on GCC vector types); the compiler
 * turns it into
 *   - AVX2: each 64-bit rotate is two shifts and an OR (no vector rotate);
 *   - AVX-512VL: vprorq for the rotates and vpternlogq for the
 *     three-input XORs, Ch and Maj, which shortens both the instruction
 *     count and the critical path of a round.
 * The generic body is always_inline and instantiated in two functions
 * carrying the target attribute, so no global compiler flag is needed and
 * kdf_native.c calls each one only after checking the CPU.
 */
#include "crypto/kdf.h"

#include "util/wipe.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define WKS__HAVE_X4 1
#endif

#ifdef WKS__HAVE_X4

typedef uint64_t wks_v4 __attribute__((vector_size(32), aligned(32)));

static const uint64_t K[80] = WKS__SHA512_K_INIT;

/* out = st + compress(st, m || padding of a 192-byte message); W is
 * scratch, passed in so that the caller can wipe it once at the end. */
static inline __attribute__((always_inline)) void
x4_compress(wks_v4 out[8], const wks_v4 st[8], const wks_v4 m[8],
            wks_v4 W[16])
{
	wks_v4 a = st[0], b = st[1], c = st[2], d = st[3];
	wks_v4 e = st[4], f = st[5], g = st[6], h = st[7];
	const wks_v4 zero = { 0, 0, 0, 0 };
	int i;

	for (i = 0; i < 8; i++)
		W[i] = m[i];
	W[8] = zero + UINT64_C(0x8000000000000000);
	for (i = 9; i < 15; i++)
		W[i] = zero;
	W[15] = zero + 192 * 8;
	WKS__S512_ROUNDS80(K, W, a, b, c, d, e, f, g, h);
	out[0] = st[0] + a;
	out[1] = st[1] + b;
	out[2] = st[2] + c;
	out[3] = st[3] + d;
	out[4] = st[4] + e;
	out[5] = st[5] + f;
	out[6] = st[6] + g;
	out[7] = st[7] + h;
}

static inline __attribute__((always_inline)) void
x4_chain(uint64_t t[][8], size_t lanes, const uint64_t ist[8],
         const uint64_t ost[8], uint32_t n)
{
	wks_v4 is[8], os[8], u[8], x[8], acc[8], W[16];
	const wks_v4 zero = { 0, 0, 0, 0 };
	size_t l;
	uint32_t it;
	int i;

	for (i = 0; i < 8; i++) {
		is[i] = zero + ist[i];
		os[i] = zero + ost[i];
		u[i] = zero;
		for (l = 0; l < lanes; l++)
			u[i][l] = t[l][i];
		acc[i] = u[i];
	}
	for (it = 0; it < n; it++) {
		x4_compress(x, is, u, W);
		x4_compress(u, os, x, W);
		for (i = 0; i < 8; i++)
			acc[i] ^= u[i];
	}
	for (i = 0; i < 8; i++)
		for (l = 0; l < lanes; l++)
			t[l][i] = acc[i][l];
	wks_wipe(is, sizeof(is));
	wks_wipe(os, sizeof(os));
	wks_wipe(u, sizeof(u));
	wks_wipe(x, sizeof(x));
	wks_wipe(acc, sizeof(acc));
	wks_wipe(W, sizeof(W));
}

__attribute__((target("avx2")))
void wks__kdf_chain_avx2(uint64_t t[][8], size_t lanes,
                         const uint64_t ist[8], const uint64_t ost[8],
                         uint32_t n)
{
	x4_chain(t, lanes, ist, ost, n);
}

__attribute__((target("avx512f,avx512vl")))
void wks__kdf_chain_avx512(uint64_t t[][8], size_t lanes,
                           const uint64_t ist[8], const uint64_t ost[8],
                           uint32_t n)
{
	x4_chain(t, lanes, ist, ost, n);
}

#else /* !WKS__HAVE_X4: never called (wks__kdf_path_available says 0) */

void wks__kdf_chain_avx2(uint64_t t[][8], size_t lanes,
                         const uint64_t ist[8], const uint64_t ost[8],
                         uint32_t n)
{
	wks__kdf_chain_scalar(t, lanes, ist, ost, n);
}

void wks__kdf_chain_avx512(uint64_t t[][8], size_t lanes,
                           const uint64_t ist[8], const uint64_t ost[8],
                           uint32_t n)
{
	wks__kdf_chain_scalar(t, lanes, ist, ost, n);
}

#endif
