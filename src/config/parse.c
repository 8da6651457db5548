/* java.util.Properties text parser (the syntax of java.security files).
 *
 * This follows Properties.load() of current JDKs step by step: its
 * LineReader (natural lines, leading white space, '#'/'!' comments,
 * backslash continuations) and load0()/loadConvert() (key/separator/value
 * split, escapes).  The one deliberate difference: the text is taken as
 * UTF-8 bytes (Java reads an InputStream as ISO-8859-1); \uXXXX escapes
 * become UTF-8, with surrogate pairs joined, a lone surrogate written in
 * its 3-byte form and U+0000 (escaped or raw) written as C0 80, so that
 * names and values stay NUL-free C strings.
 *
 * Bounded: one pass over `len` bytes, no recursion, two allocations sized
 * from `len` (a converted string is never longer than twice its source). */
#include "config/config.h"

#include <stdlib.h>

#include "util/error.h"

typedef struct {
	const uint8_t *p;
	size_t len;
	size_t off;
	size_t lineno; /* line of the next byte (1-based) */
} line_reader;

/* Consume one byte, keeping the line count (CR, LF and CRLF each end one
 * line). */
static uint8_t lr_get(line_reader *r)
{
	uint8_t c = r->p[r->off++];

	if (c == '\r' || (c == '\n' && !(r->off >= 2 && r->p[r->off - 2] == '\r')))
		r->lineno++;
	return c;
}

static int is_ws(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\f';
}

/*
 * Next logical line into line[] (capacity >= r->len).  Returns 1 with
 * *out_len and *first_line set, or 0 at the end of the text.  A port of
 * java.util.Properties.LineReader.readLine().
 */
static int lr_next(line_reader *r, uint8_t *line, size_t *out_len,
                   size_t *first_line)
{
	size_t len = 0;
	int skip_ws = 1, appended = 0, backslash = 0;
	uint8_t c;

	for (;;) {
		if (r->off >= r->len) {
			if (len == 0)
				return 0;
			/* A backslash at the very end is dropped. */
			*out_len = backslash ? len - 1 : len;
			return 1;
		}
		if (len == 0)
			*first_line = r->lineno;
		c = lr_get(r);
		if (skip_ws) {
			if (is_ws(c))
				continue;
			if (!appended && (c == '\r' || c == '\n'))
				continue;
			skip_ws = 0;
			appended = 0;
		}
		if (len == 0 && (c == '#' || c == '!')) {
			/* Comment: to the end of this natural line; a comment
			 * never continues. */
			while (r->off < r->len) {
				c = lr_get(r);
				if (c == '\r' || c == '\n')
					break;
			}
			skip_ws = 1;
			continue;
		}
		if (c != '\n' && c != '\r') {
			line[len++] = c;
			backslash = c == '\\' ? !backslash : 0;
			continue;
		}
		/* End of a natural line. */
		if (len == 0) {
			skip_ws = 1;
			continue;
		}
		if (r->off >= r->len) {
			*out_len = backslash ? len - 1 : len;
			return 1;
		}
		if (!backslash) {
			*out_len = len;
			return 1;
		}
		/* Continuation: drop the backslash, skip the next line's
		 * leading white space, and a LF that completes a CRLF. */
		len--;
		skip_ws = 1;
		appended = 1;
		backslash = 0;
		if (c == '\r' && r->p[r->off] == '\n')
			r->off++; /* same line terminator: no line count */
	}
}

static int hex_val(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 4 hex digits at s (n bytes available), or -1. */
static long hex4(const uint8_t *s, size_t n)
{
	long v = 0;
	int i, d;

	if (n < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if ((d = hex_val(s[i])) < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

static size_t put_utf8(uint8_t *out, unsigned long cp)
{
	if (cp == 0) { /* modified UTF-8, keeps the string NUL-free */
		out[0] = 0xC0;
		out[1] = 0x80;
		return 2;
	}
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xC0 | cp >> 6);
		out[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) { /* includes lone surrogates (3-byte form) */
		out[0] = (uint8_t)(0xE0 | cp >> 12);
		out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (uint8_t)(0xF0 | cp >> 18);
	out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

/*
 * Properties.loadConvert(): unescape in[0..n) into out (capacity 2n + 1),
 * NUL-terminated.  Returns the output length or -1 for a malformed
 * \uXXXX.
 */
static long convert(char *out, const uint8_t *in, size_t n)
{
	size_t i = 0, o = 0;
	uint8_t c;
	long u, lo;

	while (i < n) {
		c = in[i++];
		if (c == 0) {
			o += put_utf8((uint8_t *)out + o, 0);
			continue;
		}
		if (c != '\\') {
			out[o++] = (char)c;
			continue;
		}
		if (i >= n) /* unreachable: lines never end in a lone '\' */
			break;
		c = in[i++];
		switch (c) {
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'n': out[o++] = '\n'; break;
		case 'f': out[o++] = '\f'; break;
		case 'u':
			if ((u = hex4(in + i, n - i)) < 0)
				return -1;
			i += 4;
			/* Join a high surrogate with an escaped low one. */
			if (u >= 0xD800 && u <= 0xDBFF && n - i >= 6 &&
			    in[i] == '\\' && in[i + 1] == 'u' &&
			    (lo = hex4(in + i + 2, n - i - 2)) >= 0xDC00 &&
			    lo <= 0xDFFF) {
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
				i += 6;
			}
			o += put_utf8((uint8_t *)out + o, (unsigned long)u);
			break;
		case 0:
			o += put_utf8((uint8_t *)out + o, 0);
			break;
		default: /* \\ \= \: \# \! \  and any other: the char itself */
			out[o++] = (char)c;
			break;
		}
	}
	out[o] = '\0';
	return (long)o;
}

int wks__props_parse(const char *text, size_t len, wks_prop_fn fn, void *ctx)
{
	line_reader r = { (const uint8_t *)text, len, 0, 1 };
	uint8_t *line = NULL;
	char *key = NULL, *val;
	size_t n, first = 1, key_len, val_start;
	int err = WKS_OK, has_sep, backslash;
	uint8_t c;

	if (!text && len)
		return wks__err(WKS_ERR_INVALID, "properties: NULL text");
	if (len == 0)
		return WKS_OK;
	if (len > (SIZE_MAX - 2) / 2)
		return wks__err(WKS_ERR_LIMIT, "properties: text too long");
	line = malloc(len);
	/* key and value come from one line: 2 * line + 2 bytes hold both. */
	key = malloc(2 * len + 2);
	if (!line || !key) {
		err = wks__err(WKS_ERR_NOMEM, "properties: out of memory");
		goto done;
	}
	while (lr_next(&r, line, &n, &first)) {
		/* Properties.load0(): the key ends at the first unescaped '=',
		 * ':' or white space; then white space and at most one '=' or
		 * ':' are skipped. */
		key_len = 0;
		val_start = n;
		has_sep = 0;
		backslash = 0;
		while (key_len < n) {
			c = line[key_len];
			if ((c == '=' || c == ':') && !backslash) {
				val_start = key_len + 1;
				has_sep = 1;
				break;
			}
			if (is_ws(c) && !backslash) {
				val_start = key_len + 1;
				break;
			}
			backslash = c == '\\' ? !backslash : 0;
			key_len++;
		}
		while (val_start < n) {
			c = line[val_start];
			if (!is_ws(c)) {
				if (!has_sep && (c == '=' || c == ':'))
					has_sep = 1;
				else
					break;
			}
			val_start++;
		}
		val = key + 2 * key_len + 1;
		if (convert(key, line, key_len) < 0 ||
		    convert(val, line + val_start, n - val_start) < 0) {
			err = wks__err(WKS_ERR_FORMAT,
			               "properties line %zu: malformed \\uXXXX escape",
			               first);
			goto done;
		}
		if ((err = fn(key, val, ctx)) < 0)
			goto done;
	}
done:
	free(line);
	free(key);
	return err;
}
