/*
 * wks convert: a whole store from PKCS#12 or a Java keystore (JKS, JCEKS,
 * BKS, BCFKS) to WKS, or from WKS to PKCS#12.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pkcs12.h>

#include "cli.h"

static int wks_to_p12(cli_ctx *c, const uint8_t *data, size_t len)
{
	wks_store *st = NULL;
	cli_pw inpw = CLI_PW_INIT, kp = CLI_PW_INIT, outpw = CLI_PW_INIT;
	uint8_t *der = NULL;
	size_t der_len = 0;
	char prompt[512];
	int rc, err;

	snprintf(prompt, sizeof(prompt), "Keystore password for %s: ", c->in);
	if ((rc = cli_pw_get(&inpw, &c->inpass, prompt, "--inpass", 0)) != 0)
		return rc;
	if (inpw.len == 0) {
		cli_err(c->in, "the store password must not be empty");
		rc = CLI_EXIT_USAGE;
		goto done;
	}
	if ((err = wks_store_new(&st)) < 0 ||
	    (err = wks_store_load_buffer(st, data, len, inpw.p,
					 inpw.len)) < 0) {
		rc = cli_lib_err(c->in, NULL, err, NULL);
		goto done;
	}
	/* --iterations within libwks.wks.maxIterationCount, as for a
	 * store: a PKCS#12 above it could not be imported back. */
	if ((rc = cli_store_iterations(st, c)) != 0)
		goto done;
	if ((rc = cli_keypass(&kp, c, &inpw, NULL)) != 0)
		goto done;
	snprintf(prompt, sizeof(prompt), "Password of the new PKCS#12 file %s: ",
		 c->out);
	if ((rc = cli_pw_get(&outpw, &c->outpass, prompt, "--outpass",
			     CLI_PW_NEW)) != 0)
		goto done;
	cli_key_fallback(&inpw); /* each key: --keypass, else the store's */
	rc = cli_p12_export(&der, &der_len, st, c->in, NULL, &kp, &outpw,
			    cli_export_iterations(st, c));
	cli_key_fallback(NULL);
	if (rc == 0)
		rc = cli_write_output(c, c->out, der, der_len, 1, 1);
done:
	cli_free_secret(der, der_len);
	wks_store_free(st);
	cli_pw_clear(&inpw);
	cli_pw_clear(&kp);
	cli_pw_clear(&outpw);
	return rc;
}

static int p12_to_wks(cli_ctx *c, const uint8_t *data, size_t len)
{
	wks_store *st = NULL;
	cli_pw inpw = CLI_PW_INIT, kp = CLI_PW_INIT, outpw = CLI_PW_INIT;
	cli_p12_entry *e = NULL;
	size_t count = 0;
	char prompt[512];
	cli_ctx oc = *c;
	int rc, err;

	snprintf(prompt, sizeof(prompt), "Password of %s: ", c->in);
	if ((rc = cli_pw_get(&inpw, &c->inpass, prompt, "--inpass",
			     CLI_PW_EMPTY_OK)) != 0)
		return rc;
	if ((rc = cli_p12_read(&e, &count, c->in, data, len, &inpw,
			       c->no_mac_ok)) != 0)
		goto done;
	snprintf(prompt, sizeof(prompt), "New keystore password for %s: ",
		 c->out);
	if ((rc = cli_pw_get(&outpw, &c->outpass, prompt, "--outpass",
			     CLI_PW_NEW)) != 0)
		goto done;
	if ((rc = cli_keypass(&kp, c, &outpw, NULL)) != 0)
		goto done;
	if ((err = wks_store_new(&st)) < 0) {
		rc = cli_lib_err(c->out, NULL, err, NULL);
		goto done;
	}
	if ((rc = cli_store_iterations(st, c)) != 0)
		goto done;
	oc.keystore = c->out;
	oc.force = 1; /* the store is new: no alias clashes with it */
	if ((rc = cli_p12_import(st, &oc, c->in, e, count, NULL, &kp)) != 0)
		goto done;
	rc = cli_store_create(st, c, c->out, &outpw);
done:
	cli_p12_free(e, count);
	wks_store_free(st);
	cli_pw_clear(&inpw);
	cli_pw_clear(&kp);
	cli_pw_clear(&outpw);
	return rc;
}

int cmd_convert(cli_ctx *c)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	if ((rc = cli_need(c->in, "--in")) != 0 ||
	    (rc = cli_need(c->out, "--out")) != 0)
		return rc;
	/* Before any password: never over the input, an existing output
	 * only with --force. */
	if ((rc = cli_output_check(c, c->out)) != 0)
		return rc;
	if ((rc = cli_read_file(&data, &len, c->in)) != 0)
		return rc;
	if (wks_probe(data, len))
		rc = wks_to_p12(c, data, len);
	else if (cli_java_type(wks_keystore_detect(data, len)))
		rc = cli_convert_java(c, data, len); /* JKS, JCEKS, BC's */
	else
		rc = p12_to_wks(c, data, len);
	cli_free_secret(data, len);
	return rc;
}
