/*
 * Key reference blocks (ref.h): a strict reader and the writer the wks
 * tool uses.  The reader walks the block once with explicit lengths and
 * hands the decoded text to wksp_uri_parse(), then refuses what a
 * reference must not hold (pass:, only=) and requires alias=.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

int wksp_ref_is_begin(const char *line, size_t n)
{
	size_t k = sizeof(WKSP_REF_BEGIN) - 1;

	return line && trim(line, n) == k && !memcmp(line, WKSP_REF_BEGIN, k);
}

int wksp_ref_parse(wksp_uri *out, const char *pem, size_t len, char *err,
		   size_t errlen)
{
	const size_t end_len = sizeof(WKSP_REF_END) - 1;
	char *uri = NULL;
	size_t pos = 0, n_uri = 0, n_chars = 0, pad = 0;
	unsigned acc = 0;
	int bits = 0, seen_end = 0, rc = -1;

	memset(out, 0, sizeof(*out));
	out->storepass.fd = out->keypass.fd = -1;
	if (errlen)
		err[0] = 0;
	if (!pem || len > WKSP_REF_BLOCK_MAX) {
		snprintf(err, errlen, "key reference: longer than %d bytes",
			 WKSP_REF_BLOCK_MAX);
		return -1;
	}
	if (!(uri = malloc(WKSP_REF_URI_MAX + 1))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int first = 1; pos < len; first = 0) {
		const char *line = pem + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t raw = nl ? (size_t)(nl - line) + 1 : len - pos;
		size_t n = trim(line, raw);

		pos += raw;
		if (first) {
			if (!wksp_ref_is_begin(line, raw)) {
				snprintf(err, errlen, "key reference: does not "
					 "start with " WKSP_REF_BEGIN);
				goto done;
			}
			continue;
		}
		if (n == end_len && !memcmp(line, WKSP_REF_END, end_len)) {
			seen_end = 1;
			break;
		}
		if (n == 0 || pad) {
			/* Nothing may follow the padding but the END line. */
			snprintf(err, errlen, "key reference: bad base64 "
				 "(empty line or data after '=')");
			goto done;
		}
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)line[i];
			int v;

			if (c == '=') {
				pad++;
				n_chars++;
				continue;
			}
			if (pad || (v = b64val(c)) < 0) {
				snprintf(err, errlen, "key reference: bad "
					 "base64 (a character other than "
					 "A-Z a-z 0-9 + / =, or data after "
					 "'=')");
				goto done;
			}
			n_chars++;
			acc = acc << 6 | (unsigned)v;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				if (n_uri == WKSP_REF_URI_MAX) {
					snprintf(err, errlen, "key reference: "
						 "its URI is longer than %d "
						 "bytes", WKSP_REF_URI_MAX);
					goto done;
				}
				uri[n_uri++] = (char)(acc >> bits & 0xff);
			}
		}
	}
	if (!seen_end) {
		snprintf(err, errlen, "key reference: no " WKSP_REF_END " line");
		goto done;
	}
	if (pos != len) {
		snprintf(err, errlen, "key reference: data after the END line");
		goto done;
	}
	/* Canonical base64 only: whole quanta, at most two '=', and the
	 * unused bits of the last character zero. */
	if (n_chars == 0 || n_chars % 4 != 0 || pad > 2 ||
	    (pad && (pad == 1 ? bits != 2 : bits != 4)) || (!pad && bits) ||
	    (acc & ((1u << bits) - 1)) != 0) {
		snprintf(err, errlen, "key reference: bad base64 (length or "
			 "padding)");
		goto done;
	}
	for (size_t i = 0; i < n_uri; i++) {
		if ((unsigned char)uri[i] <= 0x20 ||
		    (unsigned char)uri[i] >= 0x7f) {
			snprintf(err, errlen, "key reference: its URI has a "
				 "byte that is not printable ASCII (write it "
				 "percent-encoded)");
			goto done;
		}
	}
	uri[n_uri] = 0;
	if (wksp_uri_parse(out, uri, err, errlen) < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "key reference: %s", why);
		goto done;
	}
	if (out->storepass.kind == WKSP_PW_PASS ||
	    out->keypass.kind == WKSP_PW_PASS) {
		snprintf(err, errlen, "key reference: %s=pass: is not allowed "
			 "(a reference holds no password: use file:, env: or "
			 "fd:)", out->storepass.kind == WKSP_PW_PASS ?
			 "storepass" : "keypass");
		goto fail;
	}
	if (out->only != WKSP_ONLY_ALL) {
		snprintf(err, errlen, "key reference: only= is not allowed "
			 "(a reference names one private key)");
		goto fail;
	}
	if (!out->alias) {
		snprintf(err, errlen, "key reference: alias= is required");
		goto fail;
	}
	rc = 0;
	goto done;
fail:
	wksp_uri_clear(out);
done:
	wksp_wipe(uri, WKSP_REF_URI_MAX + 1);
	free(uri);
	return rc;
}

/* Append s[0..n) percent-encoded at o (room checked by the caller: 3n). */
static char *enc(char *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || c == '/') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	return o;
}

static char *put(char *o, const char *s)
{
	size_t n = strlen(s);

	memcpy(o, s, n);
	return o + n;
}

static char *put_src(char *o, const char *name, const wksp_pwsrc *s)
{
	char num[24];

	o = put(o, "&");
	o = put(o, name);
	switch (s->kind) {
	case WKSP_PW_ENV:
		o = put(o, "=env:");
		return enc(o, s->value, s->value_len);
	case WKSP_PW_FILE:
		o = put(o, "=file:");
		return enc(o, s->value, s->value_len);
	default:
		snprintf(num, sizeof(num), "=fd:%d", s->fd);
		return put(o, num);
	}
}

int wksp_ref_uri(char **out, const char *path, const char *alias,
		 const wksp_pwsrc *storepass, const wksp_pwsrc *keypass,
		 char *err, size_t errlen)
{
	const wksp_pwsrc *src[2] = { storepass, keypass };
	size_t cap, plen, alen;
	char *o;

	*out = NULL;
	if (!path || !path[0] || !alias) {
		snprintf(err, errlen, "a reference needs a store and an alias");
		return -1;
	}
	plen = strlen(path);
	alen = strlen(alias);
	if (plen > WKSP_REF_URI_MAX || alen > WKSP_REF_URI_MAX) {
		snprintf(err, errlen, "the reference's URI would be longer "
			 "than %d bytes", WKSP_REF_URI_MAX);
		return -1;
	}
	cap = 16 + 3 * plen + 3 * alen;
	for (int i = 0; i < 2; i++) {
		if (!src[i] || src[i]->kind == WKSP_PW_NONE)
			continue;
		if (src[i]->kind == WKSP_PW_PASS) {
			snprintf(err, errlen, "a reference holds no password: "
				 "use file:, env: or fd:, not pass:");
			return -1;
		}
		if (src[i]->kind != WKSP_PW_FD &&
		    (!src[i]->value || !src[i]->value_len ||
		     src[i]->value_len > WKSP_REF_URI_MAX)) {
			snprintf(err, errlen, "a password source is empty or "
				 "too long");
			return -1;
		}
		cap += 32 + (src[i]->kind == WKSP_PW_FD ? 0 :
			     3 * src[i]->value_len);
	}
	if (!(*out = malloc(cap))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o = put(*out, "wks:");
	/* "//" would start an authority: write the second slash encoded. */
	if (plen >= 2 && path[0] == '/' && path[1] == '/') {
		o = put(o, "/%2F");
		o = enc(o, path + 2, plen - 2);
	} else {
		o = enc(o, path, plen);
	}
	o = put(o, "?alias=");
	o = enc(o, alias, alen);
	if (storepass && storepass->kind != WKSP_PW_NONE)
		o = put_src(o, "storepass", storepass);
	if (keypass && keypass->kind != WKSP_PW_NONE)
		o = put_src(o, "keypass", keypass);
	*o = 0;
	if (strlen(*out) > WKSP_REF_URI_MAX) {
		free(*out);
		*out = NULL;
		snprintf(err, errlen, "the reference's URI would be longer "
			 "than %d bytes", WKSP_REF_URI_MAX);
		return -1;
	}
	return 0;
}

int wksp_ref_pem(char **out, size_t *out_len, const char *uri, char *err,
		 size_t errlen)
{
	size_t n = uri ? strlen(uri) : 0, cap, col = 0;
	const unsigned char *u = (const unsigned char *)uri;
	char *o;

	*out = NULL;
	*out_len = 0;
	if (n == 0 || n > WKSP_REF_URI_MAX) {
		snprintf(err, errlen, "the reference's URI is empty or longer "
			 "than %d bytes", WKSP_REF_URI_MAX);
		return -1;
	}
	cap = sizeof(WKSP_REF_BEGIN) + sizeof(WKSP_REF_END) + 4 +
	      (n + 2) / 3 * 4 + (n / 48 + 2);
	if (!(*out = malloc(cap + 1))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o = put(*out, WKSP_REF_BEGIN "\n");
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)u[i] << 16;
		size_t k = n - i < 3 ? n - i : 3;

		if (k > 1)
			v |= (unsigned)u[i + 1] << 8;
		if (k > 2)
			v |= u[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = k > 1 ? b64[v >> 6 & 63] : '=';
		*o++ = k > 2 ? b64[v & 63] : '=';
		if ((col += 4) == 64) {
			*o++ = '\n';
			col = 0;
		}
	}
	if (col)
		*o++ = '\n';
	o = put(o, WKSP_REF_END "\n");
	*o = 0;
	*out_len = (size_t)(o - *out);
	return 0;
}
