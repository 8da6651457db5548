/* Keyed lookup tags and shielding of cached values (see shield.h).
 *
 * SHA-512 comes from the backend as states that copy by value
 * (crypto.h's wks_sha512_state): no allocation and no provider dispatch
 * on the cache-hit path, which OpenSSL's EVP_MAC cannot offer. */
#include "cache/shield.h"

#include <string.h>

#include "crypto/crypto.h"

#include "cache/secmem.h"
#include "wks/wks.h"
#include "util/wipe.h"

#define HMAC_KEY_LEN 64
#define SHA512_CBLOCK 128
#define SHA512_DIGEST_LENGTH 64
#define SHIELD_KEY_LEN SHA512_CBLOCK /* exactly one block: state prepared */

struct wks_cache_keys {
	wks_sha512_state tag_inner;  /* after (tag key ^ ipad) */
	wks_sha512_state tag_outer;  /* after (tag key ^ opad) */
	wks_sha512_state shield;     /* after the 128-byte shielding key */
};

/* The mapping: the keys, then scratch space where the raw keys are made,
 * so that they never touch ordinary memory.  The scratch is wiped as soon
 * as the states are prepared. */
struct keys_page {
	wks_cache_keys k; /* first: a wks_cache_keys * is a keys_page * */
	uint8_t tag_key[HMAC_KEY_LEN];
	uint8_t pad[SHA512_CBLOCK];
	uint8_t shield_key[SHIELD_KEY_LEN];
};

static void put_u64be(uint8_t *b, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--) {
		b[i] = (uint8_t)v;
		v >>= 8;
	}
}

int wks__cache_keys_new(wks_cache_keys **out)
{
	struct keys_page *s;
	size_t i;
	int err;

	*out = NULL;
	s = wks__secmem_map(sizeof(*s));
	if (!s)
		return WKS_ERR_NOMEM;
	if ((err = wks__random(s->tag_key, sizeof(s->tag_key))) < 0 ||
	    (err = wks__random(s->shield_key, sizeof(s->shield_key))) < 0)
		goto fail;
	memset(s->pad, 0x36, sizeof(s->pad));
	for (i = 0; i < HMAC_KEY_LEN; i++)
		s->pad[i] ^= s->tag_key[i];
	wks__sha512_init(&s->k.tag_inner);
	wks__sha512_update(&s->k.tag_inner, s->pad, sizeof(s->pad));
	memset(s->pad, 0x5c, sizeof(s->pad));
	for (i = 0; i < HMAC_KEY_LEN; i++)
		s->pad[i] ^= s->tag_key[i];
	wks__sha512_init(&s->k.tag_outer);
	wks__sha512_update(&s->k.tag_outer, s->pad, sizeof(s->pad));
	wks__sha512_init(&s->k.shield);
	wks__sha512_update(&s->k.shield, s->shield_key, sizeof(s->shield_key));
	/* Only the prepared states are needed from now on. */
	wks_wipe(s->tag_key, sizeof(s->tag_key));
	wks_wipe(s->pad, sizeof(s->pad));
	wks_wipe(s->shield_key, sizeof(s->shield_key));
	*out = &s->k;
	return WKS_OK;
fail:
	wks__secmem_unmap(s, sizeof(*s));
	return err;
}

void wks__cache_keys_free(wks_cache_keys *k)
{
	/* The whole page is wiped, scratch space included. */
	wks__secmem_unmap(k, sizeof(struct keys_page));
}

void wks__cache_tag(uint8_t tag[WKS_CACHE_TAG_LEN], const wks_cache_keys *k,
                    uint64_t entry_id, uint32_t iterations,
                    const uint8_t salt[WKS_SALT_LEN], const uint8_t *pw,
                    size_t pw_len)
{
	wks_sha512_state h;
	uint8_t hdr[8 + 4 + WKS_SALT_LEN];
	uint8_t md[SHA512_DIGEST_LENGTH];

	/* Fixed-length fields first and the password last: the encoding
	 * is injective without a length prefix. */
	put_u64be(hdr, entry_id);
	hdr[8] = (uint8_t)(iterations >> 24);
	hdr[9] = (uint8_t)(iterations >> 16);
	hdr[10] = (uint8_t)(iterations >> 8);
	hdr[11] = (uint8_t)iterations;
	memcpy(hdr + 12, salt, WKS_SALT_LEN);

	/* Update/Final on a copy of a prepared state cannot fail. */
	h = k->tag_inner;
	wks__sha512_update(&h, hdr, sizeof(hdr));
	wks__sha512_update(&h, pw, pw_len);
	wks__sha512_final(md, &h);
	h = k->tag_outer;
	wks__sha512_update(&h, md, sizeof(md));
	wks__sha512_final(md, &h);
	memcpy(tag, md, WKS_CACHE_TAG_LEN);

	wks_wipe(&h, sizeof(h));
	wks_wipe(md, sizeof(md));
	wks_wipe(hdr, sizeof(hdr));
}

void wks__cache_shield(uint8_t *out, const uint8_t *in, size_t len,
                       const wks_cache_keys *k, uint64_t nonce)
{
	wks_sha512_state h;
	uint8_t ctr[16];
	uint8_t ks[SHA512_DIGEST_LENGTH];
	size_t off, i, n;
	uint64_t block;

	put_u64be(ctr, nonce);
	for (off = 0, block = 0; off < len && off < WKS_SHIELD_MAX;
	     off += n, block++) {
		put_u64be(ctr + 8, block);
		h = k->shield;
		wks__sha512_update(&h, ctr, sizeof(ctr));
		wks__sha512_final(ks, &h);
		n = len - off < sizeof(ks) ? len - off : sizeof(ks);
		for (i = 0; i < n; i++)
			out[off + i] = in[off + i] ^ ks[i];
	}
	wks_wipe(&h, sizeof(h));
	wks_wipe(ks, sizeof(ks));
}

int wks__cache_keys_test_find(const wks_cache_keys *k, const uint8_t *needle,
                              size_t len)
{
	const uint8_t *p = (const uint8_t *)k;
	size_t i, n = sizeof(struct keys_page);

	if (len == 0)
		return 0;
	for (i = 0; i + len <= n; i++)
		if (memcmp(p + i, needle, len) == 0)
			return 1;
	return 0;
}
