/*
 * fuzz_convert: wks_convert_read() (include/wks/convert.h), the library's
 * reading of foreign keystores into a store: JKS, JCEKS (src/convert/jks.c),
 * BKS, BCFKS (bks.c, bcfks.c) and PKCS#12 (src/convert/p12read.c).
 *
 * The first input byte picks the mode, the rest is the file:
 *   bit 0  0: no password (JKS/JCEKS: the digest is skipped; PKCS#12: the
 *          empty password), 1: FUZZ_PW
 *   bit 1  WKS_CONVERT_NO_MAC_OK (PKCS#12 without a MAC)
 * Keys that the password does not open are offered FUZZ_PW once more
 * through the password callback.
 *
 * Checked: the result is success or a clean rejection (FORMAT, LIMIT,
 * INVALID, UNSUPPORTED, INTEGRITY); a report always comes back; on
 * success every entry the report counts as done is in the (fresh) store,
 * and every skipped entry has an alias and a negative reason.
 * Seeds: the PKCS#12 seeds of fuzz_import (same mode byte) and some of
 * fuzz_jks's (mode 0), merged after a first run (docs/FUZZING.md); a BKS
 * and a BCFKS of fuzz_bks's and fuzz_bcfks's (mode 1).
 */
#include "fuzz_common.h"

#include "wks/convert.h"

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

int FUZZ_INIT(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_settings();
	return 0;
}

static int convert_pw(void *arg, const char *alias, unsigned attempt,
		      char *buf, size_t size, size_t *len)
{
	(void)arg;
	FUZZ_CHECK(alias != NULL, "callback without an alias");
	if (attempt > 1 || size < FUZZ_PW_LEN)
		return 1;
	memcpy(buf, FUZZ_PW, FUZZ_PW_LEN);
	*len = FUZZ_PW_LEN;
	return 0;
}

static int convert_clean(int rc)
{
	return rc == WKS_ERR_FORMAT || rc == WKS_ERR_LIMIT ||
	       rc == WKS_ERR_INVALID || rc == WKS_ERR_UNSUPPORTED ||
	       rc == WKS_ERR_INTEGRITY;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	wks_store *st = NULL;
	wks_convert_report *r = NULL;
	unsigned mode;
	int rc;

	if (size < 1)
		return 0;
	mode = data[0];
	FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "store_new");
	rc = wks_convert_read(st, data + 1, size - 1,
			      (mode & 1) ? FUZZ_PW : NULL,
			      (mode & 1) ? FUZZ_PW_LEN : 0,
			      (mode & 2) ? WKS_CONVERT_NO_MAC_OK : 0,
			      convert_pw, NULL, &r);
	FUZZ_CHECK(rc == WKS_OK || convert_clean(rc), "convert_read: %d", rc);
	FUZZ_CHECK(r != NULL, "no report");
	if (rc == WKS_OK)
		FUZZ_CHECK(wks_convert_report_done(r) == wks_store_size(st),
			   "done %zu, store %zu", wks_convert_report_done(r),
			   wks_store_size(st));
	for (size_t i = 0; i < wks_convert_report_skipped(r); i++)
		FUZZ_CHECK(wks_convert_report_alias(r, i) &&
			   wks_convert_report_detail(r, i) &&
			   wks_convert_report_reason(r, i) < 0,
			   "skip %zu", i);
	wks_convert_report_free(r);
	wks_store_free(st);
	return 0;
}
