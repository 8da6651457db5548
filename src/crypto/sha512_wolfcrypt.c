/* PBKDF2 chain kernel on wolfCrypt's SHA-512 compression function: the
 * "openssl" path of kdf.h (WKS_KDF_PATH_OPENSSL, "the backend's one-block
 * SHA-512") in the wolfCrypt build.
 *
 * wc_Sha512Transform() (wolfCrypt with OPENSSL_EXTRA, as Debian builds
 * it) runs one compression on a 128-byte block given as big-endian
 * bytes, on the state words of a wc_Sha512; it byte-swaps the block in
 * place first (5.5.4), so each call gets a fresh copy.  Without it (a wolfCrypt
 * built without OPENSSL_EXTRA) the kernel is the portable C one. */
#include "crypto/kdf.h"

#include <string.h>

#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/sha512.h>

#include "util/wipe.h"

#if defined(OPENSSL_EXTRA)
static inline void put_be(uint8_t *p, uint64_t v)
{
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
#else
	int j;

	for (j = 0; j < 8; j++)
		p[j] = (uint8_t)(v >> (56 - 8 * j));
#endif
}

void wks__kdf_chain_openssl(uint64_t t[][8], size_t lanes,
                            const uint64_t ist[8], const uint64_t ost[8],
                            uint32_t n)
{
	wc_Sha512 c;
	uint8_t blk[128], work[128];
	size_t l;
	uint32_t it;
	int i;

	(void)wc_InitSha512(&c);
	memset(blk, 0, sizeof(blk));
	blk[64] = 0x80;
	blk[126] = (192 * 8) >> 8;
	blk[127] = (192 * 8) & 0xff;

	for (l = 0; l < lanes; l++) {
		for (i = 0; i < 8; i++)
			put_be(blk + 8 * i, t[l][i]);
		for (it = 0; it < n; it++) {
			for (i = 0; i < 8; i++)
				c.digest[i] = ist[i];
			memcpy(work, blk, sizeof(work));
			(void)wc_Sha512Transform(&c, work);
			for (i = 0; i < 8; i++)
				put_be(blk + 8 * i, c.digest[i]);
			for (i = 0; i < 8; i++)
				c.digest[i] = ost[i];
			memcpy(work, blk, sizeof(work));
			(void)wc_Sha512Transform(&c, work);
			for (i = 0; i < 8; i++) {
				put_be(blk + 8 * i, c.digest[i]);
				t[l][i] ^= c.digest[i];
			}
		}
	}
	wc_Sha512Free(&c);
	wks_wipe(&c, sizeof(c));
	wks_wipe(blk, sizeof(blk));
	wks_wipe(work, sizeof(work));
}
#else
void wks__kdf_chain_openssl(uint64_t t[][8], size_t lanes,
                            const uint64_t ist[8], const uint64_t ost[8],
                            uint32_t n)
{
	wks__kdf_chain_scalar(t, lanes, ist, ost, n);
}
#endif

/* wolfCrypt's SHA-512 as Debian builds it is its C code (no
 * USE_INTEL_SPEEDUP), behind a byte swap and a copy of the block: about
 * as fast as the portable kernel, a little slower (wks-kdf-bench -all on
 * the wolfCrypt build: 22.5 against 21.4 ms for 64 bytes at 21,000
 * iterations; docs/KDF.md), so AUTO prefers the portable one. */
unsigned wks__kdf_chain_openssl_cost(void)
{
	return 150;
}
