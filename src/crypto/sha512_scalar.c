/* Portable SHA-512 compression function and PBKDF2 chain kernel.
 *
 * This is the fallback for CPUs without the SIMD kernels and the reference
 * the others are tested against; it is also what kdf_native.c uses for
 * the few compressions of each derivation's set-up (key block, salt,
 * first iteration), whose cost does not matter. */
#include "crypto/kdf.h"

#include "util/wipe.h"

static const uint64_t K[80] = WKS__SHA512_K_INIT;

void wks__sha512_compress(uint64_t h[8], const uint64_t w[16])
{
	uint64_t W[16];
	uint64_t a = h[0], b = h[1], c = h[2], d = h[3];
	uint64_t e = h[4], f = h[5], g = h[6], hh = h[7];
	int i;

	for (i = 0; i < 16; i++)
		W[i] = w[i];
	WKS__S512_ROUNDS80(K, W, a, b, c, d, e, f, g, hh);
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
	wks_wipe(W, sizeof(W));
}

/*
 * One compression of the fixed-shape PBKDF2 message: the 8 words of m
 * followed by the padding of a 192-byte message (128-byte key block plus
 * this 64-byte block).  Written out rather than calling
 * wks__sha512_compress() so that the compiler sees the constant words and
 * folds them into the round constants.
 */
static inline void compress_digest(uint64_t out[8], const uint64_t st[8],
                                   const uint64_t m[8], uint64_t W[16])
{
	uint64_t a = st[0], b = st[1], c = st[2], d = st[3];
	uint64_t e = st[4], f = st[5], g = st[6], h = st[7];
	int i;

	for (i = 0; i < 8; i++)
		W[i] = m[i];
	W[8] = UINT64_C(0x8000000000000000);
	for (i = 9; i < 15; i++)
		W[i] = 0;
	W[15] = 192 * 8;
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

void wks__kdf_chain_scalar(uint64_t t[][8], size_t lanes,
                           const uint64_t ist[8], const uint64_t ost[8],
                           uint32_t n)
{
	uint64_t u[8], x[8], W[16];
	size_t l;
	uint32_t it;
	int i;

	for (l = 0; l < lanes; l++) {
		for (i = 0; i < 8; i++)
			u[i] = t[l][i];
		for (it = 0; it < n; it++) {
			compress_digest(x, ist, u, W);
			compress_digest(u, ost, x, W);
			for (i = 0; i < 8; i++)
				t[l][i] ^= u[i];
		}
	}
	wks_wipe(u, sizeof(u));
	wks_wipe(x, sizeof(x));
	wks_wipe(W, sizeof(W));
}
