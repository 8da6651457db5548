/*
 * Key reference files (wks/uri.h), the writer: the URI (path, alias and
 * sources percent-encoded), its PEM block, and a note for people above it
 * whose every byte that could end or disguise a line is escaped, so that
 * a store path or an alias chosen by someone else (a folder name holding
 * newlines) can never add a line, let alone a block, to the file.
 */
#include <stdio.h>
#include <string.h>

#include "uri/uri_int.h"
#include "util/buf.h"
#include "util/error.h"

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Append s[0..n) percent-encoded (only A-Z a-z 0-9 - . _ ~ / stay). */
static void put_enc(wks_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[3];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || c == '/') {
			wks_buf_put(b, &c, 1);
		} else {
			e[0] = '%';
			e[1] = hex[c >> 4];
			e[2] = hex[c & 15];
			wks_buf_put(b, e, 3);
		}
	}
}

static void put_str(wks_buf *b, const char *s)
{
	wks_buf_put(b, s, strlen(s));
}

/*
 * The length of the well-formed UTF-8 sequence at s[0..n) and its code
 * point, or 0 if the byte at s does not start one (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF).
 */
static size_t utf8_seq(const unsigned char *s, size_t n, unsigned long *cp)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		*cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		*cp = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0;
		if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		*cp = c & 0x07;
		if (c == 0xF0)
			lo = 0x90;
		if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (i > 1 && (s[i] < 0x80 || s[i] > 0xBF))
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3F);
	}
	return len;
}

/*
 * Append s for the note: printable UTF-8 as it is; '\\' and '"' as \\ and
 * \"; C0 controls, DEL, C1 controls (U+0085 NEL among them), U+2028,
 * U+2029 and every byte of invalid UTF-8 as \xHH.
 */
static void put_note(wks_buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	while (n) {
		unsigned long cp = 0;
		size_t k = utf8_seq(s, n, &cp);
		char e[5];

		if (k == 1 && (cp == '\\' || cp == '"')) {
			e[0] = '\\';
			e[1] = (char)cp;
			wks_buf_put(b, e, 2);
		} else if (k == 0 || cp < 0x20 || (cp >= 0x7F && cp < 0xA0) ||
			   cp == 0x2028 || cp == 0x2029) {
			for (size_t i = 0; i < (k ? k : 1); i++) {
				snprintf(e, sizeof(e), "\\x%02x", s[i]);
				wks_buf_put(b, e, 4);
			}
			if (!k)
				k = 1;
		} else {
			wks_buf_put(b, s, k);
		}
		s += k;
		n -= k;
	}
}

static void put_src(wks_buf *b, const char *name, const wks_pwsrc *s)
{
	char num[24];

	put_str(b, "&");
	put_str(b, name);
	switch (s->kind) {
	case WKS_PW_ENV:
		put_str(b, "=env:");
		put_enc(b, s->value, s->value_len);
		break;
	case WKS_PW_FILE:
		put_str(b, "=file:");
		put_enc(b, s->value, s->value_len);
		break;
	default:
		snprintf(num, sizeof(num), "=fd:%d", s->fd);
		put_str(b, num);
		break;
	}
}

/* The URI of a reference (checked arguments), NUL-terminated in *b. */
static int make_uri(wks_buf *b, const char *path, const char *alias,
		    const wks_pwsrc *storepass, const wks_pwsrc *keypass)
{
	size_t plen = strlen(path);

	put_str(b, "wks:");
	/* "//" would start an authority: write the second slash encoded. */
	if (plen >= 2 && path[0] == '/' && path[1] == '/') {
		put_str(b, "/%2F");
		put_enc(b, path + 2, plen - 2);
	} else {
		put_enc(b, path, plen);
	}
	put_str(b, "?alias=");
	put_enc(b, alias, strlen(alias));
	if (storepass)
		put_src(b, "storepass", storepass);
	if (keypass)
		put_src(b, "keypass", keypass);
	wks_buf_put(b, "", 1);
	if (b->err)
		return wks__err(b->err, "out of memory");
	if (b->len - 1 > WKS_REF_URI_MAX)
		return wks__err(WKS_ERR_LIMIT, "the reference's URI would be "
				"longer than %d bytes", WKS_REF_URI_MAX);
	return WKS_OK;
}

/* The PEM block of uri[0..n): BEGIN line, base64 in lines of 64, END
 * line, each ending in "\n". */
static void put_block(wks_buf *b, const unsigned char *u, size_t n)
{
	size_t col = 0;

	put_str(b, WKS_REF_BEGIN "\n");
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)u[i] << 16;
		size_t k = n - i < 3 ? n - i : 3;
		char q[4];

		if (k > 1)
			v |= (unsigned)u[i + 1] << 8;
		if (k > 2)
			v |= u[i + 2];
		q[0] = b64[v >> 18 & 63];
		q[1] = b64[v >> 12 & 63];
		q[2] = k > 1 ? b64[v >> 6 & 63] : '=';
		q[3] = k > 2 ? b64[v & 63] : '=';
		wks_buf_put(b, q, 4);
		if ((col += 4) == 64) {
			put_str(b, "\n");
			col = 0;
		}
	}
	if (col)
		put_str(b, "\n");
	put_str(b, WKS_REF_END "\n");
}

/* A source for a reference: NULL for none; pass: and empty values are
 * refused. */
static int check_src(const wks_pwsrc **s)
{
	if (*s && (*s)->kind == WKS_PW_NONE)
		*s = NULL;
	if (!*s)
		return WKS_OK;
	if ((*s)->kind == WKS_PW_PASS)
		return wks__err(WKS_ERR_INVALID, "a reference holds no "
				"password: use file:, env: or fd:, not pass:");
	if ((*s)->kind != WKS_PW_FD && (!(*s)->value || !(*s)->value_len))
		return wks__err(WKS_ERR_INVALID, "a password source is empty");
	return WKS_OK;
}

int wks_ref_encode(char **out, size_t *out_len, const char *path,
		   const char *alias, const wks_pwsrc *storepass,
		   const wks_pwsrc *keypass)
{
	wks_buf uri = WKS_BUF_INIT, file = WKS_BUF_INIT;
	int err;

	wks__err_clear();
	if (!out || !out_len)
		return wks__err(WKS_ERR_INVALID, "wks_ref_encode: out is NULL");
	*out = NULL;
	*out_len = 0;
	if (!path || !path[0] || !alias)
		return wks__err(WKS_ERR_INVALID, "a reference needs a store and "
				"an alias");
	/* Longer than the URI can be, whatever the encoding: refused before
	 * anything is built. */
	if (strlen(path) > WKS_REF_URI_MAX || strlen(alias) > WKS_REF_URI_MAX)
		return wks__err(WKS_ERR_LIMIT, "the reference's URI would be "
				"longer than %d bytes", WKS_REF_URI_MAX);
	if ((err = check_src(&storepass)) < 0 || (err = check_src(&keypass)) < 0)
		return err;
	if ((err = make_uri(&uri, path, alias, storepass, keypass)) < 0)
		goto done;
	put_str(&file, "# wks key reference: the private key \"");
	put_note(&file, alias);
	put_str(&file, "\" of the store\n# ");
	put_note(&file, path);
	put_str(&file, ".  It holds no password (only where the passwords "
		"come\n# from) and is not secret; keep it writable by its "
		"owner only\n# (0644, like the server's configuration).  Read "
		"by wks.so\n# with references = yes (docs/PROVIDER.md).\n");
	put_block(&file, uri.ptr, uri.len - 1);
	if (file.err) {
		err = wks__err(file.err, "out of memory");
		goto done;
	}
	if (!(*out = wks__out_dup(file.ptr, file.len))) {
		err = wks__err(WKS_ERR_NOMEM, "out of memory");
		goto done;
	}
	*out_len = file.len;
	err = WKS_OK;
done:
	wks_buf_dispose(&uri);
	wks_buf_dispose(&file);
	return err;
}
