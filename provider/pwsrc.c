/*
 * Password sources of wks: URIs.  The rules are those of the wks tool
 * (cli/shared/password.c): file: and fd: give the first line, without "\n" or
 * "\r\n"; env: the variable's value.  Every buffer is wiped before it is
 * freed.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pwsrc.h"

void wksp_pw_free(char *pw, size_t len)
{
	if (pw) {
		wksp_wipe(pw, len);
		free(pw);
	}
}

static int dup_pw(char **out, size_t *out_len, const char *p, size_t n,
		  const char *what, char *err, size_t errlen)
{
	if (n == 0) {
		snprintf(err, errlen, "%s: the password is empty", what);
		return -1;
	}
	if (!(*out = malloc(n + 1))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(*out, p, n);
	(*out)[n] = 0;
	*out_len = n;
	return 0;
}

/* One line from fd, a byte at a time so that nothing after it is used up
 * (fd: may be a pipe the application reads on). */
static int read_line(char **out, size_t *out_len, int fd, const char *what,
		     char *err, size_t errlen)
{
	char *buf = malloc(WKSP_PW_MAX + 1);
	size_t n = 0;
	int rc = -1;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (;;) {
		char ch;
		ssize_t r = read(fd, &ch, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: cannot read: %s", what,
				 strerror(errno));
			goto done;
		}
		if (r == 0 || ch == '\n')
			break;
		if (n == WKSP_PW_MAX) {
			snprintf(err, errlen, "%s: password longer than %d "
				 "bytes", what, WKSP_PW_MAX);
			goto done;
		}
		buf[n++] = ch;
	}
	if (n && buf[n - 1] == '\r')
		n--;
	rc = dup_pw(out, out_len, buf, n, what, err, errlen);
done:
	wksp_wipe(buf, WKSP_PW_MAX + 1);
	free(buf);
	return rc;
}

int wksp_pw_read(char **out, size_t *out_len, const wksp_pwsrc *src,
		 const char *what, char *err, size_t errlen)
{
	const char *v;
	int fd, rc = -1;

	*out = NULL;
	*out_len = 0;
	switch (src->kind) {
	case WKSP_PW_PASS:
		rc = dup_pw(out, out_len, src->value, src->value_len, what,
			    err, errlen);
		break;
	case WKSP_PW_ENV:
		/* secure_getenv: no environment passwords in a setuid
		 * process, whose environment its caller controls. */
		v = secure_getenv(src->value);
		if (!v) {
			snprintf(err, errlen, "%s: environment variable %s "
				 "is not set", what, src->value);
			break;
		}
		rc = dup_pw(out, out_len, v, strlen(v), what, err, errlen);
		break;
	case WKSP_PW_FILE:
		fd = open(src->value, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(err, errlen, "%s: cannot open %s: %s", what,
				 src->value, strerror(errno));
			break;
		}
		rc = read_line(out, out_len, fd, what, err, errlen);
		close(fd);
		break;
	case WKSP_PW_FD:
		rc = read_line(out, out_len, src->fd, what, err, errlen);
		break;
	default:
		snprintf(err, errlen, "%s: no password source", what);
		break;
	}
	return rc;
}
