/* The one wiping primitive: the backend's (OPENSSL_cleanse, or
 * crypto_wolfcrypt.c's volatile stores), which the compiler cannot
 * remove.  Use it on every buffer that held a secret, on every path. */
#ifndef WKS_UTIL_WIPE_H
#define WKS_UTIL_WIPE_H

#include <stddef.h>

void wks_wipe(void *p, size_t n);

/* Wipe then free `n` bytes at p (NULL is ignored). */
void wks_wipe_free(void *p, size_t n);

/* Wipe and free a NUL-terminated string. */
void wks_wipe_str(char *s);

#endif
