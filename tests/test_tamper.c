/*
 * Tamper: change every byte of a small store in turn (two XOR values) and
 * load it.  With the password the load must fail every time (integrity,
 * malformed or limit), never succeed and never crash, and leave the store
 * as it was.  Without the password a load may succeed (the store MAC is not
 * checked), but then no key may come out different: each key is either
 * exactly the original or refused by its entry MAC.  Every truncation and
 * an appended byte fail as malformed.
 *
 * The store and its entry use 10000 iterations, so each load costs one
 * PBKDF2 (the store MAC, checked once per load) and each get_key one.
 *
 * Environment: WKS_TAMPER_STRIDE=n: every byte of the header (12 bytes:
 * the malformed cases asserted), every n-th byte after it (from a fixed
 * offset); default 4, 1 (every byte) in full mode, WKS_TEST_FULL=1
 * (tests/run.sh --help); CI's valgrind stage sets 64.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PW "wolfsslpassword"
#define PWL (sizeof(PW) - 1)

static const uint8_t g_key[32] = {
	0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d,
	0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3,
	0x09, 0x14, 0xdf, 0xf4
};

typedef struct {
	unsigned integrity, format, limit;         /* with the password */
	unsigned np_loaded, np_failed;             /* without */
	unsigned keys_ok, keys_refused, keys_gone; /* keys after a password-less load */
	size_t images;                             /* modified images loaded */
} stats;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The store a failed load must leave alone: the original, loaded. */
static void check_unchanged(wks_store *st, int64_t ct0, const char *what, size_t i)
{
	int64_t ct = 0;

	if (wks_store_size(st) != 1 || wks_store_contains(st, "k") != 1 ||
	    wks_store_entry_type(st, "k") != WKS_ENTRY_SECRET_KEY ||
	    wks_store_creation_time(&ct, st, "k") != WKS_OK || ct != ct0)
		fail_msg("%s at byte %zu: the store changed after a failed load", what, i);
}

/* After a password-less load of a modified image: every key entry yields
 * the original key or WKS_ERR_INTEGRITY (or LIMIT for a raised count). */
static void check_keys(wks_store *st, stats *s, size_t i, uint8_t x)
{
	char **a = NULL;
	size_t n = 0, j;

	TU_OK(wks_store_aliases(&a, &n, st));
	if (n == 0)
		s->keys_gone++;
	for (j = 0; j < n; j++) {
		wks_key *k = NULL;
		int r;

		if (wks_store_entry_type(st, a[j]) != WKS_ENTRY_SECRET_KEY) {
			/* a changed type id cannot parse as another kind */
			fail_msg("byte %zu ^ %02x: entry \"%s\" became type %d", i, x, a[j],
			         wks_store_entry_type(st, a[j]));
		}
		r = wks_store_get_key(&k, st, a[j], PW, PWL);
		if (r == WKS_OK) {
			size_t len = 0;
			const uint8_t *d = wks_key_data(k, &len);

			if (len != sizeof(g_key) || memcmp(d, g_key, len) != 0 ||
			    strcmp(wks_key_algorithm(k), "AES") != 0)
				fail_msg("byte %zu ^ %02x: get_key returned a modified key", i, x);
			s->keys_ok++;
		} else if (r == WKS_ERR_INTEGRITY || r == WKS_ERR_LIMIT) {
			assert_null(k);
			s->keys_refused++;
		} else {
			fail_msg("byte %zu ^ %02x: get_key: %d (%s)", i, x, r, wks_error_detail());
		}
		wks_key_free(k);
	}
	wks_aliases_free(a);
}

static size_t g_stride = 1;

static void sweep(const uint8_t *good, size_t len, uint8_t x, stats *s)
{
	wks_store *st = tu_store_fast(), *np = tu_store_fast();
	uint8_t *img = malloc(len);
	int64_t ct0 = 0;
	size_t i;

	assert_non_null(img);
	TU_OK(wks_store_load_buffer(st, good, len, PW, PWL));
	TU_OK(wks_store_creation_time(&ct0, st, "k"));
	for (i = 0; i < len; i++) {
		int r;

		/* The header (12 bytes) always. */
		if (g_stride > 1 && i >= 12 && i % g_stride != 1)
			continue;
		s->images++;
		memcpy(img, good, len);
		img[i] ^= x;
		r = wks_store_load_buffer(st, img, len, PW, PWL);
		switch (r) {
		case WKS_ERR_INTEGRITY:
			s->integrity++;
			break;
		case WKS_ERR_FORMAT:
			s->format++;
			break;
		case WKS_ERR_LIMIT:
			s->limit++;
			break;
		default:
			fail_msg("byte %zu ^ %02x: load with the password returned %d (%s)", i, x,
			         r, wks_error_detail());
		}
		check_unchanged(st, ct0, "with password", i);

		r = wks_store_load_buffer(np, img, len, NULL, 0);
		if (r == WKS_OK) {
			s->np_loaded++;
			check_keys(np, s, i, x);
		} else if (r == WKS_ERR_FORMAT || r == WKS_ERR_LIMIT) {
			s->np_failed++;
		} else {
			fail_msg("byte %zu ^ %02x: load without password returned %d (%s)", i, x,
			         r, wks_error_detail());
		}
	}
	free(img);
	wks_store_free(np);
	wks_store_free(st);
}

static void make_store(uint8_t **out, size_t *len)
{
	wks_store *st = tu_store_fast();

	TU_OK(wks_store_set_secret_key(st, "k", "AES", g_key, sizeof(g_key), PW, PWL));
	TU_OK(wks_store_save_buffer(st, out, len, PW, PWL));
	wks_store_free(st);
}

static void test_every_byte(void **state)
{
	uint8_t *good;
	size_t len;
	stats s;
	double t0 = now_s();
	static const uint8_t xors[2] = { 0x01, 0xA5 };
	size_t k;

	(void)state;
	memset(&s, 0, sizeof(s));
	make_store(&good, &len);
	assert_true(len > 250 && len < 400);
	for (k = 0; k < 2; k++)
		sweep(good, len, xors[k], &s);
	print_message("tamper: %zu-byte store, %zu modified images (stride %zu): "
	              "with password %u "
	              "integrity, %u malformed, %u limit; without password %u loaded "
	              "(keys: %u original, %u refused, %u stores without the alias), "
	              "%u failed; %.1f s\n",
	              len, s.images, g_stride, s.integrity, s.format, s.limit, s.np_loaded, s.keys_ok,
	              s.keys_refused, s.keys_gone, s.np_failed, now_s() - t0);
	assert_int_equal(s.integrity + s.format + s.limit, s.images);
	if (g_stride == 1)
		assert_int_equal(s.images, 2 * len);
	/* the MAC-covered body bytes and the store MAC itself give integrity
	 * failures; the length fields malformed ones */
	assert_true(s.integrity > 0 && s.format > 0);
	wks_free(good);
}

static void test_truncations(void **state)
{
	uint8_t *good, *longer;
	size_t len, i;
	wks_store *st = tu_store_fast();

	(void)state;
	make_store(&good, &len);
	for (i = 0; i < len; i++) {
		int r1 = wks_store_load_buffer(st, good, i, PW, PWL);
		int r2 = wks_store_load_buffer(st, good, i, NULL, 0);

		if (r1 != WKS_ERR_FORMAT || r2 != WKS_ERR_FORMAT)
			fail_msg("truncated to %zu bytes: %d / %d, want malformed", i, r1, r2);
		assert_int_equal(wks_store_size(st), 0);
	}
	longer = malloc(len + 1);
	assert_non_null(longer);
	memcpy(longer, good, len);
	for (i = 0; i < 256; i += 51) {
		longer[len] = (uint8_t)i;
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(st, longer, len + 1, PW, PWL));
		TU_EXPECT(WKS_ERR_FORMAT, wks_store_load_buffer(st, longer, len + 1, NULL, 0));
	}
	TU_OK(wks_store_load_buffer(st, good, len, PW, PWL));
	assert_int_equal(wks_store_size(st), 1);
	free(longer);
	wks_free(good);
	wks_store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_byte),
		cmocka_unit_test(test_truncations),
	};

	g_stride = tu_env_count("WKS_TAMPER_STRIDE", 4, 1);
	if (g_stride == 0)
		g_stride = 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
