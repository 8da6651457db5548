#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char detail[512];

int wks__err(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return code;
}

void wks__err_clear(void)
{
	detail[0] = '\0';
}

const char *wks_error_detail(void)
{
	return detail;
}

const char *wks_strerror(int err)
{
	switch (err) {
	case WKS_OK: return "success";
	case WKS_ERR_NOMEM: return "out of memory";
	case WKS_ERR_IO: return "I/O error";
	case WKS_ERR_FORMAT: return "malformed input";
	case WKS_ERR_INTEGRITY:
		return "integrity check failed: wrong password, or the data was modified";
	case WKS_ERR_NOTFOUND: return "not found";
	case WKS_ERR_WRONG_TYPE: return "wrong entry type";
	case WKS_ERR_UNSUPPORTED: return "unsupported";
	case WKS_ERR_LIMIT: return "limit exceeded";
	case WKS_ERR_INVALID: return "invalid argument";
	case WKS_ERR_CRYPTO: return "cryptographic operation failed";
	case WKS_ERR_EXISTS: return "an entry with that alias already exists";
	case WKS_ERR_BUSY: return "locked by another process or thread";
	default: return "unknown error";
	}
}

const char *wks_version(void)
{
	return WKS_VERSION_STRING;
}
