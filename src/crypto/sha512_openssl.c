/* PBKDF2 chain kernel on OpenSSL's SHA-512 compression function.
 *
 * SHA512_Transform() is the one-block entry into OpenSSL's assembly
 * (sha512_block_data_order, which picks its AVX2/BMI2 code on CPUs that
 * have it).  It is deprecated in OpenSSL 3 but still exported, and it is
 * the only way to reach that code without the EVP layer's per-call
 * overhead (context copies, padding, provider dispatch), which costs more
 * than the compression itself at one block per call. */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "crypto/kdf.h"

#include <string.h>

#include <openssl/sha.h>

#include "util/wipe.h"

/* Eight words to big-endian bytes with one 8-byte store each (a loop of
 * byte stores is much slower here, and OpenSSL's wide loads of the block
 * could not be forwarded from them). */
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
	SHA512_CTX c;
	uint8_t blk[128];
	size_t l;
	uint32_t it;
	int i;

	memset(&c, 0, sizeof(c));
	/* Bytes 64..127 never change: the padding of a 192-byte message. */
	memset(blk, 0, sizeof(blk));
	blk[64] = 0x80;
	blk[126] = (192 * 8) >> 8;
	blk[127] = (192 * 8) & 0xff;

	for (l = 0; l < lanes; l++) {
		for (i = 0; i < 8; i++)
			put_be(blk + 8 * i, t[l][i]);
		for (it = 0; it < n; it++) {
			for (i = 0; i < 8; i++)
				c.h[i] = ist[i];
			SHA512_Transform(&c, blk);
			for (i = 0; i < 8; i++)
				put_be(blk + 8 * i, c.h[i]);
			for (i = 0; i < 8; i++)
				c.h[i] = ost[i];
			SHA512_Transform(&c, blk);
			for (i = 0; i < 8; i++) {
				put_be(blk + 8 * i, c.h[i]);
				t[l][i] ^= c.h[i];
			}
		}
	}
	wks_wipe(&c, sizeof(c));
	wks_wipe(blk, sizeof(blk));
}

unsigned wks__kdf_chain_openssl_cost(void)
{
	return 100; /* the unit of the cost model */
}
