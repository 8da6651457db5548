/*
 * The debug log: off unless $WKS_PKCS11_DEBUG is set (ignored in
 * set-user-ID programs: w11_privileged()): "1" or "stderr" logs to
 * standard error, any other value names a file to append to.  It says
 * why a call failed (the CK_RV alone rarely does); it never holds a PIN,
 * a key or a value an attribute of a private object carries.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p11.h"

int w11_debug;
static FILE *log_file;

void w11_log_init(void)
{
	const char *v = w11_privileged() ? NULL : getenv("WKS_PKCS11_DEBUG");

	if (!v || !*v || strcmp(v, "0") == 0)
		return;
	if (strcmp(v, "1") == 0 || strcmp(v, "stderr") == 0)
		log_file = stderr;
	else if (!(log_file = fopen(v, "ae")))
		return;
	w11_debug = 1;
}

void w11_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	if (!log_file)
		return;
	n = snprintf(line, sizeof(line), "libwks-pkcs11[%ld]: ",
		     (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* one write per line, so that threads do not interleave */
	fprintf(log_file, "%s\n", line);
	fflush(log_file);
}

void w11_log_wks(const char *what, int err)
{
	W11_LOG("%s: %s (%s)", what, wks_strerror(err), wks_error_detail());
}
