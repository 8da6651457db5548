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

/* SHA_LONG64 is not necessarily the same type as uint64_t (unsigned long
 * long vs unsigned long), hence a macro rather than a function. */
#define PUT_WORDS_BE(p, w) do { \
	int i_, j_; \
	for (i_ = 0; i_ < 8; i_++) \
		for (j_ = 0; j_ < 8; j_++) \
			(p)[8 * i_ + j_] = \
				(uint8_t)((uint64_t)(w)[i_] >> (56 - 8 * j_)); \
} while (0)

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
		PUT_WORDS_BE(blk, t[l]);
		for (it = 0; it < n; it++) {
			for (i = 0; i < 8; i++)
				c.h[i] = ist[i];
			SHA512_Transform(&c, blk);
			PUT_WORDS_BE(blk, c.h);
			for (i = 0; i < 8; i++)
				c.h[i] = ost[i];
			SHA512_Transform(&c, blk);
			PUT_WORDS_BE(blk, c.h);
			for (i = 0; i < 8; i++)
				t[l][i] ^= c.h[i];
		}
	}
	wks_wipe(&c, sizeof(c));
	wks_wipe(blk, sizeof(blk));
}
