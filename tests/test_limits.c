/* A store the library saved always loads back under the same settings
 * (issue 12, items 7 and 8): the read is bounded by the file's own size
 * and libwks.wks.maxFileSize, and a save refuses (WKS_ERR_LIMIT, nothing
 * written) whatever a load under the same settings would refuse.  Also
 * the layering of src/ (item 18), checked on the sources.
 *
 * Environment: WKS_LIMITS_ROUNDS (default 40): the random settings that
 * save_implies_load tries (CI's valgrind stage takes 10). */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PW "limits-test-pw"
#define PW_LEN (sizeof(PW) - 1)

/* ---- helpers -------------------------------------------------------------- */

typedef struct {
	char *dir;
	char path[4200];
} tmp;

static void tmp_init(tmp *t)
{
	t->dir = tu_tmpdir();
	snprintf(t->path, sizeof(t->path), "%s/s.wks", t->dir);
}

static void tmp_free(tmp *t)
{
	tu_rmtree(t->dir);
	free(t->dir);
}

/* Number of entries in the folder besides "." and "..". */
static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static tu_der *g_ca;      /* ca-ecc-cert.pem: 664 bytes of DER */
static size_t g_nca;

static int setup(void **state)
{
	(void)state;
	g_nca = tu_pem_ders(&g_ca, tu_input("ca-ecc-cert.pem"), "CERTIFICATE");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_ders_free(g_ca, g_nca);
	return 0;
}

static void set_prop(wks_store *st, const char *name, const char *value)
{
	TU_OK(wks_store_set_property(st, name, value));
}

/* A store with the fast iteration count and `extra` properties
 * (name, value, ..., NULL). */
static wks_store *store_with(const char *const *extra)
{
	wks_store *st = tu_store_fast();

	for (; extra && *extra; extra += 2)
		set_prop(st, extra[0], extra[1]);
	return st;
}

/*
 * Saving st must fail with WKS_ERR_LIMIT and a detail containing `want`,
 * before anything is written: the existing file at t->path keeps its
 * bytes `old` and no temporary file is left; save_buffer refuses too.
 */
static void expect_save_refused(wks_store *st, tmp *t, const uint8_t *old,
                                size_t old_len, const char *want)
{
	uint8_t *buf = (uint8_t *)"x", *now;
	size_t len = 1, now_len;

	TU_EXPECT(WKS_ERR_LIMIT, wks_store_save_file(st, t->path, PW, PW_LEN));
	if (!strstr(wks_error_detail(), want) ||
	    !strstr(wks_error_detail(), "cannot save"))
		fail_msg("detail \"%s\" lacks \"%s\"", wks_error_detail(), want);
	now = tu_read_file(t->path, &now_len);
	assert_true(now_len == old_len && memcmp(now, old, old_len) == 0);
	free(now);
	assert_int_equal(dir_entries(t->dir), 1); /* no temporary file */
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_save_buffer(st, &buf, &len, PW, PW_LEN));
	assert_null(buf);
	assert_true(len == 0);
}

/* A load of t->path under the settings `extra` gives `want`. */
static void expect_load(tmp *t, const char *const *extra, int want)
{
	wks_store *ld = store_with(extra);

	TU_EXPECT(want, wks_store_load_file(ld, t->path, PW, PW_LEN));
	wks_store_free(ld);
}

/* ---- item 7: the read bound ------------------------------------------------ */

/* 3,000 certificate entries with maxEntrySize=1000: about 2 MB, which the
 * old bound (maxEntrySize * 64 + 1 MiB) refused although save wrote it. */
static void test_limits__3000_certs_round_trip(void **state)
{
	static const char *const props[] = {
		"wolfjce.wks.maxEntrySize", "1000", NULL
	};
	wks_store *st = store_with(props), *ld;
	char alias[32];
	uint8_t *file;
	size_t len;
	tmp t;
	int i;

	(void)state;
	tmp_init(&t);
	for (i = 0; i < 3000; i++) {
		snprintf(alias, sizeof(alias), "ca-%04d", i);
		TU_OK(wks_store_set_cert_der(st, alias, g_ca[0].der, g_ca[0].len));
	}
	TU_OK(wks_store_save_file(st, t.path, PW, PW_LEN));
	file = tu_read_file(t.path, &len);
	assert_true(len > (size_t)1000 * 64 + (1u << 20));
	ld = store_with(props);
	TU_OK(wks_store_load_file(ld, t.path, PW, PW_LEN));
	assert_int_equal(wks_store_size(ld), 3000);
	assert_int_equal(wks_store_contains(ld, "ca-2999"), 1);
	TU_OK(wks_store_load_buffer(ld, file, len, PW, PW_LEN));
	assert_int_equal(wks_store_size(ld), 3000);
	free(file);
	wks_store_free(ld);
	wks_store_free(st);
	tmp_free(&t);
}

/* libwks.wks.maxFileSize bounds loads from files and from memory, with a
 * detail naming the property; a file of exactly the limit loads. */
static void test_limits__max_file_size_load(void **state)
{
	wks_store *st = tu_store_fast(), *ld = tu_store_fast();
	char lim[32];
	uint8_t *file;
	size_t len;
	tmp t;

	(void)state;
	tmp_init(&t);
	TU_OK(wks_store_set_cert_der(st, "ca", g_ca[0].der, g_ca[0].len));
	TU_OK(wks_store_save_file(st, t.path, PW, PW_LEN));
	file = tu_read_file(t.path, &len);

	snprintf(lim, sizeof(lim), "%zu", len);
	set_prop(ld, "libwks.wks.maxFileSize", lim);
	TU_OK(wks_store_load_file(ld, t.path, PW, PW_LEN));
	TU_OK(wks_store_load_buffer(ld, file, len, PW, PW_LEN));

	snprintf(lim, sizeof(lim), "%zu", len - 1);
	set_prop(ld, "libwks.wks.maxFileSize", lim);
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_file(ld, t.path, PW, PW_LEN));
	assert_non_null(strstr(wks_error_detail(), "libwks.wks.maxFileSize"));
	assert_non_null(strstr(wks_error_detail(), t.path));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_buffer(ld, file, len, PW, PW_LEN));
	assert_non_null(strstr(wks_error_detail(), "libwks.wks.maxFileSize"));
	/* A refused load leaves the store as it was. */
	assert_int_equal(wks_store_size(ld), 1);

	/* The process-wide value applies too; the default is 256 MiB. */
	TU_OK(wks_get_property(lim, sizeof(lim), NULL, "libwks.wks.maxFileSize"));
	assert_string_equal(lim, "268435456");
	set_prop(ld, "libwks.wks.maxFileSize", NULL);
	TU_OK(wks_set_property("libwks.wks.maxFileSize", "104"));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_load_file(ld, t.path, PW, PW_LEN));
	TU_OK(wks_set_property("libwks.wks.maxFileSize", NULL));
	TU_OK(wks_store_load_file(ld, t.path, PW, PW_LEN));
	free(file);
	wks_store_free(ld);
	wks_store_free(st);
	tmp_free(&t);
}

/* A file whose size is not its length is refused, never cut at its stat
 * size nor taken short: /proc files (size 0, content: it "grows" while
 * read) and sysfs files (size 4096, a few bytes: it "shrinks"). */
static void test_limits__file_changing_while_read(void **state)
{
	wks_store *ld = tu_store_fast();
	struct stat sb;

	(void)state;
	TU_EXPECT(WKS_ERR_IO, wks_store_load_file(ld, "/proc/self/status", PW,
	                                          PW_LEN));
	assert_non_null(strstr(wks_error_detail(), "changed while being read"));
	assert_non_null(strstr(wks_error_detail(), "grew"));
	if (stat("/sys/devices/system/cpu/online", &sb) == 0 &&
	    S_ISREG(sb.st_mode) && sb.st_size == 4096) {
		TU_EXPECT(WKS_ERR_IO, wks_store_load_file(
			ld, "/sys/devices/system/cpu/online", PW, PW_LEN));
		assert_non_null(strstr(wks_error_detail(), "shrank"));
	} else {
		print_message("no sysfs file to test a shrinking read with\n");
	}
	wks_store_free(ld);
}

/* ---- item 8: save never writes what the same settings cannot load -------- */

/* The store grows past maxFileSize: save refuses, nothing is written. */
static void test_limits__save_max_file_size(void **state)
{
	wks_store *st = tu_store_fast();
	uint8_t *old;
	size_t old_len;
	char lim[32];
	tmp t;

	(void)state;
	tmp_init(&t);
	TU_OK(wks_store_set_cert_der(st, "ca", g_ca[0].der, g_ca[0].len));
	TU_OK(wks_store_save_file(st, t.path, PW, PW_LEN));
	old = tu_read_file(t.path, &old_len);
	snprintf(lim, sizeof(lim), "%zu", old_len);
	set_prop(st, "libwks.wks.maxFileSize", lim);
	TU_OK(wks_store_save_file(st, t.path, PW, PW_LEN)); /* equal: fine */
	free(old);
	old = tu_read_file(t.path, &old_len);
	TU_OK(wks_store_set_cert_der(st, "ca2", g_ca[0].der, g_ca[0].len));
	expect_save_refused(st, &t, old, old_len, "libwks.wks.maxFileSize");
	expect_load(&t, (const char *const[]){ "libwks.wks.maxFileSize", lim,
	                                       NULL }, WKS_OK);
	free(old);
	wks_store_free(st);
	tmp_free(&t);
}

/* iterationCount above maxIterationCount: the trailer would carry a count
 * the same settings refuse.  Save refuses before deriving or writing; so
 * does a setter (before its PBKDF2). */
static void test_limits__save_iterations_above_max(void **state)
{
	static const char *const tight[] = {
		"libwks.wks.maxIterationCount", "15000", NULL
	};
	wks_store *st = tu_store_fast();
	uint8_t *old, key[16] = { 1 };
	size_t old_len;
	tmp t;

	(void)state;
	tmp_init(&t);
	TU_OK(wks_store_set_cert_der(st, "ca", g_ca[0].der, g_ca[0].len));
	TU_OK(wks_store_save_file(st, t.path, PW, PW_LEN));
	old = tu_read_file(t.path, &old_len);
	set_prop(st, "libwks.wks.maxIterationCount", "15000");
	set_prop(st, "wolfjce.wks.iterationCount", "20000");
	expect_save_refused(st, &t, old, old_len, "libwks.wks.maxIterationCount");
	assert_non_null(strstr(wks_error_detail(), "wolfjce.wks.iterationCount"));
	TU_EXPECT(WKS_ERR_LIMIT, wks_store_set_secret_key(st, "k", "AES", key,
	                                                  sizeof(key), PW, PW_LEN));
	assert_non_null(strstr(wks_error_detail(), "maxIterationCount"));
	assert_int_equal(wks_store_contains(st, "k"), 0);
	/* Equal is fine, and loads under the same settings. */
	set_prop(st, "wolfjce.wks.iterationCount", "15000");
	TU_OK(wks_store_set_secret_key(st, "k", "AES", key, sizeof(key), PW,
	                               PW_LEN));
	TU_OK(wks_store_save_file(st, t.path, PW, PW_LEN));
	expect_load(&t, tight, WKS_OK);
	free(old);
	wks_store_free(st);
	tmp_free(&t);
}

/*
 * Entries made under wider settings, then the settings narrowed: every
 * setting that a load checks against an entry.  For each, a load of the
 * file saved before under the narrowed settings fails, and so does a save
 * under them (WKS_ERR_LIMIT naming the entry, nothing written).
 */
static void test_limits__save_entries_outside_limits(void **state)
{
	static const struct {
		const char *name, *value, *want;
	} c[] = {
		/* the 2-certificate chain of "a-key" */
		{ "wolfjce.wks.maxCertChainLength", "1", "chain length 2" },
		/* bodyLen of every entry (certLen and encKeyLen are inside) */
		{ "wolfjce.wks.maxEntrySize", "600", "exceeds limit 600" },
		/* "b-secret" was made with 12000 iterations */
		{ "libwks.wks.maxIterationCount", "11000", "iteration count 12000" },
	};
	wks_store *st = tu_store_fast();
	uint8_t *old, key[16] = { 2 };
	size_t old_len, i;
	tmp t;

	(void)state;
	tmp_init(&t);
	TU_OK(tu_set_key_files(st, "a-key", "server-key.pem",
	                       "server-cert-chain2.pem", PW));
	set_prop(st, "wolfjce.wks.iterationCount", "12000");
	TU_OK(wks_store_set_secret_key(st, "b-secret", "AES", key, sizeof(key),
	                               PW, PW_LEN));
	set_prop(st, "wolfjce.wks.iterationCount", "10000");
	TU_OK(wks_store_set_cert_der(st, "c-cert", g_ca[0].der, g_ca[0].len));
	TU_OK(wks_store_save_file(st, t.path, PW, PW_LEN));
	old = tu_read_file(t.path, &old_len);
	expect_load(&t, NULL, WKS_OK);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *const narrowed[] = { c[i].name, c[i].value, NULL };

		expect_load(&t, narrowed, WKS_ERR_LIMIT);
		set_prop(st, c[i].name, c[i].value);
		expect_save_refused(st, &t, old, old_len, c[i].want);
		assert_non_null(strstr(wks_error_detail(), "entry "));
		set_prop(st, c[i].name, NULL);
	}
	TU_OK(wks_store_save_file(st, t.path, PW, PW_LEN));
	free(old);
	wks_store_free(st);
	tmp_free(&t);
}

/*
 * The invariant itself, over random settings: whatever a store holds,
 * a save under settings S either fails with WKS_ERR_LIMIT or writes a
 * file that a load under S accepts.
 */
static void test_limits__save_implies_load(void **state)
{
	static const char *const chains[] = { "1", "2", "3" };
	static const char *const sizes[] = { "500", "700", "1500", "10485760" };
	static const char *const maxit[] = { "10000", "10500", "11000", "20000" };
	static const char *const iters[] = { "10000", "10500", "11000" };
	static const char *const files[] = { "1500", "3000", "268435456" };
	wks_store *st = tu_store_fast(), *ld;
	uint8_t *buf, key[16] = { 3 };
	size_t len, round, saved = 0, refused = 0;
	/* WKS_LIMITS_ROUNDS: fewer random settings (CI's valgrind stage). */
	size_t rounds = tu_env_count("WKS_LIMITS_ROUNDS", 40, 40);
	char alias[16];
	int rc;

	(void)state;
	srand(12);
	TU_OK(tu_set_key_files(st, "key", "server-key.pem",
	                       "server-cert-chain2.pem", PW));
	for (round = 0; round < rounds; round++) {
		set_prop(st, "wolfjce.wks.iterationCount", iters[rand() % 3]);
		snprintf(alias, sizeof(alias), "s%zu", round % 4);
		TU_OK(wks_store_set_secret_key(st, alias, "AES", key, sizeof(key),
		                               PW, PW_LEN));
		if (round % 5 == 0) {
			snprintf(alias, sizeof(alias), "c%zu", round % 3);
			TU_OK(wks_store_set_cert_der(st, alias, g_ca[0].der,
			                             g_ca[0].len));
		}
		{
			const char *const s[] = {
				"wolfjce.wks.maxCertChainLength", chains[rand() % 3],
				"wolfjce.wks.maxEntrySize", sizes[rand() % 4],
				"libwks.wks.maxIterationCount", maxit[rand() % 4],
				"wolfjce.wks.iterationCount", iters[rand() % 3],
				"libwks.wks.maxFileSize", files[rand() % 3],
				NULL
			};
			size_t k;

			for (k = 0; s[k]; k += 2)
				set_prop(st, s[k], s[k + 1]);
			rc = wks_store_save_buffer(st, &buf, &len, PW, PW_LEN);
			if (rc == WKS_ERR_LIMIT) {
				refused++;
			} else {
				TU_OK(rc);
				ld = store_with(s);
				if (wks_store_load_buffer(ld, buf, len, PW, PW_LEN) != WKS_OK)
					fail_msg("round %zu: saved, but the same settings "
					         "cannot load it: %s", round,
					         wks_error_detail());
				wks_store_free(ld);
				wks_free(buf);
				saved++;
			}
			for (k = 0; s[k]; k += 2)
				set_prop(st, s[k], NULL);
		}
	}
	/* Both outcomes happened (the test exercised something). */
	assert_true(saved > 0 && refused > 0);
	wks_store_free(st);
}

/* ---- item 18: the layers of src/ ------------------------------------------- */

/* No file of src/<layer>/ includes a header of the given other layers. */
static void check_layer(const char *layer, const char *const *banned)
{
	char dirpath[4096], path[4096 + 512], line[512];
	const char *const *b;
	struct dirent *e;
	DIR *d;
	FILE *f;

	snprintf(dirpath, sizeof(dirpath), "%s/src/%s", WKS_SOURCE_DIR, layer);
	assert_non_null(d = opendir(dirpath));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, e->d_name);
		assert_non_null(f = fopen(path, "r"));
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "#include", 8) != 0)
				continue;
			for (b = banned; *b; b++)
				if (strstr(line, *b))
					fail_msg("src/%s/%s: %s", layer, e->d_name, line);
		}
		fclose(f);
	}
	closedir(d);
}

/* Issue 31: a crypto library's headers only in the backend files of
 * src/crypto/ (crypto_, pki_, sha512_<backend>.c), and in the converters
 * (src/convert/, OpenSSL build only); nothing else of src/ is aware of
 * the backend. */
static void test_limits__backend_headers(void **state)
{
	static const char *const libs[] = { "<openssl/", "<wolfssl/", NULL };
	static const char *const layers[] = { "cache", "config", "format",
	                                      "store", "uri", "util", NULL };
	char dirpath[4096], path[4096 + 512], line[512];
	const char *const *l;
	struct dirent *e;
	DIR *d;
	FILE *f;
	size_t n;

	(void)state;
	for (l = layers; *l; l++)
		check_layer(*l, libs);
	snprintf(dirpath, sizeof(dirpath), "%s/src/crypto", WKS_SOURCE_DIR);
	assert_non_null(d = opendir(dirpath));
	while ((e = readdir(d)) != NULL) {
		n = strlen(e->d_name);
		if (e->d_name[0] == '.' ||
		    (n > 10 && strcmp(e->d_name + n - 10, "_openssl.c") == 0) ||
		    (n > 12 && strcmp(e->d_name + n - 12, "_wolfcrypt.c") == 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, e->d_name);
		assert_non_null(f = fopen(path, "r"));
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "#include", 8) != 0)
				continue;
			/* (crypto.h and pki.h name OpenSSL's types for the
			 * OpenSSL build's declarations, under #ifdef) */
			if ((strcmp(e->d_name, "crypto.h") == 0 ||
			     strcmp(e->d_name, "pki.h") == 0) &&
			    strstr(line, "<openssl/types.h>"))
				continue;
			if (strstr(line, "<openssl/") || strstr(line, "<wolfssl/"))
				fail_msg("src/crypto/%s: %s", e->d_name, line);
		}
		fclose(f);
	}
	closedir(d);
}

static void test_limits__layers(void **state)
{
	static const char *const for_format[] = {
		"\"crypto/", "\"store/", "\"cache/", "\"config/", "<openssl/", NULL
	};
	static const char *const for_config[] = { "\"store/", "\"cache/", NULL };
	/* convert sits on the public store API (it is a client of the
	 * store, as cli/ is, inside the library): no store, cache, config
	 * or crypto internals. */
	static const char *const for_convert[] = {
		"\"crypto/", "\"store/", "\"cache/", "\"config/", NULL
	};
	/* uri (wks: URIs, password sources, key references) is pure text on
	 * util: no store, no crypto, no configuration, no OpenSSL. */
	static const char *const for_uri[] = {
		"\"crypto/", "\"store/", "\"cache/", "\"config/", "\"format/",
		"\"convert/", "<openssl/", NULL
	};
	static const char *const for_util[] = {
		"\"crypto/", "\"store/", "\"cache/", "\"config/", "\"format/", NULL
	};

	(void)state;
	check_layer("format", for_format);
	check_layer("config", for_config);
	check_layer("util", for_util);
	check_layer("convert", for_convert);
	check_layer("uri", for_uri);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits__3000_certs_round_trip),
		cmocka_unit_test(test_limits__max_file_size_load),
		cmocka_unit_test(test_limits__file_changing_while_read),
		cmocka_unit_test(test_limits__save_max_file_size),
		cmocka_unit_test(test_limits__save_iterations_above_max),
		cmocka_unit_test(test_limits__save_entries_outside_limits),
		cmocka_unit_test(test_limits__save_implies_load),
		cmocka_unit_test(test_limits__layers),
		cmocka_unit_test(test_limits__backend_headers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
