/*
 * fuzz_pkcs11_share: the PKCS#11 module's shared-login record
 * (pkcs11/sharefmt.c, docs/PKCS11.md "Shared login") on any bytes: what
 * the module reads back from the user's kernel keyring, where any
 * process of the user can write.
 *
 * Oracles:
 *  - w11_share_decode() returns 0 or -1; on -1 the record is all zero;
 *  - on 0: a password of 1 to 1024 bytes, a blob and a record key of at
 *    most 128 bytes, all inside the input, nanoseconds below 10^9, and
 *    the fixed part, the password, the blob and the record key add up
 *    to exactly the input's length;
 *  - round trip: w11_share_len() of the decoded record is the input's
 *    length and w11_share_encode() writes back exactly the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sharefmt.h"
#include "fuzz_plain.h"

FUZZ_PLAIN_INIT()

static int inside(const uint8_t *p, size_t n, const uint8_t *data,
		  size_t size)
{
	return p && p >= data && n <= size && (size_t)(p - data) <= size - n;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	static const w11_share_rec zero;
	w11_share_rec r;
	uint8_t *out;
	size_t n;
	int rc = w11_share_decode(&r, data, size);

	CHECK(rc == 0 || rc == -1, "return value");
	if (rc != 0) {
		CHECK(memcmp(&r, &zero, sizeof(r)) == 0, "zeroed on failure");
		return 0;
	}
	CHECK(r.pw_len >= 1 && r.pw_len <= W11_SHARE_PW_MAX, "password length");
	CHECK(inside(r.pw, r.pw_len, data, size), "password inside the input");
	CHECK(inside(r.blob, r.blob_len, data, size), "blob inside the input");
	CHECK(r.reckey_len <= W11_SHARE_RECKEY_MAX &&
	      (!r.reckey_len || inside(r.reckey, r.reckey_len, data, size)),
	      "record key inside the input");
	CHECK(r.mtime_ns < 1000000000u && r.ctime_ns < 1000000000u,
	      "nanoseconds");
	CHECK(size <= W11_SHARE_MAX, "size bound");
	n = w11_share_len(&r);
	CHECK(n == size, "lengths add up");
	CHECK((out = malloc(n)) != NULL, "malloc");
	w11_share_encode(out, &r);
	CHECK(memcmp(out, data, n) == 0, "round trip");
	free(out);
	return 0;
}
