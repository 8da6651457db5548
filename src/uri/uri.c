/*
 * The wks: URI parser (grammar in wks/uri.h and docs/PROVIDER.md).
 *
 * Strict by design: a URI names a file holding private keys, so a typo
 * ("storepas=", "alais=") must be an error and not a silently different
 * request.  The input is walked once with explicit lengths; every decoded
 * string is a fresh heap copy, wiped when freed.
 */
#include <stdlib.h>
#include <string.h>

#include "uri/uri_int.h"
#include "util/error.h"
#include "util/wipe.h"

void wks__uri_clear(wks_uri *u)
{
	wks_wipe_str(u->path);
	wks_wipe_str(u->alias);
	u->path = NULL;
	u->alias = NULL;
	u->alias_after_pw = 0;
	wks__pwsrc_clear(&u->storepass);
	wks__pwsrc_clear(&u->keypass);
	u->only = WKS_URI_ALL;
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
 * *out_len).  WKS_OK, or an error whose detail names `what`.
 */
static int decode(char **out, size_t *out_len, const char *s, size_t n,
		  const char *what)
{
	char *d = malloc(n + 1);
	size_t i, j = 0;
	int err;

	*out = NULL;
	if (!d)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] != '%') {
			d[j++] = s[i];
			continue;
		}
		if (n - i < 3 || (hi = hexval(s[i + 1])) < 0 ||
		    (lo = hexval(s[i + 2])) < 0) {
			err = wks__err(WKS_ERR_FORMAT, "%s: bad percent escape "
				       "(a %% must be followed by two hex "
				       "digits)", what);
			goto fail;
		}
		if (hi == 0 && lo == 0) {
			err = wks__err(WKS_ERR_FORMAT, "%s: %%00 (NUL) is not "
				       "allowed", what);
			goto fail;
		}
		d[j++] = (char)(hi << 4 | lo);
		i += 2;
	}
	d[j] = 0;
	*out = d;
	*out_len = j;
	return WKS_OK;
fail:
	wks_wipe_free(d, n + 1);
	return err;
}

/* only=certs or only=issuers; the value percent-decoded as every other. */
static int parse_only(wks_uri *u, const char *v, size_t n)
{
	char *d = NULL;
	size_t dlen = 0;
	int err;

	if (u->only != WKS_URI_ALL)
		return wks__err(WKS_ERR_FORMAT, "only= given twice");
	if ((err = decode(&d, &dlen, v, n, "only")) < 0)
		return err;
	if (dlen == 5 && !memcmp(d, "certs", 5))
		u->only = WKS_URI_CERTS;
	else if (dlen == 7 && !memcmp(d, "issuers", 7))
		u->only = WKS_URI_ISSUERS;
	else
		err = wks__err(WKS_ERR_FORMAT, "only=: expected certs or "
			       "issuers");
	free(d);
	return err;
}

static int parse_query(wks_uri *u, const char *q, size_t n)
{
	size_t start = 0;
	unsigned idx = 0;
	int after_pw = 0; /* a storepass= or keypass= came before */
	int err;

	if (n == 0)
		return wks__err(WKS_ERR_FORMAT, "empty query after '?'");
	while (start <= n) {
		const char *a = q + start;
		const char *amp = memchr(a, '&', n - start);
		size_t alen = amp ? (size_t)(amp - a) : n - start;
		const char *eq = memchr(a, '=', alen);
		size_t klen = eq ? (size_t)(eq - a) : alen;
		wks_pwsrc *src = NULL;
		const char *what;
		char *v = NULL;
		size_t vlen = 0;

		idx++;
		if (alen == 0)
			return wks__err(WKS_ERR_FORMAT, "empty attribute in the "
					"query (\"&&\", or '&' at an end)");
		/* Never echo an attribute's text once a password source came
		 * before it: an unencoded '&' in a pass: value makes the rest
		 * of the password look like further attributes
		 * ("storepass=pass:a&3-horse"), so name the attribute by its
		 * position instead.  Before any password attribute the text
		 * cannot be part of a password, and naming it helps a typo. */
		if (!eq && after_pw)
			return wks__err(WKS_ERR_FORMAT, "attribute %u of the "
					"query has no '=VALUE' (a '&' inside a "
					"value must be written %%26)", idx);
		if (!eq)
			return wks__err(WKS_ERR_FORMAT, "attribute \"%.*s\" has "
					"no '=VALUE'",
					(int)(klen > 32 ? 32 : klen), a);
		if (klen == 5 && !memcmp(a, "alias", 5)) {
			if (u->alias)
				return wks__err(WKS_ERR_FORMAT, "alias= given "
						"twice");
		} else if (klen == 9 && !memcmp(a, "storepass", 9)) {
			src = &u->storepass;
		} else if (klen == 7 && !memcmp(a, "keypass", 7)) {
			src = &u->keypass;
		} else if (klen == 4 && !memcmp(a, "only", 4)) {
			if ((err = parse_only(u, eq + 1, alen - 5)) < 0)
				return err;
			start += alen + 1;
			continue;
		} else if (after_pw) {
			return wks__err(WKS_ERR_FORMAT, "attribute %u of the "
					"query is unknown (expected alias, "
					"storepass, keypass or only; a '&' "
					"inside a value must be written %%26)",
					idx);
		} else {
			/* Never echo a value: it may be a password. */
			return wks__err(WKS_ERR_FORMAT, "unknown attribute "
					"\"%.*s\" (expected alias, storepass, "
					"keypass or only)",
					(int)(klen > 32 ? 32 : klen), a);
		}
		if (src)
			after_pw = 1;
		if (src && src->kind != WKS_PW_NONE)
			return wks__err(WKS_ERR_FORMAT, "%.*s= given twice",
					(int)klen, a);
		what = src == &u->storepass ? "storepass" :
		       src ? "keypass" : "alias";
		if ((err = decode(&v, &vlen, eq + 1, alen - klen - 1, what)) < 0)
			return err;
		if (!src) {
			u->alias = v;
			u->alias_after_pw = after_pw;
		} else {
			err = wks__pwsrc_set(src, v, vlen, what);
			wks_wipe_free(v, vlen + 1);
			if (err < 0)
				return err;
		}
		start += alen + 1;
	}
	return WKS_OK;
}

int wks__uri_parse(wks_uri *out, const char *uri)
{
	const char *p, *q;
	size_t n, plen, len;
	int err;

	memset(out, 0, sizeof(*out));
	wks__pwsrc_init(&out->storepass);
	wks__pwsrc_init(&out->keypass);
	if (!uri)
		return wks__err(WKS_ERR_INVALID, "no URI");
	n = strnlen(uri, WKS_URI_MAX + 1);
	if (n > WKS_URI_MAX)
		return wks__err(WKS_ERR_LIMIT, "URI longer than %d bytes",
				WKS_URI_MAX);
	if (n < 4 || (uri[0] != 'w' && uri[0] != 'W') ||
	    (uri[1] != 'k' && uri[1] != 'K') ||
	    (uri[2] != 's' && uri[2] != 'S') || uri[3] != ':')
		return wks__err(WKS_ERR_FORMAT, "not a wks: URI");
	p = uri + 4;
	n -= 4;
	if (memchr(p, '#', n))
		return wks__err(WKS_ERR_FORMAT, "'#' must be written %%23 "
				"(fragments are not supported)");
	if (n >= 2 && p[0] == '/' && p[1] == '/') {
		/* An authority: only the local host, as for file: URIs. */
		const char *end = p + 2;
		size_t alen;

		while (end < p + n && *end != '/' && *end != '?')
			end++;
		alen = (size_t)(end - (p + 2));
		if (alen != 0 &&
		    !(alen == 9 && !strncmp(p + 2, "localhost", 9)))
			return wks__err(WKS_ERR_FORMAT, "only wks:///PATH or "
					"wks://localhost/PATH may have an "
					"authority");
		if (end == p + n || *end != '/')
			return wks__err(WKS_ERR_FORMAT, "no path after the "
					"authority");
		n -= (size_t)(end - p);
		p = end;
	}
	q = memchr(p, '?', n);
	plen = q ? (size_t)(q - p) : n;
	if (plen == 0)
		return wks__err(WKS_ERR_FORMAT, "no file name");
	if ((err = decode(&out->path, &len, p, plen, "path")) < 0 ||
	    (q && (err = parse_query(out, q + 1, n - plen - 1)) < 0)) {
		wks__uri_clear(out);
		return err;
	}
	return WKS_OK;
}

/* ---- the public face ------------------------------------------------------ */

int wks_uri_parse(wks_uri **out, const char *uri)
{
	wks_uri *u;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "wks_uri_parse: out is NULL");
	*out = NULL;
	if (!(u = malloc(sizeof(*u))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	if ((err = wks__uri_parse(u, uri)) < 0) {
		free(u);
		return err;
	}
	*out = u;
	return WKS_OK;
}

const char *wks_uri_path(const wks_uri *u)
{
	return u ? u->path : NULL;
}

const char *wks_uri_alias(const wks_uri *u)
{
	return u ? u->alias : NULL;
}

int wks_uri_alias_after_password(const wks_uri *u)
{
	return u ? u->alias_after_pw : 0;
}

const wks_pwsrc *wks_uri_storepass(const wks_uri *u)
{
	return u && u->storepass.kind != WKS_PW_NONE ? &u->storepass : NULL;
}

const wks_pwsrc *wks_uri_keypass(const wks_uri *u)
{
	return u && u->keypass.kind != WKS_PW_NONE ? &u->keypass : NULL;
}

wks_uri_select wks_uri_only(const wks_uri *u)
{
	return u ? u->only : WKS_URI_ALL;
}

void wks_uri_free(wks_uri *u)
{
	if (u) {
		wks__uri_clear(u);
		free(u);
	}
}
