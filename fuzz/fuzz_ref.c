/*
 * fuzz_ref: key reference files (wks/uri.h: wks_ref_parse(), src/uri/
 * ref.c, and the writer wks_ref_encode(), refwrite.c; docs/PROVIDER.md
 * "Key references"), on any bytes taken as a reference file (what the
 * provider's decoder hands the parser: BEGIN line to end of input; the
 * wks tool: the whole file).
 *
 * Oracles:
 *  - the parser returns WKS_OK or a wks_err; on failure *out is NULL and
 *    the detail is a non-empty string that never holds the text of a
 *    pass: source (the input's "pass:" values are looked for in it);
 *  - on success the path is non-empty, alias= was given, no source is
 *    pass:, only= is absent, a file:/env: source has a non-empty value and
 *    fd: a number in range, and exactly one line of the input is a BEGIN
 *    line (wks_ref_is_begin()): a file with two references is refused;
 *  - round trip: the fields written back by the writer read back to
 *    exactly the same fields, unless the writer refuses the length (it
 *    percent-encodes more than the input may have); what it writes is
 *    five note lines, each starting with "# " (no path or alias, whatever
 *    its bytes, adds a line), then one block.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* How many lines of text[0..n) are BEGIN lines. */
static size_t count_begin(const char *text, size_t n)
{
	size_t pos = 0, count = 0;

	while (pos < n) {
		const char *nl = memchr(text + pos, '\n', n - pos);
		size_t raw = nl ? (size_t)(nl - (text + pos)) + 1 : n - pos;

		count += wks_ref_is_begin(text + pos, raw) ? 1 : 0;
		pos += raw;
	}
	return count;
}

/* What the writer wrote: five note lines starting with "# ", then the
 * block, and nothing else. */
static void check_written(const char *file, size_t len)
{
	size_t pos = 0;

	PW_CHECK(strlen(file) == len, "written length");
	for (int i = 0; i < 5; i++) {
		const char *nl = memchr(file + pos, '\n', len - pos);

		PW_CHECK(nl && len - pos >= 2 && !memcmp(file + pos, "# ", 2),
			 "a note line");
		pos = (size_t)(nl - file) + 1;
	}
	PW_CHECK(wks_ref_is_begin(file + pos, sizeof(WKS_REF_BEGIN)),
		 "the block after the note");
	PW_CHECK(count_begin(file, len) == 1, "one BEGIN line written");
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *file = NULL;
	size_t file_len = 0;
	wks_uri *u = NULL, *v = NULL;
	int rc;

	PW_CHECK(in != NULL, "malloc");
	memcpy(in, data, size);
	in[size] = 0;
	rc = wks_ref_parse(&u, in, size);
	PW_CHECK(rc == WKS_OK || (rc < 0 && rc >= WKS_ERR_BUSY),
		 "return value");
	if (rc < 0) {
		PW_CHECK(!u, "output not cleared");
		fuzz_check_detail();
		check_no_pass_echo(in, size, wks_error_detail());
		free(in);
		return 0;
	}
	PW_CHECK(count_begin(in, size) == 1, "parsed with two BEGIN lines");
	PW_CHECK(wks_uri_path(u)[0] && strlen(wks_uri_path(u)) <= size,
		 "path");
	PW_CHECK(wks_uri_alias(u) && strlen(wks_uri_alias(u)) <= size,
		 "alias");
	PW_CHECK(wks_uri_only(u) == WKS_URI_ALL, "only= accepted");
	fuzz_check_src(wks_uri_storepass(u), size, 0);
	fuzz_check_src(wks_uri_keypass(u), size, 0);

	rc = wks_ref_encode(&file, &file_len, wks_uri_path(u), wks_uri_alias(u),
			    wks_uri_storepass(u), wks_uri_keypass(u));
	if (rc == WKS_OK) {
		check_written(file, file_len);
		rc = wks_ref_parse(&v, file, file_len);
		PW_CHECK(rc == WKS_OK, wks_error_detail());
		PW_CHECK(!strcmp(wks_uri_path(u), wks_uri_path(v)),
			 "round trip: path");
		PW_CHECK(!strcmp(wks_uri_alias(u), wks_uri_alias(v)),
			 "round trip: alias");
		PW_CHECK(fuzz_same_src(wks_uri_storepass(u),
				       wks_uri_storepass(v)),
			 "round trip: storepass");
		PW_CHECK(fuzz_same_src(wks_uri_keypass(u), wks_uri_keypass(v)),
			 "round trip: keypass");
		wks_uri_free(v);
	} else {
		PW_CHECK(rc == WKS_ERR_LIMIT &&
			 strstr(wks_error_detail(), "longer than"),
			 wks_error_detail());
	}
	wks_free(file);
	wks_uri_free(u);
	free(in);
	return 0;
}
