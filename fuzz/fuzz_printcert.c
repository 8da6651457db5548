/*
 * fuzz_printcert: `wks printcert` and the certificate input of `wks
 * import-cert` (CA replies): cli_parse_certs_p7() (cli/shared/certfile.c: PEM
 * with CERTIFICATE / TRUSTED CERTIFICATE / PKCS7 blocks, DER PKCS#7, DER
 * certificates back to back) on the input, then cli_print_certs()
 * (cli/cmd/cmd_printcert.c) on what it parsed: every field and extension
 * keytool -printcert shows, decoded from hostile certificates.
 *
 * Checks: a failure is a clean one (malformed or a limit), a success has
 * at least one certificate, and the printed text holds no control
 * character but newline and tab (everything taken from the file is
 * escaped, so a certificate cannot send escape sequences to a terminal).
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

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	STACK_OF(X509) *certs = sk_X509_new_null();
	char *text = NULL;
	size_t text_len = 0;
	FILE *out;
	int rc;

	FUZZ_CHECK(certs != NULL, "sk_X509_new_null");
	rc = cli_parse_certs_p7(certs, data, size, "in");
	FUZZ_CHECK(rc == 0 || rc == CLI_EXIT_MALFORMED || rc == CLI_EXIT_LIMIT,
	           "cli_parse_certs_p7: %d", rc);
	if (rc == 0) {
		FUZZ_CHECK(sk_X509_num(certs) > 0, "success without certificates");
		out = open_memstream(&text, &text_len);
		FUZZ_CHECK(out != NULL, "open_memstream");
		cli_print_certs(out, certs, out);
		FUZZ_CHECK(fclose(out) == 0, "fclose");
		for (size_t i = 0; i < text_len; i++) {
			unsigned char ch = (unsigned char)text[i];

			FUZZ_CHECK(ch >= 0x20 || ch == '\n' || ch == '\t',
			           "control character 0x%02x at %zu in the "
			           "printed text", ch, i);
			FUZZ_CHECK(ch != 0x7f, "DEL at %zu in the printed text",
			           i);
		}
		free(text);
	}
	sk_X509_pop_free(certs, X509_free);
	ERR_clear_error();
	return 0;
}
