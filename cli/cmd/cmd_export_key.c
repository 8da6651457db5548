/*
 * wks export-key: a private key as PKCS#8 (exactly as stored, or
 * encrypted), or a secret key as hex or raw bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_export_key(cli_ctx *c)
{
	wks_store *st = NULL;
	cli_pw pw = CLI_PW_INIT, kp = CLI_PW_INIT, outpw = CLI_PW_INIT;
	wks_key *key = NULL;
	uint8_t *buf = NULL, *pem = NULL;
	size_t buf_len = 0, pem_len = 0, len;
	const uint8_t *data;
	const int encrypt = c->encrypt || c->outpass.kind != CLI_PWSRC_NONE;
	wks_entry_type t;
	int rc, err;

	if (c->reference)
		return cli_export_reference(c); /* cli/shared/reference.c */
	if (c->ref_storepass || c->ref_keypass) {
		cli_err(NULL, "--ref-storepass and --ref-keypass need --reference");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_need(c->keystore, "--keystore")) != 0 ||
	    (rc = cli_need(c->alias, "--alias")) != 0 ||
	    (rc = cli_output_check(c, c->out)) != 0)
		return rc;
	if ((rc = cli_store_open(&st, &pw, c, c->no_storepass ?
				 CLI_STORE_OPTIONAL : CLI_STORE_VERIFY)) != 0)
		return rc;
	t = wks_store_entry_type(st, c->alias);
	if (t == WKS_ENTRY_NONE) {
		rc = cli_lib_err(c->keystore, c->alias, WKS_ERR_NOTFOUND, NULL);
		goto done;
	}
	if (t == WKS_ENTRY_CERTIFICATE) {
		char *d = cli_display(c->alias);

		cli_err(c->keystore, "entry \"%s\" is a certificate (use "
			"export-cert)", d ? d : "");
		free(d);
		rc = CLI_EXIT_INVALID;
		goto done;
	}
	if (t == WKS_ENTRY_SECRET_KEY && encrypt) {
		cli_err(NULL, "--encrypt/--outpass apply to private keys only");
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	/* --keypass-for ALIAS alone will do (with --no-storepass too). */
	if (!cli_keypass_for_has(c, c->alias) &&
	    (rc = cli_keypass(&kp, c, &pw, c->alias)) != 0)
		goto done;
	/* --keypass-for, else --keypass (default the store password),
	 * else the prompt. */
	(void)err;
	if ((rc = cli_key_get(&key, st, c->keystore, c->alias, &kp, NULL, 0,
			      NULL)) != 0)
		goto done;
	data = wks_key_data(key, &len);
	if (t == WKS_ENTRY_SECRET_KEY) {
		if (c->der) {
			rc = cli_write_output(c, c->out, data, len, 1, 1);
		} else {
			pem_len = len * 2 + 1;
			pem = malloc(pem_len + 1);
			if (!pem) {
				rc = CLI_EXIT_FAIL;
				goto done;
			}
			cli_hex((char *)pem, data, len, 0);
			pem[len * 2] = '\n';
			rc = cli_write_output(c, c->out, pem, pem_len, 0, 1);
		}
		goto done;
	}
	if (encrypt) {
		if ((rc = cli_pw_get(&outpw, &c->outpass,
				     "Password for the exported key: ",
				     "--outpass", CLI_PW_NEW)) != 0)
			goto done;
		if ((rc = cli_pkcs8_encrypt(&buf, &buf_len, data, len,
					     &outpw,
					     cli_export_iterations(st, c),
					     c->keystore)) != 0)
			goto done;
		data = buf;
		len = buf_len;
	}
	if (c->der) {
		rc = cli_write_output(c, c->out, data, len, 1, 1);
	} else {
		if ((rc = cli_pem_encode(&pem, &pem_len, encrypt ?
					 "ENCRYPTED PRIVATE KEY" : "PRIVATE KEY",
					 data, len)) != 0)
			goto done;
		rc = cli_write_output(c, c->out, pem, pem_len, 0, 1);
	}
done:
	cli_free_secret(pem, pem_len);
	cli_free_secret(buf, buf_len);
	wks_key_free(key);
	wks_store_free(st);
	cli_pw_clear(&pw);
	cli_pw_clear(&kp);
	cli_pw_clear(&outpw);
	return rc;
}
