/*
 * The verbs and options of wks(1) that the wolfCrypt build lacks: each
 * says in one line that it needs the OpenSSL build and exits with the
 * status of an unsupported request (CLI_EXIT_INVALID).  What they need
 * is OpenSSL itself (making keys and certificates, printing them, the
 * provider's key references) or wks/convert.h (Java keystores, PKCS#12),
 * which libwks builds only on OpenSSL (docs/BACKENDS.md).
 */
#include "cli.h"

#define NEEDS_OPENSSL(fn, what)                                             \
	int fn(cli_ctx *c)                                                  \
	{                                                                   \
		(void)c;                                                    \
		return cli_needs_openssl(what);                             \
	}

NEEDS_OPENSSL(cmd_import_key, "import-key")
NEEDS_OPENSSL(cmd_import_cert, "import-cert")
NEEDS_OPENSSL(cmd_import_p12, "import-p12")
NEEDS_OPENSSL(cmd_export_p12, "export-p12")
NEEDS_OPENSSL(cmd_convert, "convert")
NEEDS_OPENSSL(cmd_import_keystore, "import-keystore")
NEEDS_OPENSSL(cmd_import_certs, "import-certs")
NEEDS_OPENSSL(cmd_genkeypair, "genkeypair")
NEEDS_OPENSSL(cmd_certreq, "certreq")
NEEDS_OPENSSL(cmd_printcert, "printcert")
NEEDS_OPENSSL(cmd_check_reference, "check-reference")
NEEDS_OPENSSL(cli_export_reference, "export-key --reference")

int cli_ext_add(cli_ctx *c, const char *value)
{
	(void)c;
	(void)value;
	return cli_needs_openssl("--ext");
}
