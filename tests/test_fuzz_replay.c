/*
 * The fuzz corpora and regression inputs (fuzz/corpus/<target>,
 * fuzz/regressions/<target>) replayed through the fuzz targets' own code,
 * in every ordinary build (gcc, ASan, valgrind): the targets are compiled
 * into this program with their entry points renamed.  A failed check in a
 * target aborts (FUZZ_CHECK), after the input's name was printed.
 *
 * fuzz_cacheblob feeds wks_store_cache_import() (src/store/cacheblob.c).
 * fuzz_jks, fuzz_bks, fuzz_bcfks and fuzz_convert test the library's
 * conversions (src/convert/,
 * one of the library sources compiled in).  fuzz_import (the CLI's input paths)
 * needs the CLI's sources and is
 * replayed by the fuzz build instead (fuzz/CMakeLists.txt, .ci/run).
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FUZZ_ENTRY fuzz_load_one
#define FUZZ_INIT fuzz_load_init
#include "../fuzz/fuzz_load.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

#define FUZZ_ENTRY fuzz_load_pw_one
#define FUZZ_INIT fuzz_load_pw_init
#include "../fuzz/fuzz_load_pw.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

#define FUZZ_ENTRY fuzz_getkey_one
#define FUZZ_INIT fuzz_getkey_init
#include "../fuzz/fuzz_getkey.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

#define FUZZ_ENTRY fuzz_props_one
#define FUZZ_INIT fuzz_props_init
#include "../fuzz/fuzz_props.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

#define FUZZ_ENTRY fuzz_jks_one
#define FUZZ_INIT fuzz_jks_init
#include "../fuzz/fuzz_jks.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

#define FUZZ_ENTRY fuzz_bks_one
#define FUZZ_INIT fuzz_bks_init
#include "../fuzz/fuzz_bks.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

#define FUZZ_ENTRY fuzz_bcfks_one
#define FUZZ_INIT fuzz_bcfks_init
#include "../fuzz/fuzz_bcfks.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

#define FUZZ_ENTRY fuzz_convert_one
#define FUZZ_INIT fuzz_convert_init
#include "../fuzz/fuzz_convert.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

#define FUZZ_ENTRY fuzz_cacheblob_one
#define FUZZ_INIT fuzz_cacheblob_init
#include "../fuzz/fuzz_cacheblob.c"
#undef FUZZ_ENTRY
#undef FUZZ_INIT

typedef int (*entry_fn)(const uint8_t *data, size_t size);

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every file of fuzz/<kind>/<target>; returns how many. */
static size_t replay_dir(const char *kind, const char *target, entry_fn fn)
{
	char dir[4096], path[8192];
	char *names[4096];
	struct dirent *de;
	struct stat sb;
	size_t n = 0, i, len;
	uint8_t *data;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/fuzz/%s/%s", WKS_SOURCE_DIR, kind, target);
	if (!(d = opendir(dir)))
		return 0; /* no regressions yet */
	while ((de = readdir(d)) != NULL && n < 4096) {
		if (de->d_name[0] == '.')
			continue;
		names[n] = strdup(de->d_name);
		assert_non_null(names[n]);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
			print_message("replay: %s/%s/%s\n", kind, target, names[i]);
			data = tu_read_file(path, &len);
			fn(data, len);
			free(data);
		}
		free(names[i]);
	}
	return n;
}

static void replay(const char *target, entry_fn fn)
{
	size_t a = replay_dir("corpus", target, fn);
	size_t b = replay_dir("regressions", target, fn);

	print_message("replay: %s: %zu corpus inputs, %zu regressions\n", target,
	              a, b);
	assert_true(a > 0);
}

static void test_fuzz_replay__load(void **state)
{
	(void)state;
	fuzz_load_init(NULL, NULL);
	replay("load", fuzz_load_one);
}

static void test_fuzz_replay__load_pw(void **state)
{
	(void)state;
	fuzz_load_pw_init(NULL, NULL);
	replay("load_pw", fuzz_load_pw_one);
}

static void test_fuzz_replay__getkey(void **state)
{
	(void)state;
	fuzz_getkey_init(NULL, NULL);
	replay("getkey", fuzz_getkey_one);
}

static void test_fuzz_replay__props(void **state)
{
	(void)state;
	fuzz_props_init(NULL, NULL);
	replay("props", fuzz_props_one);
}

static void test_fuzz_replay__jks(void **state)
{
	(void)state;
	fuzz_jks_init(NULL, NULL);
	replay("jks", fuzz_jks_one);
}

static void test_fuzz_replay__bks(void **state)
{
	(void)state;
	fuzz_bks_init(NULL, NULL);
	replay("bks", fuzz_bks_one);
}

static void test_fuzz_replay__bcfks(void **state)
{
	(void)state;
	fuzz_bcfks_init(NULL, NULL);
	replay("bcfks", fuzz_bcfks_one);
}

static void test_fuzz_replay__convert(void **state)
{
	(void)state;
	fuzz_convert_init(NULL, NULL);
	replay("convert", fuzz_convert_one);
}

static void test_fuzz_replay__cacheblob(void **state)
{
	(void)state;
	fuzz_cacheblob_init(NULL, NULL);
	replay("cacheblob", fuzz_cacheblob_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_replay__load),
		cmocka_unit_test(test_fuzz_replay__load_pw),
		cmocka_unit_test(test_fuzz_replay__getkey),
		cmocka_unit_test(test_fuzz_replay__props),
		cmocka_unit_test(test_fuzz_replay__jks),
		cmocka_unit_test(test_fuzz_replay__bks),
		cmocka_unit_test(test_fuzz_replay__bcfks),
		cmocka_unit_test(test_fuzz_replay__convert),
		cmocka_unit_test(test_fuzz_replay__cacheblob),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	/* The fuzz settings are process-wide; nothing else runs here. */
	wks__props_reset_process();
	return rc;
}
