/*
 * Password sources (wks/uri.h): pass:TEXT, env:VAR, file:PATH, fd:N.
 * The rules are those of the wks tool's own sources (cli/shared/
 * password.c): file: and fd: give the first line without "\n" or "\r\n",
 * env: the variable's value.  Every buffer that held a password is wiped
 * before it is freed.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uri/uri_int.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/wipe.h"

void wks__pwsrc_init(wks_pwsrc *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

void wks__pwsrc_clear(wks_pwsrc *s)
{
	if (s->value)
		wks_wipe_free(s->value, s->value_len + 1);
	wks__pwsrc_init(s);
}

int wks__pwsrc_set(wks_pwsrc *s, const char *v, size_t len, const char *what)
{
	static const struct {
		const char *prefix;
		wks_pw_kind kind;
	} kinds[] = {
		{ "pass:", WKS_PW_PASS }, { "env:", WKS_PW_ENV },
		{ "file:", WKS_PW_FILE }, { "fd:", WKS_PW_FD },
	};
	size_t i, plen = 0;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		plen = strlen(kinds[i].prefix);
		if (len >= plen && !memcmp(v, kinds[i].prefix, plen))
			break;
	}
	/* Never repeat the text: it may be a password given in the wrong
	 * place. */
	if (i == sizeof(kinds) / sizeof(kinds[0]))
		return wks__err(WKS_ERR_FORMAT, "%s: expected pass:TEXT, env:VAR, "
				"file:PATH or fd:N", what);
	if (len == plen)
		return wks__err(WKS_ERR_FORMAT, "%s: empty %s", what,
				kinds[i].prefix);
	if (kinds[i].kind == WKS_PW_FD) {
		long fd = 0;

		for (size_t k = plen; k < len; k++) {
			if (v[k] < '0' || v[k] > '9' || fd > WKS_PW_FD_MAX)
				return wks__err(WKS_ERR_FORMAT, "%s: fd: needs a "
						"file descriptor number", what);
			fd = fd * 10 + (v[k] - '0');
		}
		if (fd > WKS_PW_FD_MAX)
			return wks__err(WKS_ERR_FORMAT, "%s: fd: needs a file "
					"descriptor number", what);
		s->kind = WKS_PW_FD;
		s->fd = (int)fd;
		return WKS_OK;
	}
	if (!(s->value = malloc(len - plen + 1)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	memcpy(s->value, v + plen, len - plen);
	s->value[len - plen] = 0;
	s->value_len = len - plen;
	s->kind = kinds[i].kind;
	return WKS_OK;
}

int wks_pwsrc_parse(wks_pwsrc **out, const char *text, size_t len)
{
	wks_pwsrc *s;
	int err;

	wks__err_clear();
	if (!out)
		return wks__err(WKS_ERR_INVALID, "wks_pwsrc_parse: out is NULL");
	*out = NULL;
	if (!text)
		return wks__err(WKS_ERR_INVALID, "no password source");
	if (memchr(text, 0, len))
		return wks__err(WKS_ERR_INVALID, "a password source holds a "
				"NUL byte");
	if (!(s = malloc(sizeof(*s))))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	wks__pwsrc_init(s);
	if ((err = wks__pwsrc_set(s, text, len, "password source")) < 0) {
		free(s);
		return err;
	}
	*out = s;
	return WKS_OK;
}

wks_pw_kind wks_pwsrc_kind(const wks_pwsrc *src)
{
	return src ? src->kind : WKS_PW_NONE;
}

const char *wks_pwsrc_value(const wks_pwsrc *src, size_t *len)
{
	if (len)
		*len = src && src->value ? src->value_len : 0;
	return src ? src->value : NULL;
}

int wks_pwsrc_fd(const wks_pwsrc *src)
{
	return src && src->kind == WKS_PW_FD ? src->fd : -1;
}

void wks_pwsrc_free(wks_pwsrc *src)
{
	if (src) {
		wks__pwsrc_clear(src);
		free(src);
	}
}

/* ---- reading ------------------------------------------------------------ */

static int dup_pw(char **out, size_t *out_len, const char *p, size_t n,
		  const char *what)
{
	if (n == 0)
		return wks__err(WKS_ERR_INVALID, "%s: the password is empty",
				what);
	if (!(*out = wks__out_dup(p, n)))
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	*out_len = n;
	return WKS_OK;
}

/* One line from fd, a byte at a time so that nothing after it is used up
 * (fd: may be a pipe the application reads on). */
static int read_line(char **out, size_t *out_len, int fd, const char *what)
{
	char *buf = malloc(WKS_PW_MAX + 1);
	size_t n = 0;
	int err;

	if (!buf)
		return wks__err(WKS_ERR_NOMEM, "out of memory");
	for (;;) {
		char ch;
		ssize_t r = read(fd, &ch, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = wks__err(WKS_ERR_IO, "%s: cannot read: %s", what,
				       strerror(errno));
			goto done;
		}
		if (r == 0 || ch == '\n')
			break;
		if (n == WKS_PW_MAX) {
			err = wks__err(WKS_ERR_LIMIT, "%s: password longer than "
				       "%d bytes", what, WKS_PW_MAX);
			goto done;
		}
		buf[n++] = ch;
	}
	if (n && buf[n - 1] == '\r')
		n--;
	err = dup_pw(out, out_len, buf, n, what);
done:
	wks_wipe_free(buf, WKS_PW_MAX + 1);
	return err;
}

int wks_pwsrc_read(char **out, size_t *out_len, const wks_pwsrc *src,
		   const char *what)
{
	const char *v;
	int fd, err;

	wks__err_clear();
	if (!out || !out_len)
		return wks__err(WKS_ERR_INVALID, "wks_pwsrc_read: out is NULL");
	*out = NULL;
	*out_len = 0;
	if (!what)
		what = "password";
	switch (src ? src->kind : WKS_PW_NONE) {
	case WKS_PW_PASS:
		return dup_pw(out, out_len, src->value, src->value_len, what);
	case WKS_PW_ENV:
		/* secure_getenv: no environment passwords in a setuid
		 * process, whose environment its caller controls. */
		if (!(v = secure_getenv(src->value)))
			return wks__err(WKS_ERR_NOTFOUND, "%s: environment "
					"variable %s is not set", what,
					src->value);
		return dup_pw(out, out_len, v, strlen(v), what);
	case WKS_PW_FILE:
		if ((fd = open(src->value, O_RDONLY | O_CLOEXEC)) < 0)
			return wks__err(WKS_ERR_IO, "%s: cannot open %s: %s",
					what, src->value, strerror(errno));
		err = read_line(out, out_len, fd, what);
		close(fd);
		return err;
	case WKS_PW_FD:
		return read_line(out, out_len, src->fd, what);
	default:
		return wks__err(WKS_ERR_INVALID, "%s: no password source", what);
	}
}
