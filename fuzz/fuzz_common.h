/*
 * Shared by the fuzz targets (fuzz_*.c), the standalone replay driver
 * (replay.c) and tests/test_fuzz_replay.c.
 *
 * Each target defines its entry point through FUZZ_ENTRY / FUZZ_INIT so
 * that several targets can be compiled into one program (the cmocka
 * replay test renames them); by default they are libFuzzer's names.
 *
 * The targets never return early on an "impossible" result: they abort()
 * through FUZZ_CHECK, which libFuzzer and the replay driver report as a
 * crash with the failed condition.
 */
#ifndef WKS_FUZZ_COMMON_H
#define WKS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "wks/wks.h"
#include "config/config.h"
#include "crypto/crypto.h"

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif
#ifndef FUZZ_INIT
#define FUZZ_INIT LLVMFuzzerInitialize
#endif

/* The password of every seed store and key entry. */
#define FUZZ_PW "wolfsslpassword"
#define FUZZ_PW_LEN (sizeof(FUZZ_PW) - 1)

#define FUZZ_CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d): ", #cond, \
		        __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, " [detail: %s]\n", wks_error_detail()); \
		abort(); \
	} \
} while (0)

/*
 * Process-wide settings for every target.  Fuzz builds accept PBKDF2
 * iteration counts from 1 (WKS_MIN_ITERATIONS in src/config/config.h); the
 * seeds are built at FUZZ_ITER iterations (fuzz/gen_seeds.c), saves use
 * FUZZ_ITER, and nothing above FUZZ_MAX_ITER is accepted, so a hostile
 * iteration count costs at most a FUZZ_MAX_ITER-iteration PBKDF2 (counts
 * above it take the LIMIT path).  One KDF thread (the fuzzer is one process
 * on a shared machine).
 */
#define FUZZ_ITER 2
#define FUZZ_MAX_ITER 64
#define FUZZ_STR_(x) #x
#define FUZZ_STR(x) FUZZ_STR_(x)
#if WKS_MIN_ITERATIONS > FUZZ_ITER
#error "the fuzz targets need WKS_FUZZING (PBKDF2 from 1 iteration)"
#endif

static inline void fuzz_settings(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	wks_set_property("libwks.wks.maxIterationCount",
	                 FUZZ_STR(FUZZ_MAX_ITER));
	wks_set_property("wolfjce.wks.iterationCount", FUZZ_STR(FUZZ_ITER));
	wks_set_property("libwks.kdf.threads", "1");
}

/* Is rc one of the clean rejections a hostile file may cause? */
static inline int fuzz_clean_reject(int rc)
{
	return rc == WKS_ERR_FORMAT || rc == WKS_ERR_LIMIT ||
	       rc == WKS_ERR_INVALID;
}

static inline uint32_t fuzz_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/*
 * A small cache of PBKDF2-HMAC-SHA512(FUZZ_PW, salt, iter): the targets
 * re-MAC mutated inputs with it.  Four slots, round robin.  It uses the
 * library's native PBKDF2 (4x faster than OpenSSL's under ASan, and
 * checked against OpenSSL's by tests/test_kdf.c); the HMAC and AES steps
 * around it are OpenSSL's, independent of libwks.
 */
typedef struct {
	int used;
	uint8_t salt[16];
	uint32_t iter;
	size_t len;
	uint8_t key[96];
} fuzz_kdf_slot;

static inline const uint8_t *fuzz_kdf(const uint8_t salt[16], uint32_t iter,
                                      size_t len)
{
	static fuzz_kdf_slot slots[4];
	static unsigned next;
	fuzz_kdf_slot *s;
	unsigned i;

	for (i = 0; i < 4; i++)
		if (slots[i].used && slots[i].iter == iter && slots[i].len == len &&
		    memcmp(slots[i].salt, salt, 16) == 0)
			return slots[i].key;
	s = &slots[next++ % 4];
	FUZZ_CHECK(len <= sizeof(s->key), "kdf length %zu", len);
	FUZZ_CHECK(wks__pbkdf2(s->key, len, (const uint8_t *)FUZZ_PW,
	                       FUZZ_PW_LEN, salt, 16, iter, WKS_KDF_NATIVE,
	                       1) == WKS_OK, "PBKDF2");
	memcpy(s->salt, salt, 16);
	s->iter = iter;
	s->len = len;
	s->used = 1;
	return s->key;
}

#endif
