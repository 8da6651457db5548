/*
 * A file that is not WKS, given to wks_store_load_buffer(): the error
 * detail names the magic number in hex and, for the keystores people
 * mistake for WKS (Java's JKS and JCEKS, PKCS#12), what the file is.
 */
#include "testutil.h"

#include <string.h>

static void load_fails_with(const uint8_t *data, size_t len,
			    const char *detail)
{
	wks_store *st = NULL;
	int err;

	assert_int_equal(wks_store_new(&st), WKS_OK);
	err = wks_store_load_buffer(st, data, len, "password", 8);
	assert_int_equal(err, WKS_ERR_FORMAT);
	if (!strstr(wks_error_detail(), detail))
		fail_msg("detail \"%s\" lacks \"%s\"", wks_error_detail(),
			 detail);
	wks_store_free(st);
}

/* magic, version 2, no entries, and some bytes for a digest. */
static void header(uint8_t out[32], const uint8_t magic[4])
{
	memset(out, 0, 32);
	memcpy(out, magic, 4);
	out[7] = 2;
}

static void test_magic__jks(void **state)
{
	uint8_t d[32];

	(void)state;
	header(d, (const uint8_t *)"\xFE\xED\xFE\xED");
	load_fails_with(d, sizeof(d), "magic number 0xFEEDFEED: a JKS "
			"keystore, not WKS");
}

static void test_magic__jceks(void **state)
{
	uint8_t d[32];

	(void)state;
	header(d, (const uint8_t *)"\xCE\xCE\xCE\xCE");
	load_fails_with(d, sizeof(d), "magic number 0xCECECECE: a JCEKS "
			"keystore, not WKS");
}

static void test_magic__pkcs12(void **state)
{
	uint8_t d[32];

	(void)state;
	header(d, (const uint8_t *)"\x30\x82\x0A\x2B");
	load_fails_with(d, sizeof(d), "bad magic number 0x30820A2B: not a "
			"WKS keystore (a DER SEQUENCE: PKCS#12?)");
}

static void test_magic__other(void **state)
{
	uint8_t d[32];

	(void)state;
	header(d, (const uint8_t *)"\x89PNG");
	load_fails_with(d, sizeof(d), "bad magic number 0x89504E47: not a "
			"WKS keystore");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_magic__jks),
		cmocka_unit_test(test_magic__jceks),
		cmocka_unit_test(test_magic__pkcs12),
		cmocka_unit_test(test_magic__other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
