/* The per-cache secrets and the two keyed operations of the KEK cache:
 *
 *  - the lookup tag, HMAC-SHA512(tag key, u64be(entry_id) ||
 *    u32be(iterations) || salt[16] || password), truncated to 32 bytes.
 *    The HMAC key's inner and outer SHA-512 states are prepared once, so
 *    a tag costs two SHA-512 compressions for passwords up to 83 bytes.
 *
 *  - shielding: a cached value is XORed with the keystream
 *    SHA-512(K || u64be(nonce) || u64be(block)), K a random 128-byte key
 *    (one SHA-512 block, so its state is also prepared once and each
 *    64-byte keystream block costs one compression).  Nonces are unique
 *    per cache, so no keystream is ever reused.
 *
 * Both keys are random per cache and live in one locked, MADV_DONTDUMP
 * page (secmem.h).  They are immutable after creation: any number of
 * threads may use them at once without a lock. */
#ifndef WKS_CACHE_SHIELD_H
#define WKS_CACHE_SHIELD_H

#include <stddef.h>
#include <stdint.h>

#include "crypto/crypto.h"

#define WKS_CACHE_TAG_LEN 32
#define WKS_SHIELD_MAX 128 /* largest value shield/unshield handle */

typedef struct wks_cache_keys wks_cache_keys;

/* Fresh random keys in locked memory.  WKS_OK, WKS_ERR_NOMEM or
 * WKS_ERR_CRYPTO. */
int wks__cache_keys_new(wks_cache_keys **out);
/* Wipe and unmap.  NULL is ignored. */
void wks__cache_keys_free(wks_cache_keys *k);

void wks__cache_tag(uint8_t tag[WKS_CACHE_TAG_LEN], const wks_cache_keys *k,
                    uint64_t entry_id, uint32_t iterations,
                    const uint8_t salt[WKS_SALT_LEN], const uint8_t *pw,
                    size_t pw_len);

/* out = in XOR keystream(nonce), len <= WKS_SHIELD_MAX.  Shielding and
 * unshielding are the same operation; out and in may be equal.  No
 * keystream or key state is left on the stack. */
void wks__cache_shield(uint8_t *out, const uint8_t *in, size_t len,
                       const wks_cache_keys *k, uint64_t nonce);

/* TEST ONLY: 1 if `needle` occurs in the key page. */
int wks__cache_keys_test_find(const wks_cache_keys *k, const uint8_t *needle,
                              size_t len);

#endif
