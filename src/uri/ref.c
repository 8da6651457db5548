/*
 * Key reference files (wks/uri.h), the reader: the text walked once, line
 * by line with explicit lengths, up to the first BEGIN line (a note for
 * people), through the block (base64, strictly canonical), and on to the
 * end (other PEM blocks may follow, a second reference may not).  The
 * decoded text goes to the URI parser (uri.c), then what a reference must
 * not hold (pass:, only=) is refused and alias= required.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uri/uri_int.h"
#include "util/error.h"
#include "util/wipe.h"

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* The length of line[0..n) without its end ("\n", "\r\n") and trailing
 * spaces or tabs. */
static size_t trim(const char *line, size_t n)
{
	if (n && line[n - 1] == '\n')
		n--;
	if (n && line[n - 1] == '\r')
		n--;
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	return n;
}

/* The length of the line at text[pos..len), its "\n" included. */
static size_t line_len(const char *text, size_t pos, size_t len)
{
	const char *nl = memchr(text + pos, '\n', len - pos);

	return nl ? (size_t)(nl - (text + pos)) + 1 : len - pos;
}

int wks_ref_is_begin(const char *line, size_t n)
{
	size_t k = sizeof(WKS_REF_BEGIN) - 1;

	return line && trim(line, n) == k && !memcmp(line, WKS_REF_BEGIN, k);
}

/*
 * The block's base64 body, from text[pos..) up to its END line, decoded
 * into uri[] (WKS_REF_URI_MAX + 1 bytes) as a NUL-terminated string.
 * *pos is left after the END line; *line counts the lines.
 */
static int read_body(char *uri, const char *text, size_t len, size_t *pos,
		     unsigned *line, size_t begin)
{
	const size_t end_len = sizeof(WKS_REF_END) - 1;
	size_t n_uri = 0, n_chars = 0, pad = 0;
	unsigned acc = 0;
	int bits = 0;

	for (;;) {
		const char *l = text + *pos;
		size_t raw, n;

		if (*pos == len)
			return wks__err(WKS_ERR_FORMAT, "key reference: no "
					WKS_REF_END " line");
		raw = line_len(text, *pos, len);
		n = trim(l, raw);
		*pos += raw;
		++*line;
		if (*pos - begin > WKS_REF_BLOCK_MAX)
			return wks__err(WKS_ERR_LIMIT, "key reference: the block "
					"is longer than %d bytes",
					WKS_REF_BLOCK_MAX);
		if (n == end_len && !memcmp(l, WKS_REF_END, end_len))
			break;
		if (n == 0 || pad)
			/* Nothing may follow the padding but the END line. */
			return wks__err(WKS_ERR_FORMAT, "key reference: bad "
					"base64 (empty line or data after '=')");
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)l[i];
			int v;

			if (c == '=') {
				pad++;
				n_chars++;
				continue;
			}
			if (pad || (v = b64val(c)) < 0)
				return wks__err(WKS_ERR_FORMAT, "key reference: "
						"bad base64 (a character other "
						"than A-Z a-z 0-9 + / =, or data "
						"after '=')");
			n_chars++;
			acc = acc << 6 | (unsigned)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				if (n_uri == WKS_REF_URI_MAX)
					return wks__err(WKS_ERR_LIMIT, "key "
							"reference: its URI is "
							"longer than %d bytes",
							WKS_REF_URI_MAX);
				uri[n_uri++] = (char)(acc >> bits & 0xff);
			}
		}
	}
	/* Canonical base64 only: whole quanta, at most two '=', and the
	 * unused bits of the last character zero. */
	if (n_chars == 0 || n_chars % 4 != 0 || pad > 2 ||
	    (pad && (pad == 1 ? bits != 2 : bits != 4)) || (!pad && bits) ||
	    (acc & ((1u << bits) - 1)) != 0)
		return wks__err(WKS_ERR_FORMAT, "key reference: bad base64 "
				"(length or padding)");
	for (size_t i = 0; i < n_uri; i++)
		if ((unsigned char)uri[i] <= 0x20 ||
		    (unsigned char)uri[i] >= 0x7f)
			return wks__err(WKS_ERR_FORMAT, "key reference: its URI "
					"has a byte that is not printable ASCII "
					"(write it percent-encoded)");
	uri[n_uri] = 0;
	return WKS_OK;
}

/* What a reference's URI must and must not hold. */
static int check_uri(const wks_uri *u)
{
	if (u->storepass.kind == WKS_PW_PASS || u->keypass.kind == WKS_PW_PASS)
		return wks__err(WKS_ERR_FORMAT, "key reference: %s=pass: is "
				"not allowed (a reference holds no password: "
				"use file:, env: or fd:)",
				u->storepass.kind == WKS_PW_PASS ? "storepass" :
				"keypass");
	if (u->only != WKS_URI_ALL)
		return wks__err(WKS_ERR_FORMAT, "key reference: only= is not "
				"allowed (a reference names one private key)");
	if (!u->alias)
		return wks__err(WKS_ERR_FORMAT, "key reference: alias= is "
				"required");
	return WKS_OK;
}

int wks_ref_parse(wks_uri **out, const char *text, size_t len)
{
	char *uri = NULL;
	wks_uri *u = NULL;
	size_t pos = 0, begin, raw;
	unsigned line = 0;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "wks_ref_parse: out is NULL");
	*out = NULL;
	if (!text)
		return wks__err(WKS_ERR_INVALID, "no key reference");
	if (len > 2 * (size_t)WKS_REF_TEXT_MAX + WKS_REF_BLOCK_MAX)
		return wks__err(WKS_ERR_LIMIT, "key reference: longer than %d "
				"bytes", 2 * WKS_REF_TEXT_MAX +
				WKS_REF_BLOCK_MAX);
	/* The note: everything up to the first BEGIN line. */
	for (;;) {
		if (pos == len)
			return wks__err(WKS_ERR_FORMAT, "key reference: no "
					WKS_REF_BEGIN " line");
		raw = line_len(text, pos, len);
		line++;
		if (wks_ref_is_begin(text + pos, raw))
			break;
		pos += raw;
	}
	if (pos > WKS_REF_TEXT_MAX)
		return wks__err(WKS_ERR_LIMIT, "key reference: more than %d "
				"bytes before the BEGIN line", WKS_REF_TEXT_MAX);
	begin = pos;
	pos += raw;
	if (!(uri = malloc(WKS_REF_URI_MAX + 1)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if ((err = read_body(uri, text, len, &pos, &line, begin)) < 0)
		goto done;
	/* After the END line: other text, but no second reference (a
	 * reader takes the first, so one of the two was forged). */
	if (len - pos > WKS_REF_TEXT_MAX) {
		err = wks__err(WKS_ERR_LIMIT, "key reference: more than %d "
			       "bytes after the END line", WKS_REF_TEXT_MAX);
		goto done;
	}
	while (pos < len) {
		raw = line_len(text, pos, len);
		line++;
		if (wks_ref_is_begin(text + pos, raw)) {
			err = wks__err(WKS_ERR_FORMAT, "key reference: a second "
				       WKS_REF_BEGIN " line (line %u): a file "
				       "holds one reference, and a reader takes "
				       "the first; one of the two may be forged",
				       line);
			goto done;
		}
		pos += raw;
	}
	if (!(u = malloc(sizeof(*u)))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	if ((err = wks__uri_parse(u, uri)) < 0) {
		char why[512];

		/* The URI parser's detail never holds a password. */
		snprintf(why, sizeof(why), "%s", wks_error_detail());
		err = wks__err(err, "key reference: %s", why);
		free(u);
		u = NULL;
		goto done;
	}
	if ((err = check_uri(u)) < 0)
		goto done;
	*out = u;
	u = NULL;
done:
	wks_uri_free(u);
	/* A (refused) pass: source may be in it. */
	wks_wipe_free(uri, WKS_REF_URI_MAX + 1);
	return err;
}
