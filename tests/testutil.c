/* nftw() is an X/Open function. */
#define _XOPEN_SOURCE 700

#include "testutil.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "tu_ossl.h"

const char *tu_shared(const char *rel)
{
	static _Thread_local char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", WKS_SHARED_DIR, rel);
	return buf;
}

uint8_t *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n = 0;

	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		fail_msg("cannot size %s", path);
	p = malloc((size_t)n + 1);
	assert_non_null(p);
	if (fread(p, 1, (size_t)n, f) != (size_t)n)
		fail_msg("short read on %s", path);
	fclose(f);
	p[n] = 0;
	*len = (size_t)n;
	return p;
}

void tu_write_file(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		fail_msg("cannot create %s: %s", path, strerror(errno));
	if (fwrite(data, 1, len, f) != len || fclose(f) != 0)
		fail_msg("cannot write %s", path);
}

char *tu_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char tmpl[4096];
	char *d;

	snprintf(tmpl, sizeof(tmpl), "%s/wks-test-XXXXXX",
	         base && *base ? base : "/tmp");
	d = mkdtemp(tmpl);
	if (!d)
		fail_msg("mkdtemp: %s", strerror(errno));
	return strdup(d);
}

int tu_full_mode(void)
{
	const char *v = getenv("WKS_TEST_FULL");

	return v && *v && strcmp(v, "0") != 0;
}

size_t tu_env_count(const char *name, size_t quick, size_t full)
{
	const char *v = getenv(name);

	if (v && *v)
		return (size_t)strtoull(v, NULL, 10);
	return tu_full_mode() ? full : quick;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(p);
}

void tu_rmtree(const char *path)
{
	if (path)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void tu_sha256_hex(char out[65], const uint8_t *data, size_t len)
{
	unsigned char md[32];
	int i;

	SHA256(data, len, md);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

uint8_t *tu_unhex(const char *hex, size_t *len)
{
	size_t n = strlen(hex) / 2, i;
	uint8_t *p = malloc(n + 1);

	assert_non_null(p);
	for (i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			fail_msg("bad hex");
		p[i] = (uint8_t)v;
	}
	*len = n;
	return p;
}

int tu_system(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

wks_store *tu_store_fast(void)
{
	wks_store *st = NULL;

	TU_OK(wks_store_new(&st));
	TU_OK(wks_store_set_property(st, "wolfjce.wks.iterationCount", "10000"));
	return st;
}

int tu_reap_bounded(pid_t pid, int bound_ms)
{
	struct timespec ms1 = { 0, 1000000 };
	int status = 0, waited = 0;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && waited < bound_ms) {
		nanosleep(&ms1, NULL);
		waited++;
	}
	if (r == pid)
		return status;
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return -1;
}

/* ---- additions for the vector, interop, rules, tamper and thread tests ---- */


const char *tu_input(const char *name)
{
	static _Thread_local char buf[4096];

	snprintf(buf, sizeof(buf), "%s/vectors/wolfjce-live/inputs/%s",
	         WKS_SHARED_DIR, name);
	return buf;
}

size_t tu_pem_ders(tu_der **out, const char *path, const char *label)
{
	BIO *bio = BIO_new_file(path, "r");
	tu_der *v = NULL;
	size_t n = 0;
	char *name = NULL, *header = NULL;
	unsigned char *data = NULL;
	long len = 0;

	if (!bio)
		fail_msg("cannot open %s", path);
	while (PEM_read_bio(bio, &name, &header, &data, &len) == 1) {
		if (!label || strcmp(name, label) == 0) {
			tu_der *nv = realloc(v, (n + 1) * sizeof(*v));
			assert_non_null(nv);
			v = nv;
			v[n].der = malloc((size_t)len + 1);
			assert_non_null(v[n].der);
			memcpy(v[n].der, data, (size_t)len);
			v[n].len = (size_t)len;
			n++;
		}
		OPENSSL_free(name);
		OPENSSL_free(header);
		OPENSSL_free(data);
		name = header = NULL;
		data = NULL;
	}
	ERR_clear_error();
	BIO_free(bio);
	if (n == 0)
		fail_msg("no PEM block %s in %s", label ? label : "(any)", path);
	*out = v;
	return n;
}

void tu_ders_free(tu_der *v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		free(v[i].der);
	free(v);
}

cJSON *tu_json_file(const char *path)
{
	size_t len;
	char *text = (char *)tu_read_file(path, &len);
	cJSON *j = cJSON_ParseWithLength(text, len);

	if (!j)
		fail_msg("cannot parse JSON %s near: %.40s", path,
		         cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?");
	free(text);
	return j;
}

void tu_hex(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = 0;
}

char *tu_hex_dup(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 1);

	assert_non_null(s);
	tu_hex(s, p, n);
	return s;
}

uint32_t tu_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

void tu_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void tu_restamp(uint8_t *data, size_t len, const char *pw)
{
	uint8_t key[64];
	unsigned int mac_len = 0;
	const uint8_t *salt;
	int32_t iter;

	assert_true(len >= 104);
	salt = data + len - 88;
	iter = (int32_t)tu_get_be32(data + len - 72);
	assert_true(iter > 0);
	assert_int_equal(PKCS5_PBKDF2_HMAC(pw, (int)strlen(pw), salt, 16, iter,
	                                   EVP_sha512(), 64, key), 1);
	assert_non_null(HMAC(EVP_sha512(), key, 64, data, len - 68,
	                     data + len - 64, &mac_len));
	assert_int_equal(mac_len, 64);
}

char *tu_shell_quote(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *q = malloc(4 * n + 3);

	assert_non_null(q);
	q[o++] = '\'';
	for (i = 0; i < n; i++) {
		if (s[i] == '\'') {
			memcpy(q + o, "'\\''", 4);
			o += 4;
		} else {
			q[o++] = s[i];
		}
	}
	q[o++] = '\'';
	q[o] = 0;
	return q;
}

int tu_set_key_files(wks_store *st, const char *alias, const char *key_name,
                     const char *chain_name, const char *pw)
{
	tu_der *key = NULL, *chain = NULL;
	size_t nk, nc, i;
	const uint8_t **ders;
	size_t *lens;
	int rc;

	nk = tu_pem_ders(&key, tu_input(key_name), "PRIVATE KEY");
	nc = tu_pem_ders(&chain, tu_input(chain_name), "CERTIFICATE");
	ders = calloc(nc, sizeof(*ders));
	lens = calloc(nc, sizeof(*lens));
	assert_true(ders && lens);
	for (i = 0; i < nc; i++) {
		ders[i] = chain[i].der;
		lens[i] = chain[i].len;
	}
	rc = wks_store_set_private_key(st, alias, key[0].der, key[0].len, ders,
	                               lens, nc, pw, strlen(pw));
	free(ders);
	free(lens);
	tu_ders_free(key, nk);
	tu_ders_free(chain, nc);
	return rc;
}

void tu_input_key_sha(char out[65], const char *key_name)
{
	tu_der *key = NULL;
	size_t nk = tu_pem_ders(&key, tu_input(key_name), "PRIVATE KEY");

	tu_sha256_hex(out, key[0].der, key[0].len);
	tu_ders_free(key, nk);
}
