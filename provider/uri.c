/*
 * The wks: URI parser (grammar in uri.h and docs/PROVIDER.md).
 *
 * Strict by design: a URI names a file holding private keys, so a typo
 * ("storepas=", "alais=") must be an error and not a silently different
 * request.  The input is walked once with explicit lengths; every decoded
 * string is a fresh heap copy, wiped when freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uri.h"

/* Largest N accepted in fd:N. */
#define FD_MAX 1000000

void wksp_wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (n--)
		*v++ = 0;
}

void wksp_pwsrc_clear(wksp_pwsrc *s)
{
	if (s->value) {
		wksp_wipe(s->value, s->value_len);
		free(s->value);
	}
	s->kind = WKSP_PW_NONE;
	s->value = NULL;
	s->value_len = 0;
	s->fd = -1;
}

static void free_str(char *s)
{
	if (s) {
		wksp_wipe(s, strlen(s));
		free(s);
	}
}

void wksp_uri_clear(wksp_uri *u)
{
	free_str(u->path);
	free_str(u->alias);
	u->path = NULL;
	u->alias = NULL;
	wksp_pwsrc_clear(&u->storepass);
	wksp_pwsrc_clear(&u->keypass);
	u->only = WKSP_ONLY_ALL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Percent-decode s[0..n) into a new NUL-terminated string (*out, length
 * *out_len).  Returns 0 or -1 with a message naming `what`.
 */
static int decode(char **out, size_t *out_len, const char *s, size_t n,
		  const char *what, char *err, size_t errlen)
{
	char *d = malloc(n + 1);
	size_t i, j = 0;

	*out = NULL;
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] != '%') {
			d[j++] = s[i];
			continue;
		}
		if (n - i < 3 || (hi = hexval(s[i + 1])) < 0 ||
		    (lo = hexval(s[i + 2])) < 0) {
			snprintf(err, errlen, "%s: bad percent escape (a %% "
				 "must be followed by two hex digits)", what);
			goto fail;
		}
		if (hi == 0 && lo == 0) {
			snprintf(err, errlen, "%s: %%00 (NUL) is not allowed",
				 what);
			goto fail;
		}
		d[j++] = (char)(hi << 4 | lo);
		i += 2;
	}
	d[j] = 0;
	*out = d;
	*out_len = j;
	return 0;
fail:
	wksp_wipe(d, n + 1);
	free(d);
	return -1;
}

/* Parse a decoded password source (which it takes over: it is wiped and
 * freed whatever happens). */
static int parse_pwsrc(wksp_pwsrc *out, char *v, size_t len,
		       const char *what, char *err, size_t errlen)
{
	static const struct {
		const char *prefix;
		wksp_pw_kind kind;
	} kinds[] = {
		{ "pass:", WKSP_PW_PASS }, { "env:", WKSP_PW_ENV },
		{ "file:", WKSP_PW_FILE }, { "fd:", WKSP_PW_FD },
	};
	size_t i, plen = 0;
	int rc = -1;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		plen = strlen(kinds[i].prefix);
		if (len >= plen && !memcmp(v, kinds[i].prefix, plen))
			break;
	}
	if (i == sizeof(kinds) / sizeof(kinds[0])) {
		snprintf(err, errlen, "%s: expected pass:TEXT, env:VAR, "
			 "file:PATH or fd:N", what);
		goto done;
	}
	if (len == plen) {
		snprintf(err, errlen, "%s: empty %s", what, kinds[i].prefix);
		goto done;
	}
	out->kind = kinds[i].kind;
	if (out->kind == WKSP_PW_FD) {
		long fd = 0;
		size_t k;

		for (k = plen; k < len; k++) {
			if (v[k] < '0' || v[k] > '9' || fd > FD_MAX) {
				snprintf(err, errlen, "%s: fd: needs a file "
					 "descriptor number", what);
				out->kind = WKSP_PW_NONE;
				goto done;
			}
			fd = fd * 10 + (v[k] - '0');
		}
		if (fd > FD_MAX) {
			snprintf(err, errlen, "%s: fd: needs a file "
				 "descriptor number", what);
			out->kind = WKSP_PW_NONE;
			goto done;
		}
		out->fd = (int)fd;
		rc = 0;
		goto done;
	}
	out->value_len = len - plen;
	out->value = malloc(out->value_len + 1);
	if (!out->value) {
		snprintf(err, errlen, "out of memory");
		out->kind = WKSP_PW_NONE;
		goto done;
	}
	memcpy(out->value, v + plen, out->value_len + 1);
	rc = 0;
done:
	wksp_wipe(v, len);
	free(v);
	return rc;
}

/* only=certs or only=issuers; the value percent-decoded as every other. */
static int parse_only(wksp_uri *u, const char *v, size_t n, char *err,
		      size_t errlen)
{
	char *d = NULL;
	size_t dlen = 0;
	int rc = -1;

	if (u->only != WKSP_ONLY_ALL) {
		snprintf(err, errlen, "only= given twice");
		return -1;
	}
	if (decode(&d, &dlen, v, n, "only", err, errlen) < 0)
		return -1;
	if (dlen == 5 && !memcmp(d, "certs", 5)) {
		u->only = WKSP_ONLY_CERTS;
		rc = 0;
	} else if (dlen == 7 && !memcmp(d, "issuers", 7)) {
		u->only = WKSP_ONLY_ISSUERS;
		rc = 0;
	} else {
		snprintf(err, errlen, "only=: expected certs or issuers");
	}
	free(d);
	return rc;
}

static int parse_query(wksp_uri *u, const char *q, size_t n, char *err,
		       size_t errlen)
{
	size_t start = 0;
	unsigned idx = 0;
	int after_pw = 0; /* a storepass= or keypass= came before */

	if (n == 0) {
		snprintf(err, errlen, "empty query after '?'");
		return -1;
	}
	while (start <= n) {
		const char *a = q + start;
		const char *amp = memchr(a, '&', n - start);
		size_t alen = amp ? (size_t)(amp - a) : n - start;
		const char *eq = memchr(a, '=', alen);
		size_t klen = eq ? (size_t)(eq - a) : alen;
		wksp_pwsrc *src = NULL;
		char *v = NULL;
		size_t vlen = 0;

		idx++;
		if (alen == 0) {
			snprintf(err, errlen, "empty attribute in the query "
				 "(\"&&\", or '&' at an end)");
			return -1;
		}
		/* Never echo an attribute's text once a password source came
		 * before it: an unencoded '&' in a pass: value makes the rest
		 * of the password look like further attributes
		 * ("storepass=pass:a&3-horse"), so name the attribute by its
		 * position instead.  Before any password attribute the text
		 * cannot be part of a password, and naming it helps a typo. */
		if (!eq && after_pw) {
			snprintf(err, errlen, "attribute %u of the query has "
				 "no '=VALUE' (a '&' inside a value must be "
				 "written %%26)", idx);
			return -1;
		}
		if (!eq) {
			snprintf(err, errlen, "attribute \"%.*s\" has no "
				 "'=VALUE'", (int)(klen > 32 ? 32 : klen), a);
			return -1;
		}
		if (klen == 5 && !memcmp(a, "alias", 5)) {
			if (u->alias) {
				snprintf(err, errlen, "alias= given twice");
				return -1;
			}
		} else if (klen == 9 && !memcmp(a, "storepass", 9)) {
			src = &u->storepass;
		} else if (klen == 7 && !memcmp(a, "keypass", 7)) {
			src = &u->keypass;
		} else if (klen == 4 && !memcmp(a, "only", 4)) {
			if (parse_only(u, eq + 1, alen - 5, err, errlen) < 0)
				return -1;
			start += alen + 1;
			continue;
		} else if (after_pw) {
			snprintf(err, errlen, "attribute %u of the query is "
				 "unknown (expected alias, storepass, keypass "
				 "or only; a '&' inside a value must be written "
				 "%%26)", idx);
			return -1;
		} else {
			/* Never echo a value: it may be a password. */
			snprintf(err, errlen, "unknown attribute \"%.*s\" "
				 "(expected alias, storepass, keypass or only)",
				 (int)(klen > 32 ? 32 : klen), a);
			return -1;
		}
		if (src)
			after_pw = 1;
		if (src && src->kind != WKSP_PW_NONE) {
			snprintf(err, errlen, "%.*s= given twice", (int)klen, a);
			return -1;
		}
		if (decode(&v, &vlen, eq + 1, alen - klen - 1,
			   src == &u->storepass ? "storepass" :
			   src ? "keypass" : "alias", err, errlen) < 0)
			return -1;
		if (!src) {
			u->alias = v;
			u->alias_after_pw = after_pw;
		} else if (parse_pwsrc(src, v, vlen, src == &u->storepass ?
				       "storepass" : "keypass", err,
				       errlen) < 0) {
			return -1;
		}
		start += alen + 1;
	}
	return 0;
}

int wksp_uri_parse(wksp_uri *out, const char *uri, char *err, size_t errlen)
{
	const char *p, *q;
	size_t n, plen, len;

	memset(out, 0, sizeof(*out));
	out->storepass.fd = out->keypass.fd = -1;
	if (errlen)
		err[0] = 0;
	if (!uri) {
		snprintf(err, errlen, "no URI");
		return -1;
	}
	n = strnlen(uri, WKSP_URI_MAX + 1);
	if (n > WKSP_URI_MAX) {
		snprintf(err, errlen, "URI longer than %d bytes", WKSP_URI_MAX);
		return -1;
	}
	if (n < 4 || (uri[0] != 'w' && uri[0] != 'W') ||
	    (uri[1] != 'k' && uri[1] != 'K') ||
	    (uri[2] != 's' && uri[2] != 'S') || uri[3] != ':') {
		snprintf(err, errlen, "not a wks: URI");
		return -1;
	}
	p = uri + 4;
	n -= 4;
	if (memchr(p, '#', n)) {
		snprintf(err, errlen, "'#' must be written %%23 (fragments "
			 "are not supported)");
		return -1;
	}
	if (n >= 2 && p[0] == '/' && p[1] == '/') {
		/* An authority: only the local host, as for file: URIs. */
		const char *end = p + 2;
		size_t alen;

		while (end < p + n && *end != '/' && *end != '?')
			end++;
		alen = (size_t)(end - (p + 2));
		if (alen != 0 &&
		    !(alen == 9 && !strncmp(p + 2, "localhost", 9))) {
			snprintf(err, errlen, "only wks:///PATH or "
				 "wks://localhost/PATH may have an authority");
			return -1;
		}
		if (end == p + n || *end != '/') {
			snprintf(err, errlen, "no path after the authority");
			return -1;
		}
		n -= (size_t)(end - p);
		p = end;
	}
	q = memchr(p, '?', n);
	plen = q ? (size_t)(q - p) : n;
	if (plen == 0) {
		snprintf(err, errlen, "no file name");
		return -1;
	}
	if (decode(&out->path, &len, p, plen, "path", err, errlen) < 0)
		goto fail;
	if (q && parse_query(out, q + 1, n - plen - 1, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	wksp_uri_clear(out);
	return -1;
}
