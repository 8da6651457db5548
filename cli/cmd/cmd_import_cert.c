/*
 * wks import-cert: a trusted certificate; or, onto a private key entry, a
 * CA's reply that replaces the entry's chain (reply.c, keytool's rules).
 */
#include <stdio.h>
#include <stdlib.h>

#include <openssl/x509.h>

#include "cli.h"

int cmd_import_cert(cli_ctx *c)
{
	cli_edit e = CLI_EDIT_INIT;
	wks_store *st;
	STACK_OF(X509) *certs = NULL;
	uint8_t *der = NULL;
	size_t der_len = 0;
	char *other = NULL;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0 ||
	    (rc = cli_need(c->cert, "--cert")) != 0)
		return rc;
	if (!(certs = sk_X509_new_null())) {
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((rc = cli_load_certs_p7(certs, c->cert)) != 0) {
		if (rc == CLI_EXIT_MALFORMED)
			cli_keystore_note(c, c->cert);
		goto done;
	}
	if ((rc = cli_store_edit_begin_or_create(&e, c)) != 0)
		goto done;
	st = e.st;
	if (wks_store_entry_type(st, c->alias) == WKS_ENTRY_PRIVATE_KEY) {
		/* A CA reply for the key (keytool -importcert onto a key
		 * alias). */
		size_t n = 0;
		char *d;

		if ((rc = cli_import_reply(&e, c, certs)) != 0 ||
		    (rc = cli_store_edit_commit(&e, c, NULL)) != 0)
			goto done;
		(void)wks_store_cert_count(&n, st, c->alias);
		d = cli_display(c->alias);
		printf("Certificate reply installed in entry \"%s\": a chain "
		       "of %zu certificate%s\n", d ? d : "", n,
		       n == 1 ? "" : "s");
		free(d);
		goto done;
	}
	if (sk_X509_num(certs) != 1) {
		cli_err(c->cert, "holds %d certificates; import-cert takes one "
			"(a chain only as the reply for a private key entry)",
			sk_X509_num(certs));
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	if ((rc = cli_cert_der(&der, &der_len, sk_X509_value(certs, 0))) != 0)
		goto done;
	cli_warn_validity(c->cert, NULL, sk_X509_value(certs, 0));
	if (wks_store_entry_type(st, c->alias) == WKS_ENTRY_CERTIFICATE) {
		if ((rc = cli_check_alias_free(st, c, c->alias)) != 0)
			goto done;
	} else if (wks_store_contains(st, c->alias)) {
		char *d = cli_display(c->alias);

		cli_err(c->keystore, "entry \"%s\" is a secret key entry; a "
			"certificate never replaces it", d ? d : "");
		free(d);
		rc = c->force ? CLI_EXIT_INVALID : CLI_EXIT_EXISTS;
		goto done;
	}
	if (wks_store_find_cert_alias(&other, st, der, der_len) == WKS_OK) {
		char *d = cli_display(other);

		cli_note(c->keystore, "the certificate is also in entry \"%s\"",
			 d ? d : "");
		free(d);
		wks_free(other);
	}
	err = wks_store_set_cert_der(st, c->alias, der, der_len);
	if (err < 0) {
		rc = cli_lib_err(c->keystore, c->alias, err, "cannot import");
		goto done;
	}
	if ((rc = cli_store_edit_commit(&e, c, NULL)) == 0)
		cli_say_imported(e.st, c->alias);
done:
	free(der);
	sk_X509_pop_free(certs, X509_free);
	cli_store_edit_end(&e);
	return rc;
}
