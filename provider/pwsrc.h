/*
 * Reading a password from a wks: URI source (uri.h): pass:, env:, file:,
 * fd:.  No OpenSSL here either.
 */
#ifndef WKS_PROVIDER_PWSRC_H
#define WKS_PROVIDER_PWSRC_H

#include <stddef.h>

#include "uri.h"

/* Longest password read from a file or a descriptor. */
#define WKSP_PW_MAX 65536

/*
 * The password of `src` (kind != WKSP_PW_NONE) in a new buffer *out of
 * *out_len bytes (NUL-terminated), to be released with wksp_pw_free().
 * file: and fd: give their first line without its end ("\n" or "\r\n").
 * Returns 0, or -1 with a message (naming the source, never its text) in
 * err.  An empty password is an error.
 */
int wksp_pw_read(char **out, size_t *out_len, const wksp_pwsrc *src,
		 const char *what, char *err, size_t errlen);

/* Wipe and free a password from wksp_pw_read().  NULL is ignored. */
void wksp_pw_free(char *pw, size_t len);

#endif
