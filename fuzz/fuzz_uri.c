/*
 * fuzz_uri: the wks: URI parser (wks_uri_parse(), src/uri/uri.c;
 * docs/PROVIDER.md "URI syntax"), on any bytes taken as a C string.
 *
 * Oracles:
 *  - the parser returns WKS_OK or a wks_err; on failure *out is NULL and
 *    the detail is a non-empty string;
 *  - on 0 the path is non-empty, nothing decoded is longer than the input,
 *    a password source of kind pass:/env:/file: has a non-empty value and
 *    fd: a number in range;
 *  - round trip: the parsed URI written back with every byte
 *    percent-encoded (except A-Z a-z 0-9 - . _ ~) parses again to exactly
 *    the same fields (only= written back as only=certs or only=issuers).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_pwsrc.h"

/* Append s[0..n) percent-encoded at *o. */
static void enc(char **o, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			*(*o)++ = (char)c;
		} else {
			*(*o)++ = '%';
			*(*o)++ = hex[c >> 4];
			*(*o)++ = hex[c & 15];
		}
	}
}

static void put(char **o, const char *s)
{
	size_t n = strlen(s);

	memcpy(*o, s, n);
	*o += n;
}

static void enc_src(char **o, char *sep, const char *name,
		    const wks_pwsrc *s)
{
	static const char *const prefix[] = { "", "pass:", "env:", "file:",
					      "fd:" };
	char num[16];
	size_t len = 0;
	const char *v = wks_pwsrc_value(s, &len);

	if (wks_pwsrc_kind(s) == WKS_PW_NONE)
		return;
	*(*o)++ = *sep;
	*sep = '&';
	put(o, name);
	put(o, "=");
	put(o, prefix[wks_pwsrc_kind(s)]);
	if (wks_pwsrc_kind(s) == WKS_PW_FD) {
		snprintf(num, sizeof(num), "%d", wks_pwsrc_fd(s));
		put(o, num);
	} else {
		enc(o, v, len);
	}
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *out, *o, sep = '?';
	wks_uri *u = NULL, *v = NULL;
	const char *path, *alias;
	int rc;

	PW_CHECK(in != NULL, "malloc");
	memcpy(in, data, size);
	in[size] = 0;
	rc = wks_uri_parse(&u, in);
	PW_CHECK(rc == WKS_OK || (rc < 0 && rc >= WKS_ERR_BUSY),
		 "return value");
	if (rc < 0) {
		PW_CHECK(!u, "output not cleared");
		fuzz_check_detail();
		free(in);
		return 0;
	}
	path = wks_uri_path(u);
	alias = wks_uri_alias(u);
	PW_CHECK(path && path[0] && strlen(path) <= size, "path");
	PW_CHECK(!alias || strlen(alias) <= size, "alias");
	PW_CHECK(!wks_uri_alias_after_password(u) || alias, "alias order");
	fuzz_check_src(wks_uri_storepass(u), size, 1);
	fuzz_check_src(wks_uri_keypass(u), size, 1);

	/* Round trip: every decoded byte becomes at most 3. */
	out = malloc(3 * size + 80);
	PW_CHECK(out != NULL, "malloc");
	o = out;
	put(&o, "wks:");
	enc(&o, path, strlen(path));
	if (alias) {
		*o++ = sep;
		sep = '&';
		put(&o, "alias=");
		enc(&o, alias, strlen(alias));
	}
	enc_src(&o, &sep, "storepass", wks_uri_storepass(u));
	enc_src(&o, &sep, "keypass", wks_uri_keypass(u));
	PW_CHECK(wks_uri_only(u) >= WKS_URI_ALL &&
		 wks_uri_only(u) <= WKS_URI_ISSUERS, "only");
	if (wks_uri_only(u) != WKS_URI_ALL) {
		*o++ = sep;
		put(&o, wks_uri_only(u) == WKS_URI_CERTS ? "only=certs" :
		    "only=issuers");
	}
	*o = 0;
	if (strlen(out) <= WKS_URI_MAX) {
		rc = wks_uri_parse(&v, out);
		PW_CHECK(rc == WKS_OK, wks_error_detail());
		PW_CHECK(!strcmp(path, wks_uri_path(v)), "round trip: path");
		PW_CHECK((!alias && !wks_uri_alias(v)) ||
			 (alias && wks_uri_alias(v) &&
			  !strcmp(alias, wks_uri_alias(v))),
			 "round trip: alias");
		PW_CHECK(fuzz_same_src(wks_uri_storepass(u),
				       wks_uri_storepass(v)),
			 "round trip: storepass");
		PW_CHECK(fuzz_same_src(wks_uri_keypass(u), wks_uri_keypass(v)),
			 "round trip: keypass");
		PW_CHECK(wks_uri_only(u) == wks_uri_only(v), "round trip: only");
		wks_uri_free(v);
	}
	free(out);
	wks_uri_free(u);
	free(in);
	return 0;
}
