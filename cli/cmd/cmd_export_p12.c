/*
 * wks export-p12: entries to a PKCS#12 file.
 */
#include <stdio.h>
#include <stdlib.h>

#include <openssl/pkcs12.h>

#include "cli.h"

int cmd_export_p12(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT, kp = CLI_PW_INIT, outpw = CLI_PW_INIT;
	uint8_t *der = NULL;
	size_t der_len = 0;
	char prompt[512];
	int rc;

	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_output_check(c, c->out)) != 0)
		return rc;
	if ((rc = cli_store_open(&st, &pw, c, CLI_STORE_VERIFY)) != 0)
		return rc;
	if ((rc = cli_keypass(&kp, c, &pw, c->alias)) != 0)
		goto done;
	snprintf(prompt, sizeof(prompt), "Password of the new PKCS#12 file: ");
	if ((rc = cli_pw_get(&outpw, &c->outpass, prompt, "--outpass",
			     CLI_PW_NEW)) != 0)
		goto done;
	/* Whole store: each key with --keypass-for, --keypass or the store
	 * password. */
	if (!c->alias)
		cli_key_fallback(&pw);
	rc = cli_p12_export(&der, &der_len, st, c->keystore, c->alias, &kp,
			    &outpw, cli_export_iterations(st, c), 0);
	cli_key_fallback(NULL);
	if (rc == 0)
		rc = cli_write_output(c, c->out, der, der_len, 1, 1);
done:
	cli_free_secret(der, der_len);
	wks_store_free(st);
	cli_pw_clear(&pw);
	cli_pw_clear(&kp);
	cli_pw_clear(&outpw);
	return rc;
}
