/*
 * fuzz_uri: the wks: URI parser of the OpenSSL provider (provider/uri.c,
 * docs/PROVIDER.md), on any bytes taken as a C string.
 *
 * Oracles:
 *  - the parser returns 0 or -1; on -1 every output is cleared and the
 *    message is a non-empty string;
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

#include "uri.h"
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
		    const wksp_pwsrc *s)
{
	static const char *const prefix[] = { "", "pass:", "env:", "file:",
					      "fd:" };
	char num[16];

	if (s->kind == WKSP_PW_NONE)
		return;
	*(*o)++ = *sep;
	*sep = '&';
	put(o, name);
	put(o, "=");
	put(o, prefix[s->kind]);
	if (s->kind == WKSP_PW_FD) {
		snprintf(num, sizeof(num), "%d", s->fd);
		put(o, num);
	} else {
		enc(o, s->value, s->value_len);
	}
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *out, *o, err[256], sep = '?';
	wksp_uri u, v;
	int rc;

	PW_CHECK(in != NULL, "malloc");
	memcpy(in, data, size);
	in[size] = 0;
	rc = wksp_uri_parse(&u, in, err, sizeof(err));
	PW_CHECK(rc == 0 || rc == -1, "return value");
	if (rc < 0) {
		PW_CHECK(!u.path && !u.alias && u.storepass.kind == WKSP_PW_NONE &&
			  u.keypass.kind == WKSP_PW_NONE &&
			  u.only == WKSP_ONLY_ALL, "outputs not cleared");
		PW_CHECK(err[0] != 0, "no message");
		free(in);
		return 0;
	}
	PW_CHECK(u.path && u.path[0] && strlen(u.path) <= size, "path");
	PW_CHECK(!u.alias || strlen(u.alias) <= size, "alias");
	fuzz_check_src(&u.storepass, size, 1);
	fuzz_check_src(&u.keypass, size, 1);

	/* Round trip: every decoded byte becomes at most 3. */
	out = malloc(3 * size + 80);
	PW_CHECK(out != NULL, "malloc");
	o = out;
	put(&o, "wks:");
	enc(&o, u.path, strlen(u.path));
	if (u.alias) {
		*o++ = sep;
		sep = '&';
		put(&o, "alias=");
		enc(&o, u.alias, strlen(u.alias));
	}
	enc_src(&o, &sep, "storepass", &u.storepass);
	enc_src(&o, &sep, "keypass", &u.keypass);
	PW_CHECK(u.only >= WKSP_ONLY_ALL && u.only <= WKSP_ONLY_ISSUERS,
		  "only");
	if (u.only != WKSP_ONLY_ALL) {
		*o++ = sep;
		put(&o, u.only == WKSP_ONLY_CERTS ? "only=certs" :
		    "only=issuers");
	}
	*o = 0;
	if (strlen(out) <= WKSP_URI_MAX) {
		rc = wksp_uri_parse(&v, out, err, sizeof(err));
		PW_CHECK(rc == 0, err);
		PW_CHECK(!strcmp(u.path, v.path), "round trip: path");
		PW_CHECK((!u.alias && !v.alias) ||
			  (u.alias && v.alias && !strcmp(u.alias, v.alias)),
			  "round trip: alias");
		PW_CHECK(fuzz_same_src(&u.storepass, &v.storepass),
			  "round trip: storepass");
		PW_CHECK(fuzz_same_src(&u.keypass, &v.keypass),
			  "round trip: keypass");
		PW_CHECK(u.only == v.only, "round trip: only");
		wksp_uri_clear(&v);
	}
	free(out);
	wksp_uri_clear(&u);
	free(in);
	return 0;
}
