/* Properties: defaults, parsing and fallback rules (spec section 8 and the
 * table in wks.h), warnings, resolution order, $WKS_PROPERTIES, and the
 * java.util.Properties parser. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "config/config.h"
#include "util/error.h"

/* ---- helpers -------------------------------------------------------------- */

/* Warnings collected by the handler. */
typedef struct {
	int count;
	char last[512];
} warn_log;

static warn_log g_warns;

static void on_warning(const char *msg, void *ctx)
{
	warn_log *w = ctx;

	w->count++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

static int setup(void **state)
{
	(void)state;
	wks__props_reset_process();
	memset(&g_warns, 0, sizeof(g_warns));
	wks_set_warning_handler(on_warning, &g_warns);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	wks_set_warning_handler(NULL, NULL);
	wks__props_reset_process();
	return 0;
}

static void settings(wks_settings *s, wks_props *p)
{
	wks__settings_get(s, p);
}

/* The text in force for `name` in the process-wide view. */
static const char *prop_text(wks_props *p, const char *name)
{
	static char buf[256];

	TU_OK(wks__property_text(buf, sizeof(buf), p, name));
	return buf;
}

/* A fresh store-level property set. */
static wks_props *props_new(void)
{
	wks_props *p = NULL;

	TU_OK(wks__props_new(&p));
	assert_non_null(p);
	return p;
}

static char *write_tmp_props(char **dir_out, const char *text)
{
	char *dir = tu_tmpdir();
	char *path = malloc(strlen(dir) + 32);

	assert_non_null(path);
	sprintf(path, "%s/wks.properties", dir);
	tu_write_file(path, (const uint8_t *)text, strlen(text));
	*dir_out = dir;
	return path;
}

/* ---- defaults ------------------------------------------------------------- */

static void test_config__defaults(void **state)
{
	wks_settings s;
	wks_props *p = props_new();

	(void)state;
	settings(&s, NULL);
	assert_int_equal(s.iteration_count, 210000);
	assert_int_equal(s.max_chain, 100);
	assert_int_equal(s.max_entry_size, 10485760);
	assert_int_equal(s.max_iterations, 5000000);
	assert_int_equal(s.require_integrity, 0);
	assert_int_equal(s.cache_enabled, 0);
	assert_true(s.cache_ttl_ms == 300000);
	assert_true(s.cache_idle_ms == 0);
	assert_true(s.cache_max_entries == 1024);
	assert_int_equal(s.kdf_impl, WKS_KDF_NATIVE);
	assert_int_equal(s.kdf_threads, 0);
	assert_true(s.max_file_size == 268435456);

	/* A store with nothing set sees the same. */
	memset(&s, 0xAA, sizeof(s));
	settings(&s, p);
	assert_int_equal(s.iteration_count, WKS_DEFAULT_ITERATIONS);
	assert_true(s.cache_ttl_ms == 300000);

	assert_string_equal(prop_text(NULL, "wolfjce.wks.iterationCount"), "210000");
	assert_string_equal(prop_text(NULL, "wolfjce.wks.maxCertChainLength"), "100");
	assert_string_equal(prop_text(NULL, "wolfjce.wks.maxEntrySize"), "10485760");
	assert_string_equal(prop_text(NULL, "wolfjce.keystore.kekCacheEnabled"), "false");
	assert_string_equal(prop_text(NULL, "wolfjce.keystore.kekCacheTtlSec"), "300");
	assert_string_equal(prop_text(NULL, "libwks.wks.maxIterationCount"), "5000000");
	assert_string_equal(prop_text(NULL, "libwks.wks.requireIntegrity"), "false");
	assert_string_equal(prop_text(NULL, "libwks.keystore.kekCacheMaxEntries"), "1024");
	assert_string_equal(prop_text(NULL, "libwks.keystore.kekCacheIdleSec"), "0");
	assert_string_equal(prop_text(NULL, "libwks.kdf.impl"), "native");
	assert_string_equal(prop_text(NULL, "libwks.kdf.threads"), "0");
	assert_string_equal(prop_text(NULL, "libwks.wks.maxFileSize"), "268435456");
	assert_string_equal(prop_text(NULL, "libwks.convert.maxKdfIterations"),
			    "100000000");
	assert_int_equal(g_warns.count, 0);
	wks__props_free(p);
}

/* ---- value rules ---------------------------------------------------------- */

typedef struct {
	const char *value; /* NULL = unset */
	const char *want;  /* text in force */
	int warns;         /* 1 if setting it must warn */
} vcase;

/* Set each value on a store-level set, check the text in force and the
 * warning count, then unset. */
static void check_cases(const char *name, const vcase *c, size_t n)
{
	wks_props *p = props_new();
	size_t i;
	int before;

	for (i = 0; i < n; i++) {
		before = g_warns.count;
		TU_OK(wks__props_set(p, name, c[i].value));
		if (strcmp(prop_text(p, name), c[i].want) != 0)
			fail_msg("%s=\"%s\": got %s, want %s", name,
			         c[i].value ? c[i].value : "(unset)",
			         prop_text(p, name), c[i].want);
		if (g_warns.count - before != c[i].warns)
			fail_msg("%s=\"%s\": %d warnings, want %d (last: %s)", name,
			         c[i].value ? c[i].value : "(unset)",
			         g_warns.count - before, c[i].warns, g_warns.last);
		if (c[i].warns && !strstr(g_warns.last, name))
			fail_msg("warning does not name the property: %s",
			         g_warns.last);
		TU_OK(wks__props_set(p, name, NULL));
	}
	wks__props_free(p);
}

#define CHECK(name, cases) check_cases(name, cases, sizeof(cases) / sizeof(cases[0]))

static void test_config__iteration_count(void **state)
{
	static const vcase c[] = {
		{ NULL, "210000", 0 },
		{ "", "210000", 0 },
		{ "10000", "10000", 0 },
		{ "10001", "10001", 0 },
		{ "+20000", "20000", 0 },
		{ "2147483647", "2147483647", 0 },
		{ "0010000", "10000", 0 },
		{ "9999", "210000", 1 },     /* below the minimum: the default, */
		{ "5000", "210000", 1 },     /* not clamped to 10000 */
		{ "0", "210000", 1 },
		{ "-1", "210000", 1 },
		{ "-2147483648", "210000", 1 },
		{ "2147483648", "210000", 1 }, /* outside int32: unparsable */
		{ "99999999999999999999", "210000", 1 },
		/* Trimmed first, as Security.getProperty() does (spec 8). */
		{ " 20000", "20000", 0 },
		{ "20000 ", "20000", 0 },
		{ "20000\n", "20000", 0 },
		{ "\t20000\r\n", "20000", 0 },
		{ " \t\r\n", "210000", 0 },  /* blank: as empty */
		{ "20 000", "210000", 1 },   /* inside: still unparsable */
		{ "abc", "210000", 1 },
		{ "2e5", "210000", 1 },
		{ "0x10000", "210000", 1 },
		{ "20_000", "210000", 1 },
		{ "+", "210000", 1 },
		{ "-", "210000", 1 },
		{ "++20000", "210000", 1 },
		/* ASCII digits only (Java would also take these Arabic-Indic
		 * digits: a documented difference, see docs/PROPERTIES.md). */
		{ "\xd9\xa2\xd9\xa1\xd9\xa0\xd9\xa0\xd9\xa0", "210000", 1 },
	};

	(void)state;
	CHECK("wolfjce.wks.iterationCount", c);
}

static void test_config__max_chain_and_entry(void **state)
{
	static const vcase chain[] = {
		{ "1", "1", 0 },
		{ "100", "100", 0 },
		{ "5", "5", 0 },
		{ "2147483647", "2147483647", 0 },
		{ "0", "100", 1 },
		{ "-5", "100", 1 },
		{ " 5", "5", 0 },
		{ "5\r\n", "5", 0 },
		{ "five", "100", 1 },
		{ "", "100", 0 },
	};
	static const vcase entry[] = {
		{ "1", "1", 0 },
		{ "4096", "4096", 0 },
		{ "2147483647", "2147483647", 0 },
		{ "0", "10485760", 1 },
		{ "-1", "10485760", 1 },
		{ "2147483648", "10485760", 1 },
		{ "10MB", "10485760", 1 },
		{ "", "10485760", 0 },
	};

	(void)state;
	CHECK("wolfjce.wks.maxCertChainLength", chain);
	CHECK("wolfjce.wks.maxEntrySize", entry);
}

static void test_config__booleans(void **state)
{
	static const vcase c[] = {
		{ "true", "true", 0 },
		{ "TRUE", "true", 0 },
		{ "True", "true", 0 },
		{ "tRuE", "true", 0 },
		{ "false", "false", 0 },
		{ "FALSE", "false", 0 },
		{ "", "false", 0 },
		{ " true", "true", 0 }, /* trimmed (spec 8) */
		{ "true ", "true", 0 },
		{ " TRUE\r\n", "true", 0 },
		{ "\tfalse\t", "false", 0 },
		{ " ", "false", 0 },
		{ "t rue", "false", 1 },
		{ "yes", "false", 1 },
		{ "1", "false", 1 },
		{ "on", "false", 1 },
		{ "truee", "false", 1 },
	};

	(void)state;
	CHECK("wolfjce.keystore.kekCacheEnabled", c);
	CHECK("libwks.wks.requireIntegrity", c);
}

static void test_config__ttl(void **state)
{
	static const vcase c[] = {
		{ "1", "1", 0 },
		{ "60", "60", 0 },
		{ "+60", "60", 0 },
		{ " 60 ", "60", 0 },      /* trimmed */
		{ "\t60\r\n", "60", 0 },
		{ "\x01" "60\x1f", "60", 0 }, /* String.trim(): all <= U+0020 */
		{ "", "300", 0 },
		{ "   ", "300", 0 },      /* blank: as empty */
		{ "0", "300", 1 },        /* not clamped to 1 */
		{ "-5", "300", 1 },
		{ "abc", "300", 1 },
		{ "6 0", "300", 1 },
		{ "60s", "300", 1 },
		{ "1.5", "300", 1 },
		{ "9223372036854775807", "9223372036854775807", 0 },
		{ "9223372036854775808", "300", 1 }, /* beyond a Java long */
		{ "-9223372036854775808", "300", 1 },
	};
	wks_settings s;
	wks_props *p = props_new();

	(void)state;
	CHECK("wolfjce.keystore.kekCacheTtlSec", c);

	/* Milliseconds saturate instead of wrapping. */
	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheTtlSec", "7"));
	settings(&s, p);
	assert_true(s.cache_ttl_ms == 7000);
	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheTtlSec",
	                     "18446744073709551"));
	settings(&s, p);
	assert_true(s.cache_ttl_ms == UINT64_C(18446744073709551000));
	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheTtlSec",
	                     "18446744073709552"));
	settings(&s, p);
	assert_true(s.cache_ttl_ms == UINT64_MAX);
	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheTtlSec",
	                     "9223372036854775807"));
	settings(&s, p);
	assert_true(s.cache_ttl_ms == UINT64_MAX);
	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheTtlSec", "0"));
	settings(&s, p);
	assert_true(s.cache_ttl_ms == 300000);
	wks__props_free(p);
}

static void test_config__libwks_values(void **state)
{
	static const vcase maxit[] = {
		{ "10000", "10000", 0 },
		{ "100000000", "100000000", 0 },
		{ "2147483647", "2147483647", 0 },
		{ "9999", "5000000", 1 },
		{ "0", "5000000", 1 },
		{ "-1", "5000000", 1 },
		{ " 20000", "20000", 0 },
		{ "", "5000000", 0 },
	};
	static const vcase maxent[] = {
		{ "1", "1", 0 },
		{ "100000", "100000", 0 },
		{ "0", "1024", 1 },
		{ "-3", "1024", 1 },
		{ "x", "1024", 1 },
		{ "", "1024", 0 },
	};
	static const vcase idle[] = {
		{ "0", "0", 0 },
		{ "30", "30", 0 },
		{ " 30\t", "30", 0 },
		{ "", "0", 0 },
		{ " ", "0", 0 },
		{ "-1", "0", 1 },
		{ "soon", "0", 1 },
	};
	static const vcase impl[] = {
		{ "native", "native", 0 },
		/* "openssl" names the backend's PBKDF2, shown as the backend's
		 * name (WKS_KDF_BACKEND_NAME: "openssl" or "wolfcrypt"). */
		{ "openssl", WKS_KDF_BACKEND_NAME, 0 },
		{ "OpenSSL", WKS_KDF_BACKEND_NAME, 0 },
		{ "NATIVE", "native", 0 },
		{ "", "native", 0 },
		{ "fast", "native", 1 },
		{ " openssl", WKS_KDF_BACKEND_NAME, 0 },
		{ "open ssl", "native", 1 },
#ifdef WKS_CRYPTO_WOLFCRYPT
		{ "wolfcrypt", "wolfcrypt", 0 },
		{ "WolfCrypt ", "wolfcrypt", 0 },
#else
		{ "wolfcrypt", "native", 1 },
#endif
	};
	static const vcase threads[] = {
		{ "0", "0", 0 },
		{ "1", "1", 0 },
		{ "16", "16", 0 },
		{ "17", "0", 1 },
		{ "-1", "0", 1 },
		{ " 4", "4", 0 },
		{ "four", "0", 1 },
		{ "", "0", 0 },
	};
	static const vcase maxfile[] = {
		{ "1", "1", 0 },
		{ "104", "104", 0 },
		{ "268435456", "268435456", 0 },
		{ "9223372036854775807", "9223372036854775807", 0 },
		{ " 1048576\t", "1048576", 0 },
		{ "", "268435456", 0 },
		{ "0", "268435456", 1 },
		{ "-1", "268435456", 1 },
		{ "1 MiB", "268435456", 1 },
		{ "9223372036854775808", "268435456", 1 },
	};
	static const vcase maxkdf[] = {
		{ "1", "1", 0 },
		{ "5000000", "5000000", 0 },
		{ "9223372036854775807", "9223372036854775807", 0 },
		{ "", "100000000", 0 },
		{ "0", "100000000", 1 },
		{ "-5", "100000000", 1 },
		{ "20x", "100000000", 1 },
	};
	wks_settings s;
	wks_props *p = props_new();

	(void)state;
	CHECK("libwks.wks.maxIterationCount", maxit);
	CHECK("libwks.wks.maxFileSize", maxfile);
	CHECK("libwks.convert.maxKdfIterations", maxkdf);
	CHECK("libwks.keystore.kekCacheMaxEntries", maxent);
	CHECK("libwks.keystore.kekCacheIdleSec", idle);
	CHECK("libwks.kdf.impl", impl);
	CHECK("libwks.kdf.threads", threads);

	/* Good values reach the settings struct, silently. */
	g_warns.count = 0;
	TU_OK(wks__props_set(p, "wolfjce.wks.iterationCount", "12345"));
	TU_OK(wks__props_set(p, "wolfjce.wks.maxCertChainLength", "7"));
	TU_OK(wks__props_set(p, "wolfjce.wks.maxEntrySize", "65536"));
	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheEnabled", "TRUE"));
	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheTtlSec", " 42 "));
	TU_OK(wks__props_set(p, "libwks.wks.maxIterationCount", "20000"));
	TU_OK(wks__props_set(p, "libwks.wks.requireIntegrity", "true"));
	TU_OK(wks__props_set(p, "libwks.keystore.kekCacheMaxEntries", "3"));
	TU_OK(wks__props_set(p, "libwks.keystore.kekCacheIdleSec", "9"));
	TU_OK(wks__props_set(p, "libwks.kdf.impl", "openssl"));
	TU_OK(wks__props_set(p, "libwks.kdf.threads", "4"));
	TU_OK(wks__props_set(p, "libwks.wks.maxFileSize", "5000000000"));
	settings(&s, p);
	assert_int_equal(s.iteration_count, 12345);
	assert_int_equal(s.max_chain, 7);
	assert_int_equal(s.max_entry_size, 65536);
	assert_int_equal(s.cache_enabled, 1);
	assert_true(s.cache_ttl_ms == 42000);
	assert_int_equal(s.max_iterations, 20000);
	assert_int_equal(s.require_integrity, 1);
	assert_true(s.cache_max_entries == 3);
	assert_true(s.cache_idle_ms == 9000);
	assert_int_equal(s.kdf_impl, WKS_KDF_OPENSSL);
	assert_int_equal(s.kdf_threads, 4);
	assert_true(s.max_file_size == UINT64_C(5000000000));
	assert_int_equal(g_warns.count, 0);
	wks__props_free(p);
}

/* ---- warnings ------------------------------------------------------------- */

static void test_config__warnings(void **state)
{
	wks_settings s;
	wks_props *p = props_new();
	char buf[64];
	int i;

	(void)state;
	TU_OK(wks_set_property("wolfjce.wks.iterationCount", "5000"));
	assert_int_equal(g_warns.count, 1);
	assert_string_equal(g_warns.last, "wolfjce.wks.iterationCount=\"5000\" "
	                    "is below 10000; using 210000");
	/* Once when set, never at use. */
	for (i = 0; i < 100; i++) {
		settings(&s, NULL);
		settings(&s, p);
		TU_OK(wks_get_property(buf, sizeof(buf), NULL,
		                       "wolfjce.wks.iterationCount"));
	}
	assert_int_equal(g_warns.count, 1);
	assert_string_equal(buf, "210000");
	assert_int_equal(s.iteration_count, 210000);

	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheTtlSec", "-5"));
	assert_int_equal(g_warns.count, 2);
	assert_string_equal(g_warns.last, "wolfjce.keystore.kekCacheTtlSec=\"-5\" "
	                    "is not positive; using 300");
	TU_OK(wks__props_set(p, "wolfjce.wks.maxEntrySize", "1 MiB"));
	assert_string_equal(g_warns.last, "wolfjce.wks.maxEntrySize=\"1 MiB\" "
	                    "is not a 32-bit integer; using 10485760");
	TU_OK(wks__props_set(p, "libwks.kdf.threads", "99"));
	assert_string_equal(g_warns.last, "libwks.kdf.threads=\"99\" "
	                    "is not in 0..16; using 0");
	TU_OK(wks__props_set(p, "wolfjce.keystore.kekCacheEnabled", "yes"));
	assert_string_equal(g_warns.last, "wolfjce.keystore.kekCacheEnabled=\"yes\" "
	                    "is not \"true\" or \"false\"; using false");
	/* Control characters and quotes are shown escaped, long values cut. */
	TU_OK(wks__props_set(p, "libwks.kdf.impl", "a\"b\n\x01" "c"));
	assert_string_equal(g_warns.last, "libwks.kdf.impl=\"a\\\"b\\x0a\\x01c\" "
#ifdef WKS_CRYPTO_WOLFCRYPT
	                    "is not \"native\", \"wolfcrypt\" or \"openssl\"; "
	                    "using native");
#else
	                    "is not \"native\" or \"openssl\"; using native");
#endif
	TU_OK(wks__props_set(p, "libwks.kdf.impl",
	                     "0123456789012345678901234567890123456789TOOLONG"));
	assert_non_null(strstr(g_warns.last, "0123456789...\""));
	assert_null(strstr(g_warns.last, "TOOLONG"));
	assert_int_equal(g_warns.count, 7);

	/* Unknown names: kept silently, except libwks.* (a likely typo). */
	TU_OK(wks_set_property("jdk.tls.disabledAlgorithms", "SSLv3"));
	TU_OK(wks_set_property("wolfjce.mapJKStoWKS", "true"));
	assert_int_equal(g_warns.count, 7);
	TU_OK(wks_set_property("libwks.wks.iterationCount", "20000"));
	assert_int_equal(g_warns.count, 8);
	assert_non_null(strstr(g_warns.last, "libwks.wks.iterationCount"));
	/* Unsetting never warns; neither do good or empty values. */
	TU_OK(wks_set_property("libwks.wks.iterationCount", NULL));
	TU_OK(wks_set_property("wolfjce.wks.iterationCount", NULL));
	TU_OK(wks_set_property("wolfjce.wks.iterationCount", ""));
	TU_OK(wks_set_property("wolfjce.wks.iterationCount", "20000"));
	assert_int_equal(g_warns.count, 8);

	/* No handler: dropped (and nothing crashes). */
	wks_set_warning_handler(NULL, NULL);
	TU_OK(wks_set_property("wolfjce.wks.iterationCount", "1"));
	assert_int_equal(g_warns.count, 8);
	wks__props_free(p);
}

/* ---- resolution order ------------------------------------------------------ */

static void test_config__resolution_order(void **state)
{
	const char *n = "wolfjce.wks.iterationCount";
	char *dir, *path;
	wks_settings s;
	wks_props *p = props_new(), *q = props_new();

	(void)state;
	path = write_tmp_props(&dir, "wolfjce.wks.iterationCount=30000\n"
	                             "wolfjce.wks.maxCertChainLength=30\n");
	TU_OK(wks_load_properties_file(path));
	settings(&s, p);
	assert_int_equal(s.iteration_count, 30000); /* file > default */
	assert_int_equal(s.max_chain, 30);
	assert_int_equal(s.max_entry_size, WKS_DEFAULT_MAX_ENTRY_SIZE);

	TU_OK(wks_set_property(n, "40000"));
	settings(&s, p);
	assert_int_equal(s.iteration_count, 40000); /* process > file */
	assert_int_equal(s.max_chain, 30);

	TU_OK(wks__props_set(p, n, "50000"));
	settings(&s, p);
	assert_int_equal(s.iteration_count, 50000); /* store > process */
	settings(&s, q);
	assert_int_equal(s.iteration_count, 40000); /* other stores unaffected */
	settings(&s, NULL);
	assert_int_equal(s.iteration_count, 40000);
	assert_string_equal(prop_text(p, n), "50000");
	assert_string_equal(prop_text(NULL, n), "40000");

	/* A bad value decides at its level: the default, not the level below
	 * (a bad value means the default, as in wolfJCE). */
	TU_OK(wks__props_set(p, n, "100"));
	settings(&s, p);
	assert_int_equal(s.iteration_count, 210000);
	/* So does an empty value. */
	TU_OK(wks__props_set(p, n, ""));
	settings(&s, p);
	assert_int_equal(s.iteration_count, 210000);

	/* Unsetting falls through again, immediately. */
	TU_OK(wks__props_set(p, n, NULL));
	settings(&s, p);
	assert_int_equal(s.iteration_count, 40000);
	TU_OK(wks_set_property(n, NULL));
	settings(&s, p);
	assert_int_equal(s.iteration_count, 30000);
	wks__props_reset_process();
	settings(&s, p);
	assert_int_equal(s.iteration_count, 210000);
	assert_int_equal(s.max_chain, 100);

	/* A later file overrides an earlier one, name by name. */
	TU_OK(wks_load_properties_file(path));
	tu_write_file(path, (const uint8_t *)"wolfjce.wks.maxCertChainLength=31\n", 34);
	TU_OK(wks_load_properties_file(path));
	settings(&s, NULL);
	assert_int_equal(s.iteration_count, 30000);
	assert_int_equal(s.max_chain, 31);

	wks__props_free(p);
	wks__props_free(q);
	tu_rmtree(dir);
	free(dir);
	free(path);
}

/* The public store API reaches the store level. */
static void test_config__store_api(void **state)
{
	wks_store *st = NULL;
	char buf[32];

	(void)state;
	TU_OK(wks_store_new(&st));
	TU_OK(wks_set_property("wolfjce.wks.maxCertChainLength", "12"));
	TU_OK(wks_get_property(buf, sizeof(buf), st, "wolfjce.wks.maxCertChainLength"));
	assert_string_equal(buf, "12");
	TU_OK(wks_store_set_property(st, "wolfjce.wks.maxCertChainLength", "13"));
	TU_OK(wks_get_property(buf, sizeof(buf), st, "wolfjce.wks.maxCertChainLength"));
	assert_string_equal(buf, "13");
	TU_OK(wks_get_property(buf, sizeof(buf), NULL, "wolfjce.wks.maxCertChainLength"));
	assert_string_equal(buf, "12");
	TU_OK(wks_store_set_property(st, "wolfjce.wks.maxCertChainLength", "-1"));
	assert_int_equal(g_warns.count, 1);
	TU_OK(wks_get_property(buf, sizeof(buf), st, "wolfjce.wks.maxCertChainLength"));
	assert_string_equal(buf, "100");
	wks_store_free(st);
}

static void test_config__get_property(void **state)
{
	char buf[16];

	(void)state;
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_get_property(buf, sizeof(buf), NULL,
	                                             "wolfjce.wks.nosuch"));
	assert_non_null(strstr(wks_error_detail(), "wolfjce.wks.nosuch"));
	TU_EXPECT(WKS_ERR_INVALID, wks_get_property(NULL, 5, NULL,
	                                            "libwks.kdf.impl"));
	TU_EXPECT(WKS_ERR_INVALID, wks_get_property(buf, 0, NULL,
	                                            "libwks.kdf.impl"));
	TU_EXPECT(WKS_ERR_INVALID, wks_get_property(buf, sizeof(buf), NULL, NULL));
	/* Truncated to the buffer. */
	TU_OK(wks_get_property(buf, 4, NULL, "wolfjce.wks.maxEntrySize"));
	assert_string_equal(buf, "104");
	/* Unknown names are kept; their raw value can be read back. */
	TU_OK(wks_set_property("jdk.security.provider.preferred", "AES:SunJCE"));
	TU_OK(wks_get_property(buf, sizeof(buf), NULL,
	                       "jdk.security.provider.preferred"));
	assert_string_equal(buf, "AES:SunJCE");
	TU_OK(wks_set_property("jdk.security.provider.preferred", NULL));
	TU_EXPECT(WKS_ERR_NOTFOUND, wks_get_property(buf, sizeof(buf), NULL,
	                                             "jdk.security.provider.preferred"));
	/* Names must be non-empty. */
	TU_EXPECT(WKS_ERR_INVALID, wks_set_property("", "x"));
	TU_EXPECT(WKS_ERR_INVALID, wks_set_property(NULL, "x"));
}

/* ---- properties files ------------------------------------------------------ */

static void test_config__load_file(void **state)
{
	static const char text[] =
		"# A java.security-style file\n"
		"security.provider.1=SUN\n"
		"jdk.tls.disabledAlgorithms=SSLv3, TLSv1, \\\n"
		"    RC4\n"
		"wolfjce.wks.iterationCount = 25000\n"
		"wolfjce.keystore.kekCacheEnabled:TRUE\n"
		"wolfjce.keystore.kekCacheTtlSec    \\u0020 90 \n"
		"wolfjce.wks.maxEntrySize=0\n"
		"libwks.kdf.impl=openssl\r\n";
	char *dir, *path, buf[64];
	wks_settings s;

	(void)state;
	path = write_tmp_props(&dir, text);
	TU_OK(wks_load_properties_file(path));
	settings(&s, NULL);
	assert_int_equal(s.iteration_count, 25000);
	assert_int_equal(s.cache_enabled, 1);
	assert_true(s.cache_ttl_ms == 90000);
	assert_int_equal(s.max_entry_size, WKS_DEFAULT_MAX_ENTRY_SIZE);
	assert_int_equal(s.kdf_impl, WKS_KDF_OPENSSL);
	/* The bad value warned once, naming the file. */
	assert_int_equal(g_warns.count, 1);
	assert_non_null(strstr(g_warns.last, path));
	assert_non_null(strstr(g_warns.last, "wolfjce.wks.maxEntrySize=\"0\""));
	/* Unrelated names are kept. */
	TU_OK(wks_get_property(buf, sizeof(buf), NULL, "jdk.tls.disabledAlgorithms"));
	assert_string_equal(buf, "SSLv3, TLSv1, RC4");
	TU_OK(wks_get_property(buf, sizeof(buf), NULL, "security.provider.1"));
	assert_string_equal(buf, "SUN");
	tu_rmtree(dir);
	free(dir);
	free(path);
}

static void test_config__load_file_errors(void **state)
{
	char *dir, *path, *missing;
	wks_settings s;

	(void)state;
	/* Bad \u on line 3: WKS_ERR_FORMAT naming the line, nothing applied. */
	path = write_tmp_props(&dir, "wolfjce.wks.iterationCount=20000\n\n"
	                             "x=\\u12G4\n");
	TU_EXPECT(WKS_ERR_FORMAT, wks_load_properties_file(path));
	assert_non_null(strstr(wks_error_detail(), "line 3"));
	assert_non_null(strstr(wks_error_detail(), path));
	settings(&s, NULL);
	assert_int_equal(s.iteration_count, 210000);

	missing = malloc(strlen(dir) + 32);
	assert_non_null(missing);
	sprintf(missing, "%s/missing.properties", dir);
	TU_EXPECT(WKS_ERR_IO, wks_load_properties_file(missing));
	assert_non_null(strstr(wks_error_detail(), missing));
	TU_EXPECT(WKS_ERR_IO, wks_load_properties_file(dir)); /* a folder */
	TU_EXPECT(WKS_ERR_INVALID, wks_load_properties_file(NULL));
	assert_int_equal(g_warns.count, 0);
	tu_rmtree(dir);
	free(dir);
	free(path);
	free(missing);
}

/* ---- trimming: every property, every source (issue 12 item 9a) ----------- */

/* A good value of every known property and its text in force. */
static const struct {
	const char *name, *value, *want;
} g_trim[] = {
	{ "wolfjce.wks.iterationCount", "15000", "15000" },
	{ "wolfjce.wks.maxCertChainLength", "7", "7" },
	{ "wolfjce.wks.maxEntrySize", "65536", "65536" },
	{ "wolfjce.keystore.kekCacheEnabled", "TRUE", "true" },
	{ "wolfjce.keystore.kekCacheTtlSec", "42", "42" },
	{ "libwks.wks.maxIterationCount", "20000", "20000" },
	{ "libwks.wks.requireIntegrity", "True", "true" },
	{ "libwks.keystore.kekCacheMaxEntries", "3", "3" },
	{ "libwks.keystore.kekCacheIdleSec", "9", "9" },
	{ "libwks.kdf.impl", "OpenSSL", WKS_KDF_BACKEND_NAME },
	{ "libwks.kdf.threads", "4", "4" },
	{ "libwks.wks.maxFileSize", "1048576", "1048576" },
	{ "libwks.convert.maxKdfIterations", "30000", "30000" },
};
#define N_TRIM (sizeof(g_trim) / sizeof(g_trim[0]))

/* What String.trim() removes: every char <= U+0020 (NUL included, which
 * libwks holds as C0 80), as raw C strings for the API ... */
static const char *const g_pads[] = {
	" ", "\t", "\r\n", "\n", " \t\r\n\f\v ", "\x01\x1f", "\xC0\x80",
	"\xC0\x80 \xC0\x80\t",
};
/* ... and as properties-file text (escapes, since a raw CR or LF ends
 * the line and leading white space is the separator's). */
static const char *const g_file_pads[] = {
	"\\u0020", "\\t", "\\r\\n", "\\n", "\\ \\t\\r\\n\\f\\u000b\\ ",
	"\\u0001\\u001f", "\\u0000", "\\u0000\\ \\u0000\\t",
};
#define N_PADS (sizeof(g_pads) / sizeof(g_pads[0]))

/* Check that every g_trim property is in force (process-wide view and
 * store view p); returns 0 or the index + 1 of the first that is not. */
static size_t trim_mismatch(wks_props *p)
{
	char buf[64];
	size_t i;

	for (i = 0; i < N_TRIM; i++) {
		if (wks__property_text(buf, sizeof(buf), p, g_trim[i].name) != WKS_OK ||
		    strcmp(buf, g_trim[i].want) != 0)
			return i + 1;
	}
	return 0;
}

/* A properties file with every g_trim property wrapped in file pad k
 * (before, after or both, by `where`: 1, 2, 3).  The trailing case also
 * ends in raw spaces and a tab, which Properties.load() keeps. */
static char *trim_file_text(size_t k, int where)
{
	size_t cap = 8192, i, o = 0;
	char *t = malloc(cap);

	assert_non_null(t);
	for (i = 0; i < N_TRIM; i++)
		o += (size_t)snprintf(t + o, cap - o, "%s=%s%s%s%s\n",
		                      g_trim[i].name,
		                      where & 1 ? g_file_pads[k] : "",
		                      g_trim[i].value,
		                      where & 2 ? g_file_pads[k] : "",
		                      where & 2 ? " \t" : "");
	assert_true(o < cap);
	return t;
}

static void test_config__trim_every_property(void **state)
{
	char v[128], *dir = NULL, *path = NULL, *text, buf[64];
	wks_props *p = props_new();
	wks_store *st = NULL;
	size_t i, k, bad;
	int where;

	(void)state;
	/* The table covers every known property. */
	assert_int_equal(N_TRIM, WKS_PROP_COUNT);
	for (i = 0; i < N_TRIM; i++)
		assert_true(wks__prop_find(g_trim[i].name) >= 0);
	TU_OK(wks_store_new(&st));

	/* From the API: store level (internal and public) and process-wide. */
	for (k = 0; k < N_PADS; k++) {
		for (where = 1; where <= 3; where++) {
			for (i = 0; i < N_TRIM; i++) {
				snprintf(v, sizeof(v), "%s%s%s",
				         where & 1 ? g_pads[k] : "", g_trim[i].value,
				         where & 2 ? g_pads[k] : "");
				TU_OK(wks__props_set(p, g_trim[i].name, v));
				TU_OK(wks_set_property(g_trim[i].name, v));
				TU_OK(wks_store_set_property(st, g_trim[i].name, v));
				TU_OK(wks_get_property(buf, sizeof(buf), st,
				                       g_trim[i].name));
				if (strcmp(buf, g_trim[i].want) != 0)
					fail_msg("store %s=\"%s\" (pad %zu): %s", g_trim[i].name,
					         v, k, buf);
			}
			if ((bad = trim_mismatch(p)) != 0)
				fail_msg("API pad %zu/%d: %s", k, where,
				         g_trim[bad - 1].name);
			if ((bad = trim_mismatch(NULL)) != 0)
				fail_msg("process pad %zu/%d: %s", k, where,
				         g_trim[bad - 1].name);
			for (i = 0; i < N_TRIM; i++) {
				TU_OK(wks__props_set(p, g_trim[i].name, NULL));
				TU_OK(wks_set_property(g_trim[i].name, NULL));
				TU_OK(wks_store_set_property(st, g_trim[i].name, NULL));
			}
		}
	}
	assert_int_equal(g_warns.count, 0);

	/* From a properties file. */
	for (k = 0; k < N_PADS; k++) {
		for (where = 1; where <= 3; where++) {
			text = trim_file_text(k, where);
			path = write_tmp_props(&dir, text);
			TU_OK(wks_load_properties_file(path));
			if ((bad = trim_mismatch(NULL)) != 0)
				fail_msg("file pad %zu/%d: %s in\n%s", k, where,
				         g_trim[bad - 1].name, text);
			wks__props_reset_process();
			tu_rmtree(dir);
			free(dir);
			free(path);
			free(text);
		}
	}
	assert_int_equal(g_warns.count, 0);

	/* Values of names libwks does not use are trimmed too (what
	 * Security.getProperty() would return); inner spaces stay. */
	TU_OK(wks_set_property("jdk.tls.disabledAlgorithms", " \tSSLv3, RC4\r\n"));
	TU_OK(wks_get_property(buf, sizeof(buf), NULL, "jdk.tls.disabledAlgorithms"));
	assert_string_equal(buf, "SSLv3, RC4");
	/* A warning shows the trimmed value. */
	TU_OK(wks_set_property("wolfjce.wks.iterationCount", " 5000\t"));
	assert_string_equal(g_warns.last, "wolfjce.wks.iterationCount=\"5000\" "
	                    "is below 10000; using 210000");
	wks_store_free(st);
	wks__props_free(p);
}

/* ---- $WKS_PROPERTIES (in a fresh process: it is read once) ----------------- */

static char g_self[4096];

/* Run this program again with argv[1] = mode and WKS_PROPERTIES = value;
 * returns its exit status. */
static int run_child(const char *mode, const char *env_value)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("WKS_PROPERTIES", env_value, 1);
		execl(g_self, g_self, mode, (char *)NULL);
		_exit(127);
	}
	assert_true(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Child: the file named by $WKS_PROPERTIES applies at first use and is
 * not read again. */
static int child_env_good(void)
{
	const char *path = getenv("WKS_PROPERTIES");
	wks_settings s;
	FILE *f;

	wks_set_warning_handler(on_warning, &g_warns);
	wks__settings_get(&s, NULL);
	if (s.iteration_count != 33333 || s.max_chain != 100)
		return 1;
	if (g_warns.count != 1 || !strstr(g_warns.last, "maxCertChainLength"))
		return 2;
	/* Changing the file now has no effect: it was read once. */
	if (!(f = fopen(path, "w")))
		return 3;
	fputs("wolfjce.wks.iterationCount=44444\n", f);
	fclose(f);
	wks__settings_get(&s, NULL);
	if (s.iteration_count != 33333)
		return 4;
	/* API values still beat the file. */
	if (wks_set_property("wolfjce.wks.iterationCount", "55555") != WKS_OK)
		return 5;
	wks__settings_get(&s, NULL);
	if (s.iteration_count != 55555)
		return 6;
	/* An explicit load overrides the $WKS_PROPERTIES values. */
	if (wks_load_properties_file(path) != WKS_OK)
		return 7;
	wks_set_property("wolfjce.wks.iterationCount", NULL);
	wks__settings_get(&s, NULL);
	if (s.iteration_count != 44444)
		return 8;
	return 0;
}

/* Child: an unreadable $WKS_PROPERTIES is a warning, not a failure. */
static int child_env_bad(void)
{
	wks_settings s;
	wks_store *st = NULL;

	wks_set_warning_handler(on_warning, &g_warns);
	if (wks_store_new(&st) != WKS_OK)
		return 1;
	wks__settings_get(&s, NULL);
	if (s.iteration_count != 210000)
		return 2;
	if (g_warns.count != 1 || !strstr(g_warns.last, "WKS_PROPERTIES") ||
	    !strstr(g_warns.last, "/nonexistent/wks.properties"))
		return 3;
	/* No failure leaked into the caller's error detail. */
	if (wks_error_detail()[0] != '\0')
		return 4;
	wks_store_free(st);
	return 0;
}

/* Child: with WKS_PROPERTIES empty nothing is read and nothing warns. */
static int child_env_empty(void)
{
	wks_settings s;

	wks_set_warning_handler(on_warning, &g_warns);
	wks__settings_get(&s, NULL);
	return s.iteration_count == 210000 && g_warns.count == 0 ? 0 : 1;
}

/* Child: every g_trim property, padded in the $WKS_PROPERTIES file, is in
 * force trimmed, silently. */
static int child_env_trim(void)
{
	wks_settings s;
	size_t bad;

	wks_set_warning_handler(on_warning, &g_warns);
	wks__settings_get(&s, NULL);
	if (s.iteration_count != 15000)
		return 1;
	if ((bad = trim_mismatch(NULL)) != 0)
		return (int)(10 + bad);
	return g_warns.count == 0 ? 0 : 2;
}

/* Child (--child-env-expect N S): wolfjce.wks.iterationCount is N in
 * force (else 41), and the kernel's AT_SECURE flag is S (else 43: the
 * capability test must know that the program really ran with its file
 * capability). */
static int child_env_expect(const char *want, const char *secure)
{
	wks_settings s;
	unsigned long sec = 0;

#if defined(__linux__) && defined(AT_SECURE)
	sec = getauxval(AT_SECURE);
#endif
	wks__settings_get(&s, NULL);
	printf("iterationCount=%d AT_SECURE=%lu uid=%ld euid=%ld\n",
	       (int)s.iteration_count, sec, (long)getuid(), (long)geteuid());
	if (sec != strtoul(secure, NULL, 10))
		return 43;
	return s.iteration_count == atoi(want) ? 0 : 41;
}

static void test_config__env_trim(void **state)
{
	char *dir, *path, *text;
	size_t k;
	int where, rc;

	(void)state;
	for (k = 0; k < N_PADS; k++) {
		for (where = 1; where <= 3; where++) {
			text = trim_file_text(k, where);
			path = write_tmp_props(&dir, text);
			rc = run_child("--child-env-trim", path);
			if (rc != 0)
				fail_msg("child-env-trim, pad %zu/%d: step %d\n%s", k,
				         where, rc, text);
			tu_rmtree(dir);
			free(dir);
			free(path);
			free(text);
		}
	}
}

/*
 * $WKS_PROPERTIES is ignored in programs that run with file capabilities
 * (issue 12 item 9): this program, copied and given cap_ipc_lock+ep (what
 * a daemon adds so that the KEK cache can lock memory), run as nobody.
 * Without the capability the same copy, same user, honours it.  Needs
 * root (to setcap and to become nobody) and a file system with
 * capability xattrs; skipped otherwise.
 */
static void test_config__env_ignored_with_capabilities(void **state)
{
	static const char *const where[] = { NULL, WKS_BINARY_DIR };
	char *dir = NULL, *bin = NULL, *props = NULL, *q_bin, *q_props;
	const char *run_as = "setpriv --reuid=nobody --regid=nogroup "
	                     "--clear-groups";
	size_t w;
	int rc = -1;

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIP: needs root (setcap, setpriv)\n");
		skip();
	}
	if (tu_system("command -v setcap >/dev/null && "
	              "command -v setpriv >/dev/null") != 0) {
		print_message("SKIP: setcap or setpriv missing "
		              "(scripts/deps.sh test installs libcap2-bin)\n");
		skip();
	}
	/* A folder nobody can enter, in /tmp, else in the build folder. */
	for (w = 0; w < 2 && rc != 0; w++) {
		if (dir) {
			tu_rmtree(dir);
			free(dir);
			free(bin);
			free(props);
		}
		if (where[w]) {
			dir = malloc(strlen(where[w]) + 32);
			assert_non_null(dir);
			sprintf(dir, "%s/capXXXXXX", where[w]);
			assert_non_null(mkdtemp(dir));
		} else {
			dir = tu_tmpdir();
		}
		assert_int_equal(chmod(dir, 0755), 0);
		bin = malloc(strlen(dir) + 32);
		props = malloc(strlen(dir) + 32);
		assert_true(bin && props);
		sprintf(bin, "%s/test_config_cap", dir);
		sprintf(props, "%s/wks.properties", dir);
		tu_write_file(props, (const uint8_t *)
		              "wolfjce.wks.iterationCount=33333\n", 33);
		assert_int_equal(chmod(props, 0644), 0);
		q_bin = tu_shell_quote(bin);
		assert_int_equal(tu_system("cp %s %s && chmod 0755 %s", g_self, q_bin,
		                           q_bin), 0);
		q_props = tu_shell_quote(props);
		/* Without a capability: honoured. */
		rc = tu_system("WKS_PROPERTIES=%s %s %s --child-env-expect 33333 0",
		               q_props, run_as, q_bin);
		if (rc == 41)
			fail_msg("WKS_PROPERTIES was not honoured in an ordinary "
			         "program");
		if (rc == 0)
			rc = tu_system("setcap cap_ipc_lock+ep %s 2>/dev/null", q_bin);
		if (rc == 0) /* with it: ignored, the default applies */
			rc = tu_system("WKS_PROPERTIES=%s %s %s --child-env-expect "
			               "210000 1", q_props, run_as, q_bin);
		if (rc == 41)
			fail_msg("WKS_PROPERTIES was honoured in a program with "
			         "file capabilities");
		free(q_bin);
		free(q_props);
	}
	tu_rmtree(dir);
	free(dir);
	free(bin);
	free(props);
	if (rc != 0) {
		print_message("SKIP: cannot run a capability program as nobody "
		              "here (status %d)\n", rc);
		skip();
	}
}

static void test_config__env_file(void **state)
{
	char *dir, *path;
	int rc;

	(void)state;
	path = write_tmp_props(&dir, "wolfjce.wks.iterationCount=33333\n"
	                             "wolfjce.wks.maxCertChainLength=-1\n");
	rc = run_child("--child-env-good", path);
	if (rc != 0)
		fail_msg("child-env-good failed at step %d", rc);
	rc = run_child("--child-env-bad", "/nonexistent/wks.properties");
	if (rc != 0)
		fail_msg("child-env-bad failed at step %d", rc);
	rc = run_child("--child-env-empty", "");
	if (rc != 0)
		fail_msg("child-env-empty failed at step %d", rc);
	tu_rmtree(dir);
	free(dir);
	free(path);
}

/* ---- the parser ------------------------------------------------------------ */

typedef struct {
	char out[4096];
	int n;
} pairs;

static int collect(const char *name, const char *value, void *ctx)
{
	pairs *p = ctx;
	size_t len = strlen(p->out);

	snprintf(p->out + len, sizeof(p->out) - len, "[%s]=[%s]\n", name, value);
	p->n++;
	return WKS_OK;
}

/* Parse text (explicit length) and compare the "[k]=[v]\n" list. */
static void parses_n(const char *text, size_t len, const char *want)
{
	pairs p;

	memset(&p, 0, sizeof(p));
	TU_OK(wks__props_parse(text, len, collect, &p));
	if (strcmp(p.out, want) != 0)
		fail_msg("parsing \"%s\":\n got:\n%s want:\n%s", text, p.out, want);
}

static void parses(const char *text, const char *want)
{
	parses_n(text, strlen(text), want);
}

static void test_config__parse_basic(void **state)
{
	(void)state;
	parses("", "");
	parses("\n\n  \n\t\f\n", "");
	parses("# only\n! comments\n   # indented\n", "");
	parses("a=b", "[a]=[b]\n");
	parses("a:b\n", "[a]=[b]\n");
	parses("a b\n", "[a]=[b]\n");
	parses("a\tb\n", "[a]=[b]\n");
	parses("a\fb\n", "[a]=[b]\n");
	parses("   a = b  \n", "[a]=[b  ]\n"); /* trailing space kept */
	parses("a=\n", "[a]=[]\n");
	parses("a\n", "[a]=[]\n");
	parses("a   \n", "[a]=[]\n");
	parses("a==b\n", "[a]=[=b]\n");
	parses("a = = b\n", "[a]=[= b]\n");
	parses("a : b\n", "[a]=[b]\n");
	parses("a :=b\n", "[a]=[=b]\n");
	parses("=b\n", "[]=[b]\n");
	parses("a=b # not a comment\n", "[a]=[b # not a comment]\n");
	parses("a=b\nc=d\n", "[a]=[b]\n[c]=[d]\n");
	parses("a=1\r\nb=2\r\n", "[a]=[1]\n[b]=[2]\n");      /* CRLF */
	parses("a=1\rb=2\r", "[a]=[1]\n[b]=[2]\n");          /* CR */
	parses("a=1\n\r\n\rb=2", "[a]=[1]\n[b]=[2]\n");
	parses("a=1\nb=2", "[a]=[1]\n[b]=[2]\n");            /* no final EOL */
	parses("#c\na=1\n!c\nb=2\n", "[a]=[1]\n[b]=[2]\n");
	parses("a=b\na=c\n", "[a]=[b]\n[a]=[c]\n");          /* both reported */
}

static void test_config__parse_continuations(void **state)
{
	(void)state;
	parses("a=b\\\n   c\n", "[a]=[bc]\n");
	parses("a=b\\\r\n   c\r\n", "[a]=[bc]\n");
	parses("a=b\\\r  c\n", "[a]=[bc]\n");
	parses("a=x\\\n  y\\\n\tz\nq=1\n", "[a]=[xyz]\n[q]=[1]\n");
	parses("a=b \\\n c\n", "[a]=[b c]\n");
	/* An even number of backslashes does not continue. */
	parses("a=b\\\\\nc=d\n", "[a]=[b\\]\n[c]=[d]\n");
	parses("a=b\\\\\\\nc\n", "[a]=[b\\c]\n");
	/* A comment line never continues. */
	parses("# c \\\nx=y\n", "[x]=[y]\n");
	/* A continued line starting with '#' is data. */
	parses("a=b\\\n#c\n", "[a]=[b#c]\n");
	/* A blank continuation line ends the logical line. */
	parses("a=b\\\n\nc=d\n", "[a]=[b]\n[c]=[d]\n");
	parses("a=b\\\n   \nc=d\n", "[a]=[b]\n[c]=[d]\n");
	/* A backslash at the very end is dropped. */
	parses("a=b\\", "[a]=[b]\n");
	parses("a=b\\\n", "[a]=[b]\n");
	/* The key can span lines too. */
	parses("ke\\\n  y=v\n", "[key]=[v]\n");
	/* After a lone "\" line, a "#" starts a comment (as in Java). */
	parses("\\\n#c\na=1\n", "[a]=[1]\n");
}

static void test_config__parse_escapes(void **state)
{
	(void)state;
	parses("a=\\t\\n\\r\\f\\\\\n", "[a]=[\t\n\r\f\\]\n");
	parses("a=\\=\\:\\ \\#\\!\\q\\b\n", "[a]=[=: #!qb]\n");
	parses("k\\=ey=v\n", "[k=ey]=[v]\n");
	parses("k\\:ey:v\n", "[k:ey]=[v]\n");
	parses("k\\ ey v\n", "[k ey]=[v]\n");
	parses("k\\\\=v\n", "[k\\]=[v]\n");
	parses("a=\\ b\n", "[a]=[ b]\n"); /* escaped leading space kept */
	parses("a=\\u0041\\u0062c\n", "[a]=[Abc]\n");
	parses("a=\\u00e9\\u00E9\n", "[a]=[\xc3\xa9\xc3\xa9]\n");
	parses("a=\\u20AC\n", "[a]=[\xe2\x82\xac]\n");
	parses("a=\\uD83D\\uDE00\n", "[a]=[\xf0\x9f\x98\x80]\n"); /* pair */
	parses("a=\\uD800x\n", "[a]=[\xed\xa0\x80x]\n");          /* lone high */
	parses("a=\\uDC00\n", "[a]=[\xed\xb0\x80]\n");            /* lone low */
	parses("a=\\uD800\\u0041\n", "[a]=[\xed\xa0\x80" "A]\n");
	parses("a=\\u0000\n", "[a]=[\xc0\x80]\n");
	parses("\\u0061=\\u003d\n", "[a]=[=]\n");
	parses("a=\\U0041\n", "[a]=[U0041]\n");
	parses("a=\xc3\xa9t\xc3\xa9\n", "[a]=[\xc3\xa9t\xc3\xa9]\n"); /* UTF-8 kept */
	parses_n("a=x\0y\n", 6, "[a]=[x\xc0\x80y]\n");              /* raw NUL */
}

static void bad_parse(const char *text, const char *line)
{
	pairs p;

	memset(&p, 0, sizeof(p));
	TU_EXPECT(WKS_ERR_FORMAT, wks__props_parse(text, strlen(text), collect, &p));
	if (!strstr(wks_error_detail(), line))
		fail_msg("\"%s\": detail \"%s\" lacks \"%s\"", text,
		         wks_error_detail(), line);
}

static int stop_at_second(const char *name, const char *value, void *ctx)
{
	int *n = ctx;

	(void)name;
	(void)value;
	return ++*n == 2 ? wks__err(WKS_ERR_NOMEM, "stop") : WKS_OK;
}

static void test_config__parse_errors(void **state)
{
	int n = 0;

	(void)state;
	bad_parse("a=\\u12G4\n", "line 1");
	bad_parse("a=\\u12", "line 1");
	bad_parse("a=\\u", "line 1");
	bad_parse("\\uXYZW=1\n", "line 1");
	bad_parse("x=1\n\ny=\\u12\n", "line 3");
	bad_parse("x=1\r\n\r\ny=\\uq\r\n", "line 3");
	bad_parse("x=1\r\ry=\\uq\r", "line 3");
	bad_parse("# \\uZZZZ\na=\\\n b\nc=\\uZZZZ\n", "line 4");
	/* The line where the logical line starts. */
	bad_parse("a=\\\n \\uZZZZ\n", "line 1");
	/* Lines are joined before escapes are read (as in Java). */
	parses("a=\\u00\\\n  41\n", "[a]=[A]\n");
	/* A comment line may hold anything. */
	parses("# \\uZZZZ\n", "");
	/* The callback's error stops the parse. */
	TU_EXPECT(WKS_ERR_NOMEM, wks__props_parse("a=1\nb=2\nc=3\n", 12,
	                                          stop_at_second, &n));
	assert_int_equal(n, 2);
	TU_EXPECT(WKS_ERR_INVALID, wks__props_parse(NULL, 3, collect, &n));
	TU_OK(wks__props_parse(NULL, 0, collect, &n));
}

static int count_only(const char *name, const char *value, void *ctx)
{
	(void)ctx;
	/* Touch every byte (ASan checks the bounds). */
	return strlen(name) + strlen(value) < SIZE_MAX ? WKS_OK : WKS_ERR_FORMAT;
}

/* Random inputs over the alphabet that matters: never a crash, only OK or
 * FORMAT. */
static void test_config__parse_random(void **state)
{
	static const char alpha[] = "ab=: \t\f\\\r\n#!u0DdE8xG\x00\xc3\xa9";
	char text[96];
	unsigned long seed = 12345;
	int i, rc;
	size_t j, len;

	(void)state;
	for (i = 0; i < 200000; i++) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		len = (seed >> 33) % sizeof(text);
		for (j = 0; j < len; j++) {
			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			text[j] = alpha[(seed >> 33) % (sizeof(alpha) - 1)];
		}
		rc = wks__props_parse(text, len, count_only, NULL);
		if (rc != WKS_OK && rc != WKS_ERR_FORMAT)
			fail_msg("rc %d", rc);
	}
}

/* ---- concurrency (also run under TSan) ------------------------------------- */

typedef struct {
	wks_props *p;
	volatile int stop;
	int bad;
} race_ctx;

static void *reader(void *arg)
{
	race_ctx *c = arg;
	wks_settings s;
	long n = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE) || n < 1000) {
		wks__settings_get(&s, (n & 1) ? c->p : NULL);
		/* Every value seen is one that was set (or the default). */
		if (s.iteration_count != 210000 &&
		    (s.iteration_count < 20000 || s.iteration_count > 20100))
			__atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
		if (s.max_chain != 100 && s.max_chain != 7)
			__atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
		n++;
	}
	return NULL;
}

static void test_config__concurrent(void **state)
{
	race_ctx c = { props_new(), 0, 0 };
	pthread_t t[4];
	char v[16];
	wks_settings s;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, &c), 0);
	for (i = 0; i <= 100; i++) {
		snprintf(v, sizeof(v), "%d", 20000 + i);
		TU_OK(wks_set_property("wolfjce.wks.iterationCount", v));
		TU_OK(wks__props_set(c.p, "wolfjce.wks.maxCertChainLength",
		                     (i & 1) ? "7" : NULL));
		if (i % 10 == 5)
			wks_set_property("wolfjce.wks.iterationCount", NULL);
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(c.bad, 0);
	/* The last change is visible to everyone. */
	wks__settings_get(&s, c.p);
	assert_int_equal(s.iteration_count, 20100);
	assert_int_equal(s.max_chain, 100);
	wks__settings_get(&s, NULL);
	assert_int_equal(s.iteration_count, 20100);
	wks__props_free(c.p);
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_config__defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__iteration_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__max_chain_and_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__booleans, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__ttl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__libwks_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__warnings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__resolution_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__store_api, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__get_property, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__load_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__load_file_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__env_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__trim_every_property, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__env_trim, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config__env_ignored_with_capabilities, setup, teardown),
		cmocka_unit_test(test_config__parse_basic),
		cmocka_unit_test(test_config__parse_continuations),
		cmocka_unit_test(test_config__parse_escapes),
		cmocka_unit_test(test_config__parse_errors),
		cmocka_unit_test(test_config__parse_random),
		cmocka_unit_test_setup_teardown(test_config__concurrent, setup, teardown),
	};
	ssize_t n;

	if (argc == 2 && strncmp(argv[1], "--child-", 8) == 0) {
		if (strcmp(argv[1], "--child-env-good") == 0)
			return child_env_good();
		if (strcmp(argv[1], "--child-env-bad") == 0)
			return child_env_bad();
		if (strcmp(argv[1], "--child-env-empty") == 0)
			return child_env_empty();
		if (strcmp(argv[1], "--child-env-trim") == 0)
			return child_env_trim();
		return 99;
	}
	if (argc == 4 && strcmp(argv[1], "--child-env-expect") == 0) {
		/* _exit: no exit-time leak check (LeakSanitizer cannot
		 * ptrace a process that is not dumpable, as AT_SECURE ones
		 * are not). */
		n = child_env_expect(argv[2], argv[3]);
		fflush(stdout);
		_exit((int)n);
	}
	n = readlink("/proc/self/exe", g_self, sizeof(g_self) - 1);
	if (n <= 0)
		snprintf(g_self, sizeof(g_self), "%s", argv[0]);
	else
		g_self[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
