/*
 * fuzz_pkcs11_rec: the PKCS#11 module's attribute record (pkcs11/attrrec.c,
 * docs/FORMAT.md "The PKCS#11 attribute record") on any bytes: the file
 * beside a store, which anyone who can write the store's folder can
 * write, read before its MAC is checked.
 *
 * Oracles:
 *  - w11_rec_parse() returns 0 or -1; on -1 the record is empty;
 *  - on 0: every count and length within its limit, the MAC the last 64
 *    bytes of the input, and the round trip exact: w11_rec_encode() of
 *    the parsed record is the input less its MAC;
 *  - the table calls stay consistent on any parsed record: rebinding one
 *    entry's items to another digest, dropping an entry, setting an
 *    attribute, then encoding and parsing again give a record whose
 *    items are unique (the parser refuses duplicates).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrrec.h"
#include "fuzz_plain.h"

FUZZ_PLAIN_INIT()

/* Encode r, append a MAC's worth of bytes, parse again: must succeed. */
static void reparse(const w11_rec *r)
{
	uint8_t *b = NULL, *full;
	size_t n = 0, body = 0;
	w11_rec again;

	if (w11_rec_encode(r, &b, &n) != 0)
		return; /* (over a limit: refused, not written) */
	CHECK((full = calloc(1, n + W11_REC_MAC_LEN)) != NULL, "calloc");
	memcpy(full, b, n);
	CHECK(w11_rec_parse(&again, full, n + W11_REC_MAC_LEN, &body) == 0,
	      "what encode writes, parse reads");
	CHECK(body == n, "the MAC covers what encode wrote");
	CHECK(again.n == r->n, "as many items");
	w11_rec_free(&again);
	free(full);
	free(b);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	w11_rec r;
	uint8_t *b = NULL;
	size_t n = 0, body = 0;
	int rc = w11_rec_parse(&r, data, size, &body);

	CHECK(rc == 0 || rc == -1, "return value");
	if (rc != 0) {
		CHECK(r.n == 0 && r.items == NULL, "empty on failure");
		return 0;
	}
	CHECK(body + W11_REC_MAC_LEN == size, "the MAC is the last 64 bytes");
	CHECK(r.n <= W11_REC_MAX_ITEMS, "item count");
	for (uint32_t i = 0; i < r.n; i++) {
		CHECK(r.items[i].n <= W11_REC_MAX_ATTRS, "attribute count");
		for (uint32_t j = 0; j < r.items[i].n; j++)
			CHECK(r.items[i].a[j].len <= W11_REC_MAX_VALUE,
			      "value length");
	}
	CHECK(w11_rec_encode(&r, &b, &n) == 0, "encode a parsed record");
	CHECK(n == body && memcmp(b, data, n) == 0, "round trip");
	free(b);
	/* the table calls, driven by the record's own bytes */
	if (r.n) {
		uint8_t to[32];
		w11_ritem *it;

		memcpy(to, r.items[r.n - 1].entry, 32);
		w11_rec_rebind(&r, r.items[0].entry, to);
		reparse(&r);
		if (r.n && (it = w11_rec_item(&r, r.items[0].entry, 3, 7)) !=
			       NULL)
			CHECK(w11_ritem_set(it, 0x102, data, size > 32 ? 32 :
					    (uint32_t)size) == 0, "set");
		reparse(&r);
		if (r.n)
			w11_rec_drop_entry(&r, r.items[0].entry);
		reparse(&r);
	}
	w11_rec_free(&r);
	return 0;
}
