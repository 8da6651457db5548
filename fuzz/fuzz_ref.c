/*
 * fuzz_ref: the key reference reader of the OpenSSL provider
 * (provider/ref.c, docs/PROVIDER.md "Key references"), on any bytes taken
 * as a reference block (what decoder.c hands it: BEGIN line to END line).
 *
 * Oracles:
 *  - the parser returns 0 or -1; on -1 every output is cleared and the
 *    message is a non-empty string that never holds the text of a pass:
 *    source (the input's "pass:" values are looked for in it);
 *  - on 0 the path is non-empty, alias= was given, no source is pass:,
 *    only= is absent, a file:/env: source has a non-empty value and fd: a
 *    number in range;
 *  - round trip: the fields written back by the tool's writer
 *    (wksp_ref_uri + wksp_ref_pem) read back to exactly the same fields,
 *    unless the writer refuses the length (the writer percent-encodes
 *    more than the input may have);
 *  - wksp_ref_is_begin() agrees with the parser on the first line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "fuzz_pwsrc.h"

/* Decode base64 lines of the block (loosely) and look for "pass:TEXT"
 * that the message repeats, for a TEXT of at least 6 bytes with one of
 * ! $ * @ ^ (characters no message of the parser has, so that a TEXT
 * which is a word of a message is not taken for an echo). */
static void check_no_pass_echo(const char *in, size_t size, const char *err)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
				  "tuvwxyz0123456789+/";
	char *dec = malloc(size + 1);
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0;

	PW_CHECK(dec != NULL, "malloc");
	for (size_t i = 0; i < size; i++) {
		const char *p = in[i] ? strchr(b64, in[i]) : NULL;

		if (!p)
			continue;
		acc = acc << 6 | (unsigned)(p - b64);
		if ((bits += 6) >= 8) {
			bits -= 8;
			dec[n++] = (char)(acc >> bits & 0xff);
		}
	}
	dec[n] = 0;
	for (char *p = dec; (p = strstr(p, "pass:")) != NULL; p += 5) {
		size_t k = strcspn(p + 5, "&");

		if (k >= 6 && k < 64 && strcspn(p + 5, "!$*@^") < k) {
			char t[64];

			memcpy(t, p + 5, k);
			t[k] = 0;
			PW_CHECK(!strstr(err, t), "message repeats a pass: text");
		}
	}
	free(dec);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *uri = NULL, *pem = NULL, err[256];
	const char *nl;
	size_t pem_len = 0;
	wksp_uri u, v;
	int rc;

	PW_CHECK(in != NULL, "malloc");
	memcpy(in, data, size);
	in[size] = 0;
	rc = wksp_ref_parse(&u, in, size, err, sizeof(err));
	PW_CHECK(rc == 0 || rc == -1, "return value");
	nl = memchr(in, '\n', size);
	if (rc == 0)
		PW_CHECK(wksp_ref_is_begin(in, nl ? (size_t)(nl - in) + 1 : size),
			  "parsed without a BEGIN line");
	if (rc < 0) {
		PW_CHECK(!u.path && !u.alias && u.storepass.kind == WKSP_PW_NONE &&
			  u.keypass.kind == WKSP_PW_NONE &&
			  u.only == WKSP_ONLY_ALL, "outputs not cleared");
		PW_CHECK(err[0] != 0, "no message");
		check_no_pass_echo(in, size, err);
		free(in);
		return 0;
	}
	PW_CHECK(u.path && u.path[0] && strlen(u.path) <= size, "path");
	PW_CHECK(u.alias && strlen(u.alias) <= size, "alias");
	PW_CHECK(u.only == WKSP_ONLY_ALL, "only= accepted");
	fuzz_check_src(&u.storepass, size, 0);
	fuzz_check_src(&u.keypass, size, 0);

	if (wksp_ref_uri(&uri, u.path, u.alias, &u.storepass, &u.keypass, err,
			 sizeof(err)) == 0) {
		PW_CHECK(wksp_ref_pem(&pem, &pem_len, uri, err,
				       sizeof(err)) == 0, err);
		PW_CHECK(pem_len == strlen(pem), "pem length");
		rc = wksp_ref_parse(&v, pem, pem_len, err, sizeof(err));
		PW_CHECK(rc == 0, err);
		PW_CHECK(!strcmp(u.path, v.path), "round trip: path");
		PW_CHECK(!strcmp(u.alias, v.alias), "round trip: alias");
		PW_CHECK(fuzz_same_src(&u.storepass, &v.storepass),
			  "round trip: storepass");
		PW_CHECK(fuzz_same_src(&u.keypass, &v.keypass),
			  "round trip: keypass");
		wksp_uri_clear(&v);
	} else {
		PW_CHECK(strstr(err, "longer than"), err);
	}
	free(pem);
	free(uri);
	wksp_uri_clear(&u);
	free(in);
	return 0;
}
