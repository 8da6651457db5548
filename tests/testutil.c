#include "testutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <openssl/sha.h>

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
	long n;

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
