/*
 * wks: URIs (docs/PROVIDER.md has the grammar).
 *
 *   wks:PATH[?ATTR=VALUE[&ATTR=VALUE]...]
 *   wks:///ABSOLUTE/PATH[?...]       wks://localhost/ABSOLUTE/PATH[?...]
 *
 * PATH is absolute or relative to the working directory; PATH and every
 * VALUE are percent-decoded.  The attributes are alias=NAME,
 * storepass=SRC, keypass=SRC, where SRC is pass:TEXT, env:VAR,
 * file:PATH or fd:N (as for the wks tool), and only=certs|issuers.  Unknown, repeated or empty
 * attributes, bad percent escapes, an encoded NUL (%00), an unencoded '#'
 * and an empty PATH are errors.
 *
 * This file is pure: no I/O, no OpenSSL, so that it can be unit tested and
 * fuzzed on its own (fuzz/fuzz_uri.c).  Reading a password source is in
 * pwsrc.c.
 */
#ifndef WKS_PROVIDER_URI_H
#define WKS_PROVIDER_URI_H

#include <stddef.h>

/* Longest URI accepted, in bytes. */
#define WKSP_URI_MAX 65536

typedef enum {
	WKSP_PW_NONE = 0, /* no source given */
	WKSP_PW_PASS,     /* pass:TEXT, value = TEXT */
	WKSP_PW_ENV,      /* env:VAR, value = VAR */
	WKSP_PW_FILE,     /* file:PATH, value = PATH (first line is read) */
	WKSP_PW_FD        /* fd:N, fd = N (first line is read) */
} wksp_pw_kind;

typedef struct {
	wksp_pw_kind kind;
	char *value;      /* NUL-terminated; NULL for NONE and FD */
	size_t value_len;
	int fd;
} wksp_pwsrc;

/* only=: which objects the URI gives. */
typedef enum {
	WKSP_ONLY_ALL = 0, /* no only=: keys and certificates */
	WKSP_ONLY_CERTS,   /* only=certs: certificates, no key */
	WKSP_ONLY_ISSUERS  /* only=issuers: key entries' chains without the
			    * leaf */
} wksp_only;

typedef struct {
	char *path;       /* decoded, NUL-terminated, never empty */
	char *alias;      /* decoded; NULL if no alias= (may be "") */
	int alias_after_pw; /* alias= came after storepass=/keypass=: its
			     * text may be a password's tail (an unencoded
			     * '&'), so errors must not repeat it */
	wksp_pwsrc storepass;
	wksp_pwsrc keypass;
	wksp_only only;
} wksp_uri;

/*
 * Parse `uri` (NUL-terminated) into *out.  Returns 0, or -1 with a
 * message (never containing a password) in err[errlen] and *out cleared.
 * Release with wksp_uri_clear(), which wipes the password values.
 */
int wksp_uri_parse(wksp_uri *out, const char *uri, char *err, size_t errlen);
void wksp_uri_clear(wksp_uri *u);
void wksp_pwsrc_clear(wksp_pwsrc *s);

/* Overwrite n bytes at p with zeros in a way the compiler keeps. */
void wksp_wipe(void *p, size_t n);

#endif
