/*
 * Opening and saving the keystore for wks(1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/x509.h>

#include "cli.h"

int cli_store_iterations(wks_store *st, cli_ctx *c)
{
	char v[32], max[32];
	int err;

	if (!c->has_iterations)
		return 0;
	if (wks_get_property(max, sizeof(max), st,
			     "libwks.wks.maxIterationCount") == WKS_OK &&
	    c->iterations > atol(max)) {
		cli_err(NULL, "--iterations %ld is above the limit %s "
			"(libwks.wks.maxIterationCount): the store could not be "
			"read back", c->iterations, max);
		return CLI_EXIT_USAGE;
	}
	snprintf(v, sizeof(v), "%ld", c->iterations);
	err = wks_store_set_property(st, "wolfjce.wks.iterationCount", v);
	if (err < 0)
		return cli_lib_err(NULL, NULL, err, "--iterations");
	return 0;
}

int cli_store_open(wks_store **out, cli_pw *pw, cli_ctx *c, int mode)
{
	wks_store *st = NULL;
	uint8_t *data = NULL;
	size_t len = 0;
	char prompt[512];
	int rc, err;

	*out = NULL;
	cli_pw_clear(pw);
	if ((rc = cli_need(c->keystore, "--keystore")) != 0)
		return rc;
	/* Read first: a missing file is reported before any prompt. */
	if ((rc = cli_read_file(&data, &len, c->keystore)) != 0)
		return rc;
	if (!wks_probe(data, len)) {
		cli_err(c->keystore, "not a WKS keystore (bad magic number)");
		rc = CLI_EXIT_MALFORMED;
		goto done;
	}
	snprintf(prompt, sizeof(prompt), mode == CLI_STORE_OPTIONAL ?
		 "Keystore password for %s (Enter: skip the integrity check): " :
		 "Keystore password for %s: ", c->keystore);
	if (mode == CLI_STORE_OPTIONAL) {
		if (!c->no_storepass)
			rc = cli_pw_get(pw, &c->storepass, prompt, "--storepass",
					CLI_PW_OPTIONAL);
		else
			rc = cli_pw_dup(pw, &(cli_pw)CLI_PW_INIT);
	} else {
		rc = cli_pw_get(pw, &c->storepass, prompt, "--storepass", 0);
		if (rc == 0 && pw->len == 0) {
			cli_err(c->keystore, "the store password must not be "
				"empty");
			rc = CLI_EXIT_USAGE;
		}
	}
	if (rc)
		goto done;
	if ((err = wks_store_new(&st)) < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto done;
	}
	if ((rc = cli_store_iterations(st, c)) != 0)
		goto done;
	err = wks_store_load_buffer(st, data, len, pw->p, pw->len);
	if (err < 0) {
		rc = cli_lib_err(c->keystore, NULL, err, NULL);
		goto done;
	}
	if (pw->len == 0)
		cli_note(c->keystore, "integrity not checked (no store "
			 "password)");
	*out = st;
	st = NULL;
done:
	if (rc)
		cli_pw_clear(pw);
	wks_store_free(st);
	cli_free_secret(data, len);
	return rc;
}

int cli_store_save(wks_store *st, cli_ctx *c, const cli_pw *pw)
{
	int err = wks_store_save_file(st, c->keystore, pw->p, pw->len);

	if (err < 0)
		return cli_lib_err(c->keystore, NULL, err, "cannot save");
	return 0;
}

int cli_keypass(cli_pw *out, cli_ctx *c, const cli_pw *storepw,
		const char *alias)
{
	char prompt[512];
	char *da;

	if (c->keypass.kind != CLI_PWSRC_NONE || !storepw || !storepw->len) {
		int rc;

		da = alias ? cli_display(alias) : NULL;
		if (da)
			snprintf(prompt, sizeof(prompt),
				 "Key password for \"%s\": ", da);
		else
			snprintf(prompt, sizeof(prompt), "Key password: ");
		free(da);
		rc = cli_pw_get(out, &c->keypass, prompt, "--keypass", 0);
		if (rc == 0 && out->len == 0) {
			cli_err(NULL, "--keypass: the key password must not be "
				"empty");
			cli_pw_clear(out);
			rc = CLI_EXIT_USAGE;
		}
		return rc;
	}
	return cli_pw_dup(out, storepw);
}

int cli_check_alias_free(wks_store *st, cli_ctx *c, const char *alias)
{
	char *da;

	if (c->force || !wks_store_contains(st, alias))
		return 0;
	da = cli_display(alias);
	cli_err(c->keystore, "entry \"%s\" exists (use --force to replace it)",
		da ? da : "");
	free(da);
	return CLI_EXIT_EXISTS;
}

int cli_store_certs(STACK_OF(X509) **out, wks_store *st, const char *file,
		    const char *alias)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	size_t n = 0;
	int err;

	*out = NULL;
	if (!sk) {
		cli_err(file, "out of memory");
		return CLI_EXIT_FAIL;
	}
	if ((err = wks_store_cert_count(&n, st, alias)) < 0)
		goto lib_fail;
	for (size_t i = 0; i < n; i++) {
		X509 *x = NULL;

		if ((err = wks_store_get_cert(&x, st, alias, i)) < 0)
			goto lib_fail;
		if (!sk_X509_push(sk, x)) {
			X509_free(x);
			sk_X509_pop_free(sk, X509_free);
			cli_err(file, "out of memory");
			return CLI_EXIT_FAIL;
		}
	}
	*out = sk;
	return 0;
lib_fail:
	sk_X509_pop_free(sk, X509_free);
	return cli_lib_err(file, alias, err, NULL);
}
