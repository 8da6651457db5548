/* Error state: one thread-local detail message per thread (see wks.h). */
#ifndef WKS_UTIL_ERROR_H
#define WKS_UTIL_ERROR_H

#include "wks/wks.h"

#if defined(__GNUC__)
#define WKS__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WKS__PRINTF(a, b)
#endif

/* Record `code` with a printf-style detail for this thread; returns code.
 * Never pass secrets to it. */
int wks__err(int code, const char *fmt, ...) WKS__PRINTF(2, 3);

/* Clear this thread's detail (called at the start of public calls). */
void wks__err_clear(void);

#endif
