/*
 * fuzz_certs: `wks import-certs` on hostile CA bundles (cli/shared/certbundle.c):
 * cli_cert_list_read_buffer() on the input (PEM with CERTIFICATE /
 * TRUSTED CERTIFICATE / PKCS7 blocks, a DER PKCS#7, DER certificates back
 * to back), then what the import does with the result: the certificates
 * already in the store marked, aliases made from hostile subject names
 * (UTF-8 letters kept, everything else normalised, deduplicated), each
 * certificate put in a store.
 *
 * The first input byte is flags, the rest is the file:
 *   bit 0  read it as one file of a folder (no certificate: a note)
 *   bit 1  the store already holds the first certificate (under the alias
 *          the import would give it), so that it is counted as present
 *          and the alias clash is resolved with -2
 *
 * Checks: a failure is a clean one (malformed or a limit); a success from
 * a single file has at least one certificate; imported + present is the
 * number of distinct certificates; every alias is new, unique, holds no
 * control character, space or uppercase ASCII letter after the prefix,
 * and is at most 64 bytes plus prefix and suffix.
 *
 * The CLI prints its messages on stderr: they are sent to /dev/null (set
 * FUZZ_VERBOSE=1 to see them).
 */
#define _GNU_SOURCE 1
#include "fuzz_common.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include "cli.h"

int FUZZ_INIT(int *argc, char ***argv);
int FUZZ_ENTRY(const uint8_t *data, size_t size);

#define CERTS_PREFIX "p:"

int FUZZ_INIT(int *argc, char ***argv)
{
	FILE *null;

	(void)argc;
	(void)argv;
	fuzz_settings();
	if (!getenv("FUZZ_VERBOSE") && (null = fopen("/dev/null", "w")) != NULL)
		stderr = null;
	return 0;
}

static void check_alias(const char *a)
{
	size_t n = strlen(a), p = strlen(CERTS_PREFIX);

	FUZZ_CHECK(n > p && !strncmp(a, CERTS_PREFIX, p), "alias prefix");
	FUZZ_CHECK(n <= p + 64 + 12, "alias of %zu bytes", n);
	for (size_t i = p; i < n; i++) {
		unsigned char ch = (unsigned char)a[i];

		FUZZ_CHECK(ch > 0x20 && ch != 0x7f, "control character or "
			   "space 0x%02x in an alias", ch);
		FUZZ_CHECK(!(ch >= 'A' && ch <= 'Z'), "uppercase in an alias");
	}
	FUZZ_CHECK(a[p] != '-' && a[n - 1] != '-', "alias starts or ends "
		   "with '-'");
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	cli_cert_list l;
	wks_store *st = NULL;
	size_t present = 0, imported = 0, before;
	int rc, flags;

	if (size < 1)
		return 0;
	flags = data[0];
	memset(&l, 0, sizeof(l));
	rc = cli_cert_list_read_buffer(&l, data + 1, size - 1, "in",
				       flags & 1);
	FUZZ_CHECK(rc == 0 || rc == CLI_EXIT_MALFORMED || rc == CLI_EXIT_LIMIT,
	           "cli_cert_list_read_buffer: %d", rc);
	if (rc == 0) {
		FUZZ_CHECK((flags & 1) || l.n > 0, "success without "
			   "certificates");
		FUZZ_CHECK(wks_store_new(&st) == WKS_OK, "wks_store_new");
		if ((flags & 2) && l.n > 0) {
			/* The first certificate is in the store already. */
			int err = wks_store_set_cert(st, "x", l.v[0].x);

			FUZZ_CHECK(err == WKS_OK || err == WKS_ERR_FORMAT ||
				   err == WKS_ERR_LIMIT, "set_cert: %d", err);
		}
		before = wks_store_size(st);
		rc = cli_cert_list_mark_present(&l, st, "s", &present);
		FUZZ_CHECK(rc == 0, "mark_present: %d", rc);
		FUZZ_CHECK(present <= before, "%zu present of %zu", present,
			   before);
		rc = cli_cert_list_store(&l, st, CERTS_PREFIX, 0, "in",
					 &imported);
		/* The library may refuse a certificate (its own checks). */
		FUZZ_CHECK(rc == 0 || rc == CLI_EXIT_MALFORMED ||
			   rc == CLI_EXIT_LIMIT || rc == CLI_EXIT_INVALID,
			   "cli_cert_list_store: %d", rc);
		if (rc == 0) {
			FUZZ_CHECK(imported + present == l.n, "%zu + %zu != %zu",
				   imported, present, l.n);
			FUZZ_CHECK(wks_store_size(st) == before + imported,
				   "an alias was given twice");
			for (size_t i = 0; i < l.n; i++)
				if (l.v[i].alias)
					check_alias(l.v[i].alias);
		}
		wks_store_free(st);
	}
	cli_cert_list_free(&l);
	ERR_clear_error();
	return 0;
}
