/*
 * wks export-cert: a certificate, or the chain of a private key entry.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_export_cert(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT;
	uint8_t *out = NULL;
	size_t out_len = 0, n = 0;
	int rc, err;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0 ||
	    (rc = cli_output_check(c, c->out)) != 0)
		return rc;
	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_OPTIONAL)) != 0)
		return rc;
	if ((err = wks_store_cert_count(&n, st, c->alias)) < 0) {
		if (err == WKS_ERR_WRONG_TYPE) {
			char *d = cli_display(c->alias);

			cli_err(c->keystore, "entry \"%s\" is a secret key: it "
				"has no certificate", d ? d : "");
			free(d);
			rc = CLI_EXIT_INVALID;
		} else {
			rc = cli_lib_err(c->keystore, c->alias, err, NULL);
		}
		goto done;
	}
	if (n == 0) {
		/* A private key entry with a chain of 0 (valid: the spec
		 * and Java accept it): nothing to write. */
		char *d = cli_display(c->alias);

		cli_err(c->keystore, "entry \"%s\" has no certificate",
			d ? d : "");
		free(d);
		rc = CLI_EXIT_INVALID;
		goto done;
	}
	if (c->leaf && n > 1)
		n = 1;
	for (size_t i = 0; i < n; i++) {
		uint8_t *der = NULL, *pem = NULL, *add, *grown;
		size_t der_len = 0, pem_len = 0, add_len;

		err = wks_store_get_cert_der(&der, &der_len, st, c->alias, i);
		if (err < 0) {
			rc = cli_lib_err(c->keystore, c->alias, err, NULL);
			goto done;
		}
		add = der;
		add_len = der_len;
		if (!c->der) {
			rc = cli_pem_encode(&pem, &pem_len, "CERTIFICATE", der,
					    der_len);
			add = pem;
			add_len = pem_len;
		}
		grown = rc ? NULL : realloc(out, out_len + add_len);
		if (grown) {
			memcpy(grown + out_len, add, add_len);
			out = grown;
			out_len += add_len;
		} else if (!rc) {
			cli_err(NULL, "out of memory");
			rc = CLI_EXIT_FAIL;
		}
		wks_free(der);
		free(pem);
		if (rc)
			goto done;
	}
	rc = cli_write_output(c, c->out, out, out_len, c->der, 0);
done:
	free(out);
	wks_store_free(st);
	cli_pw_clear(&pw);
	return rc;
}
