/*
 * wks: URIs, password sources and key references (wks/uri.h): the
 * structures behind the opaque handles, shared by the files of src/uri/.
 *
 * Pure text: no OpenSSL, no configuration, no store; pwsrc.c alone does
 * I/O (reading a source).
 */
#ifndef WKS_URI_URI_INT_H
#define WKS_URI_URI_INT_H

#include <stddef.h>

#include "wks/uri.h"

struct wks_pwsrc {
	wks_pw_kind kind;
	char *value;      /* NUL-terminated; NULL for NONE and FD */
	size_t value_len;
	int fd;           /* -1 unless FD */
};

struct wks_uri {
	char *path;        /* decoded, NUL-terminated, never empty */
	char *alias;       /* decoded; NULL if no alias= (may be "") */
	int alias_after_pw;
	wks_pwsrc storepass, keypass; /* kind NONE when absent */
	wks_uri_select only;
};

/* An empty source (kind NONE, fd -1). */
void wks__pwsrc_init(wks_pwsrc *s);
/* Wipe and free a source's value; it is empty afterwards. */
void wks__pwsrc_clear(wks_pwsrc *s);
/* Parse text[0..len) ("pass:...", "env:...", "file:...", "fd:N") into
 * *s (empty on entry).  `what` names it in the detail ("storepass"). */
int wks__pwsrc_set(wks_pwsrc *s, const char *text, size_t len,
		   const char *what);

/* Parse into a caller's structure (cleared on failure) / release it. */
int wks__uri_parse(wks_uri *out, const char *uri);
void wks__uri_clear(wks_uri *u);

#endif
