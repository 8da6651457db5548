/*
 * wks/uri.h and wks/fork.h: what the provider, the wks tool and other
 * clients share (src/uri/, src/util/fork.c), through the public API only.
 *
 *   uri__*       the wks: URI parser: a table of good and bad URIs, only=,
 *                the length limit, no echo of a password's tail
 *   pwsrc__*     password sources: parse, read (pass:, env:, file:, fd:),
 *                errors, no echo
 *   ref__*       key reference files: note, block and trailing text; the
 *                writer's round trip; a second block refused, and a store
 *                path holding a whole forged block written escaped
 *   fork__*      a client's fork() hook: rank checked, run around fork()
 *
 * The decoder in wks.so on the same files: tests/provider/test_reference.c;
 * the fuzz targets: fuzz/fuzz_uri.c, fuzz/fuzz_ref.c.
 */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wks/fork.h"
#include "wks/uri.h"

static char junk;


typedef struct {
	const char *uri;
	const char *path;  /* NULL: must fail */
	const char *alias; /* NULL: none */
	int storepass;     /* wks_pw_kind */
	const char *spv;   /* its value */
	int keypass;
	const char *kpv;
	const char *err;   /* for failures: part of the message */
} uri_case;

static const uri_case uri_cases[] = {
	{ "wks:/etc/ssl/s.wks", "/etc/ssl/s.wks", NULL, 0, NULL, 0, NULL, NULL },
	{ "WKS:/a", "/a", NULL, 0, NULL, 0, NULL, NULL },
	{ "wks:///etc/ssl/s.wks", "/etc/ssl/s.wks", NULL, 0, NULL, 0, NULL, NULL },
	{ "wks://localhost/x.wks", "/x.wks", NULL, 0, NULL, 0, NULL, NULL },
	{ "wks:s.wks", "s.wks", NULL, 0, NULL, 0, NULL, NULL },
	{ "wks:dir/my%20store.wks", "dir/my store.wks", NULL, 0, NULL, 0, NULL, NULL },
	{ "wks:a%3fb%23c%25", "a?b#c%", NULL, 0, NULL, 0, NULL, NULL },
	{ "wks:s.wks?alias=server", "s.wks", "server", 0, NULL, 0, NULL, NULL },
	{ "wks:s.wks?alias=", "s.wks", "", 0, NULL, 0, NULL, NULL },
	{ "wks:s.wks?alias=%C0%80x", "s.wks", "\xC0\x80x", 0, NULL, 0, NULL, NULL },
	{ "wks:s.wks?alias=a%26b%3Dc+d", "s.wks", "a&b=c+d", 0, NULL, 0, NULL, NULL },
	{ "wks:s.wks?alias=caf%C3%A9", "s.wks", "caf\xC3\xA9", 0, NULL, 0, NULL, NULL },
	{ "wks:s?storepass=pass:a%26b&keypass=env:KP", "s", NULL,
	  WKS_PW_PASS, "a&b", WKS_PW_ENV, "KP", NULL },
	{ "wks:s?keypass=file:/run/pw&alias=x&storepass=fd:3", "s", "x",
	  WKS_PW_FD, NULL, WKS_PW_FILE, "/run/pw", NULL },
	{ "wks:s?storepass=pass:a=b", "s", NULL, WKS_PW_PASS, "a=b", 0, NULL, NULL },
	{ "wks:s?alias=x&only=issuers", "s", "x", 0, NULL, 0, NULL, NULL },
	{ "wks:s?only=certs&storepass=fd:3", "s", NULL, WKS_PW_FD, NULL, 0,
	  NULL, NULL },
	/* errors */
	{ "", NULL, NULL, 0, NULL, 0, NULL, "not a wks: URI" },
	{ "file:/x", NULL, NULL, 0, NULL, 0, NULL, "not a wks: URI" },
	{ "wks:", NULL, NULL, 0, NULL, 0, NULL, "no file name" },
	{ "wks:?alias=x", NULL, NULL, 0, NULL, 0, NULL, "no file name" },
	{ "wks://host/x", NULL, NULL, 0, NULL, 0, NULL, "authority" },
	{ "wks://", NULL, NULL, 0, NULL, 0, NULL, "no path" },
	{ "wks:a#b", NULL, NULL, 0, NULL, 0, NULL, "%23" },
	{ "wks:a%00b", NULL, NULL, 0, NULL, 0, NULL, "NUL" },
	{ "wks:a%4", NULL, NULL, 0, NULL, 0, NULL, "percent escape" },
	{ "wks:a%zz", NULL, NULL, 0, NULL, 0, NULL, "percent escape" },
	{ "wks:a?alias=%", NULL, NULL, 0, NULL, 0, NULL, "percent escape" },
	{ "wks:a?alias=x%00", NULL, NULL, 0, NULL, 0, NULL, "NUL" },
	{ "wks:a?", NULL, NULL, 0, NULL, 0, NULL, "empty query" },
	{ "wks:a?alias=x&", NULL, NULL, 0, NULL, 0, NULL, "empty attribute" },
	{ "wks:a?alias=x&&keypass=pass:y", NULL, NULL, 0, NULL, 0, NULL, "empty attribute" },
	{ "wks:a?alias", NULL, NULL, 0, NULL, 0, NULL, "no '=VALUE'" },
	{ "wks:a?Alias=x", NULL, NULL, 0, NULL, 0, NULL, "unknown attribute" },
	{ "wks:a?object=x", NULL, NULL, 0, NULL, 0, NULL, "unknown attribute" },
	{ "wks:a?alias=x&alias=x", NULL, NULL, 0, NULL, 0, NULL, "twice" },
	{ "wks:a?keypass=pass:x&keypass=pass:x", NULL, NULL, 0, NULL, 0, NULL, "twice" },
	{ "wks:a?storepass=x", NULL, NULL, 0, NULL, 0, NULL, "expected pass:" },
	{ "wks:a?storepass=stdin", NULL, NULL, 0, NULL, 0, NULL, "expected pass:" },
	{ "wks:a?storepass=pass:", NULL, NULL, 0, NULL, 0, NULL, "empty pass:" },
	{ "wks:a?storepass=env:", NULL, NULL, 0, NULL, 0, NULL, "empty env:" },
	{ "wks:a?keypass=fd:x", NULL, NULL, 0, NULL, 0, NULL, "descriptor" },
	{ "wks:a?keypass=fd:99999999999999999999", NULL, NULL, 0, NULL, 0, NULL, "descriptor" },
	{ "wks:a?storepass=pass:x%00y", NULL, NULL, 0, NULL, 0, NULL, "NUL" },
	{ "wks:a?only=isuers", NULL, NULL, 0, NULL, 0, NULL, "expected certs or issuers" },
	{ "wks:a?only=", NULL, NULL, 0, NULL, 0, NULL, "expected certs or issuers" },
	{ "wks:a?only=Certs", NULL, NULL, 0, NULL, 0, NULL, "expected certs or issuers" },
	{ "wks:a?only=certs&only=issuers", NULL, NULL, 0, NULL, 0, NULL, "twice" },
	{ "wks:a?only=%zz", NULL, NULL, 0, NULL, 0, NULL, "percent escape" },
	{ "wks:a?Only=certs", NULL, NULL, 0, NULL, 0, NULL, "unknown attribute" },
};

static void test_uri__table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(uri_cases) / sizeof(uri_cases[0]); i++) {
		const uri_case *c = &uri_cases[i];
		wks_uri *u = (wks_uri *)&junk; /* overwritten, never read */
		int rc = wks_uri_parse(&u, c->uri);

		if (!c->path) {
			if (rc >= 0 || !strstr(wks_error_detail(), c->err))
				fail_msg("\"%s\": rc %d, error \"%s\", want "
					 "\"%s\"", c->uri, rc,
					 wks_error_detail(), c->err);
			assert_null(u);
			continue;
		}
		if (rc != WKS_OK)
			fail_msg("\"%s\": %s", c->uri, wks_error_detail());
		assert_string_equal(wks_uri_path(u), c->path);
		if (c->alias)
			assert_string_equal(wks_uri_alias(u), c->alias);
		else
			assert_null(wks_uri_alias(u));
		assert_int_equal(wks_pwsrc_kind(wks_uri_storepass(u)),
				 c->storepass);
		assert_int_equal(wks_pwsrc_kind(wks_uri_keypass(u)), c->keypass);
		if (!c->storepass)
			assert_null(wks_uri_storepass(u));
		if (c->spv)
			assert_string_equal(wks_pwsrc_value(wks_uri_storepass(u),
							    NULL), c->spv);
		if (c->kpv)
			assert_string_equal(wks_pwsrc_value(wks_uri_keypass(u),
							    NULL), c->kpv);
		if (c->storepass == WKS_PW_FD)
			assert_int_equal(wks_pwsrc_fd(wks_uri_storepass(u)), 3);
		wks_uri_free(u);
	}
}

/* only=: what each value parses to (the good and bad URIs with only=
 * are in the table above). */
static void test_uri__only(void **state)
{
	static const struct {
		const char *uri;
		int only;
	} cases[] = {
		{ "wks:s", WKS_URI_ALL },
		{ "wks:s?only=certs", WKS_URI_CERTS },
		{ "wks:s?only=%63erts", WKS_URI_CERTS },
		{ "wks:s?alias=x&only=issuers", WKS_URI_ISSUERS },
		{ "wks:s?only=issuers&alias=x&storepass=pass:y", WKS_URI_ISSUERS },
	};
	wks_uri *u;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (wks_uri_parse(&u, cases[i].uri) != WKS_OK)
			fail_msg("\"%s\": %s", cases[i].uri,
				 wks_error_detail());
		assert_int_equal(wks_uri_only(u), cases[i].only);
		wks_uri_free(u);
	}
	/* A failed parse gives nothing. */
	TU_EXPECT(WKS_ERR_FORMAT, wks_uri_parse(&u, "wks:s?only=certs&x=1"));
	assert_null(u);
	assert_int_equal(wks_uri_only(NULL), WKS_URI_ALL);
}

static void test_uri__limits(void **state)
{
	size_t n = WKS_URI_MAX + 2;
	char *big = malloc(n);
	wks_uri *u;

	(void)state;
	assert_non_null(big);
	memcpy(big, "wks:", 4);
	memset(big + 4, 'a', n - 5);
	big[n - 1] = 0;
	TU_EXPECT(WKS_ERR_LIMIT, wks_uri_parse(&u, big));
	assert_non_null(strstr(wks_error_detail(), "longer than"));
	big[WKS_URI_MAX] = 0;
	TU_OK(wks_uri_parse(&u, big));
	wks_uri_free(u);
	free(big);
	TU_EXPECT(WKS_ERR_INVALID, wks_uri_parse(&u, NULL));
	TU_EXPECT(WKS_ERR_INVALID, wks_uri_parse(NULL, "wks:a"));
}

/* A '&' left unencoded in a password makes the password's tail look like
 * further attributes: the error must name them by position, never repeat
 * their text ("attribute \"3-horse\" has no '=VALUE'" was one). */
static void test_uri__no_echo(void **state)
{
	static const struct {
		const char *uri, *secret, *want;
	} cases[] = {
		{ "wks:a?storepass=pass:correct&3-horse", "3-horse",
		  "attribute 2 of the query has no '=VALUE'" },
		{ "wks:a?storepass=pass:correct&horse=battery", "horse",
		  "attribute 2 of the query is unknown" },
		{ "wks:a?storepass=pass:correct&horse=battery", "battery",
		  "%26" },
		{ "wks:a?alias=x&keypass=pass:k1&k2&storepass=pass:p", "k2",
		  "attribute 3 of the query has no" },
		{ "wks:a?keypass=env:KP&storepass=pass:p&zz&r", "zz",
		  "attribute 3" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *err;
		wks_uri *u;

		TU_EXPECT(WKS_ERR_FORMAT, wks_uri_parse(&u, cases[i].uri));
		err = wks_error_detail();
		if (strstr(err, cases[i].secret) ||
		    !strstr(err, cases[i].want))
			fail_msg("\"%s\": error \"%s\" (must not hold \"%s\", "
				 "must hold \"%s\")", cases[i].uri, err,
				 cases[i].secret, cases[i].want);
	}
}

/* ---- password sources ------------------------------------------------------ */

static wks_pwsrc *src_of(const char *text)
{
	wks_pwsrc *s = NULL;

	if (wks_pwsrc_parse(&s, text, strlen(text)) != WKS_OK)
		fail_msg("\"%s\": %s", text, wks_error_detail());
	return s;
}

static void test_pwsrc__parse(void **state)
{
	static const struct {
		const char *text;
		int kind, fd;
		const char *value;
	} good[] = {
		{ "pass:a b&c", WKS_PW_PASS, -1, "a b&c" },
		{ "env:STOREPASS", WKS_PW_ENV, -1, "STOREPASS" },
		{ "file:/etc/wks/storepass", WKS_PW_FILE, -1, "/etc/wks/storepass" },
		{ "fd:0", WKS_PW_FD, 0, NULL },
		{ "fd:1000000", WKS_PW_FD, 1000000, NULL },
	};
	static const char *const bad[] = {
		"", "pass:", "env:", "file:", "fd:", "fd:1000001", "fd:-1",
		"fd:3x", "stdin", "Pass:x", "Zz-secret-text",
	};
	wks_pwsrc *s;
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		s = src_of(good[i].text);
		assert_int_equal(wks_pwsrc_kind(s), good[i].kind);
		assert_int_equal(wks_pwsrc_fd(s), good[i].fd);
		if (good[i].value) {
			assert_string_equal(wks_pwsrc_value(s, &len),
					    good[i].value);
			assert_int_equal(len, strlen(good[i].value));
		} else {
			assert_null(wks_pwsrc_value(s, &len));
			assert_int_equal(len, 0);
		}
		wks_pwsrc_free(s);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = (wks_pwsrc *)&junk;
		TU_EXPECT(WKS_ERR_FORMAT, wks_pwsrc_parse(&s, bad[i],
							  strlen(bad[i])));
		assert_null(s);
		assert_null(strstr(wks_error_detail(), "Zz-secret"));
	}
	TU_EXPECT(WKS_ERR_INVALID, wks_pwsrc_parse(&s, "pass:a\0b", 8));
	TU_EXPECT(WKS_ERR_INVALID, wks_pwsrc_parse(&s, NULL, 0));
	/* Only len bytes count. */
	s = NULL;
	TU_OK(wks_pwsrc_parse(&s, "env:ABCDEF", 6));
	assert_string_equal(wks_pwsrc_value(s, NULL), "AB");
	wks_pwsrc_free(s);
	assert_int_equal(wks_pwsrc_kind(NULL), WKS_PW_NONE);
	assert_int_equal(wks_pwsrc_fd(NULL), -1);
	wks_pwsrc_free(NULL);
}

static void test_pwsrc__read(void **state)
{
	char *dir = tu_tmpdir(), path[600], text[700], *pw;
	int fds[2];
	size_t len;
	wks_pwsrc *s;

	(void)state;
	/* file: the first line, without "\r\n"; the rest is not read. */
	snprintf(path, sizeof(path), "%s/pw", dir);
	tu_write_file(path, (const uint8_t *)"line one\r\nline two\n", 19);
	snprintf(text, sizeof(text), "file:%s", path);
	s = src_of(text);
	TU_OK(wks_pwsrc_read(&pw, &len, s, "storepass"));
	assert_int_equal(len, 8);
	assert_string_equal(pw, "line one");
	wks_free(pw);
	wks_pwsrc_free(s);
	/* An empty first line, a missing file. */
	tu_write_file(path, (const uint8_t *)"\nnext\n", 6);
	s = src_of(text);
	pw = &junk;
	TU_EXPECT(WKS_ERR_INVALID, wks_pwsrc_read(&pw, &len, s, "storepass"));
	assert_null(pw);
	assert_non_null(strstr(wks_error_detail(), "storepass: the password "
			       "is empty"));
	wks_pwsrc_free(s);
	snprintf(text, sizeof(text), "file:%s/missing", dir);
	s = src_of(text);
	TU_EXPECT(WKS_ERR_IO, wks_pwsrc_read(&pw, &len, s, "keypass"));
	assert_non_null(strstr(wks_error_detail(), "keypass: cannot open"));
	assert_non_null(strstr(wks_error_detail(), "/missing"));
	wks_pwsrc_free(s);
	/* env: */
	setenv("WKS_TEST_URI_PW", "from env", 1);
	s = src_of("env:WKS_TEST_URI_PW");
	TU_OK(wks_pwsrc_read(&pw, &len, s, NULL));
	assert_string_equal(pw, "from env");
	wks_free(pw);
	unsetenv("WKS_TEST_URI_PW");
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_pwsrc_read(&pw, &len, s, NULL));
	assert_non_null(strstr(wks_error_detail(), "WKS_TEST_URI_PW is not "
			       "set"));
	wks_pwsrc_free(s);
	/* fd: one line, the next left in the pipe. */
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "pipe pw\nrest", 12), 12);
	close(fds[1]);
	snprintf(text, sizeof(text), "fd:%d", fds[0]);
	s = src_of(text);
	TU_OK(wks_pwsrc_read(&pw, &len, s, NULL));
	assert_string_equal(pw, "pipe pw");
	wks_free(pw);
	assert_int_equal(read(fds[0], text, 4), 4);
	assert_memory_equal(text, "rest", 4);
	close(fds[0]);
	wks_pwsrc_free(s);
	/* pass: gives its text; no source is an error. */
	s = src_of("pass:given");
	TU_OK(wks_pwsrc_read(&pw, &len, s, NULL));
	assert_string_equal(pw, "given");
	wks_free(pw);
	wks_pwsrc_free(s);
	TU_EXPECT(WKS_ERR_INVALID, wks_pwsrc_read(&pw, &len, NULL, NULL));
	tu_rmtree(dir);
	free(dir);
}

/* ---- key references ---------------------------------------------------------- */

/* A block for `uri` (base64 in lines of 64). */
static char *block_of(const char *uri)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn"
				  "opqrstuvwxyz0123456789+/";
	size_t n = strlen(uri), col = 0;
	char *out = malloc(2 * n + 128), *o = out;

	assert_non_null(out);
	o += sprintf(o, "%s\n", WKS_REF_BEGIN);
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)(unsigned char)uri[i] << 16;
		size_t k = n - i < 3 ? n - i : 3;

		if (k > 1)
			v |= (unsigned)(unsigned char)uri[i + 1] << 8;
		if (k > 2)
			v |= (unsigned char)uri[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = k > 1 ? b64[v >> 6 & 63] : '=';
		*o++ = k > 2 ? b64[v & 63] : '=';
		if ((col += 4) == 64) {
			*o++ = '\n';
			col = 0;
		}
	}
	if (col)
		*o++ = '\n';
	sprintf(o, "%s\n", WKS_REF_END);
	return out;
}

static void test_ref__parse(void **state)
{
	char *blk = block_of("wks:/etc/wks/s.wks?alias=server&storepass="
			     "file:/etc/wks/pw&keypass=env:KP"), text[2048];
	wks_uri *u;

	(void)state;
	/* A note, the block, then other PEM text (haproxy's order is the
	 * other way round; both are read). */
	snprintf(text, sizeof(text), "# a note\n\n%s-----BEGIN CERTIFICATE-----"
		 "\nAAAA\n-----END CERTIFICATE-----\n", blk);
	TU_OK(wks_ref_parse(&u, text, strlen(text)));
	assert_string_equal(wks_uri_path(u), "/etc/wks/s.wks");
	assert_string_equal(wks_uri_alias(u), "server");
	assert_int_equal(wks_pwsrc_kind(wks_uri_storepass(u)), WKS_PW_FILE);
	assert_string_equal(wks_pwsrc_value(wks_uri_storepass(u), NULL),
			    "/etc/wks/pw");
	assert_int_equal(wks_pwsrc_kind(wks_uri_keypass(u)), WKS_PW_ENV);
	wks_uri_free(u);
	/* The block alone, and after a certificate. */
	TU_OK(wks_ref_parse(&u, blk, strlen(blk)));
	wks_uri_free(u);
	snprintf(text, sizeof(text), "-----BEGIN CERTIFICATE-----\nAAAA\n"
		 "-----END CERTIFICATE-----\n%s", blk);
	TU_OK(wks_ref_parse(&u, text, strlen(text)));
	wks_uri_free(u);
	/* No block; no END line; a pass: source (not repeated). */
	u = (wks_uri *)&junk;
	TU_EXPECT(WKS_ERR_FORMAT, wks_ref_parse(&u, "# only a note\n", 14));
	assert_null(u);
	assert_non_null(strstr(wks_error_detail(), "no " WKS_REF_BEGIN));
	TU_EXPECT(WKS_ERR_FORMAT, wks_ref_parse(&u, blk, strlen(blk) -
						sizeof(WKS_REF_END)));
	assert_non_null(strstr(wks_error_detail(), "no " WKS_REF_END));
	free(blk);
	blk = block_of("wks:/s?alias=a&storepass=pass:Zz-secret-text");
	TU_EXPECT(WKS_ERR_FORMAT, wks_ref_parse(&u, blk, strlen(blk)));
	assert_non_null(strstr(wks_error_detail(), "pass: is not allowed"));
	assert_null(strstr(wks_error_detail(), "Zz-secret"));
	free(blk);
	TU_EXPECT(WKS_ERR_INVALID, wks_ref_parse(&u, NULL, 0));
}

/* Two blocks: a reader takes the first, so a file with two is refused,
 * however the second got there. */
static void test_ref__two_blocks(void **state)
{
	char *a = block_of("wks:/etc/wks/s.wks?alias=server"),
	     *b = block_of("wks:/tmp/evil.wks?alias=x&storepass=file:/tmp/p"),
	     text[2048];
	wks_uri *u;

	(void)state;
	snprintf(text, sizeof(text), "# note\n%s%s", b, a);
	u = (wks_uri *)&junk;
	TU_EXPECT(WKS_ERR_FORMAT, wks_ref_parse(&u, text, strlen(text)));
	assert_null(u);
	assert_non_null(strstr(wks_error_detail(), "a second " WKS_REF_BEGIN
			       " line (line 5)"));
	/* With other text between them, and CRLF line ends. */
	snprintf(text, sizeof(text), "%s# more\n-----BEGIN X-----\nAA==\n"
		 "-----END X-----\n" WKS_REF_BEGIN " \r\nzz\r\n", a);
	TU_EXPECT(WKS_ERR_FORMAT, wks_ref_parse(&u, text, strlen(text)));
	assert_non_null(strstr(wks_error_detail(), "a second"));
	/* Text after the END line that only looks like a BEGIN line is
	 * not one. */
	snprintf(text, sizeof(text), "%s" WKS_REF_BEGIN " not it\n"
		 "x" WKS_REF_BEGIN "\n", a);
	TU_OK(wks_ref_parse(&u, text, strlen(text)));
	wks_uri_free(u);
	free(a);
	free(b);
}

static void test_ref__limits(void **state)
{
	char *blk = block_of("wks:/s?alias=a"), *text;
	size_t bl = strlen(blk), n = bl + WKS_REF_TEXT_MAX + 1;
	wks_uri *u;

	(void)state;
	assert_non_null(text = malloc(2 * n + 2));
	/* Up to WKS_REF_TEXT_MAX before and after: read. */
	memset(text, '#', WKS_REF_TEXT_MAX);
	text[WKS_REF_TEXT_MAX - 1] = '\n';
	memcpy(text + WKS_REF_TEXT_MAX, blk, bl);
	memset(text + WKS_REF_TEXT_MAX + bl, 'x', WKS_REF_TEXT_MAX);
	TU_OK(wks_ref_parse(&u, text, 2 * WKS_REF_TEXT_MAX + bl));
	wks_uri_free(u);
	/* One byte more after: refused. */
	text[2 * WKS_REF_TEXT_MAX + bl] = 'x';
	TU_EXPECT(WKS_ERR_LIMIT, wks_ref_parse(&u, text,
					       2 * WKS_REF_TEXT_MAX + bl + 1));
	assert_non_null(strstr(wks_error_detail(), "after the END line"));
	/* One more before: refused. */
	memset(text, '#', WKS_REF_TEXT_MAX + 1);
	text[WKS_REF_TEXT_MAX] = '\n';
	memcpy(text + WKS_REF_TEXT_MAX + 1, blk, bl);
	TU_EXPECT(WKS_ERR_LIMIT, wks_ref_parse(&u, text,
					       WKS_REF_TEXT_MAX + 1 + bl));
	assert_non_null(strstr(wks_error_detail(), "before the BEGIN line"));
	free(text);
	free(blk);
}

/* How many lines of text are BEGIN lines, and whether every line before
 * the first of them starts with "# ". */
static size_t begin_lines(const char *text, int *note_ok)
{
	size_t count = 0;

	*note_ok = 1;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);

		if (wks_ref_is_begin(p, n))
			count++;
		else if (!count && strncmp(p, "# ", 2) != 0)
			*note_ok = 0;
		p += n;
	}
	return count;
}

/* A store path chosen by someone else (a folder or symlink name) holding
 * a whole forged block: written escaped in the note, one block in the
 * file, and it reads back to that very path. */
static void test_ref__encode_forged_path(void **state)
{
	char *forged = block_of("wks:/tmp/evil.wks?alias=x&storepass=file:"
				"/tmp/evil-pw"), path[1024];
	char *text = NULL;
	size_t len = 0;
	int note_ok;
	wks_pwsrc *sp = src_of("file:/etc/wks/storepass");
	wks_uri *u;

	(void)state;
	snprintf(path, sizeof(path), "/srv/tenant/x\n%s\x85\xe2\x80\xa8\r"
		 "\\\"/s.wks", forged);
	TU_OK(wks_ref_encode(&text, &len, path, "web\nserver", sp, NULL));
	assert_int_equal(strlen(text), len);
	assert_int_equal(begin_lines(text, &note_ok), 1);
	assert_true(note_ok);
	assert_non_null(strstr(text, "\"web\\x0aserver\" of the store\n"));
	assert_non_null(strstr(text, "# /srv/tenant/x\\x0a-----BEGIN WKS KEY "
			       "REFERENCE-----\\x0a"));
	assert_non_null(strstr(text, "\\x85\\xe2\\x80\\xa8\\x0d\\\\\\\"/s.wks."));
	TU_OK(wks_ref_parse(&u, text, len));
	assert_string_equal(wks_uri_path(u), path);
	assert_string_equal(wks_uri_alias(u), "web\nserver");
	assert_string_equal(wks_pwsrc_value(wks_uri_storepass(u), NULL),
			    "/etc/wks/storepass");
	assert_null(wks_uri_keypass(u));
	wks_uri_free(u);
	wks_free(text);
	/* Printable UTF-8 stays as it is. */
	TU_OK(wks_ref_encode(&text, &len, "/etc/wks/caf\xc3\xa9.wks", "a",
			     NULL, NULL));
	assert_non_null(strstr(text, "# /etc/wks/caf\xc3\xa9.wks.  It holds"));
	wks_free(text);
	wks_pwsrc_free(sp);
	free(forged);
}

static void test_ref__encode_refused(void **state)
{
	wks_pwsrc *pass = src_of("pass:secret"), *fd = src_of("fd:3");
	char *text = &junk, big[WKS_REF_URI_MAX + 2];
	size_t len = 1;
	wks_uri *u;

	(void)state;
	TU_EXPECT(WKS_ERR_INVALID, wks_ref_encode(&text, &len, "/s", "a", pass,
						  NULL));
	assert_null(text);
	assert_int_equal(len, 0);
	TU_EXPECT(WKS_ERR_INVALID, wks_ref_encode(&text, &len, "", "a", NULL,
						  NULL));
	TU_EXPECT(WKS_ERR_INVALID, wks_ref_encode(&text, &len, "/s", NULL,
						  NULL, NULL));
	/* The URI's limit, reached by encoding: a path of spaces. */
	memset(big, ' ', 1400);
	big[0] = '/';
	big[1400] = 0;
	TU_EXPECT(WKS_ERR_LIMIT, wks_ref_encode(&text, &len, big, "a", NULL,
						NULL));
	/* fd: as it is. */
	TU_OK(wks_ref_encode(&text, &len, "/s", "a", fd, fd));
	TU_OK(wks_ref_parse(&u, text, len));
	assert_int_equal(wks_pwsrc_fd(wks_uri_keypass(u)), 3);
	wks_uri_free(u);
	wks_free(text);
	wks_pwsrc_free(pass);
	wks_pwsrc_free(fd);
}

/* ---- fork() hooks --------------------------------------------------------------- */

static char order[16];
static size_t n_order;

static void mark_a(void *ctx) { (void)ctx; order[n_order++] = 'a'; }
static void mark_b(void *ctx) { (void)ctx; order[n_order++] = 'b'; }
static void mark_p(void *ctx) { order[n_order++] = *(const char *)ctx; }

static void test_fork__hooks(void **state)
{
	wks_fork_hook *h1 = (wks_fork_hook *)&junk, *h2 = NULL;
	static const char tag1 = '1', tag2 = '2';
	pid_t pid;
	int status;

	(void)state;
	TU_EXPECT(WKS_ERR_INVALID, wks_fork_hook_add(&h1, WKS_FORK_RANK_LIBRARY,
						     NULL, NULL, NULL, NULL));
	assert_null(h1);
	TU_EXPECT(WKS_ERR_INVALID, wks_fork_hook_add(&h1, -1, NULL, NULL, NULL,
						     NULL));
	/* Rank 12 runs its prepare after rank 5's, its parent and child
	 * hooks before. */
	TU_OK(wks_fork_hook_add(&h1, 12, mark_a, mark_p, mark_p,
				(void *)&tag1));
	TU_OK(wks_fork_hook_add(&h2, 5, mark_b, mark_p, mark_p,
				(void *)&tag2));
	n_order = 0;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(n_order == 4 && !memcmp(order, "ba12", 4) ? 0 : 1);
	assert_int_equal(n_order, 4);
	assert_memory_equal(order, "ba12", 4);
	assert_true(waitpid(pid, &status, 0) == pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Removed: not run any more. */
	wks_fork_hook_remove(h1);
	wks_fork_hook_remove(h2);
	wks_fork_hook_remove(NULL);
	n_order = 0;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(n_order == 0 ? 0 : 1);
	assert_int_equal(n_order, 0);
	assert_true(waitpid(pid, &status, 0) == pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uri__table),
		cmocka_unit_test(test_uri__only),
		cmocka_unit_test(test_uri__limits),
		cmocka_unit_test(test_uri__no_echo),
		cmocka_unit_test(test_pwsrc__parse),
		cmocka_unit_test(test_pwsrc__read),
		cmocka_unit_test(test_ref__parse),
		cmocka_unit_test(test_ref__two_blocks),
		cmocka_unit_test(test_ref__limits),
		cmocka_unit_test(test_ref__encode_forged_path),
		cmocka_unit_test(test_ref__encode_refused),
		cmocka_unit_test(test_fork__hooks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
