/*
 * Messages, files and text for wks(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "cli.h"

static void vmsg(const char *file, const char *kind, const char *fmt,
		 va_list ap) CLI_PRINTF(3, 0);

static void vmsg(const char *file, const char *kind, const char *fmt,
		 va_list ap)
{
	fflush(stdout); /* keep the order of output and messages */
	fputs("wks: ", stderr);
	if (file)
		fprintf(stderr, "%s: ", file);
	if (kind)
		fprintf(stderr, "%s: ", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_err(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(file, NULL, fmt, ap);
	va_end(ap);
}

void cli_note(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(file, "note", fmt, ap);
	va_end(ap);
}

int cli_exit_for(int err)
{
	switch (err) {
	case WKS_OK: return CLI_EXIT_OK;
	case WKS_ERR_IO: return CLI_EXIT_IO;
	case WKS_ERR_FORMAT: return CLI_EXIT_MALFORMED;
	case WKS_ERR_INTEGRITY: return CLI_EXIT_INTEGRITY;
	case WKS_ERR_NOTFOUND: return CLI_EXIT_NOTFOUND;
	case WKS_ERR_WRONG_TYPE:
	case WKS_ERR_UNSUPPORTED:
	case WKS_ERR_INVALID: return CLI_EXIT_INVALID;
	case WKS_ERR_LIMIT: return CLI_EXIT_LIMIT;
	case WKS_ERR_EXISTS: return CLI_EXIT_EXISTS;
	default: return CLI_EXIT_FAIL;
	}
}

int cli_lib_err(const char *file, const char *alias, int err, const char *what)
{
	const char *detail = wks_error_detail();
	char *da = alias ? cli_display(alias) : NULL;
	char prefix[512] = "";
	const char *problem;

	if (da)
		snprintf(prefix, sizeof(prefix), "entry \"%s\": ", da);
	switch (err) {
	case WKS_ERR_INTEGRITY:
		problem = alias ? "integrity check failed: wrong key password, "
				  "or the entry was modified"
				: "integrity check failed: wrong password, or "
				  "the file was modified";
		detail = "";
		break;
	case WKS_ERR_FORMAT: problem = "malformed"; break;
	case WKS_ERR_LIMIT: problem = "limit exceeded"; break;
	case WKS_ERR_NOTFOUND:
		problem = "not found";
		if (alias)
			detail = ""; /* "no entry with that alias" says it again */
		break;
	case WKS_ERR_WRONG_TYPE: problem = "wrong entry type"; break;
	case WKS_ERR_UNSUPPORTED: problem = "unsupported"; break;
	case WKS_ERR_INVALID: problem = "rejected"; break;
	case WKS_ERR_IO: problem = "I/O error"; break;
	case WKS_ERR_EXISTS: problem = "exists"; break;
	default: problem = wks_strerror(err); break;
	}
	if (what && *what) {
		if (detail && *detail)
			cli_err(file, "%s%s: %s: %s", prefix, what, problem, detail);
		else
			cli_err(file, "%s%s: %s", prefix, what, problem);
	} else if (detail && *detail) {
		cli_err(file, "%s%s: %s", prefix, problem, detail);
	} else {
		cli_err(file, "%s%s", prefix, problem);
	}
	free(da);
	return cli_exit_for(err);
}

int cli_ssl_err(int status, const char *file, const char *fmt, ...)
{
	char buf[512], msg[768];
	unsigned long e, last = 0;
	va_list ap;

	while ((e = ERR_get_error()) != 0)
		if (ERR_GET_REASON(e) != 0 || !last)
			last = e;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (last) {
		const char *r = ERR_reason_error_string(last);

		if (r)
			snprintf(buf, sizeof(buf), "%s", r);
		else
			ERR_error_string_n(last, buf, sizeof(buf));
		cli_err(file, "%s (%s)", msg, buf);
	} else {
		cli_err(file, "%s", msg);
	}
	return status;
}

int cli_need(const char *v, const char *name)
{
	if (v)
		return 0; /* "" is a valid alias; an empty path fails to open */
	cli_err(NULL, "option %s is required", name);
	return CLI_EXIT_USAGE;
}

void cli_free_secret(void *p, size_t len)
{
	if (p) {
		OPENSSL_cleanse(p, len);
		free(p);
	}
}

int cli_read_file(uint8_t **out, size_t *out_len, const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, rc = CLI_EXIT_IO;
	const int is_stdin = !strcmp(path, "-");

	*out = NULL;
	*out_len = 0;
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_err(path, "cannot open: %s", strerror(errno));
		return CLI_EXIT_IO;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			uint8_t *nb = malloc(ncap);

			if (!nb) {
				cli_err(path, "out of memory");
				rc = CLI_EXIT_FAIL;
				goto done;
			}
			if (buf)
				memcpy(nb, buf, len);
			cli_free_secret(buf, cap);
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			cli_err(path, "cannot read: %s", strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	/* Keep one spare byte so text parsers may NUL-terminate. */
	if (len == cap) {
		uint8_t *nb = malloc(cap + 1);

		if (!nb) {
			cli_err(path, "out of memory");
			rc = CLI_EXIT_FAIL;
			goto done;
		}
		memcpy(nb, buf, len);
		cli_free_secret(buf, cap);
		buf = nb;
	}
	buf[len] = 0;
	*out = buf;
	*out_len = len;
	buf = NULL;
	rc = 0;
done:
	cli_free_secret(buf, cap);
	if (!is_stdin)
		close(fd);
	return rc;
}

int cli_exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cli_write_output(const char *path, const uint8_t *data, size_t len,
		     int binary, int secret)
{
	char *tmp = NULL, *dircopy = NULL;
	int fd = -1, rc = CLI_EXIT_IO;
	size_t plen;

	if (!path || !strcmp(path, "-")) {
		if (binary && isatty(STDOUT_FILENO)) {
			cli_err(NULL, "refusing to write binary data to a "
				"terminal; use --out FILE");
			return CLI_EXIT_USAGE;
		}
		fflush(stdout);
		if (write_all(STDOUT_FILENO, data, len) < 0) {
			cli_err(NULL, "cannot write to standard output: %s",
				strerror(errno));
			return CLI_EXIT_IO;
		}
		return 0;
	}

	/* A temporary file beside the target, renamed over it. */
	plen = strlen(path);
	tmp = malloc(plen + 16);
	if (!tmp) {
		cli_err(path, "out of memory");
		return CLI_EXIT_FAIL;
	}
	snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		cli_err(path, "cannot create a temporary file: %s",
			strerror(errno));
		free(tmp);
		return CLI_EXIT_IO;
	}
	if (!secret) {
		mode_t um = umask(0);

		umask(um);
		if (fchmod(fd, 0644 & ~um) < 0)
			goto io_fail;
	}
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0)
		goto io_fail;
	if (close(fd) < 0) {
		fd = -1;
		goto io_fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto io_fail;
	dircopy = strdup(path);
	if (dircopy) {
		int dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY);

		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
	}
	rc = 0;
	goto done;
io_fail:
	cli_err(path, "cannot write: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
done:
	free(dircopy);
	free(tmp);
	return rc;
}

/*
 * Decode one character of libwks's UTF-8 (standard UTF-8, plus C0 80 for
 * U+0000 and 3-byte surrogates).  Returns the number of bytes used (0 at
 * the end) and the code point in *cp, or -1 in *cp for an invalid byte.
 */
static size_t next_char(const unsigned char *s, long *cp)
{
	unsigned c = s[0];

	if (!c)
		return 0;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC0 && c < 0xE0 && (s[1] & 0xC0) == 0x80) {
		*cp = (long)((c & 0x1F) << 6 | (s[1] & 0x3F));
		return 2;
	}
	if (c >= 0xE0 && c < 0xF0 && (s[1] & 0xC0) == 0x80 &&
	    (s[2] & 0xC0) == 0x80) {
		*cp = (long)((c & 0x0F) << 12 | (s[1] & 0x3Fu) << 6 |
			     (s[2] & 0x3F));
		return 3;
	}
	if (c >= 0xF0 && c < 0xF8 && (s[1] & 0xC0) == 0x80 &&
	    (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80) {
		*cp = (long)((c & 0x07) << 18 | (s[1] & 0x3Fu) << 12 |
			     (s[2] & 0x3Fu) << 6 | (s[3] & 0x3F));
		return 4;
	}
	*cp = -1;
	return 1;
}

char *cli_display(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t cap = strlen(s) * 6 + 1, o = 0;
	char *out = malloc(cap);
	size_t n;
	long cp;

	if (!out)
		return NULL;
	while ((n = next_char(p, &cp)) != 0) {
		if (cp < 0)
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", p[0]);
		else if (cp == 0)
			o += (size_t)snprintf(out + o, cap - o, "\\0");
		else if (cp == '\n')
			o += (size_t)snprintf(out + o, cap - o, "\\n");
		else if (cp == '\r')
			o += (size_t)snprintf(out + o, cap - o, "\\r");
		else if (cp == '\t')
			o += (size_t)snprintf(out + o, cap - o, "\\t");
		else if (cp == '\\')
			o += (size_t)snprintf(out + o, cap - o, "\\\\");
		else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
			o += (size_t)snprintf(out + o, cap - o, "\\x%02lx", cp);
		else if (cp >= 0xD800 && cp <= 0xDFFF)
			o += (size_t)snprintf(out + o, cap - o, "\\u%04lx", cp);
		else {
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = 0;
	return out;
}

void cli_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	long cp;

	fputc('"', f);
	while ((n = next_char(p, &cp)) != 0) {
		if (cp < 0)
			fputs("\\ufffd", f);
		else if (cp == '"')
			fputs("\\\"", f);
		else if (cp == '\\')
			fputs("\\\\", f);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\r')
			fputs("\\r", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp < 0x20 || cp == 0x7F ||
			 (cp >= 0xD800 && cp <= 0xDFFF))
			fprintf(f, "\\u%04lx", cp);
		else
			fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

void cli_hex(char *out, const uint8_t *data, size_t len, char sep)
{
	static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
	const char *d = sep ? up : lo;
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (sep && i)
			out[o++] = sep;
		out[o++] = d[data[i] >> 4];
		out[o++] = d[data[i] & 15];
	}
	out[o] = 0;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int cli_unhex(uint8_t **out, size_t *out_len, const char *s, size_t slen)
{
	uint8_t *buf = malloc(slen / 2 + 1);
	size_t n = 0;
	int hi = -1;

	*out = NULL;
	*out_len = 0;
	if (!buf)
		return -1;
	for (size_t i = 0; i < slen; i++) {
		int v;

		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
		    s[i] == '\r' || s[i] == ':')
			continue;
		v = hexval((unsigned char)s[i]);
		if (v < 0)
			goto fail;
		if (hi < 0) {
			hi = v;
		} else {
			buf[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0 || n == 0)
		goto fail;
	*out = buf;
	*out_len = n;
	return 0;
fail:
	cli_free_secret(buf, slen / 2 + 1);
	return -1;
}

void cli_sha256_hex(char out[65], const uint8_t *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) ||
	    mdlen != 32) {
		out[0] = 0;
		return;
	}
	cli_hex(out, md, 32, 0);
}

void cli_format_time(char *out, size_t out_len, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms < 0 || !gmtime_r(&t, &tm) ||
	    !strftime(out, out_len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(out, out_len, "%lld ms", (long long)ms);
}
