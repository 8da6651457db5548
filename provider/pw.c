/*
 * Passwords from the sources of wks: URIs and key references: read by
 * libwks (wks_pwsrc_read(), wks/uri.h), kept in the provider's own
 * buffers like the passwords its passphrase callbacks give, so that one
 * function wipes and frees them all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "prov.h"

int wksp_pw_read(char **pw, size_t *pw_len, const wks_pwsrc *src,
		 const char *what, char *err, size_t errlen)
{
	char *p = NULL;
	size_t n = 0;

	*pw = NULL;
	*pw_len = 0;
	if (wks_pwsrc_read(&p, &n, src, what) < 0) {
		snprintf(err, errlen, "%s", wks_error_detail());
		return -1;
	}
	if ((*pw = malloc(n + 1)) != NULL) {
		memcpy(*pw, p, n + 1);
		*pw_len = n;
	}
	wks_free(p); /* wipes */
	if (!*pw) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

void wksp_pw_free(char *pw, size_t len)
{
	if (pw) {
		OPENSSL_cleanse(pw, len);
		free(pw);
	}
}
